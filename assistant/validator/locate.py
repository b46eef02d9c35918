"""Where a finding stands in the user's input: the file, line and column of the YAML node its dotted
path names, or the launch-line argument (an override) that set it.

Run only when a report is printed, never inside `validate()`: composing the node tree costs about
as much as the validation itself, and most callers (the gate, the planner) only want the verdict.

A path the file does not spell out (an implied default: `distributed.pipeline` when there is no
such block) is placed at the deepest section the file does have; a path under no section at all, at
the first line. An override (any object with `.path`, a dotted string or a sequence of keys, and
`.argument`, the text the user typed) names a finding when it set the finding's own key or a section
above it (a mapping value replaces the subtree), or when it set a key of the same section that the
finding's message names (`pp_size` in "world_size (4) must be divisible by tp_size*cp_size*pp_size").
The last such override wins, as the last one on the command line wins upstream.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Sequence

import yaml

from assistant.validator import yaml_text
from assistant.validator.report import Finding, ValidationReport
from assistant.validator.schema import RECIPE_KEYS

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True)
class Location:
    file: str | None  # as the user named it ("-" for standard input); None for text with no file
    line: int  # 1-based
    col: int  # 1-based
    argument: str | None = None  # the override on the launch line that set (or caused) the finding

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "column": self.col, "argument": self.argument}


def compose_tree(text: str | bytes | None) -> yaml.Node | None:
    """The node tree of one YAML document (safe loader, no object construction), or None when the
    text is not one: a finding then stands at line 1."""
    if text is None:
        return None
    try:
        return yaml_text.compose(text)  # the tree validate() composed when it read this text
    except (yaml.YAMLError, ValueError, RecursionError):
        return None


def segments(path: str | Sequence[Any]) -> list[str | int]:
    """`distributed.pipeline.pp_schedule` -> keys; `a.b[2]` -> ["a", "b", 2]."""
    if not isinstance(path, str):
        return [p if isinstance(p, int) else str(p) for p in path]
    return list(_split(path))


@lru_cache(maxsize=1024)
def _split(path: str) -> tuple[str | int, ...]:
    # each finding reads its path and every override's path: cached, a fifth of placing findings
    return tuple(m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _SEGMENT.finditer(path))


def _child(node: yaml.Node, key: str | int) -> tuple[yaml.Node, yaml.Node] | None:
    """(the node that names the child, the child's value), or None when the node has no such child."""
    if isinstance(node, yaml.MappingNode):
        for k, v in reversed(node.value):  # a repeated key: the last one is what the loader keeps
            if isinstance(k, yaml.ScalarNode) and k.value == str(key):
                return k, v
    elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
        item = node.value[key]
        return item, item
    return None


def _is_bare(tree: yaml.Node) -> bool:
    """A bare `distributed:` mapping (no recipe section): the validator reads it as `distributed`."""
    if not isinstance(tree, yaml.MappingNode):
        return False
    keys = {k.value for k, _ in tree.value if isinstance(k, yaml.ScalarNode)}
    return RECIPE_KEYS.isdisjoint(keys)


def node_mark(tree: yaml.Node | None, path: str | Sequence[Any]) -> tuple[int, int]:
    """(line, col), 1-based, of the key that names `path`, or of the deepest section above it the file has."""
    return _mark(tree, _keys(path), tree is not None and _is_bare(tree))


def _keys(path: str | Sequence[Any]) -> tuple[str | int, ...]:
    return _split(path) if isinstance(path, str) else tuple(segments(path))


def _mark(tree: yaml.Node | None, keys: tuple[str | int, ...], bare: bool) -> tuple[int, int]:
    if tree is None:
        return 1, 1
    if keys and keys[0] == "distributed" and bare:
        keys = keys[1:]
    node, mark = tree, tree.start_mark
    for key in keys:
        found = _child(node, key)
        if found is None:
            break
        name, node = found
        mark = name.start_mark
    return mark.line + 1, mark.column + 1


@lru_cache(maxsize=256)
def _mention(leaf: str) -> re.Pattern[str]:
    # a message names a sibling key as a whole word; compiled once per key, not per finding
    return re.compile(rf"(?<![\w.]){re.escape(leaf)}(?!\w)")


def _names(finding: Finding, keys: tuple[str | int, ...], opath: tuple[str | int, ...]) -> bool:
    if opath == keys[: len(opath)]:
        return True  # its own key, or a section above it that the override replaced
    if len(opath) < 1 or opath[:-1] != keys[: len(opath) - 1]:
        return False  # a key of another section
    leaf = opath[-1]
    return isinstance(leaf, str) and _mention(leaf).search(finding.message) is not None


_last_ordered: tuple[Any, list] = ((), [])  # (the overrides tuple, its _ordered list) of the last report


def _ordered(overrides: Iterable[Any]) -> list[tuple[Any, tuple[str | int, ...]]]:
    """The overrides in launch-line order, each with its keys: read once per report, not per finding.

    One launch line's overrides are placed in the report of every file and world size it is checked
    with: the same tuple (immutable) gets the same list back, which the callers only read. Sorting it
    again was 4% of a validation with line mapping (benchmarks/validator_throughput.py)."""
    global _last_ordered
    if type(overrides) is tuple and overrides is _last_ordered[0]:
        return _last_ordered[1]
    out = [(o, _keys(o.path)) for o in sorted(overrides, key=lambda o: getattr(o, "index", 0))]
    if type(overrides) is tuple:
        _last_ordered = (overrides, out)
    return out


def _last_naming(finding: Finding, keys: tuple[str | int, ...], ordered: list[tuple[Any, tuple]]) -> Any | None:
    hit = None
    for o, opath in ordered:
        if _names(finding, keys, opath):
            hit = o
    return hit


def override_for(finding: Finding, overrides: Iterable[Any]) -> Any | None:
    """The last override that set the finding's key, a section above it, or a sibling its message names."""
    return _last_naming(finding, _keys(finding.path), _ordered(overrides))


def locate(finding: Finding, tree: yaml.Node | None, overrides: Iterable[Any] = (), file: str | None = None) -> Location:
    return _place(finding, tree, tree is not None and _is_bare(tree), _ordered(overrides), file)


def _place(finding: Finding, tree: yaml.Node | None, bare: bool, ordered: list[tuple[Any, tuple]],
           file: str | None) -> Location:
    keys = _keys(finding.path)
    line, col = _mark(tree, keys, bare)
    o = _last_naming(finding, keys, ordered) if ordered else None
    return Location(file, line, col, getattr(o, "argument", None) if o is not None else None)


def locate_report(report: ValidationReport, text: str | bytes | None, file: str | None = None,
                  overrides: Sequence[Any] = ()) -> list[tuple[Finding, Location]]:
    """Every finding of the report (errors first, in order) with its place; the text composed once."""
    findings = (*report.errors, *report.warnings)
    if not findings:
        return []
    tree = compose_tree(text)
    bare, ordered = tree is not None and _is_bare(tree), _ordered(overrides)  # once for every finding
    return [(f, _place(f, tree, bare, ordered, file)) for f in findings]
