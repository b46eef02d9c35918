"""Issue 14.2: a source added with `ingest --source` survives every read command until removed; a
refresh never publishes fewer sources; killed builds' folders go; an outside symlink is skipped."""
from __future__ import annotations

import os

import pytest

from assistant.cli import main
from assistant.index.manifest import Manifest
from assistant.index.status import current_version
from ingest.pipeline import build_index
from ingest.sources import Source
from ingest.sources.kb_markdown import load_kb
from ingest.sources.skill_folder import load_skill_folder

EXTRA_DOC = "---\nid: extra-note.en\ntitle: Extra\nlang: en\nkind: doc\n---\n# Extra\nA note about dp_replicate_size.\n"


@pytest.fixture
def cli_env(kb_settings, monkeypatch, encoders):
    """`meshwise ingest` on the fixture kb alone (no upstream skill folder), with the session's models."""
    monkeypatch.setattr("ingest.pipeline.load_encoders", lambda names, cache_dir=None: list(encoders))
    monkeypatch.setattr("assistant.index.status.default_sources",
                        lambda settings: [Source("kb", settings.kb_dir.resolve())])
    monkeypatch.setenv("MESHWISE_CONFIG", str(kb_settings.data_dir / "none.toml"))
    monkeypatch.setenv("MESHWISE_KB_DIR", str(kb_settings.kb_dir))
    monkeypatch.setenv("MESHWISE_INDEX_DIR", str(kb_settings.index_dir))
    return kb_settings


@pytest.fixture
def extra_kb(tmp_path):
    kb = tmp_path / "extra-kb"
    (kb / "en").mkdir(parents=True)
    (kb / "en" / "extra.md").write_text(EXTRA_DOC)
    return kb


def _sources(settings) -> list[str]:
    return [s["path"] for s in Manifest.load(current_version(settings.index_dir)).sources]


def _doc_ids(settings) -> set[str]:
    return set(Manifest.load(current_version(settings.index_dir)).documents)


def test_a_refresh_keeps_a_kb_added_with_ingest_source(cli_env, extra_kb):
    s = cli_env
    assert main(["ingest", "--source", str(extra_kb), "--no-progress"]) == 0
    assert str(extra_kb.resolve()) in _sources(s) and "extra-note.en" in _doc_ids(s)
    doc = s.kb_dir / "en" / "hsdp.md"
    doc.write_text(doc.read_text() + "\nOne more line.\n")  # stale: the next read command refreshes
    build_index(s)  # what ask / serve / slack / eval run on a stale index
    assert str(extra_kb.resolve()) in _sources(s) and "extra-note.en" in _doc_ids(s)


def test_the_read_path_refreshes_through_the_same_builder(cli_env, extra_kb, encoders):
    from assistant.retrieve.retriever import Retriever
    from ingest.refresh import refresh_index

    s = cli_env
    assert main(["ingest", "--source", str(extra_kb), "--no-progress"]) == 0
    (s.kb_dir / "en" / "hsdp.md").write_text(EXTRA_DOC.replace("extra-note", "hsdp"))
    r = Retriever.load(s, encoders=encoders, warm_up=False, build=refresh_index)
    assert {rec["doc_id"] for rec in r.store.records.values()} >= {"extra-note.en", "hsdp.en"}
    assert str(extra_kb.resolve()) in _sources(s)


def test_a_plain_ingest_keeps_added_sources_until_removed(cli_env, extra_kb, capsys):
    s = cli_env
    assert main(["ingest", "--source", str(extra_kb), "--no-progress"]) == 0
    assert main(["ingest", "--no-progress"]) == 0
    assert "extra-note.en" in _doc_ids(s)
    capsys.readouterr()
    assert main(["ingest", "--list"]) == 0
    listed = capsys.readouterr().out
    assert f"kb    added   {extra_kb.resolve()}" in listed and f"kb    default {s.kb_dir.resolve()}" in listed
    assert main(["ingest", "--remove-source", str(extra_kb), "--no-progress"]) == 0
    assert "extra-note.en" not in _doc_ids(s) and str(extra_kb.resolve()) not in _sources(s)
    assert main(["ingest", "--no-progress"]) == 0  # and it stays removed
    assert "extra-note.en" not in _doc_ids(s)


def test_removing_a_source_that_was_never_added_is_a_clear_error(cli_env, extra_kb, capsys):
    assert main(["ingest", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["ingest", "--remove-source", str(extra_kb)]) == 2
    assert "is not an added source" in capsys.readouterr().err


def test_a_refresh_never_publishes_fewer_sources(cli_env, extra_kb):
    s = cli_env
    assert main(["ingest", "--source", str(extra_kb), "--no-progress"]) == 0
    before = current_version(s.index_dir)
    (extra_kb / "en" / "extra.md").unlink()
    (extra_kb / "en").rmdir()
    extra_kb.rmdir()
    rep = build_index(s)
    assert current_version(s.index_dir) == before and "extra-note.en" in _doc_ids(s)
    assert any("is missing" in w and "--remove-source" in w for w in rep.warnings)


def test_the_ingest_command_names_a_vanished_added_source(cli_env, extra_kb, capsys):
    assert main(["ingest", "--source", str(extra_kb), "--no-progress"]) == 0
    (extra_kb / "en" / "extra.md").unlink()
    (extra_kb / "en").rmdir()
    extra_kb.rmdir()
    capsys.readouterr()
    assert main(["ingest", "--no-progress"]) == 2
    assert "no longer exists" in capsys.readouterr().err


def test_leftover_build_folders_are_cleaned_at_the_next_ingest(built_settings):
    s = built_settings
    build_index(s, [Source("kb", s.kb_dir.resolve())])
    left = s.index_dir / ".tmp-deadbeef"
    (left / "bm25").mkdir(parents=True)
    (left / "chunks.json").write_text("{}")
    (s.index_dir / ".current-deadbeef").symlink_to("nowhere")
    build_index(s, [Source("kb", s.kb_dir.resolve())])  # nothing changed: the no-op branch
    assert not list(s.index_dir.glob(".tmp-*")) and not list(s.index_dir.glob(".current-*"))


def test_a_kb_symlink_to_a_file_outside_is_skipped_with_a_warning(kb_copy, tmp_path):
    secret = tmp_path / "outside.md"
    secret.write_text(EXTRA_DOC.replace("extra-note", "leak"))
    os.symlink(secret, kb_copy / "en" / "leak.md")
    res = load_kb(kb_copy)
    assert "leak.en" not in {d.id_ for d in res.documents}
    assert any("leak.md" in w and "outside" in w for w in res.warnings)
    assert {d.id_ for d in res.documents} >= {"hsdp.en", "hsdp.zh"}  # the rest is read


def test_a_skill_reference_linked_outside_does_not_abort_the_ingest(tmp_path, kb_settings, encoders):
    skill = tmp_path / "skill"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: s\n---\n# Skill\nSee references.\n")
    (skill / "references" / "inside.md").write_text("# Inside\nfsdp2 notes.\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\nnot part of the skill.\n")
    os.symlink(outside, skill / "references" / "outside.md")
    res = load_skill_folder(skill)
    assert [d.metadata["title"] for d in res.documents] == ["Skill", "Inside"]
    assert any("outside.md" in w and "outside" in w for w in res.warnings)
    rep = build_index(kb_settings, [Source("kb", kb_settings.kb_dir.resolve()), Source("skill", skill)],
                      encoders=encoders)
    assert any("outside.md" in w for w in rep.warnings)
    assert "skill:skill/references/inside.md" in _doc_ids(kb_settings)


def test_a_refresh_keeps_the_index_when_the_settings_kb_moves_onto_an_added_source(cli_env, extra_kb):
    from dataclasses import replace

    s = cli_env
    assert main(["ingest", "--source", str(extra_kb), "--no-progress"]) == 0
    before = current_version(s.index_dir)
    rep = build_index(replace(s, kb_dir=extra_kb))  # the default kb now is the added one: 2 -> 1
    assert current_version(s.index_dir) == before and "hsdp.en" in _doc_ids(s)
    assert any("built from 2 sources" in w for w in rep.warnings)


@pytest.mark.slow
def test_two_ingests_started_together_keep_both_sources(kb_settings, tmp_path):
    """Issue 20.4: `ingest --source A` and `ingest --source B` as two real processes on one index."""
    import subprocess
    import sys

    from assistant.config import REPO_ROOT

    kbs = []
    for name in ("a", "b"):
        kb = tmp_path / f"extra-{name}"
        (kb / "en").mkdir(parents=True)
        (kb / "en" / f"{name}.md").write_text(EXTRA_DOC.replace("extra-note", f"extra-{name}"))
        kbs.append(kb)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), MESHWISE_CONFIG=str(tmp_path / "none.toml"),
               MESHWISE_KB_DIR=str(kb_settings.kb_dir), MESHWISE_INDEX_DIR=str(kb_settings.index_dir))
    procs = [subprocess.Popen([sys.executable, "-m", "assistant.cli", "ingest", "--source", str(kb), "--no-progress",
                               "--threads", "1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for kb in kbs]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err.decode()[-2000:]
    assert {str(kb.resolve()) for kb in kbs} <= set(_sources(kb_settings))
    assert {"extra-a.en", "extra-b.en"} <= _doc_ids(kb_settings)


def test_a_kb_added_with_ingest_source_is_cited_from_its_own_folder(cli_env, extra_kb, encoders):
    """Issue 20.7: a document of an added kb is cited with its real file, not as `kb/en/extra.md`."""
    from assistant.retrieve.retriever import Retriever
    from ingest.refresh import refresh_index

    s = cli_env
    assert main(["ingest", "--source", str(extra_kb), "--no-progress"]) == 0
    r = Retriever.load(s, encoders=encoders, warm_up=False, build=refresh_index)
    paths = {rec["doc_id"]: rec["path"] for rec in r.store.records.values()}
    assert paths["extra-note.en"] == f"{extra_kb.resolve()}/en/extra.md"
    assert paths["hsdp.en"] == "kb/en/hsdp.md"  # the bundled kb keeps its repo path
