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


def test_with_values_writes_each_field_where_it_lives_and_judges_again(mw_assistant):
    from assistant.compose.knowledge.judge import with_layout, with_values
    from assistant.understand import understand

    q = understand("16 GPUs, fsdp2, tp_size 2, local_batch_size 8. What is dp_size?",
                   encoders=mw_assistant._clause_encoders)
    d = judge_user_layout(q, 8)
    assert d.report.derived.dp_size == 8
    # pp 2 goes to distributed: (with its pipeline block), the microbatch size into that block, the
    # batch size to step_scheduler:; dp is inferred again: 16 / (2 * 2) = 4
    new = with_values(q, d, {"pp_size": 2, "pp_microbatch_size": 2, "global_batch_size": 64})
    dist = new.judged["distributed"]
    assert dist["pp_size"] == 2 and dist["pipeline"]["pp_microbatch_size"] == 2
    assert new.judged["step_scheduler"]["global_batch_size"] == 64 and new.report.derived.dp_size == 4
    # the layout string an ask carries is the same step; a value already there changes nothing
    assert with_layout(q, d, "pp_size=2").report.derived.dp_size == 4
    assert with_values(q, d, {"tp_size": 2}) is None
