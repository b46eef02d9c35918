"""The device-mesh picture on the web page: beside the chat's verdict, and in the Validate tab with an axis
selector and the MoE view. Components and their wiring only; the picture is `ui/plots/mesh.py`, the
verdict the `Assistant`'s. Kept apart from app.py so the page's other parts change independently.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

import gradio as gr

from assistant.validator.report import Derived, ValidationReport
from ui.plots.mesh import axis_choices, mesh_picture
from ui.plots.scene import to_image
from ui.web import handlers as h
from ui.web.render import t

log = logging.getLogger("meshwise.web")
WEB_DPI = 144  # the side panel shows it small; full screen shows it sharp


@dataclass(frozen=True)
class MeshLayout:
    """A validated layout the Validate tab can redraw on an axis or view change without validating again."""
    derived: Derived
    gpus_per_node: int


def layout_of(report: ValidationReport | None) -> MeshLayout | None:
    """Only a valid layout has a mesh to draw (an invalid one never reaches init_device_mesh)."""
    if report is None or not report.ok or report.derived is None:
        return None
    return MeshLayout(report.derived, report.gpus_per_node or h.DEFAULT_GPUS_PER_NODE)


def picture(layout: MeshLayout | None, axis: str | None, view: str, lang: str):
    """The picture as a PIL image (gr.Image gives it download and full-screen buttons), or None."""
    if layout is None:
        return None
    if view == "moe" and layout.derived.moe_mesh_shape is None:
        view = "mesh"
    return to_image(mesh_picture(layout.derived, layout.gpus_per_node, axis=axis, view=view, lang=lang), WEB_DPI)


def axis_options(layout: MeshLayout | None, lang: str) -> list[tuple[str, str]]:
    axes = axis_choices(layout.derived) if layout else ("tp", "pp", "dp_shard", "dp_replicate", "cp")
    return [(t(f"mesh_axis_{a}", lang), a) for a in axes]


def view_options(lang: str) -> list[tuple[str, str]]:
    return [(t("mesh_view_mesh", lang), "mesh"), (t("mesh_view_moe", lang), "moe")]


def image(elem_id: str) -> gr.Image:
    # No label badge: it would sit on the picture's own title. Full screen shows the cells' coordinates large.
    return gr.Image(label=t("mesh_chart", "en"), show_label=False, type="pil", format="png", interactive=False,
                    visible=False, buttons=["download", "fullscreen"], elem_id=elem_id)


def chat_component() -> gr.Image:
    """Below the chat's verdict: the latest answer's layout."""
    return image("mw-mesh")


@dataclass
class ValidateComponents:
    axis: gr.Radio
    view: gr.Radio
    image: gr.Image
    state: gr.State


def validate_components() -> ValidateComponents:
    """Under the Validate tab's report: axis selector, view switch, picture."""
    with gr.Group(visible=True, elem_id="mw-mesh-box"):
        axis = gr.Radio(axis_options(None, "en"), value="tp", label=t("mesh_axis", "en"), visible=False,
                        elem_id="mw-mesh-axis")
        view = gr.Radio(view_options("en"), value="mesh", label=t("mesh_view", "en"), visible=False,
                        elem_id="mw-mesh-view")
        img = image("mw-vmesh")
    return ValidateComponents(axis, view, img, gr.State(None))


def wire(assistant, *, lang: gr.Radio, panel: gr.State, chat_image: gr.Image, v: ValidateComponents,
         v_button: gr.Button, v_inputs: list, clear_events: list, accept_language: Callable[[Any], str | None]) -> None:
    """The events: a new answer or language redraws the chat's picture; Validate, an axis or a view the tab's."""

    def ui_lang(lang_v, request) -> str:
        return h.interface_lang(lang_v, accept_language(request))

    def chat_picture(panel_v, lang_v, request: gr.Request = None):
        layout = layout_of(getattr(panel_v, "report", None))
        plang = lang_v if lang_v in ("en", "zh") else (getattr(panel_v, "lang", None) or ui_lang(lang_v, request))
        try:
            img = picture(layout, None, "mesh", plang)
        except Exception:  # noqa: BLE001 - a drawing bug hides the picture; the answer stays
            log.exception("mesh picture failed")
            img = None
        return gr.update(value=img, visible=img is not None, label=t("mesh_chart", plang))

    panel.change(chat_picture, [panel, lang], [chat_image], queue=False, api_visibility="private")
    for event in clear_events:  # a new conversation: no layout, no picture
        event(lambda: gr.update(value=None, visible=False), None, [chat_image], queue=False, api_visibility="private")

    def validate_picture(text, world, gpn_v, model_v, gpu_v, lang_v, axis_v, view_v, request: gr.Request = None):
        # Its own listener on the Validate button, validating again (milliseconds): the tab's report handler
        # stays as it is, and a picture that fails to draw never costs the report.
        ui = ui_lang(lang_v, request)
        layout = None
        text = text or ""
        if text.strip() and len(text) <= h.MAX_YAML_CHARS:
            try:
                world_n = h._count(world, "world_size", h.MAX_WORLD, default=None)
                gpn_n = h._count(gpn_v, "gpus_per_node", h.MAX_GPUS_PER_NODE, default=h.DEFAULT_GPUS_PER_NODE)
                if world_n is not None:
                    layout = layout_of(assistant.validate(text, world_size=world_n, gpus_per_node=gpn_n,
                                                          model=model_v or None, gpu=gpu_v or None))
            except Exception:  # noqa: BLE001 - the report beside it says what is wrong with the input
                layout = None
        return (layout, *_tab_updates(layout, axis_v, view_v, ui))

    v_button.click(validate_picture, [*v_inputs, lang, v.axis, v.view], [v.state, v.axis, v.view, v.image],
                   concurrency_limit=4, concurrency_id="validate", api_visibility="private")

    def redraw(layout, lang_v, axis_v, view_v, request: gr.Request = None):
        return _tab_updates(layout, axis_v, view_v, ui_lang(lang_v, request))

    for control in (v.axis, v.view):
        control.input(redraw, [v.state, lang, v.axis, v.view], [v.axis, v.view, v.image],
                      concurrency_limit=4, concurrency_id="validate", api_visibility="private")
    lang.input(redraw, [v.state, lang, v.axis, v.view], [v.axis, v.view, v.image], queue=False,
               api_visibility="private")
    lang.input(chat_picture, [panel, lang], [chat_image], queue=False, api_visibility="private")


def _tab_updates(layout: MeshLayout | None, axis_v: str | None, view_v: str | None, lang: str) -> tuple:
    if layout is None:
        return (gr.update(visible=False, label=t("mesh_axis", lang)), gr.update(visible=False, label=t("mesh_view", lang)),
                gr.update(value=None, visible=False, label=t("mesh_chart", lang)))
    axes = axis_choices(layout.derived)
    axis = axis_v if axis_v in axes else axes[0]
    has_moe = layout.derived.moe_mesh_shape is not None
    view = view_v if (view_v == "moe" and has_moe) else "mesh"
    try:
        img = picture(layout, axis, view, lang)
    except Exception:  # noqa: BLE001 - a drawing bug hides the picture; the report stays
        log.exception("mesh picture failed")
        img = None
    return (gr.update(choices=axis_options(layout, lang), value=axis, visible=view == "mesh", label=t("mesh_axis", lang)),
            gr.update(choices=view_options(lang), value=view, visible=has_moe, label=t("mesh_view", lang)),
            gr.update(value=img, visible=img is not None, label=t("mesh_chart", lang)))
