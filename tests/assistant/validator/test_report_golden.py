"""Every field of every report on a fixed generated set (random sections and recipes, some with a
model and a GPU, and upstream's recipes) must stay what it was when the golden file was written:
refactors and speed-ups of the validator change no verdict, message, derived size, memory figure
or suggested fix. Regenerate (python tests/assistant/validator/report_cases.py) only for an
intended change of output, and say which in the commit."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _cases_module():
    spec = importlib.util.spec_from_file_location("report_cases", HERE / "report_cases.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reports_match_the_golden_file():
    rc = _cases_module()
    golden = [json.loads(line) for line in rc.GOLDEN.read_text(encoding="utf-8").splitlines()]
    cases = rc.cases()
    if len(cases) < len(golden):  # no upstream corpus on this machine: the generated part only
        golden = [g for g in golden if not g["corpus"]]
    assert len(cases) == len(golden) >= 900
    assert sum(1 for g in golden if g.get("ok") is False) > len(golden) / 2  # mostly invalid, like real input
    changed = []
    for kw, want in zip(cases, golden):
        got = {"id": rc.case_id(kw), "corpus": want["corpus"], **rc.outcome(kw)}
        if got != want:
            changed.append((want["id"], want.get("codes"), got.get("codes")))
    assert not changed, f"{len(changed)} reports changed, first: {changed[:5]}"
