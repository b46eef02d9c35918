import pytest

from assistant.datafile import read_yaml


def test_reads_yaml_and_refuses_oversized_or_unsafe_files(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text("a: [1, 2]\nb: 中文\n", encoding="utf-8")
    assert read_yaml(p) == {"a": [1, 2], "b": "中文"}
    p.write_text("x: " + "y" * 100)
    with pytest.raises(ValueError, match="larger than"):
        read_yaml(p, max_bytes=50)
    p.write_text("!!python/object/apply:os.system ['true']\n")
    with pytest.raises(Exception) as exc:  # a safe loader constructs no Python objects
        read_yaml(p)
    assert "python/object" in str(exc.value)
