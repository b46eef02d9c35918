"""Code anchors read by id from the kb data file (not re-parsed from chunk text)."""
from __future__ import annotations

from assistant.compose.knowledge.anchors import anchor_id, anchor_of, load_anchors
from assistant.config import KB_DIR
from assistant.retrieve.hit import Hit


def hit(doc_id: str) -> Hit:
    return Hit(f"{doc_id}#1", doc_id, "t", "p", "h", "anchor", "en", 0.0, "symbols:\n  - x")


def test_the_kb_table_loads_every_anchor_with_both_summaries():
    table = load_anchors(KB_DIR / "anchors.yaml")
    a = table["fsdp2-device-mesh"]
    assert a.path == "nemo_automodel/components/distributed/mesh_utils.py"
    assert "_create_fsdp2_device_mesh" in a.symbols and "ep" in a.topics
    assert all(x.summary and x.summary_zh and x.symbols for x in table.values())
    # folded YAML lines leave no space inside Chinese text
    assert " 跳过" not in table["fsdp2-manager"].summary_zh and "，" in table["fsdp2-manager"].summary_zh


def test_what_is_the_first_sentence_in_the_answers_language(tmp_path):
    f = tmp_path / "anchors.yaml"
    f.write_text("anchors:\n  - id: a\n    path: x.py\n    symbols: [f]\n"
                 "    summary: Builds the mesh, checks sizes. Does not start the process group.\n"
                 "    summary_zh: 构建网格并检查规模。不负责启动进程组。\n"
                 "  - {id: no-path, symbols: [g]}\n  - not a mapping\n", encoding="utf-8")
    table = load_anchors(f)
    assert list(table) == ["a"]
    assert table["a"].what("en") == "Builds the mesh, checks sizes"
    assert table["a"].what("zh") == "构建网格并检查规模"


def test_unreadable_files_give_an_empty_table(tmp_path):
    assert load_anchors(tmp_path / "missing.yaml") == {}
    bad = tmp_path / "bad.yaml"
    bad.write_text("anchors: [oops", encoding="utf-8")
    assert load_anchors(bad) == {}
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (1024 * 1024 + 1))
    assert load_anchors(big) == {}


def test_chunks_map_to_their_anchor_id():
    table = load_anchors(KB_DIR / "anchors.yaml")
    assert anchor_id(hit("anchor:moe-mesh")) == "moe-mesh"
    assert anchor_id(hit("anchor:moe-mesh~7")) == "moe-mesh"  # a duplicate id, renamed by ingest
    assert anchor_id(hit("fsdp2.en")) is None
    assert anchor_of(hit("anchor:moe-mesh"), table).symbols == ("_create_moe_mesh",)
    assert anchor_of(hit("anchor:unknown"), table) is None
