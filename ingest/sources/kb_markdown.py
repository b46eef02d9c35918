"""The project kb: `kb/en/**.md` and `kb/zh/**.md` with front matter, plus `kb/anchors.yaml`.

Front matter: `id` (`<base>.<lang>`), `title`, `lang`, `kind`, `topics`, `upstream`, and for pitfalls
`rule`. Topics and the rule code are embedded with every chunk of the document as keywords, so a
question naming `MW-E-EP-DIVIDES` or `dp_replicate_size` finds the document even when the section it
lands on does not repeat the word.
"""
from __future__ import annotations

from pathlib import Path

from llama_index.core.schema import Document

from ingest.sources import anchors
from ingest.sources.common import DOC_MAX_BYTES, LoadResult, make_document, outside
from ingest.sources.markdown import FrontMatterError, split_front_matter

LANGS = ("en", "zh")
KINDS = ("doc", "pitfall", "anchor", "example", "faq")


def _keywords(meta: dict) -> str:
    words: list[str] = []
    topics = meta.get("topics") or []
    if isinstance(topics, str):
        topics = [topics]
    words.extend(str(t) for t in topics if t)
    if meta.get("rule"):
        words.append(str(meta["rule"]))
    return ", ".join(words)


def load_kb_doc(path: Path, kb_dir: Path, lang_dir: str, result: LoadResult, shown: str = "kb") -> Document | None:
    rel = f"{shown}/{path.relative_to(kb_dir).as_posix()}"
    raw = path.read_bytes()
    if len(raw) > DOC_MAX_BYTES:
        result.warnings.append(f"{rel}: larger than {DOC_MAX_BYTES} bytes, skipped")
        return None
    try:
        meta, body = split_front_matter(raw.decode("utf-8"))
    except (FrontMatterError, UnicodeDecodeError) as exc:
        result.warnings.append(f"{rel}: {exc}; skipped")
        return None
    lang = str(meta.get("lang") or lang_dir)
    doc_id = str(meta.get("id") or "")
    if not doc_id:
        doc_id = f"{path.stem}.{lang}"
        result.warnings.append(f"{rel}: front matter has no id; using {doc_id}")
    if lang != lang_dir:
        result.warnings.append(f"{rel}: lang {lang!r} differs from its directory {lang_dir!r}")
    kind = str(meta.get("kind") or ("pitfall" if "pitfalls" in path.parts else "doc"))
    if kind not in KINDS:
        result.warnings.append(f"{rel}: unknown kind {kind!r}")
    title = str(meta.get("title") or path.stem)
    return make_document(doc_id=doc_id, text=body, title=title, path=rel, kind=kind, lang=lang,
                         fmt="markdown", context=_keywords(meta))


def load_kb(kb_dir: Path, shown: str = "kb") -> LoadResult:
    """`shown` is the path the documents are cited under: `kb` for the bundled kb, the folder itself
    for one added with `meshwise ingest --source` (cited as `kb/...`, it read as if it were bundled)."""
    result = LoadResult()
    seen: set[str] = set()
    for lang_dir in LANGS:
        base = kb_dir / lang_dir
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.md")):
            result.files_seen += 1
            if outside(path, kb_dir, f"{shown}/{path.relative_to(kb_dir).as_posix()}", result):
                continue
            doc = load_kb_doc(path, kb_dir, lang_dir, result, shown)
            if doc is None:
                continue
            if doc.id_ in seen:
                result.warnings.append(f"{shown}/{path.relative_to(kb_dir).as_posix()}: duplicate id {doc.id_}; skipped")
                continue
            seen.add(doc.id_)
            result.documents.append(doc)
    anchors_path = kb_dir / "anchors.yaml"
    if anchors_path.is_file():
        sub = anchors.load_anchors(anchors_path, rel_path=f"{shown}/anchors.yaml")
        result.extend(sub)
    return result
