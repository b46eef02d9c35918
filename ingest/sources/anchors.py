"""Code anchors (`kb/anchors.yaml`): one document and one chunk per anchor.

An anchor names an upstream file, its symbols, what they do and the questions they answer ("where is
the mesh built?"). The file is data owned by the kb writers, so the loader accepts any mapping per
anchor and renders every field; it only needs a path or an id to name the anchor.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from ingest.chunking import MAX_TOKENS, Chunk, count_tokens, split_to_fit
from ingest.sources.common import LoadResult, make_document

ANCHORS_MAX_BYTES = 1024 * 1024
_PATH_KEYS = ("path", "file", "upstream", "module")
_ID_KEYS = ("id", "name")


def _entries(data) -> list[dict]:
    if isinstance(data, list):
        return [e for e in data if isinstance(e, dict)]
    if isinstance(data, dict):
        for key in ("anchors", "entries", "items"):
            if isinstance(data.get(key), list):
                return [e for e in data[key] if isinstance(e, dict)]
        # A mapping of id -> entry.
        out = []
        for k, v in data.items():
            if isinstance(v, dict):
                out.append({"id": k, **v})
        return out
    return []


def _render_value(v, indent: str = "") -> str:
    if isinstance(v, dict):
        return "\n".join(f"{indent}{k}: {_render_value(x, indent + '  ').lstrip()}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return "\n".join(f"{indent}- {_render_value(x, indent + '  ').lstrip()}" for x in v)
    return f"{indent}{v}"


def render_anchor(entry: dict) -> str:
    lines = []
    for k, v in entry.items():
        if v is None or v == "" or v == []:
            continue
        if isinstance(v, (list, dict)):
            lines.append(f"{k}:\n{_render_value(v, '  ')}")
        else:
            lines.append(f"{k}: {v}")
    return "\n".join(lines)


def _first(entry: dict, keys: tuple[str, ...]) -> str:
    for k in keys:
        v = entry.get(k)
        if isinstance(v, str) and v.strip():
            return v.strip()
        if isinstance(v, list) and v and isinstance(v[0], str):
            return v[0]
        if isinstance(v, dict):  # bilingual {en: ..., zh: ...}
            en = v.get("en")
            if isinstance(en, str) and en.strip():
                return en.strip()
    return ""


def load_anchors(path: Path, rel_path: str) -> LoadResult:
    result = LoadResult(files_seen=1)
    raw = path.read_bytes()
    if len(raw) > ANCHORS_MAX_BYTES:
        result.warnings.append(f"{rel_path}: larger than {ANCHORS_MAX_BYTES} bytes, skipped")
        return result
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        result.warnings.append(f"{rel_path}: not valid YAML ({exc}); skipped")
        return result
    seen: set[str] = set()
    for i, entry in enumerate(_entries(data)):
        upstream_path = _first(entry, _PATH_KEYS)
        name = _first(entry, _ID_KEYS) or upstream_path
        if not name:
            result.warnings.append(f"{rel_path}: anchor #{i + 1} has neither id nor path; skipped")
            continue
        doc_id = f"anchor:{name}"
        if doc_id in seen:
            doc_id = f"{doc_id}~{i + 1}"
        seen.add(doc_id)
        title = name if name == upstream_path or not upstream_path else f"{name} ({upstream_path})"
        text = render_anchor(entry)
        result.documents.append(make_document(
            doc_id=doc_id, text=text, title=title[:200], path=upstream_path or rel_path, kind="anchor",
            lang="en", fmt="anchor", context=""))
    return result


def chunk_anchor(text: str, title: str) -> list[Chunk]:
    """One chunk per anchor; an oversized anchor is split rather than truncated by the encoder."""
    heading = f"Code anchor > {title}"
    budget = MAX_TOKENS - count_tokens(heading) - 1
    return [Chunk(text=piece, heading=heading) for piece in split_to_fit(text, budget)]
