"""assistant/cli/ingest_cmd.py: `meshwise ingest` end to end on the fixture kb."""
from __future__ import annotations


from assistant.cli import main
from ingest.pipeline import current_version


def test_ingest_command_builds_and_reports_counts(kb_copy, tmp_path, capsys, monkeypatch, encoders):
    monkeypatch.setattr("ingest.pipeline.load_encoders", lambda names, cache_dir=None: list(encoders))  # loaded once per session
    monkeypatch.setenv("MESHWISE_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("MESHWISE_KB_DIR", str(kb_copy))
    index = tmp_path / "idx"
    rc = main(["ingest", "--only", "--source", str(kb_copy), "--index-dir", str(index), "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "documents: 10 (added 10" in out and "chunks:" in out and "time:" in out
    assert current_version(index) is not None
    rc = main(["ingest", "--only", "--source", str(kb_copy), "--index-dir", str(index), "--no-progress"])
    assert rc == 0 and "unchanged 10" in capsys.readouterr().out


def test_unknown_source_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["ingest", "--source", str(tmp_path / "empty"), "--index-dir", str(tmp_path / "i")]) == 2
    assert "not a kb" in capsys.readouterr().err


def test_a_file_given_as_source_is_named_as_such(tmp_path, capsys):
    f = tmp_path / "notes.md"
    f.write_text("# x\n")
    assert main(["ingest", "--source", str(f), "--index-dir", str(tmp_path / "i")]) == 2
    err = capsys.readouterr().err
    assert "is a file" in err and str(f) in err and "Traceback" not in err


def test_a_missing_source_is_named(tmp_path, capsys):
    assert main(["ingest", "--source", str(tmp_path / "nope"), "--index-dir", str(tmp_path / "i")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_list_without_an_index_says_what_to_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MESHWISE_CONFIG", str(tmp_path / "none.toml"))
    assert main(["ingest", "--list", "--index-dir", str(tmp_path / "i")]) == 1
    assert "meshwise ingest" in capsys.readouterr().err
