"""A NeMo AutoModel source checkout, parsed with `ast` into code-anchor chunks.

One chunk per module, class and function: its dotted name, signature, the first paragraph of its
docstring, dataclass fields, and the messages of its `raise` and `assert` statements (that is where the
start-up validation lives), with the path and line, so an answer can point at the exact code of the
version the user runs. Function bodies are not indexed: names, contracts and error texts are what
questions are about, and they keep each chunk within the encoder's window.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Callable, Iterator

from ingest.chunking import MAX_TOKENS, Chunk, count_tokens, split_to_fit
from ingest.sources.common import DOC_MAX_BYTES, LoadResult, make_document, outside

SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", "venv", "build", "dist", ".tox", ".mypy_cache",
             ".pytest_cache", "site-packages"}
_DOC_TOKENS = 90  # docstring share of a chunk; signatures and raise messages matter more
_MSG_CHARS = 240


def is_python_checkout(path: Path) -> bool:
    if not path.is_dir():
        return False
    if (path / "pyproject.toml").is_file() or (path / "setup.py").is_file():
        return True
    return any(path.glob("*.py")) or any(path.glob("*/__init__.py"))


def walk_files(root: Path, on_link: Callable[[Path], None] | None = None) -> Iterator[Path]:
    """Every file under root in a stable order, skipping VCS, caches, virtual envs and symbolic links
    (each link handed to `on_link`): a link inside repeats a file, one outside is not the checkout."""
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            entries = sorted(d.iterdir(), key=lambda p: p.name, reverse=True)
        except OSError:
            continue
        for p in entries:
            if p.is_symlink():
                if on_link:
                    on_link(p)
                continue
            if p.is_dir():
                if p.name not in SKIP_DIRS and not p.name.startswith("."):
                    stack.append(p)
            elif p.is_file():
                yield p


def load_checkout(root: Path, on_file: Callable[[Path], None] | None = None) -> LoadResult:
    """One Document per `.py` file (the text is the source, so an edit changes its hash)."""
    result = LoadResult()
    prefix = f"code:{root.resolve().name}/"
    for path in walk_files(root, on_link=lambda p: outside(p, root, f"{prefix}{p.relative_to(root).as_posix()}",
                                                           result)):
        result.files_seen += 1
        if on_file:
            on_file(path)
        if path.suffix != ".py":
            continue
        rel = path.relative_to(root).as_posix()
        raw = path.read_bytes()
        if len(raw) > DOC_MAX_BYTES:
            result.warnings.append(f"{rel}: larger than {DOC_MAX_BYTES} bytes, skipped")
            continue
        result.documents.append(make_document(
            doc_id=prefix + rel, text=raw.decode("utf-8", errors="replace"), title=rel, path=rel, kind="code",
            lang="en", fmt="python"))
    return result


def _first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    para = doc.strip().split("\n\n", 1)[0].strip()
    if count_tokens(para) > _DOC_TOKENS:
        para = split_to_fit(para, _DOC_TOKENS)[0].rstrip() + " ..."
    return para


def _message(node: ast.expr | None) -> str:
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    else:
        try:
            text = ast.unparse(node)
        except Exception:
            return ""
    text = " ".join(text.split())
    return text if len(text) <= _MSG_CHARS else text[:_MSG_CHARS] + "..."


def _raises(fn: ast.AST) -> list[str]:
    """`ExcType: message` of each raise and `assert cond: message`, in source order; nested
    functions and classes keep their own."""
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Raise) and child.exc is not None:
                exc = child.exc
                if isinstance(exc, ast.Call):
                    name = _message(exc.func)
                    msg = _message(exc.args[0]) if exc.args else ""
                    out.append(f"raise {name}: {msg}" if msg else f"raise {name}")
                else:
                    out.append(f"raise {_message(exc)}")
            elif isinstance(child, ast.Assert):
                cond = _message(child.test)
                msg = _message(child.msg)
                out.append(f"assert {cond}" + (f": {msg}" if msg else ""))
            visit(child)

    visit(fn)
    seen: set[str] = set()
    return [x for x in out if not (x in seen or seen.add(x))]


def _signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    prefix = "async def" if isinstance(fn, ast.AsyncFunctionDef) else "def"
    ret = f" -> {ast.unparse(fn.returns)}" if fn.returns is not None else ""
    return f"{prefix} {fn.name}({ast.unparse(fn.args)}){ret}"


def _decorators(node) -> list[str]:
    return [f"@{ast.unparse(d)}" for d in node.decorator_list]


def _fields(cls: ast.ClassDef) -> list[str]:
    out = []
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            default = f" = {_message(stmt.value)}" if stmt.value is not None else ""
            out.append(f"{stmt.target.id}: {ast.unparse(stmt.annotation)}{default}")
    return out


def _chunk(path: str, qualname: str, lines: list[str], line: int, kind: str = "code") -> list[Chunk]:
    heading = f"{path} > {qualname}" if qualname else path
    text = "\n".join(x for x in lines if x is not None)
    budget = MAX_TOKENS - count_tokens(heading) - 1
    return [Chunk(text=piece, heading=heading, kind=kind, line=line, extra={"symbol": qualname})
            for piece in split_to_fit(text, budget)]


def _function_chunks(path: str, fn, qual: str) -> list[Chunk]:
    raises = _raises(fn)
    doc = _first_paragraph(ast.get_docstring(fn))
    if fn.name.startswith("_") and fn.name != "__init__" and not doc and not raises:
        return []  # a private helper with nothing to say adds noise, not answers
    lines = [f"{path}:{fn.lineno}", *_decorators(fn), _signature(fn)]
    if doc:
        lines.append(doc)
    if raises:
        lines.append("Raises / checks:")
        lines.extend(f"- {r}" for r in raises)
    return _chunk(path, qual, lines, fn.lineno)


def is_test_file(path: str) -> bool:
    parts = path.split("/")
    return "tests" in parts[:-1] or "test" in parts[:-1] or parts[-1].startswith("test_")


def chunk_python(source: str, path: str) -> list[Chunk]:
    """Code-anchor chunks of one file; a file that does not parse gives none. Test files give only
    their module chunk (the test names): two thirds of a checkout's functions are tests, and one
    chunk each would bury the library code they test."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    symbols = not is_test_file(path)
    out: list[Chunk] = []
    top_names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            top_names.append(f"{node.name}()")
            if symbols:
                out.extend(_function_chunks(path, node, node.name))
        elif isinstance(node, ast.ClassDef):
            top_names.append(node.name)
            if symbols:
                out.extend(_class_chunks(path, node, node.name))
    module = path[:-3].replace("/", ".") if path.endswith(".py") else path
    doc = _first_paragraph(ast.get_docstring(tree))
    head = [f"{path}:1", f"module {module}"]
    if doc:
        head.append(doc)
    if top_names:
        head.append("Defines: " + ", ".join(top_names))
    if doc or top_names:
        out[:0] = _chunk(path, "", head, 1)
    return out


def _class_chunks(path: str, cls: ast.ClassDef, qual: str) -> list[Chunk]:
    bases = ", ".join(ast.unparse(b) for b in cls.bases + cls.keywords) if (cls.bases or cls.keywords) else ""
    lines = [f"{path}:{cls.lineno}", *_decorators(cls), f"class {cls.name}({bases})" if bases else f"class {cls.name}"]
    doc = _first_paragraph(ast.get_docstring(cls))
    if doc:
        lines.append(doc)
    fields = _fields(cls)
    if fields:
        lines.append("Fields:")
        lines.extend(f"- {f}" for f in fields)
    methods = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if methods:
        lines.append("Methods: " + ", ".join(m.name for m in methods))
    out = _chunk(path, qual, lines, cls.lineno)
    for m in methods:
        out.extend(_function_chunks(path, m, f"{qual}.{m.name}"))
    for inner in (n for n in cls.body if isinstance(n, ast.ClassDef)):
        out.extend(_class_chunks(path, inner, f"{qual}.{inner.name}"))
    return out
