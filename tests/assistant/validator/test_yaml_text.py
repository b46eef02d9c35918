"""yaml_text.load is yaml.safe_load (values, aliases, errors), and its kept tree is yaml.compose's."""
from __future__ import annotations

import math

import pytest
import yaml

from assistant.validator import yaml_text
from assistant.validator.locate import compose_tree

DOCS = [
    "distributed:\n  strategy: fsdp2\n  tp_size: 2\n  dp_size: none\n",
    "a: 0\nb: 010\nc: 0x1f\nd: 0o17\ne: 1_000\nf: -3\ng: +4\nh: 1:30\ni: 0b101\n",
    "a: 1.5\nb: .nan\nc: -.inf\nd: 1e3\ne: 6.8523015e+5\nf: 1_0.5\n",
    "a: yes\nb: No\nc: on\nd: OFF\ne: true\nf: False\ng: y\n",
    "a: ~\nb: null\nc:\nd: Null\n~: 1\n",
    "a: '2'\nb: \"true\"\nc: !!str 3\nd: ! 4\ne: !!int '5'\nf: !!float 1\n",
    "{1: a, true: b, 1.0: c}",
    "a: 1\na: 2\n",
    "base: &b {x: 1, y: 2}\nc: *b\nd: *b\n",
    "base: &b {x: 1}\nderived:\n  <<: *b\n  y: 2\n",
    "=: 1\n",
    "a: &a [*a]\n",
    "a: &m {self: *m}\n",
    "when: 2001-12-14t21:59:43.10-05:00\nday: 2002-12-14\n",
    "bin: !!binary aGVsbG8=\n",
    "s: !!set {a, b}\no: !!omap [{a: 1}, {b: 2}]\np: !!pairs [{a: 1}, {a: 2}]\n",
    "- 1\n- [2, [3, {k: v}]]\n",
    "just a string",
    "42",
    "",
    "# only a comment\n",
    "? [a, b]\n: 1\n",
    "? {a: 1}\n: 1\n",
    "x: !custom 1\n",
    "a: [" * 70 + "]" * 70,
    "a: [\n",
    "a: 1\n---\nb: 2\n",
    "a: *nowhere\n",
    "\ufeffa: 1\n",
    "a: ${TP,2}\nb: $PP\n",
]


def _outcome(fn, text):
    try:
        return "ok", fn(text)
    except Exception as exc:  # noqa: BLE001 - the errors must be the same errors
        return type(exc).__name__, str(exc)


def _same(a, b, seen=None) -> bool:
    """Equal values, NaN equal to NaN, and containers that hold themselves compared by shape."""
    seen = seen if seen is not None else set()
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (dict, list)):
        if (id(a), id(b)) in seen:
            return True
        seen.add((id(a), id(b)))
        if isinstance(a, dict):
            return list(a) == list(b) and all(_same(a[k], b[k], seen) for k in a)
        return len(a) == len(b) and all(_same(x, y, seen) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("text", DOCS)
def test_load_is_safe_load(text):
    want = _outcome(lambda t: yaml.load(t, Loader=yaml.CSafeLoader), text)
    got = _outcome(yaml_text.load, text)
    assert got[0] == want[0]
    assert _same(got[1], want[1]) if got[0] == "ok" else got[1] == want[1]


def test_aliases_are_one_object_as_in_safe_load():
    data = yaml_text.load("base: &b {x: 1}\nc: *b\nd: *b\nr: &r [*r]\n")
    assert data["c"] is data["d"] is data["base"]
    assert data["r"][0] is data["r"]


def _marks(node, seen=None):
    seen = seen if seen is not None else set()
    if id(node) in seen:
        return ["alias"]  # a node met again (an alias of a container that holds itself)
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        return [(node.tag, node.start_mark.line, node.start_mark.column)] + [
            m for k, v in node.value for m in _marks(k, seen) + _marks(v, seen)]
    if isinstance(node, yaml.SequenceNode):
        return [(node.tag, node.start_mark.line, node.start_mark.column)] + [
            m for v in node.value for m in _marks(v, seen)]
    return [(node.tag, node.value, node.start_mark.line, node.start_mark.column)]


@pytest.mark.parametrize("text", [d for d in DOCS if _outcome(yaml.safe_load, d)[0] == "ok" and d.strip()
                                  and not d.startswith("# ")])
def test_kept_tree_is_the_composed_tree(text):
    yaml_text.load(text)
    assert _marks(compose_tree(text)) == _marks(yaml.compose(text, Loader=yaml.SafeLoader))


def test_a_text_read_is_composed_once_and_only_its_own_tree_is_handed_out():
    text = "distributed:\n  tp_size: 3\n"
    yaml_text.load(text)
    assert compose_tree(text) is compose_tree("distributed:\n  tp_size: 3\n")  # equal text: the kept tree
    other = compose_tree("distributed:\n  pp_size: 3\n")
    assert other.value[0][1].value[0][0].value == "pp_size"
    merged = "base: &b {x: 1}\nd:\n  <<: *b\n"
    yaml_text.load(merged)  # SafeConstructor rewrites a tree with merge keys: that tree is not kept
    assert compose_tree(merged).value[1][1].value[0][0].tag == "tag:yaml.org,2002:merge"
