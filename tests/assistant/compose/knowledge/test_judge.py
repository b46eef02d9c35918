"""The user's own layout as judged: a pasted config with the command-line overrides the prose states."""
from __future__ import annotations

from assistant.compose.knowledge.judge import judge_user_layout


def test_an_override_in_prose_is_set_over_the_pasted_config(mw_assistant):
    from assistant.understand import understand

    q = understand("One node, 8 GPUs:\n\n```yaml\ndistributed:\n  strategy: fsdp2\n  ep_size: 4\n  pp_size: 2\n"
                   "  pipeline:\n    pp_schedule: 1f1b\n```\n\nFor this leg I pass `--distributed.pp_size 1`. "
                   "Does that error out?", encoders=mw_assistant._clause_encoders)
    d = judge_user_layout(q, 8)
    assert d.judged["distributed"]["pp_size"] == 1
    assert "MW-W-PIPELINE-DROPPED" in {f.code for f in d.report.warnings}
