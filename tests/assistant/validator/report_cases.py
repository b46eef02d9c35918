"""A fixed, generated set of validator inputs (test support): random distributed sections and
recipes from differential_cases.py at fixed seeds, some with a model and a GPU, and the upstream
recipes corpus. `report_digest` reduces a ValidationReport to a stable fingerprint, so a golden file
can pin every field (messages, derived sizes, memory, suggested fix) of every report."""
from __future__ import annotations

import hashlib
import importlib.util
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "data" / "report_golden.jsonl"
MODELS = [None, None, "llama-3.1-8b", "llama-3.1-70b", "qwen3-30b-a3b", "mixtral-8x7b", "deepseek-v3", "qwen3-8b"]
GPUS = [None, "h100-80gb", "a100-40gb", "l40s-48gb"]


def _gen():
    spec = importlib.util.spec_from_file_location("differential_cases", HERE / "differential_cases.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cases(n: int = 900, corpus: bool = True) -> list[dict]:
    """Keyword arguments for validate(), in a fixed order: n generated ones, then (when the upstream
    corpus is at hand and `corpus` is set) the first 200 corpus recipes at their world sizes."""
    gen = _gen()
    rng = random.Random(2026)
    out: list[dict] = []
    for i in range(n):
        text, world = (gen.random_case if i % 2 else gen.random_recipe_case)(rng)
        kw: dict = {"recipe": text, "world_size": world, "gpus_per_node": rng.choice([8, 8, 8, 4])}
        if i % 3 == 0:
            kw["model"] = rng.choice(MODELS)
            kw["gpu"] = rng.choice(GPUS) if kw["model"] else None
        out.append(kw)
    from assistant.config import UPSTREAM_DIR

    path = UPSTREAM_DIR / "recipes-corpus.jsonl"
    if corpus and path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines()[:200]:
            row = json.loads(line)
            recipe = {"distributed": row["distributed"]}
            for key in ("step_scheduler", "packed_sequence"):
                if row.get(key) is not None:
                    recipe[key] = row[key]
            for ws in row["oracle"]:
                out.append({"recipe": recipe, "world_size": int(ws)})
    return out


def case_id(kw: dict) -> str:
    return hashlib.sha1(json.dumps(kw, sort_keys=True, default=repr).encode()).hexdigest()[:12]


def report_digest(report) -> dict:
    full = json.dumps(report.to_dict(), sort_keys=True, default=repr, ensure_ascii=False)
    return {"ok": report.ok, "codes": report.codes, "fix": report.suggested_fix is not None,
            "digest": hashlib.sha1(full.encode()).hexdigest()[:16]}


def outcome(kw: dict) -> dict:
    from assistant.validator import UnusableInput, validate

    try:
        return report_digest(validate(**kw))
    except UnusableInput as exc:
        return {"unusable": exc.message}


if __name__ == "__main__":  # regenerate the golden file: python tests/assistant/validator/report_cases.py
    generated = len(cases(corpus=False))
    rows = [{"id": case_id(kw), "corpus": i >= generated, **outcome(kw)} for i, kw in enumerate(cases())]
    GOLDEN.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} reports -> {GOLDEN}")
