"""The numbers of long real-style messages (issue 18, t10 numbers): ddp's dp is the world whatever size it
rejects, a number asked again on the strategy switched to is said against the user's, another person's
run is diagnosed on its own sizes while the user's layout is judged, and a verdict asked before an error
quoted in the prose leads."""
from __future__ import annotations

from tests.assistant.compose.answers.conftest import lead


def test_ddp_dp_is_the_world_not_world_over_the_tp_it_rejects(ask):
    a = ask("We're on strategy ddp, 8 GPUs, and someone left tp_size: 2 in the config from an older run. "
            "What is dp_size with ddp here? And does ddp use tp_size at all?")
    assert "dp_size = 8" in lead(a.text) and "dp_size = 4" not in a.text
    assert "MW-E-DDP-PARALLEL" in a.text


def test_a_number_asked_after_if_we_switch_is_said_against_the_users(ask):
    a = ask("Single node, 8 GPUs, fsdp2 with tp_size 2 and cp_size 2. What's dp_size? We are thinking about "
            "megatron_fsdp. If we switch, does dp stay the same?")
    assert "So dp_size stays 2 with `strategy: megatron_fsdp`, the same as now" in a.text


def test_another_persons_run_is_theirs_and_the_users_layout_is_judged(ask):
    a = ask("Qwen3-30B-A3B, 2 nodes x 8 H100. Can I leave ep_size out and just run fsdp2 on 16 GPUs? "
            "A teammate set ep_size: 32 and it crashed, what would that error be about?")
    assert lead(a.text).startswith("Yes: `strategy: fsdp2` is valid")
    assert "16 % 32 = 16" in a.text


def test_a_verdict_asked_before_a_quoted_error_leads(ask):
    a = ask("megatron_fsdp 能开 dp_replicate_size 吗？我在 megatron_fsdp 下配了 dp_replicate_size: 2，16 卡，"
            "一启动就报 `ValueError: dp_replicate_size is only supported with FSDP2Config`，这个报错具体什么意思？")
    assert lead(a.text).startswith("不行")
