"""Inverse quantities: the value of an input field that makes a derived number come out as the user
asks ("which pipeline microbatch size gives 8 microbatches?", "想要梯度累积 4 步，local_batch_size 要设
多少"), from the same arithmetic the forward numbers use (validator/layout.py, the pipeline's
local_batch_size / pp_microbatch_size), each as arithmetic on the user's numbers.

understand/inverse.py reads the ask: target `solve:<field>`, the wanted output in `Ask.layout`.
"""
from __future__ import annotations

from assistant.compose.answers.quantity_lines import derived_sizes
from assistant.compose.writer import Writer
from assistant.validator.layout import Layout
from assistant.validator.report import ValidationReport


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def solved_value(ask, r: ValidationReport, judged: dict | None, query) -> tuple[str, int, str, dict] | None:
    """(field, value or 0 when no whole value does, phrase key, phrase values) for a `solve:` ask; None
    when it is not one or an input it needs is not stated (the forward line then says which)."""
    target, wanted = getattr(ask, "target", None) or "", getattr(ask, "layout", None) or ""
    if not target.startswith("solve:") or "=" not in wanted:
        return None
    field = target.split(":", 1)[1]
    output, _, n_text = wanted.partition("=")
    n = int(n_text) if n_text.isdigit() else 0
    judged = judged if isinstance(judged, dict) else {}
    sched = judged.get("step_scheduler") if isinstance(judged.get("step_scheduler"), dict) else {}
    dist = judged.get("distributed") if isinstance(judged.get("distributed"), dict) else {}
    pipe = dist.get("pipeline") if isinstance(dist.get("pipeline"), dict) else {}
    sit = query.situation
    lbs = _int(sched.get("local_batch_size")) or _int(sit.local_batch_size)
    gbs = _int(sched.get("global_batch_size")) or _int(sit.global_batch_size)
    mbs = _int(pipe.get("pp_microbatch_size")) or 1
    if n <= 0:
        return None
    if output == "microbatches" and field == "pp_microbatch_size" and lbs:
        # the recipe sets pp_batch_size = local_batch_size; the schedule runs local / microbatch microbatches
        value = lbs // n if lbs % n == 0 else 0
        return field, value, "q_solved_mbs", {"lbs": lbs, "n": n, "value": value}
    if output == "microbatches" and field == "local_batch_size":
        return field, n * mbs, "q_solved_lbs_mbs", {"n": n, "mbs": mbs, "value": n * mbs}
    d = derived_sizes(r, judged)
    if d is None or output != "grad_acc_steps":
        return None
    lay = Layout.from_derived(d)
    if field == "local_batch_size" and gbs:
        value = lay.local_batch_for(gbs, n) or 0
        return field, value, "q_solved_lbs_acc", {"gbs": gbs, "n": n, "dp": d.dp_size, "value": value}
    if field == "global_batch_size" and lbs:
        value = lay.global_batch_for(lbs, n)
        return field, value, "q_solved_gbs_acc", {"lbs": lbs, "n": n, "dp": d.dp_size, "value": value}
    return None


def solved_line(w: Writer, found: tuple[str, int, str, dict]) -> str:
    field, value, key, values = found
    return w.say(key if value else f"{key}_none", field=field, **values)
