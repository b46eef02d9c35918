"""The Gradio web chat: chat with streaming answers, verdict and sources beside it, a Validate tab.

Layout and wiring only; what each action does lives in `ui/web/handlers.py`, the formatting in
`ui/web/render.py`, the interface text in `ui/web/texts.yaml`.
"""
from __future__ import annotations

from pathlib import Path

import gradio as gr

from assistant.config import Settings
from assistant.validator.models import list_gpus, list_models
from ui.web import handlers as h
from ui.web import mesh_panel
from ui.web.feedback import FeedbackStore
from ui.web.limits import BodySizeLimit, NoUploads
from ui.web.render import t

CSS_FILE = Path(__file__).with_name("style.css")
EXAMPLES_FILE = Path(__file__).with_name("examples.yaml")
CONCURRENCY = 4  # answers at once; the engine serialises retrieval anyway and the target box has 2 cores
QUEUE_MAX = 64  # waiting requests beyond this get "queue full" instead of a page that hangs
MAX_BODY_BYTES = 4 * 1024 * 1024  # a whole chat history is sent back with each question
STATE_SESSIONS = 1000  # browser sessions whose per-answer rows are kept (oldest dropped): bounds server memory
DEFAULT_VALIDATE_GPU = "h100-80gb"
CACHE_CLEANUP = (3600, 3600)  # (every, older than) seconds
# Answers are long and end with their citations, so the chat does not follow the bottom (autoscroll off):
# when a question is sent it shows the bottom (the question, the answer arriving), and once the answer is
# complete it shows the answer's beginning.
SCROLL_TO_BOTTOM_JS = """() => { setTimeout(() => {
  // Gradio may run this after a quick answer is already complete: then stay at the answer's beginning.
  if (Date.now() - (window.mwAnsweredAt || 0) < 2000) return;
  const wrap = document.querySelector('#mw-chat .bubble-wrap');
  if (wrap) wrap.scrollTop = wrap.scrollHeight;
}, 300); }"""
SCROLL_TO_ANSWER_JS = """() => { window.mwAnsweredAt = Date.now(); setTimeout(() => {
  const bots = document.querySelectorAll('#mw-chat .message.bot');
  const last = bots[bots.length - 1];
  const wrap = last && last.closest('.bubble-wrap');
  if (wrap) wrap.scrollTop += last.getBoundingClientRect().top - wrap.getBoundingClientRect().top - 8;
}, 50); }"""


def _examples() -> list[str]:
    import yaml

    return [str(q) for q in yaml.safe_load(EXAMPLES_FILE.read_text(encoding="utf-8"))["examples"]]


def _lang_choices() -> list[tuple[str, str]]:
    return [("Auto / 自动", "auto"), ("中文", "zh"), ("English", "en")]


def _accept_language(request: gr.Request | None) -> str | None:
    try:
        return request.headers.get("accept-language") if request is not None else None
    except AttributeError:
        return None


def _llm_modes(assistant) -> tuple[str, ...]:
    """Offline always; the LLM mode only when the Assistant was loaded with one (`serve --llm ...`)."""
    mode = getattr(assistant, "llm_mode", "offline")
    return ("offline",) if mode == "offline" else ("offline", mode)


def build_ui(assistant, settings: Settings, feedback: FeedbackStore | None = None) -> gr.Blocks:
    feedback = feedback or FeedbackStore(settings.data_dir / "feedback.jsonl")
    modes = _llm_modes(assistant)
    llm_ok = len(modes) > 1

    def llm_info(lang: str) -> str:
        return t("llm_available", lang, mode=modes[-1]) if llm_ok else t("llm_unavailable", lang)

    models = [""] + list_models()
    gpus = [""] + list_gpus()
    examples = _examples()

    # delete_cache: the temporary files Gradio writes for this app are removed hourly and at start-up.
    with gr.Blocks(title="Meshwise", analytics_enabled=False, delete_cache=CACHE_CLEANUP) as demo:
        meta = gr.State({})  # assistant message index -> the row a thumbs up/down stores
        panel = gr.State(h.Panel())  # the latest answer's verdict and sources, re-rendered on a language switch
        with gr.Row(elem_id="mw-top", equal_height=True):
            with gr.Column(scale=4):
                header = gr.Markdown(f"# Meshwise\n{t('subtitle', 'en')}", elem_id="mw-header")
            with gr.Column(scale=1, min_width=340):
                lang = gr.Radio(_lang_choices(), value="auto", label=t("language", "en"), elem_id="mw-lang")
        with gr.Tabs():
            with gr.Tab(t("tab_chat", "en"), id="chat", elem_id="mw-tab-chat") as chat_tab:
                with gr.Row():
                    with gr.Column(scale=3, min_width=420):
                        chatbot = gr.Chatbot(height=600, elem_id="mw-chat", autoscroll=False, buttons=["copy"], show_label=False,
                                             feedback_options=("Like", "Dislike"), render_markdown=True,
                                             latex_delimiters=[], sanitize_html=True,
                                             placeholder=t("chat_placeholder", "en"))
                        thanks = gr.Markdown("", elem_id="mw-thanks")
                        question = gr.Textbox(label=t("question_label", "en"), placeholder=t("question_placeholder", "en"),
                                              lines=2, max_lines=10, elem_id="mw-question")
                        with gr.Row():
                            ask_btn = gr.Button(t("send", "en"), variant="primary", elem_id="mw-ask")
                            clear_btn = gr.Button(t("clear", "en"), elem_id="mw-clear")
                        example_set = gr.Dataset(components=["textbox"], samples=[[q] for q in examples],
                                                 label=t("examples", "en"), elem_id="mw-examples",
                                                 samples_per_page=len(examples))
                    with gr.Column(scale=2, min_width=320):
                        with gr.Accordion(t("settings", "en"), open=False, elem_id="mw-settings") as settings_box:
                            with gr.Row():
                                # 0, not empty: the browser turns an empty number field into 0 once it is shown.
                                nodes = gr.Number(label=t("nodes", "en"), value=0, minimum=0, maximum=h.MAX_NODES,
                                                  precision=0, elem_id="mw-nodes")
                                gpn = gr.Number(label=t("gpus_per_node", "en"), value=h.DEFAULT_GPUS_PER_NODE, minimum=1,
                                                maximum=h.MAX_GPUS_PER_NODE, precision=0, elem_id="mw-gpn")
                            world_md = gr.Markdown(t("world_size_auto", "en"), elem_id="mw-world")
                            with gr.Row():
                                gpu = gr.Dropdown(gpus, value="", label=t("gpu", "en"), elem_id="mw-gpu")
                                model = gr.Dropdown(models, value="", label=t("model", "en"), elem_id="mw-model")
                            llm = gr.Radio(list(modes), value=modes[-1], label=t("answerer", "en"), interactive=llm_ok,
                                           info=llm_info("en"), elem_id="mw-llm")
                        verdict = gr.Markdown(h.Panel().verdict("en"), elem_id="mw-verdict")
                        chat_mesh = mesh_panel.chat_component()
                        sources = gr.Markdown(h.Panel().sources_md("en"), elem_id="mw-sources")
            with gr.Tab(t("tab_validate", "en"), id="validate", elem_id="mw-tab-validate") as val_tab:
                with gr.Row():
                    with gr.Column(scale=1):
                        yaml_in = gr.Code(language="yaml", label=t("yaml_label", "en"), lines=16, elem_id="mw-yaml")
                        with gr.Row():
                            v_world = gr.Number(label=t("world_size", "en"), value=8, minimum=1, maximum=h.MAX_WORLD,
                                                precision=0, elem_id="mw-vworld")
                            v_gpn = gr.Number(label=t("gpus_per_node", "en"), value=h.DEFAULT_GPUS_PER_NODE, minimum=1,
                                              maximum=h.MAX_GPUS_PER_NODE, precision=0, elem_id="mw-vgpn")
                        with gr.Row():
                            v_model = gr.Dropdown(models, value="", label=t("model", "en"), elem_id="mw-vmodel")
                            v_gpu = gr.Dropdown(gpus, value=DEFAULT_VALIDATE_GPU if DEFAULT_VALIDATE_GPU in gpus else "",
                                                label=t("gpu", "en"), elem_id="mw-vgpu")
                        v_btn = gr.Button(t("validate", "en"), variant="primary", elem_id="mw-validate")
                    with gr.Column(scale=1):
                        v_report = gr.Markdown("", elem_id="mw-report")
                        v_fix = gr.Code(language="yaml", label=t("suggested_fix", "en"), interactive=False, elem_id="mw-fix")
                        v_plot = gr.Plot(label=t("memory_chart", "en"), elem_id="mw-memory", visible=False)
                        v_details = gr.Markdown("", elem_id="mw-memory-details")
                        v_mesh = mesh_panel.validate_components()

        # --- chat --------------------------------------------------------------------------
        def respond(message, messages, meta_v, panel_v, nodes_v, gpn_v, gpu_v, model_v, lang_v, llm_v,
                    request: gr.Request = None):
            ui = h.interface_lang(lang_v, _accept_language(request))
            try:
                opts = h.chat_options(nodes_v, gpn_v, gpu_v, model_v, lang_v, llm_v, llm_modes=modes)
            except h.BadSetting as exc:
                gr.Warning(t("bad_setting", ui, name=t(exc.key, ui), limit=exc.limit))
                yield gr.update(), messages, meta_v, panel_v, gr.update(), gr.update(), ""
                return
            for view in h.answer_turn(assistant, message, messages, meta_v, opts):
                if view.panel is None:
                    yield ("" if view.clear_question else gr.update(), view.messages, view.meta, panel_v,
                           gr.update(), gr.update(), "")
                else:
                    # Panel headings follow a chosen language; with "auto" they follow the answer.
                    plang = lang_v if lang_v in ("en", "zh") else view.panel.lang
                    yield ("", view.messages, view.meta, view.panel, view.panel.verdict(plang),
                           view.panel.sources_md(plang), "")

        chat_inputs = [question, chatbot, meta, panel, nodes, gpn, gpu, model, lang, llm]
        chat_outputs = [question, chatbot, meta, panel, verdict, sources, thanks]
        ask_btn.click(respond, chat_inputs, chat_outputs, api_name="ask", concurrency_limit=CONCURRENCY,
                      concurrency_id="answer").then(None, js=SCROLL_TO_ANSWER_JS)
        question.submit(respond, chat_inputs, chat_outputs, api_visibility="private", concurrency_limit=CONCURRENCY,
                        concurrency_id="answer").then(None, js=SCROLL_TO_ANSWER_JS)
        example_set.click(lambda sample: sample[0], [example_set], [question], queue=False,
                          api_visibility="private").then(
            respond, chat_inputs, chat_outputs, api_visibility="private", concurrency_limit=CONCURRENCY,
            concurrency_id="answer").then(None, js=SCROLL_TO_ANSWER_JS)
        for trigger in (ask_btn.click, question.submit, example_set.click):
            trigger(None, js=SCROLL_TO_BOTTOM_JS)

        def new_conversation(lang_v, request: gr.Request = None):
            ui = h.interface_lang(lang_v, _accept_language(request))
            return "", [], {}, h.Panel(lang=ui), h.Panel().verdict(ui), h.Panel().sources_md(ui), ""

        clear_btn.click(new_conversation, [lang], chat_outputs, queue=False, api_visibility="private")
        # The chat's own trash button empties the messages in the browser; the per-answer rows go with them.
        chatbot.clear(new_conversation, [lang], chat_outputs, queue=False, api_visibility="private")

        def on_like(data: gr.LikeData, meta_v, lang_v, request: gr.Request = None):
            return h.record_feedback(feedback, meta_v, data.index, data.liked,
                                     h.interface_lang(lang_v, _accept_language(request)))

        chatbot.like(on_like, [meta, lang], [thanks], api_visibility="private")

        def on_world(nodes_v, gpn_v, lang_v, request: gr.Request = None):
            return h.world_text(nodes_v, gpn_v, h.interface_lang(lang_v, _accept_language(request)))

        for comp in (nodes, gpn):
            comp.change(on_world, [nodes, gpn, lang], [world_md], queue=False, api_visibility="private")

        # --- validate tab -------------------------------------------------------------------
        def run_validate(text, world, gpn_v, model_v, gpu_v, lang_v, request: gr.Request = None):
            ui = h.interface_lang(lang_v, _accept_language(request))
            view = h.validate_yaml(assistant, text, world, gpn_v, model_v, gpu_v, ui)
            # The chart's box only shows when there is a chart (a model and a GPU were chosen).
            return view.report, view.fix, gr.update(value=view.figure, visible=view.figure is not None), view.details

        v_btn.click(run_validate, [yaml_in, v_world, v_gpn, v_model, v_gpu, lang], [v_report, v_fix, v_plot, v_details],
                    api_name="validate", concurrency_limit=CONCURRENCY, concurrency_id="validate")

        # --- interface language -----------------------------------------------------------
        def relabel(lang_v, nodes_v, gpn_v, panel_v, request: gr.Request = None):
            ui = h.interface_lang(lang_v, _accept_language(request))
            plang = lang_v if lang_v in ("en", "zh") else (panel_v.lang if panel_v.report or panel_v.sources else ui)
            return (
                f"# Meshwise\n{t('subtitle', ui)}",
                gr.update(label=t("language", ui)),
                gr.update(label=t("tab_chat", ui)), gr.update(label=t("tab_validate", ui)),
                gr.update(placeholder=t("chat_placeholder", ui)),
                gr.update(label=t("question_label", ui), placeholder=t("question_placeholder", ui)),
                gr.update(value=t("send", ui)), gr.update(value=t("clear", ui)),
                gr.update(label=t("examples", ui)),
                gr.update(label=t("settings", ui)),
                gr.update(label=t("nodes", ui)), gr.update(label=t("gpus_per_node", ui)),
                h.world_text(nodes_v, gpn_v, ui),
                gr.update(label=t("gpu", ui)), gr.update(label=t("model", ui)),
                gr.update(label=t("answerer", ui), info=llm_info(ui)),
                panel_v.verdict(plang), panel_v.sources_md(plang),
                gr.update(label=t("yaml_label", ui)), gr.update(label=t("world_size", ui)),
                gr.update(label=t("gpus_per_node", ui)), gr.update(label=t("model", ui)), gr.update(label=t("gpu", ui)),
                gr.update(value=t("validate", ui)), gr.update(label=t("suggested_fix", ui)),
                gr.update(label=t("memory_chart", ui)),
            )

        relabel_outputs = [header, lang, chat_tab, val_tab, chatbot, question, ask_btn, clear_btn, example_set, settings_box,
                           nodes, gpn, world_md, gpu, model, llm, verdict, sources, yaml_in, v_world, v_gpn, v_model,
                           v_gpu, v_btn, v_fix, v_plot]
        # `input`, not `change`: relabelling updates the radio itself and must not trigger itself again.
        lang.input(relabel, [lang, nodes, gpn, panel], relabel_outputs, queue=False, api_visibility="private")
        demo.load(relabel, [lang, nodes, gpn, panel], relabel_outputs, queue=False, api_visibility="private")

        # --- device-mesh pictures ------------------------------------------------------------
        mesh_panel.wire(assistant, lang=lang, panel=panel, chat_image=chat_mesh, v=v_mesh, v_button=v_btn,
                        v_inputs=[yaml_in, v_world, v_gpn, v_model, v_gpu], clear_events=[clear_btn.click, chatbot.clear],
                        accept_language=_accept_language)
    return demo


def _quiet_queue_analytics(demo: gr.Blocks) -> None:
    """Gradio rebuilds a pandas table of up to 10,000 past events after every event, for a monitoring page
    this app turns off; keep that table tiny and rarely rebuilt (private attributes, hence the guard)."""
    queue = getattr(demo, "_queue", None)
    if queue is not None and hasattr(queue, "ANALYTICS_MAX_EVENTS"):
        queue.ANALYTICS_MAX_EVENTS = 50
        queue.ANAYLTICS_CACHE_FREQUENCY = 1000


def launch(assistant, settings: Settings, *, host: str = "127.0.0.1", port: int = 7860, block: bool = True):
    """Serve the chat. Loopback unless `host` says otherwise; never a public share link."""
    from starlette.middleware import Middleware

    demo = build_ui(assistant, settings)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=QUEUE_MAX)
    _quiet_queue_analytics(demo)
    demo.launch(server_name=host, server_port=port, share=False, show_error=False, prevent_thread_lock=not block,
                quiet=True, footer_links=[], max_file_size=0, run_history=False, enable_monitoring=False,
                mcp_server=False, ssr_mode=False, pwa=False, css_paths=[CSS_FILE],
                state_session_capacity=STATE_SESSIONS,
                app_kwargs={"middleware": [Middleware(NoUploads), Middleware(BodySizeLimit, max_bytes=MAX_BODY_BYTES)]})
    return demo
