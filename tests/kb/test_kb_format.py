"""Format checks for the knowledge base: front matter, en/zh pairing, YAML snippets, data files.

Generic on purpose: every kb Markdown file and data file is checked the same way, whoever wrote it.
The upstream-path check runs only when MESHWISE_UPSTREAM_SRC points at a NeMo AutoModel checkout.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from assistant.config import KB_DIR

LANGS = ("en", "zh")
KINDS = {"doc", "pitfall", "anchor", "example", "faq"}
REQUIRED = ("id", "title", "lang", "kind", "topics", "upstream")
YAML_FENCE = re.compile(r"^```ya?ml[^\n]*\n(.*?)^```", re.S | re.M)
CJK = re.compile(r"[\u4e00-\u9fff]")
RULE_CODE = re.compile(r"^MW-[EW]-[A-Z0-9-]+$")
# Tracked files must not name machine-local paths (team rule); the upstream checkout comes from an env var.
FORBIDDEN_PATHS = ("/work/upstream-src", "/tmp/", "/root/")
# Heading-aware chunks are embedded by a model that truncates at 256 tokens: keep the prose of a
# section (code fences excluded) short enough to be embedded whole.
MAX_SECTION_PROSE_WORDS_EN = 260


def _kb_markdown() -> list[Path]:
    return sorted(p for lang in LANGS for p in (KB_DIR / lang).rglob("*.md"))


def _split_front_matter(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path}: no front matter"
    end = text.find("\n---\n", 4)
    assert end > 0, f"{path}: front matter is not closed by a '---' line"
    meta = yaml.safe_load(text[4:end])
    assert isinstance(meta, dict), f"{path}: front matter is not a mapping"
    return meta, text[end + 5 :]


def _relative(path: Path) -> Path:
    """Path below kb/<lang>/, e.g. pitfalls/pitfall-x.md."""
    return path.relative_to(KB_DIR / path.relative_to(KB_DIR).parts[0])


DOCS = _kb_markdown()


def test_kb_has_documents_in_both_languages():
    for lang in LANGS:
        assert any((KB_DIR / lang).rglob("*.md")), f"no Markdown files under kb/{lang}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(KB_DIR)))
def test_front_matter(path: Path):
    meta, body = _split_front_matter(path)
    missing = [k for k in REQUIRED if k not in meta]
    assert not missing, f"{path}: missing front-matter fields {missing}"
    lang = path.relative_to(KB_DIR).parts[0]
    assert meta["lang"] == lang, f"{path}: lang {meta['lang']!r} but the file is under kb/{lang}"
    assert meta["id"] == f"{path.stem}.{lang}", f"{path}: id {meta['id']!r} should be {path.stem}.{lang}"
    assert meta["kind"] in KINDS, f"{path}: kind {meta['kind']!r} not in {sorted(KINDS)}"
    assert isinstance(meta["title"], str) and meta["title"].strip()
    for key in ("topics", "upstream"):
        value = meta[key]
        assert isinstance(value, list) and value, f"{path}: {key} must be a non-empty list"
        assert all(isinstance(v, str) and v.strip() for v in value), f"{path}: {key} entries must be strings"
    if meta["kind"] == "pitfall":
        assert "rule" in meta, f"{path}: a pitfall needs a rule field (a validator code or null)"
        assert meta["rule"] is None or RULE_CODE.match(str(meta["rule"])), f"{path}: bad rule {meta['rule']!r}"
    if meta["kind"] == "doc":  # pitfalls and other short kinds are one chunk each, without sections
        assert re.search(r"^## \S", body, re.M), f"{path}: no '## ' section heading for heading-aware chunking"
    if lang == "zh":
        assert CJK.search(body), f"{path}: a zh document without Chinese text"


def test_ids_are_unique():
    seen: dict[str, Path] = {}
    for path in DOCS:
        doc_id = _split_front_matter(path)[0].get("id")
        assert doc_id not in seen, f"duplicate id {doc_id!r}: {seen[doc_id]} and {path}"
        seen[doc_id] = path


def test_every_document_has_its_counterpart_in_the_other_language():
    by_lang = {lang: {_relative(p) for p in DOCS if p.relative_to(KB_DIR).parts[0] == lang} for lang in LANGS}
    assert by_lang["en"] - by_lang["zh"] == set(), "English documents without a Chinese counterpart"
    assert by_lang["zh"] - by_lang["en"] == set(), "Chinese documents without an English counterpart"


def test_counterparts_share_kind_and_rule():
    for path in DOCS:
        if path.relative_to(KB_DIR).parts[0] != "en":
            continue
        zh_path = KB_DIR / "zh" / _relative(path)
        if not zh_path.exists():
            continue  # reported by the pairing test
        en_meta, zh_meta = _split_front_matter(path)[0], _split_front_matter(zh_path)[0]
        assert en_meta["kind"] == zh_meta["kind"], f"{path.stem}: kind differs between en and zh"
        assert en_meta.get("rule") == zh_meta.get("rule"), f"{path.stem}: rule differs between en and zh"


def test_catalog_and_documents_agree():
    catalog = yaml.safe_load((KB_DIR / "catalog.yaml").read_text(encoding="utf-8"))
    planned = set(catalog.get("docs") or {}) | set(catalog.get("pitfalls") or {})
    stems = {p.stem for p in DOCS}
    kinds = {p.stem: _split_front_matter(p)[0]["kind"] for p in DOCS}
    unplanned = {s for s in stems if s not in planned and kinds[s] in ("doc", "pitfall")}
    assert not unplanned, f"documents whose base id is not in kb/catalog.yaml: {sorted(unplanned)}"
    assert planned - stems == set(), f"catalog ids without documents: {sorted(planned - stems)}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(KB_DIR)))
def test_yaml_snippets_parse(path: Path):
    body = _split_front_matter(path)[1]
    for i, block in enumerate(YAML_FENCE.findall(body)):
        try:
            yaml.safe_load(block)
        except yaml.YAMLError as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"{path}: yaml block {i} does not parse: {exc}")


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(KB_DIR)))
def test_no_machine_local_paths(path: Path):
    text = path.read_text(encoding="utf-8")
    for bad in FORBIDDEN_PATHS:
        assert bad not in text, f"{path}: names the machine-local path {bad!r}"


@pytest.mark.parametrize(
    "path",
    [p for p in DOCS if p.relative_to(KB_DIR).parts[0] == "en"],
    ids=lambda p: str(p.relative_to(KB_DIR)),
)
def test_english_sections_fit_the_embedding_window(path: Path):
    body = _split_front_matter(path)[1]
    for section in re.split(r"\n(?=## )", body):
        prose = re.sub(r"```.*?```", "", section, flags=re.S)
        words = len(prose.split())
        heading = section.strip().splitlines()[0] if section.strip() else ""
        assert words <= MAX_SECTION_PROSE_WORDS_EN, f"{path}: section {heading!r} has {words} prose words"


# ---------------------------------------------------------------------------- data files


def _load(name: str):
    return yaml.safe_load((KB_DIR / name).read_text(encoding="utf-8"))


def test_glossary_entries():
    data = _load("glossary.yaml")
    terms = data["terms"]
    assert len(terms) >= 80
    seen: dict[str, int] = {}
    for i, term in enumerate(terms):
        assert set(term) >= {"zh", "en"}, f"glossary entry {i} lacks zh or en"
        for key in ("zh", "en"):
            assert isinstance(term[key], list) and term[key], f"glossary entry {i}: {key} must be a non-empty list"
            assert all(isinstance(v, str) and v.strip() for v in term[key]), f"glossary entry {i}: bad {key}"
        assert any(CJK.search(v) for v in term["zh"]), f"glossary entry {i}: no Chinese variant"
        for variant in term["zh"]:
            # one variant, one expansion: a variant listed twice would expand ambiguously
            assert variant not in seen, f"zh variant {variant!r} in entries {seen[variant]} and {i}"
            seen[variant] = i


def test_anchor_entries():
    anchors = _load("anchors.yaml")["anchors"]
    assert len(anchors) >= 30
    ids = [a.get("id") for a in anchors]
    assert len(ids) == len(set(ids)), "duplicate anchor ids"
    for a in anchors:
        assert set(a) >= {"id", "path", "symbols", "summary", "summary_zh", "questions"}, a.get("id")
        assert isinstance(a["path"], str) and not a["path"].startswith("/"), a["id"]
        assert isinstance(a["symbols"], list) and a["symbols"], a["id"]
        assert CJK.search(a["summary_zh"]), f"{a['id']}: summary_zh is not Chinese"
        questions = a["questions"]
        assert isinstance(questions, list) and questions, a["id"]
        assert any(CJK.search(q) for q in questions), f"{a['id']}: no Chinese question"
        assert any(not CJK.search(q) for q in questions), f"{a['id']}: no English question"


def _defines(source: str, name: str) -> bool:
    pattern = rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b|^\s*{re.escape(name)}\s*[:=]"
    return re.search(pattern, source, re.M) is not None


@pytest.mark.skipif(not os.environ.get("MESHWISE_UPSTREAM_SRC"), reason="MESHWISE_UPSTREAM_SRC not set")
def test_anchor_paths_and_symbols_exist_upstream():
    root = Path(os.environ["MESHWISE_UPSTREAM_SRC"])
    problems = []
    for a in _load("anchors.yaml")["anchors"]:
        target = root / a["path"]
        if not target.exists():
            problems.append(f"{a['id']}: {a['path']} does not exist")
            continue
        if target.is_dir():
            continue
        source = target.read_text(encoding="utf-8", errors="replace")
        for symbol in a["symbols"]:
            # "Class.method" needs both names defined in the file
            missing = [part for part in symbol.split(".") if not _defines(source, part)]
            if missing:
                problems.append(f"{a['id']}: {symbol} not defined in {a['path']}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------- snippets vs upstream

WORLD_MARKER = re.compile(r"^#\s*world_size:\s*(\d+)")


def _marked_snippets() -> list[tuple[str, int, dict]]:
    """YAML blocks whose first line is `# world_size: N` and that hold a distributed section."""
    found = []
    for path in DOCS:
        for i, block in enumerate(YAML_FENCE.findall(_split_front_matter(path)[1])):
            lines = block.splitlines()
            match = WORLD_MARKER.match(lines[0]) if lines else None
            data = yaml.safe_load(block) if match else None
            if isinstance(data, dict) and isinstance(data.get("distributed"), dict):
                found.append((f"{path.relative_to(KB_DIR)}#{i}", int(match.group(1)), data))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("MESHWISE_UPSTREAM_SRC"), reason="MESHWISE_UPSTREAM_SRC not set")
def test_marked_snippets_are_accepted_by_upstream_start_up_code():
    """A snippet that states its world size must pass the upstream distributed set-up at that size.

    Runs the upstream parser and mesh construction on a fake process group (no GPU), then the
    schedule-name, pipeline-microbatch and step-scheduler rules the recipe applies later.
    """
    import sys

    sys.path.insert(0, os.environ["MESHWISE_UPSTREAM_SRC"])
    import torch.distributed as dist
    from torch.distributed.pipelining.schedules import get_schedule_class
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from nemo_automodel.components.config.loader import translate_value
    from nemo_automodel.recipes._dist_utils import create_distributed_setup_from_config

    def coerce(value):  # what the upstream YAML loader does to scalars before parsing
        if isinstance(value, dict):
            return {k: coerce(v) for k, v in value.items()}
        if isinstance(value, list):
            return [coerce(v) for v in value]
        return translate_value(value)

    snippets = _marked_snippets()
    assert snippets, "no YAML snippet carries a '# world_size: N' marker"
    problems = []
    try:
        for name, world, data in snippets:
            if dist.is_initialized():
                dist.destroy_process_group()
            dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
            try:
                setup = create_distributed_setup_from_config(coerce(data["distributed"]), world_size=world)
                mesh, pipe = setup.mesh_context, setup.pipeline_config
                if pipe is not None:
                    get_schedule_class(pipe.pp_schedule)
                steps = data.get("step_scheduler")
                if isinstance(steps, dict) and {"global_batch_size", "local_batch_size"} <= set(steps):
                    gbs, lbs = steps["global_batch_size"], steps["local_batch_size"]
                    dp = mesh.dp_size or world
                    assert gbs % (lbs * dp) == 0, f"global_batch_size {gbs} % ({lbs} * {dp}) != 0"
                    if pipe is not None:
                        mbs = pipe.pp_microbatch_size
                        assert lbs % mbs == 0 and lbs // mbs >= mesh.pp_size, "pipeline microbatches"
            except Exception as exc:  # collect all, report together
                problems.append(f"{name} (world_size {world}): {type(exc).__name__}: {exc}")
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    assert not problems, "\n".join(problems)
