"""An external agent-skill folder: `SKILL.md` plus the Markdown files it references.

References are the files under `references/` and any relative `.md` link in SKILL.md; the skill's own
bookkeeping (cards, benchmarks, eval sets) is not knowledge and is left out.
"""
from __future__ import annotations

import re
from pathlib import Path

from ingest.sources.common import DOC_MAX_BYTES, LoadResult, make_document, outside
from ingest.sources.markdown import FrontMatterError, split_front_matter

_LINK = re.compile(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)")
_H1 = re.compile(r"^#\s+(.+)$", re.M)
_CJK = re.compile(r"[\u4e00-\u9fff]")


def skill_files(folder: Path) -> list[Path]:
    files = [folder / "SKILL.md"]
    refs = folder / "references"
    if refs.is_dir():
        files.extend(sorted(refs.rglob("*.md")))
    text = (folder / "SKILL.md").read_text(encoding="utf-8", errors="replace")
    root = folder.resolve()
    for link in _LINK.findall(text):
        target = (folder / link).resolve()
        # Only files inside the folder: a link must not pull in arbitrary files from the disk.
        if target.is_file() and root in target.parents and target not in [f.resolve() for f in files]:
            files.append(target)
    return files


def load_skill_folder(folder: Path) -> LoadResult:
    result = LoadResult()
    for path in skill_files(folder):
        result.files_seen += 1
        if outside(path, folder, f"{folder.name}/.../{path.name}", result):
            continue
        rel = path.resolve().relative_to(folder.resolve()).as_posix()
        shown_path = f"{folder.name}/{rel}"
        raw = path.read_bytes()
        if len(raw) > DOC_MAX_BYTES:
            result.warnings.append(f"{shown_path}: larger than {DOC_MAX_BYTES} bytes, skipped")
            continue
        try:
            meta, body = split_front_matter(raw.decode("utf-8"))
        except (FrontMatterError, UnicodeDecodeError) as exc:
            result.warnings.append(f"{shown_path}: {exc}; skipped")
            continue
        h1 = _H1.search(body)
        title = (h1.group(1).strip() if h1 else "") or str(meta.get("name") or path.stem)
        lang = "zh" if len(_CJK.findall(body)) > len(body) // 10 else "en"
        result.documents.append(make_document(
            doc_id=f"skill:{shown_path}", text=body, title=title, path=shown_path, kind="skill",
            lang=lang, fmt="markdown"))
    return result
