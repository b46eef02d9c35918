"""One YAML document read once: the values `yaml.safe_load` gives, and the node tree (with its marks)
that validator/locate.py places findings on.

libyaml composes the node tree in C; PyYAML's SafeConstructor then turns it into values in Python,
one generator per mapping: that was half of reading a recipe (15 of 30 us a text on the throughput
mix). Here the tree of plain documents (str, int, float, bool and null scalars under `map` and `seq`
nodes, aliases included, at most MAX_DEPTH deep) is turned into values by one direct walk that
builds what SafeConstructor builds: the same dict for every alias of an anchor, a container that
holds itself, the last of a repeated key. Anything else (merge keys `<<`, `=`, explicit or rare tags
such as timestamps and sets, a non-scalar key, deeper nesting) goes to SafeConstructor's own
`construct_document`, so its values and its errors stay exactly safe_load's.

The tree of the last text read is kept (one slot): `meshwise validate` reads a text, validates it and
then locates its findings in the same text, which no longer composes it twice. A slot is compared by
value, so a tree is only ever handed out for the text it was composed from.
"""
from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

try:  # libyaml when present: C speed for the parse, marks kept on every node
    _Base = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Base = yaml.SafeLoader
_TAG_CACHE_MAX = 4096

MAX_DEPTH = 64  # deeper documents take SafeConstructor's path (coerce refuses them after the load anyway)
_P = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL, _MAP, _SEQ = (_P + t for t in ("str", "int", "float", "bool", "null", "map", "seq"))
_SCALAR_TAGS = frozenset({_STR, _INT, _FLOAT, _BOOL, _NULL})
_SAFE = SafeConstructor()  # its scalar constructors read only the node: one instance serves every call


class Loader(_Base):
    """The safe loader, with the tag resolution libyaml asks Python for on every node made cheaper (a
    third of composing a recipe): the safe loader has no path resolvers, so descending and ascending
    do nothing and a plain scalar's tag depends only on its text, which is remembered (bounded)."""

    _tags: dict[str, str] = {}

    def resolve(self, kind, value, implicit):  # noqa: ANN001 - PyYAML's signature
        if kind is ScalarNode:
            if not implicit[0]:
                return self.DEFAULT_SCALAR_TAG  # quoted, or a non-specific `!` tag: a string
            tag = self._tags.get(value)
            if tag is None:
                tag = _Base.resolve(self, kind, value, implicit)
                if len(self._tags) < _TAG_CACHE_MAX:
                    self._tags[value] = tag
            return tag
        return self.DEFAULT_MAPPING_TAG if kind is MappingNode else self.DEFAULT_SEQUENCE_TAG

    def descend_resolver(self, current_node, current_index):  # noqa: ANN001
        pass

    def ascend_resolver(self):
        pass


# the shortcuts above hold only while nobody registers a path resolver (yaml.add_path_resolver)
assert not _Base.yaml_path_resolvers


class _Other(Exception):
    """The document needs SafeConstructor itself."""


_last: tuple[Any, Any] = (None, None)  # (text, its tree) of the last plain document read


def _scalar(node: ScalarNode) -> Any:
    tag = node.tag
    if tag == _STR:
        return node.value
    if tag == _INT:
        v = node.value
        if v.isascii() and v.isdigit() and (v[0] != "0" or v == "0"):
            return int(v)  # plain decimal; octal, hex, `_`, signs and base 60 go through PyYAML's own
        return _SAFE.construct_yaml_int(node)
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return _SAFE.construct_yaml_bool(node)
    if tag == _FLOAT:
        return _SAFE.construct_yaml_float(node)
    raise _Other


def _value(node: Any, memo: dict[int, Any], depth: int) -> Any:
    cls = type(node)
    if cls is ScalarNode:
        return _scalar(node)
    done = memo.get(id(node))
    if done is not None:
        return done  # an alias (or the container itself): the object already built for its anchor
    if depth > MAX_DEPTH:
        raise _Other
    if cls is MappingNode and node.tag == _MAP:
        out: dict = {}
        memo[id(node)] = out
        for k, v in node.value:
            if type(k) is not ScalarNode or k.tag not in _SCALAR_TAGS:
                raise _Other  # `<<` merge, `=` value keys, a collection as a key (an error upstream too)
            key = k.value if k.tag == _STR else _scalar(k)
            if type(v) is ScalarNode:  # most values: read here, without a call per value
                out[key] = v.value if v.tag == _STR else _scalar(v)
            else:
                out[key] = _value(v, memo, depth + 1)
        return out
    if cls is SequenceNode and node.tag == _SEQ:
        items: list = []
        memo[id(node)] = items
        for v in node.value:
            items.append(_value(v, memo, depth + 1))
        return items
    raise _Other


def load(text: str) -> Any:
    """yaml.safe_load(text); raises what it raises."""
    global _last
    loader = Loader(text)
    try:
        tree = loader.get_single_node()
        if tree is None:
            return None
        try:
            data = _value(tree, {}, 0)
        except _Other:
            return loader.construct_document(tree)  # may rewrite the tree (merge keys): not kept
        _last = (text, tree)
        return data
    finally:
        loader.dispose()


def compose(text: str | bytes) -> yaml.Node | None:
    """yaml.compose(text) with the safe loader; the tree `load` kept when it read this same text."""
    last_text, tree = _last
    if last_text is not None and last_text is not text and type(text) is bytes:
        try:  # a file read as bytes (the CLI), loaded after decoding: the same document
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            pass
    if last_text is text or (type(text) is str and type(last_text) is str and last_text == text):
        return tree
    return yaml.compose(text, Loader=Loader)
