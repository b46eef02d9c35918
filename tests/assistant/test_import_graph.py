"""No import circle inside a package of assistant/ (issue 18): a module that needs another's helper
imports it from the helper's owner, never through a late import that hides a circle.

The graph is read from the source with `ast` (every import, including those inside functions), so a
circle broken only by importing late still counts.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "assistant"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                # `from pkg import mod` is an edge to pkg.mod, not to pkg's __init__
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
                found = subs + ([target] if len(subs) < len(node.names) else [])
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            else:
                continue
            graph[name].update(t for t in found if t in mods and t != name)
    return graph


def _circles(graph: dict[str, set[str]], prefix: str) -> list[list[str]]:
    """Strongly connected components of more than one module, among the modules under `prefix`."""
    nodes = [m for m in graph if m == prefix or m.startswith(prefix + ".")]
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in nodes:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return found


GRAPH = _edges(_modules())


@pytest.mark.parametrize("package", ["assistant.understand", "assistant.validator", "assistant.compose",
                                     "assistant.launch", "assistant.planner", "assistant.retrieve", "assistant.index",
                                     "assistant.cli"])
def test_no_import_circle(package):
    assert _circles(GRAPH, package) == []


def _writer_calls(path: Path) -> list[str]:
    """`<module>.write(...)` calls of another answer module inside an answers/ module."""
    kinds = {p.stem for p in path.parent.glob("*.py")}
    calls = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "write" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in kinds:
            calls.append(f"{path.name}:{node.lineno} {node.func.value.id}.write")
    return calls


def test_an_answer_module_hands_an_ask_over_instead_of_calling_its_writer():
    """A module that does not answer an ask returns Part(handoff=kind); the registry's write() follows
    it. The one writer still called directly is config's (it writes the field facts, then its YAML)."""
    answers = PACKAGE / "compose" / "answers"
    calls = [c for p in sorted(answers.glob("*.py")) if p.name != "__init__.py" for c in _writer_calls(p)]
    assert [c.split(" ")[1] for c in calls] == ["fact.write"] and calls[0].startswith("config.py:")


def test_the_reader_finds_a_circle(tmp_path):
    graph = {"p.a": {"p.b"}, "p.b": {"p.a"}, "p.c": {"p.a"}}
    assert _circles(graph, "p") == [["p.a", "p.b"]]
