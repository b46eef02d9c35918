"""The import graph: ingest builds, assistant/retrieve searches, both stand on assistant/index.

Read from the source (every import statement, lazy ones inside functions included), so a shortcut
taken in a function body breaks the test as surely as one at the top of a module.
"""
from __future__ import annotations

import ast
from pathlib import Path

from assistant.config import REPO_ROOT

LAYERS = ("ingest", "assistant.index", "assistant.retrieve")
# What each layer must never import (a prefix matches the package and its modules).
FORBIDDEN = {
    "assistant.index": ("ingest", "assistant.retrieve"),
    "assistant.retrieve": ("ingest",),
    "ingest": ("assistant.retrieve",),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)  # `from pkg import module`
    return out


def graph() -> dict[str, set[str]]:
    mods = {}
    for layer in LAYERS:
        for path in sorted((REPO_ROOT / layer.replace(".", "/")).rglob("*.py")):
            mods[_module_name(path)] = _imports(path)
    return mods


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_each_layer_imports_only_what_is_below_it():
    bad = []
    for mod, imports in graph().items():
        layer = max((p for p in FORBIDDEN if _under(mod, p)), key=len)
        bad += [f"{mod} imports {imp}" for imp in sorted(imports)
                if any(_under(imp, f) for f in FORBIDDEN[layer])]
    assert not bad, bad


def test_no_two_modules_import_each_other():
    g = graph()
    known = set(g)
    edges = {m: {i for i in imps if i in known and i != m} for m, imps in g.items()}
    # A package's __init__ naming its own submodules (lazy loaders) is the package, not a cycle.
    cycles = sorted(f"{a} <-> {b}" for a in edges for b in edges[a]
                    if a < b and a in edges.get(b, set()) and not _under(b, a) and not _under(a, b))
    assert not cycles, cycles


def test_the_graph_is_read_from_real_imports():
    """Guards the scanner itself: known edges must show up."""
    g = graph()
    assert "assistant.index.status" in g["assistant.retrieve.retriever"]
    assert "assistant.index.manifest" in g["ingest.pipeline"]
    assert "ingest.pipeline" in g["ingest.refresh"]
