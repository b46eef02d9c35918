"""Per-question defaults and limits live in assistant/defaults.py only: no other module writes its
own number for them (they used to disagree: 1_000_000 in the engine and web, 1 << 20 in the validator)."""
from __future__ import annotations

import re
from pathlib import Path

from assistant import defaults
from assistant.validator import MAX_WORLD_SIZE, validate

ROOT = Path(__file__).resolve().parents[2]
_OWN_VALUE = re.compile(r"^\s*(?:MAX_WORLD\w*|DEFAULT_GPUS_PER_NODE|MAX_GPUS_PER_NODE|DEFAULT_WORLD_SIZE)\s*=\s*[\d(]", re.M)
_INLINE_GPN = re.compile(r"gpus_per_node\w*\)?\s+or\s+8\b|gpus_per_node:\s*int\s*=\s*8\b")


def test_no_module_restates_a_default():
    offenders = []
    for folder in ("assistant", "ui", "benchmarks"):  # evals/scorer.py: its owner's branch moves it
        for path in (ROOT / folder).rglob("*.py"):
            if path == ROOT / "assistant" / "defaults.py":
                continue
            text = path.read_text(encoding="utf-8")
            if _OWN_VALUE.search(text) or _INLINE_GPN.search(text):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, offenders


def test_the_validator_enforces_the_shared_limit():
    assert MAX_WORLD_SIZE == defaults.MAX_WORLD_SIZE
    assert validate({}, world_size=defaults.MAX_WORLD_SIZE, suggest_fix=False).world_size == defaults.MAX_WORLD_SIZE
    assert validate({}, world_size=16).gpus_per_node == defaults.DEFAULT_GPUS_PER_NODE


def test_every_front_end_takes_the_same_size_limits():
    """Issue 20.7: world_size up to MAX_WORLD_SIZE and gpus_per_node up to MAX_GPUS_PER_NODE, and not one
    more, in the engine (ask, ask --stdin, web chat, Slack questions), validate's batch lines, the web
    settings and Slack's /meshwise validate (which read at most 6 digits before)."""
    import argparse

    import pytest

    from assistant.answer import AskRequest
    from assistant.cli.validate_cmd import batch_line
    from assistant.engine import BadRequest, check_request
    from ui.slack.slash import parse_command
    from ui.web.handlers import BadSetting, chat_options

    top_w, top_g = defaults.MAX_WORLD_SIZE, defaults.MAX_GPUS_PER_NODE
    check_request(AskRequest(question="q", world_size=top_w, gpus_per_node=top_g))
    for kw in ({"world_size": top_w + 1}, {"gpus_per_node": top_g + 1}):
        with pytest.raises(BadRequest, match="at most"):
            check_request(AskRequest(question="q", **kw))
    args = argparse.Namespace(gpus_per_node=None, gpu=None, model=None, model_config=None, distributed_only=True)
    line = '{"config": {}, "world_size": %d, "gpus_per_node": %d}'
    assert batch_line((line % (top_g, top_g)).encode(), args)["ok"] is True
    assert batch_line((line % (top_w, 1)).encode(), args)["ok"] is True
    assert "at most" in batch_line((line % (top_g, top_g + 1)).encode(), args)["error"]["message"]
    assert batch_line((line % (top_w + 1, 1)).encode(), args)["ok"] is None
    assert "at most" in batch_line(b'{"config": {}, "world_size": 8, "gpus_per_node": "65"}', args)["error"]["message"]
    assert chat_options(gpus_per_node=top_g).gpus_per_node == top_g
    with pytest.raises(BadSetting):
        chat_options(gpus_per_node=top_g + 1)
    cmd = parse_command(f"validate world_size={top_w} gpus_per_node={top_g + 1} distributed: {{}}")
    assert (cmd.world_size, cmd.gpus_per_node) == (top_w, top_g + 1)
    assert parse_command("validate world_size=" + "9" * 5000 + " distributed: {}").world_size > top_w
