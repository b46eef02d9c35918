"""A change of cluster size ("go from 1 node to 4 nodes", "double the GPUs", "从 2 机扩到 8 机"): the
target layout is the one judged; these lines say what the change does to it: dp_size before and
after, the gradient-accumulation steps when batch sizes are given, and what to re-check. Both
worlds are judged by the validator, so the numbers are its derived sizes."""
from __future__ import annotations

from assistant.compose.knowledge.judge import rejudge
from assistant.compose.writer import Writer
from assistant.understand.cues import read

_SIZES = ("tp_size", "pp_size", "cp_size", "ep_size", "dp_replicate_size")


# the quantities the change lines state, before and after (the quantity answer does not repeat them)
CHANGED_TARGETS = frozenset({"dp_size", "grad_acc_steps"})


def change_lines(w: Writer, query, d) -> list[str]:
    """The lead lines for a change the question asks about; [] when it asks none or the old world
    cannot be judged."""
    prior = getattr(query.params, "prior_world_size", None)
    r = d.report
    if not prior or r is None or r.derived is None or prior == r.world_size or d.judged is None:
        return []
    if _story_sizes_differ(query, d.judged):
        return []  # "之前 64 卡 tp 2 ... 现在 32 卡 tp 4": more than the world changed; the numbers asked answer
    before = rejudge(query, d, d.judged, prior)
    old = before.report.derived if before.report is not None else None
    new = r.derived
    lines = [w.say("q_change_dp", old=prior, new=new.world_size, old_dp=old.dp_size if old else "?", dp=new.dp_size,
                    tp=new.tp_size, pp=new.pp_size, cp=new.cp_size)]
    stated_dp = "dp_size" in query.situation.stated.sizes
    lines.append(w.say("q_change_dp_stated" if stated_dp else "q_change_rest", dp=new.dp_size))
    sched = d.judged.get("step_scheduler") if isinstance(d.judged.get("step_scheduler"), dict) else {}
    gbs, lbs = sched.get("global_batch_size"), sched.get("local_batch_size")
    if isinstance(gbs, int) and isinstance(lbs, int) and new.grad_acc_steps is not None:
        lines.append(w.say("q_change_grad_acc", old=old.grad_acc_steps if old and old.grad_acc_steps else "?",
                           steps=new.grad_acc_steps, gbs=gbs, lbs=lbs, dp=new.dp_size))
    else:
        lines.append(w.say("q_change_recheck", dp=new.dp_size))
    return lines


def _story_sizes_differ(query, judged: dict) -> bool:
    """The earlier run the question tells about ("之前 ... tp 2") had other sizes than the one judged."""
    dist = judged.get("distributed") if isinstance(judged.get("distributed"), dict) else {}
    for told in read(query).story_params:
        if any(getattr(told, k) is not None and getattr(told, k) != dist.get(k, 1) for k in _SIZES):
            return True
    return False
