"""The rule tables' upstream_message patterns: each matches the message upstream really raises (as
transcribed in data/upstream_messages.yaml, with sample numbers), the transcription still matches
the upstream source where it is at hand, and match_upstream_error reads real-looking logs."""
from __future__ import annotations

import ast
import importlib.util
import os
import re
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from assistant.validator.findings import RULES
from assistant.validator.upstream_errors import MAX_TEXT_CHARS, UpstreamErrorMatch, match_upstream_error

HERE = Path(__file__).resolve().parent
SAMPLES = yaml.safe_load((HERE / "data" / "upstream_messages.yaml").read_text(encoding="utf-8"))
UPSTREAM = os.environ.get("MESHWISE_UPSTREAM_SRC")
# Error rows whose failure upstream never words itself (Python's generic errors on odd values), or
# that are Meshwise's own checks: no pattern to hold.
NO_UPSTREAM_TEXT = {
    "MW-E-DIST-NOT-MAPPING": "dict(cfg.distributed) fails with a generic TypeError/AttributeError",
    "MW-E-PIPELINE-VALUE": "pipeline_dict.copy() fails with a generic AttributeError",
    "MW-E-MOE-VALUE": "MoEParallelizerConfig(**moe) fails with a generic TypeError",
    "MW-E-CONFIG-LOAD": "ConfigNode fails with a generic AttributeError",
    "MW-E-STEP-SCHEDULER-VALUE": "dict(node) fails with a generic TypeError",
}


def _render(sample: dict) -> str:
    return sample["template"].format(**sample["values"])


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: f"{s['code']}:{s['template'][:30]}")
def test_each_upstream_message_maps_to_its_rule(sample):
    text = _render(sample)
    hits = [m for m in match_upstream_error(text) if m.code == sample["code"]]
    assert hits, f"{sample['code']} pattern does not match {text!r}"
    want = {k: str(v) for k, v in sample["values"].items()}
    assert any(set(m.values) <= set(want) and all(want[k] == v for k, v in m.values.items()) for m in hits), hits
    rule = RULES[sample["code"]]
    files = {u.split(" {", 1)[0] for u in (rule.upstream, *(v.get("upstream", rule.upstream) for v in rule.variants.values()))}
    assert all(m.upstream in files for m in hits), hits


def test_every_pattern_has_a_sample_and_every_upstream_error_a_pattern():
    texts: dict[str, list[str]] = {}
    for s in SAMPLES:
        texts.setdefault(s["code"], []).append(_render(s))
    for rule in RULES.values():
        variant_patterns = [v["upstream_message"] for v in rule.variants.values() if "upstream_message" in v]
        for pattern in (*rule.upstream_message, *variant_patterns):
            assert any(re.search(pattern, t) for t in texts.get(rule.code, [])), (rule.code, pattern)
        if rule.severity == "error" and rule.upstream.startswith(("nemo_automodel/", "torch/")):
            assert rule.upstream_message or rule.code in NO_UPSTREAM_TEXT, f"{rule.code} has no upstream_message"


@lru_cache(maxsize=None)
def _strings(path: Path) -> tuple[str, ...]:
    """Every string constant of a Python file; an f-string's fields become \\x00."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "\x00" for v in node.values))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
    return tuple(out)


def _source(file: str) -> Path | None:
    if file.startswith("nemo_automodel/"):
        return Path(UPSTREAM) / file if UPSTREAM else None
    if file.startswith("torch/") and importlib.util.find_spec("torch") is not None:
        return Path(importlib.util.find_spec("torch").origin).parent.parent / file
    return None


@pytest.mark.skipif(not UPSTREAM, reason="MESHWISE_UPSTREAM_SRC not set")
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: f"{s['code']}:{s['template'][:30]}")
def test_transcribed_messages_still_occur_upstream(sample):
    path = _source(sample["file"])
    if path is None:
        pytest.skip(f"{sample['file']} is not Python source we hold")
    assert path.is_file(), path
    literals = sample.get("literals") or [p for p in re.split(r"\{[^{}]*\}", sample["template"].replace("{{}}", "{}"))
                                           if len(p.strip()) >= 3]
    strings = _strings(path)
    for part in literals:
        assert any(part in s for s in strings), f"{part!r} no longer in {sample['file']}"


def test_tracebacks_and_log_prefixes():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/opt/Automodel/nemo_automodel/recipes/llm/train_ft.py", line 547, in setup\n'
        "[rank0]: AssertionError: pp_batch_size 4 // pp_microbatch_size 1 must be >= pp_size 8\n"
        "[rank1]: AssertionError: pp_batch_size 4 // pp_microbatch_size 1 must be >= pp_size 8\n"
        "2026-08-22 10:00:01 ERROR ValueError: non_pp_size=12 must be a multiple of ep_size=8\n"
    )
    got = match_upstream_error(log)
    assert [(m.code, m.values) for m in got] == [
        ("MW-E-PP-MICROBATCH-COUNT", {"lbs": "4", "mbs": "1", "pp": "8"}),
        ("MW-E-EP-DIVIDES", {"non_pp": "12", "ep": "8"}),
    ]
    assert got[1].matched == "non_pp_size=12 must be a multiple of ep_size=8"
    assert "mesh_utils.py" in got[1].upstream


def test_unrelated_text_and_hostile_input():
    assert match_upstream_error("CUDA driver version is insufficient") == []
    assert match_upstream_error("") == []
    assert match_upstream_error(None) == []  # type: ignore[arg-type]
    assert match_upstream_error("\x00\ud800" * 1000) == []
    # a huge log is read from its end, where the exception is
    huge = "noise line\n" * (MAX_TEXT_CHARS // 5) + "ValueError: dp_size must be a multiple of dp_replicate_size\n"
    assert [m.code for m in match_upstream_error(huge)] == ["MW-E-DP-REPLICATE-DIVIDES"]
    assert isinstance(match_upstream_error("a" * 10_000_000), list)
    assert UpstreamErrorMatch("c", {}, "m", "u").code == "c"


def test_a_variants_message_names_the_variants_file():
    (m,) = match_upstream_error("ValueError: Either pipeline_parallel_schedule or pipeline_parallel_schedule_csv "
                                "must be provided")
    assert m.code == "MW-E-PP-SCHEDULE" and "autopipeline.py" in m.upstream
    (t,) = match_upstream_error("ValueError: Unknown schedule name 'dfs'. The valid options are ['1F1B']")
    assert t.code == "MW-E-PP-SCHEDULE" and t.values == {"got": "dfs"} and "torch/" in t.upstream


# ---- a message quoted without its numbers (facts2, session 2)

@pytest.mark.parametrize("text,code", [
    ("non_pp_size must be a multiple of ep_size 这个检查在代码哪里？", "MW-E-EP-DIVIDES"),
    ("Where is 'dp_replicate_size is only supported with FSDP2Config' raised?", "MW-E-HSDP-STRATEGY"),
    ("报错 “selective activation checkpointing is supported only for FSDP2 and DDP configs.” 是哪个文件抛的",
     "MW-E-AC-SELECTIVE"),
])
def test_quoted_rules_finds_the_rule_without_numbers(text, code):
    from assistant.validator.upstream_errors import quoted_rules

    assert [m.code for m in quoted_rules(text)][:1] == [code]


@pytest.mark.parametrize("text", ["", "what is tp_size for?", "must be a multiple", None, 12, "x" * 300_000])
def test_quoted_rules_is_total_and_quiet_on_prose(text):
    from assistant.validator.upstream_errors import quoted_rules

    assert quoted_rules(text) == []
