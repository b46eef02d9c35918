from ui.slack.slash import AskCommand, ValidateCommand, parse_command


def test_validate_with_fenced_yaml_and_settings_after():
    cmd = parse_command("validate ```yaml\ndistributed:\n  tp_size: 8\n``` world_size=16 gpus_per_node=4")
    assert cmd == ValidateCommand(yaml_text="distributed:\n  tp_size: 8", world_size=16, gpus_per_node=4)


def test_validate_bare_yaml_with_settings_first_and_escapes():
    cmd = parse_command("validate world_size=8\ndistributed:\n  strategy: fsdp2 # a &lt; b")
    assert isinstance(cmd, ValidateCommand) and cmd.world_size == 8
    assert "strategy: fsdp2 # a < b" in cmd.yaml_text and "world_size" not in cmd.yaml_text


def test_nodes_times_gpus():
    cmd = parse_command("validate nodes=4 gpus_per_node=8 distributed: {tp_size: 8}")
    assert cmd.world_size == 32


def test_anything_else_is_a_question():
    assert parse_command("70B 模型 8 节点怎么配?") == AskCommand("70B 模型 8 节点怎么配?")
