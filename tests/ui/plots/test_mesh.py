"""The device-mesh picture (ui/plots/mesh.py): what it shows, in which language, how large worlds stay readable."""
from __future__ import annotations

import pytest

from assistant.validator import validate
from ui.plots import mesh as plot
from ui.plots.fonts import cjk_font


def derived(dist: dict, world: int, gpn: int = 8):
    dist = dict(dist)
    if dist.get("pp_size", 1) > 1:
        dist["pipeline"] = {"pp_schedule": "1f1b", "pp_microbatch_size": 1}
    r = validate({"distributed": dist}, world_size=world, gpus_per_node=gpn, recipe_checks=False, suggest_fix=False)
    assert r.ok, r.codes
    return r.derived


def texts(scene) -> list[str]:
    return scene.labels()


TP_PP = {"strategy": "fsdp2", "tp_size": 8, "pp_size": 4}


def test_every_rank_is_a_cell_with_its_coordinates_and_node_rows():
    fig = plot.mesh_picture(derived(TP_PP, 64), 8, axis="tp")
    words = texts(fig)
    for r in range(64):
        assert str(r) in words
    assert "3,0,1,0,7" in words  # rank 63 = (pp 3, dp_replicate 0, dp_shard 1, cp 0, tp 7)
    assert [f"node {i}" for i in range(8)] == [w for w in words if w.startswith("node ")]
    assert any("every tp group stays inside one node" in w for w in words)
    assert any("tp group 7: ranks 56–63" in w for w in words)


def test_colour_follows_the_chosen_axis():
    d = derived(TP_PP, 64)
    m = plot.rank_mesh(d)
    by_stage = [plot._key(m, "pp", r) for r in range(64)]
    assert by_stage[:16] == [0] * 16 and by_stage[-1] == 3
    by_shard = [plot._key(m, "dp_shard", r) for r in range(64)]
    assert by_shard[0] == by_shard[8] and by_shard[0] != by_shard[1]  # ranks 0 and 8 share a dp_shard group
    assert any("colour: pp stage (4 stages of 16 ranks)" in w for w in texts(plot.mesh_picture(d, 8, axis="pp")))


def test_a_tp_group_across_nodes_is_marked():
    fig = plot.mesh_picture(derived({"strategy": "fsdp2", "tp_size": 16}, 32), 8, axis="tp")
    assert any("2 of 2 tp groups cross a node boundary (first: ranks 0–15)" in w for w in texts(fig))
    assert sum(1 for r in fig.rects if r[5] == plot.CROSS) >= 32  # every cell of both groups outlined
    assert sum(1 for r in fig.rects if r[4] == plot.CROSS) == 2  # one bar beside each group's two rows


def test_moe_view_has_ep_groups_per_stage():
    d = derived({"strategy": "fsdp2", "tp_size": 2, "pp_size": 2, "ep_size": 4}, 16, 4)
    words = texts(plot.mesh_picture(d, 4, view="moe"))
    assert "pp stage 1 · ranks 8–15" in words
    assert words.count("ep group 1") == 2  # two ep groups in each of the two stages
    assert all(str(r) in words for r in range(16))
    assert any("ep_shard = 2" in w for w in words)


def test_moe_view_without_experts_says_so():
    words = texts(plot.mesh_picture(derived(TP_PP, 64), 8, view="moe"))
    assert any("no MoE mesh" in w for w in words)


def test_large_world_is_one_row_per_node_and_says_so():
    d = derived({"strategy": "fsdp2", "tp_size": 8, "pp_size": 8}, 4096)
    fig = plot.mesh_picture(d, 8, axis="pp")
    words = texts(fig)
    assert any("4096 ranks: one node per row" in w for w in words)
    assert any(w.startswith("⋮ nodes 40–504") for w in words)
    assert "node 511 · ranks 4088–4095" in words and "pp stage 7" in words
    assert all(str(r) not in words for r in (100, 2000))  # no per-rank labels
    width, height = fig.size()
    assert height < 20 and width < 20


def test_million_rank_world_draws_quickly_and_counts_tp_crossings():
    import time

    d = derived({"strategy": "fsdp2", "tp_size": 16}, 1 << 20)
    t0 = time.monotonic()
    words = texts(plot.mesh_picture(d, 8))
    assert time.monotonic() - t0 < 5
    assert any("65536 of 65536 tp groups cross" in w for w in words)


@pytest.mark.skipif(cjk_font() is None, reason="no CJK font installed (make install-browser)")
def test_chinese_labels_in_chinese_mode():
    words = texts(plot.mesh_picture(derived(TP_PP, 64), 8, axis="tp", lang="zh"))
    assert "节点 0" in words
    assert any(w.startswith("颜色：tp group") for w in words)


def test_english_labels_when_no_cjk_font(monkeypatch):
    monkeypatch.setattr(plot, "label_lang", lambda lang: "en")
    words = texts(plot.mesh_picture(derived(TP_PP, 64), 8, lang="zh"))
    assert "node 0" in words


def test_ddp_is_drawn_as_one_dp_group():
    d = validate({"distributed": {"strategy": "ddp"}}, world_size=16, recipe_checks=False).derived
    words = texts(plot.mesh_picture(d, 8))
    assert any("DDP builds no device mesh" in w for w in words)
    assert plot.axis_choices(d) == ("dp",)


@pytest.mark.parametrize("ranks,text", [([0, 1, 2, 3], "0–3"), ([0, 8, 16, 24, 32], "0, 8, …, 32"), ([5], "5"),
                                        ([0, 2, 7], "0, 2, 7"), ([1, 3], "1, 3")])
def test_ranks_text(ranks, text):
    assert plot.ranks_text(ranks) == text


def test_picture_format_by_extension():
    assert plot.picture_format("a/b.PNG") == "png" and plot.picture_format("m.svg") == "svg"
    with pytest.raises(ValueError):
        plot.picture_format("m.pdf")


def test_a_wide_ep_group_is_cut_and_says_so():
    d = derived({"strategy": "fsdp2", "ep_size": 256}, 512)
    pic = plot.mesh_picture(d, 8, view="moe")
    assert any("each ep group drawn up to its first 64 of 256 ranks" in w for w in pic.labels())
    assert pic.size()[0] < 25


def test_png_and_svg_are_written_atomically(tmp_path):
    pic = plot.mesh_picture(derived(TP_PP, 64), 8, lang="zh")
    plot.write_picture(pic, tmp_path / "m.png")
    plot.write_picture(pic, tmp_path / "m.svg")
    assert (tmp_path / "m.png").read_bytes().startswith(b"\x89PNG")
    assert b"<svg" in (tmp_path / "m.svg").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.png", "m.svg"]
