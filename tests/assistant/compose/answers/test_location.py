"""Location answers: where a check or an error lives, file and function first."""
from __future__ import annotations

import pytest
from answer_checks import shown_configs
from tests.assistant.compose.answers.conftest import lead


@pytest.mark.parametrize("question,path,symbol", [
    # facts2 session 2: the quoted message (with or without its numbers) names the rule that raises it
    ("non_pp_size must be a multiple of ep_size 这个检查在代码哪里？", "mesh_utils.py", "_create_fsdp2_device_mesh"),
    ("报错 “selective activation checkpointing is supported only for FSDP2 and DDP configs.” 是哪个文件抛的",
     "_dist_utils.py", "parse_distributed_section"),
    ("Where is 'dp_replicate_size is only supported with FSDP2Config' raised?", "mesh_utils.py", "_create_device_meshes"),
])
def test_a_quoted_error_is_located_by_the_rule_that_raises_it(ask, question, path, symbol):
    a = ask(question)
    first = lead(a.text)
    assert path in first and symbol in first
    assert a.asks == ["location"] and shown_configs(a.text) == []


@pytest.mark.parametrize("question,symbol", [
    ("Where is the device mesh for fsdp2 built?", "_create_fsdp2_device_mesh"),
    ("哪个函数构建 megatron_fsdp 的 device mesh？", "_create_megatron_fsdp_device_mesh"),
])
def test_the_mesh_builder_of_the_named_strategy_comes_first(ask, question, symbol):
    assert symbol in lead(ask(question).text)
