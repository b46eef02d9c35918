"""How many of the asks a message makes the reading finds: for every case of `--set` whose expectation
lists its asks (`expect.asks`, every ask in order), `understand()` with the fitted ask model reads the
question and the asks it finds are matched to the expected ones by kind. Prints, per language, the asks
expected, the asks found by kind, the cases whose every ask was found, and the cases that found fewer
asks than were asked; `--show` lists each case.

    MESHWISE_MODEL_CACHE_DIR=... .venv/bin/python benchmarks/ask_counts.py [--set evals/cases/t6_...yaml] [--show]
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main(argv: list[str] | None = None) -> int:
    from evals.schema import load_set
    from assistant.understand.train_asks import default_encoders
    from assistant.understand.understand import understand

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", type=Path, action="append",
                    default=None, help="case file or folder (default: the t6 real-user dev sets)")
    ap.add_argument("--show", action="store_true", help="print every case's expected and found asks")
    args = ap.parse_args(argv)
    paths = args.set or sorted((REPO / "evals" / "cases").glob("t6_*realuser*.yaml"))
    cases = [c for c in load_set(paths) if c.expect.asks and not c.history]
    enc = default_encoders()
    tally: dict[str, Counter] = {}
    for c in cases:
        q = understand(c.question, world_size=c.world_size, gpus_per_node=c.gpus_per_node, encoders=enc)
        found = [a.kind for a in q.asks]
        want = Counter(c.expect.asks)
        hit = sum((want & Counter(found)).values())
        t = tally.setdefault(c.lang, Counter())
        t["cases"] += 1
        t["asked"] += sum(want.values())
        t["found_by_kind"] += hit
        t["all_found"] += hit == sum(want.values())
        t["fewer_asks"] += len(found) < sum(want.values())
        t["unknown"] += found.count("unknown")
        if args.show:
            mark = "ok " if hit == sum(want.values()) else "MISS"
            print(f"{mark} {c.id}: want {list(c.expect.asks)} got {found}")
    for lang in sorted(tally):
        t = tally[lang]
        print(f"{lang}: {t['cases']} cases, asks found by kind {t['found_by_kind']}/{t['asked']}, "
              f"every ask found in {t['all_found']}/{t['cases']}, fewer asks than asked in {t['fewer_asks']}, "
              f"unknown asks {t['unknown']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
