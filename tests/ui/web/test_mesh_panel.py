"""The web page's mesh picture (ui/web/mesh_panel.py) without a browser: which layouts get one, and what the
Validate tab's controls offer."""
from __future__ import annotations

from assistant.validator import validate
from ui.web import mesh_panel as mp

TP_PP_EP = {"distributed": {"strategy": "fsdp2", "tp_size": 2, "pp_size": 2, "ep_size": 4,
                            "pipeline": {"pp_schedule": "1f1b", "pp_microbatch_size": 1}}}


def test_only_a_valid_layout_has_a_picture():
    assert mp.layout_of(None) is None
    assert mp.layout_of(validate(TP_PP_EP, world_size=12, recipe_checks=False)) is None  # invalid at 12
    layout = mp.layout_of(validate(TP_PP_EP, world_size=16, gpus_per_node=4, recipe_checks=False))
    assert layout.gpus_per_node == 4 and layout.derived.moe_mesh_shape == (2, 4)
    img = mp.picture(layout, "pp", "mesh", "en")
    assert img.mode == "RGB" and img.width > 1300  # drawn at the web's DPI (144), not 100


def test_validate_tab_offers_the_layouts_axes_and_the_moe_view():
    layout = mp.layout_of(validate(TP_PP_EP, world_size=16, gpus_per_node=4, recipe_checks=False))
    axis, view, image = mp._tab_updates(layout, "dp_shard", "mesh", "zh")
    assert axis["value"] == "dp_shard" and axis["visible"] is True and axis["label"] == "按此着色"
    assert [v for _, v in axis["choices"]] == ["tp", "pp", "dp_shard", "dp_replicate", "cp"]
    assert view["visible"] is True and image["visible"] is True
    axis, view, image = mp._tab_updates(layout, "dp_shard", "moe", "en")
    assert view["value"] == "moe" and axis["visible"] is False  # the MoE view is coloured by node


def test_no_moe_view_without_experts_and_nothing_for_no_layout():
    layout = mp.layout_of(validate({"distributed": {"strategy": "megatron_fsdp", "tp_size": 2}}, world_size=8,
                                   recipe_checks=False))
    axis, view, image = mp._tab_updates(layout, "pp", "moe", "en")
    assert view["visible"] is False and view["value"] == "mesh"
    assert axis["value"] == "tp"  # pp is not an axis of a megatron_fsdp mesh
    axis, view, image = mp._tab_updates(None, "tp", "mesh", "en")
    assert not axis["visible"] and not view["visible"] and not image["visible"] and image["value"] is None
