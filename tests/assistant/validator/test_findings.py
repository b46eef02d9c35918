"""make_finding defers filling the two message templates until a message is read (issues 19, 21)."""
from __future__ import annotations

import copy
import dataclasses
import pickle

from assistant.validator.findings import make_finding
from assistant.validator.report import Finding


def _ep():
    return make_finding("MW-E-EP-DIVIDES", "distributed.ep_size", dp=8, cp=1, tp=1, non_pp=8, ep=16, rem=8)


def test_messages_are_filled_on_first_read_only():
    f = _ep()
    assert "message" not in f.__dict__ and "message_zh" not in f.__dict__
    assert f.message.startswith("dp_size*cp_size*tp_size (8*1*1 = 8) must be a multiple of ep_size (16)")
    assert "message" in f.__dict__ and "message_zh" not in f.__dict__
    assert "ep_size（16）" in f.message_zh


def test_a_deferred_finding_is_the_same_value_as_an_eager_one():
    f = _ep()
    eager = Finding(f.code, f.severity, f.message, f.message_zh, f.path, f.upstream)
    g = _ep()
    assert g == eager and hash(g) == hash(eager) and repr(_ep()) == repr(eager)
    assert dataclasses.asdict(_ep()) == dataclasses.asdict(eager)
    assert copy.deepcopy(_ep()) == eager and pickle.loads(pickle.dumps(_ep())) == eager


def test_a_mutable_value_is_rendered_at_once():
    got = ["2"]
    f = make_finding("MW-E-SIZE-VALUE", "distributed.tp_size", key="tp_size", got=got, why="x", why_zh="x")
    assert "message" in f.__dict__
    got.append("3")
    assert "'3'" not in f.message
