"""The Gradio web chat: chat with streaming answers, verdict and sources beside it, a Validate tab.

Formatting only: every decision (strategy, YAML, verdict) comes from the `Assistant`.
"""
from __future__ import annotations

import logging
import time
import uuid

import gradio as gr

from assistant.answer import Answer, AskRequest, Turn
from assistant.config import Settings
from assistant.understand.language import detect_language
from assistant.validator import UnusableInput
from assistant.validator.models import list_gpus, list_models
from ui.web.feedback import Feedback, FeedbackStore
from ui.web.render import memory_figure, report_md, sources_md, t, verdict_md

log = logging.getLogger("meshwise.web")

MAX_QUESTION_CHARS = 4000
MAX_YAML_CHARS = 256 * 1024
MAX_HISTORY_TURNS = 12
LANG_CHOICES = [("auto", "auto"), ("中文", "zh"), ("English", "en")]

EXAMPLES = [
    "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?",
    "70B 模型，8 个节点，要 TP+PP，YAML 怎么写？",
    "Qwen3-30B-A3B on 8 GPUs with expert parallelism: what distributed config should I start with?",
    "MoE 模型想用专家并行，ep_size 有什么约束？",
    "Can I use megatron_fsdp if I need pipeline parallelism or sequence_parallel?",
    "128K 上下文训练 8B 模型，16 张 H100，要不要上下文并行？",
]


def _ui_lang(choice: str) -> str:
    return "zh" if choice == "zh" else "en"


def _world(nodes, gpn) -> int | None:
    try:
        return int(nodes) * int(gpn) if nodes else None
    except (TypeError, ValueError):
        return None


def _history(messages: list[dict]) -> tuple[Turn, ...]:
    turns = []
    for m in messages[-2 * MAX_HISTORY_TURNS:]:
        content = m.get("content")
        if m.get("role") in ("user", "assistant") and isinstance(content, str):
            turns.append(Turn(m["role"], content))
    return tuple(turns)


def build_ui(assistant, settings: Settings, feedback: FeedbackStore | None = None) -> gr.Blocks:
    feedback = feedback or FeedbackStore(settings.data_dir / "feedback.jsonl")
    llm_ok = settings.llm_configured
    llm_info = t("llm_available", "en", url=settings.llm_base_url) if llm_ok else t("llm_unavailable", "en")
    models = [""] + list_models()
    gpus = [""] + list_gpus()

    with gr.Blocks(title="Meshwise", analytics_enabled=False) as demo:
        meta = gr.State([])  # one dict per assistant message: answer id, question, settings
        header = gr.Markdown(f"# Meshwise\n{t('subtitle', 'en')}", elem_id="mw-header")
        with gr.Tabs():
            with gr.Tab(t("tab_chat", "en"), id="chat") as chat_tab:
                with gr.Row():
                    with gr.Column(scale=3):
                        chatbot = gr.Chatbot(height=520, elem_id="mw-chat", buttons=["copy"], show_label=False,
                                             feedback_options=("Like", "Dislike"), render_markdown=True)
                        question = gr.Textbox(label=t("question_label", "en"), placeholder=t("question_placeholder", "en"),
                                              lines=2, max_lines=10, elem_id="mw-question")
                        with gr.Row():
                            ask_btn = gr.Button(t("send", "en"), variant="primary", elem_id="mw-ask")
                            clear_btn = gr.Button(t("clear", "en"), elem_id="mw-clear")
                        examples_md = gr.Markdown(f"**{t('examples', 'en')}**")
                        gr.Examples(examples=[[q] for q in EXAMPLES], inputs=[question], elem_id="mw-examples")
                        thanks = gr.Markdown("", elem_id="mw-thanks")
                    with gr.Column(scale=2):
                        verdict = gr.Markdown(verdict_md(None, "en"), elem_id="mw-verdict")
                        sources = gr.Markdown(sources_md([], "en"), elem_id="mw-sources")
                        with gr.Accordion(t("settings", "en"), open=False, elem_id="mw-settings") as settings_box:
                            nodes = gr.Number(label=t("nodes", "en"), value=None, minimum=1, maximum=4096, precision=0, elem_id="mw-nodes")
                            gpn = gr.Number(label=t("gpus_per_node", "en"), value=8, minimum=1, maximum=64, precision=0, elem_id="mw-gpn")
                            world_md = gr.Markdown(t("world_size_auto", "en"), elem_id="mw-world")
                            gpu = gr.Dropdown(gpus, value="", label=t("gpu", "en"), elem_id="mw-gpu")
                            model = gr.Dropdown(models, value="", label=t("model", "en"), elem_id="mw-model")
                            lang = gr.Radio(LANG_CHOICES, value="auto", label=t("language", "en"), elem_id="mw-lang")
                            llm = gr.Radio(["offline", "openai"], value="offline", label=t("answerer", "en"),
                                           interactive=llm_ok, info=llm_info, elem_id="mw-llm")
            with gr.Tab(t("tab_validate", "en"), id="validate") as val_tab:
                with gr.Row():
                    with gr.Column(scale=1):
                        yaml_in = gr.Code(language="yaml", label=t("yaml_label", "en"), lines=16, elem_id="mw-yaml")
                        v_world = gr.Number(label=t("world_size", "en"), value=8, minimum=1, maximum=1_000_000, precision=0, elem_id="mw-vworld")
                        v_gpn = gr.Number(label=t("gpus_per_node", "en"), value=8, minimum=1, maximum=64, precision=0, elem_id="mw-vgpn")
                        v_model = gr.Dropdown(models, value="", label=t("model", "en"), elem_id="mw-vmodel")
                        v_gpu = gr.Dropdown(gpus, value="h100-80gb" if "h100-80gb" in gpus else "", label=t("gpu", "en"), elem_id="mw-vgpu")
                        v_btn = gr.Button(t("validate", "en"), variant="primary", elem_id="mw-validate")
                    with gr.Column(scale=1):
                        v_report = gr.Markdown("", elem_id="mw-report")
                        v_fix = gr.Code(language="yaml", label=t("suggested_fix", "en"), interactive=False, elem_id="mw-fix")
                        v_plot = gr.Plot(label=t("memory_chart", "en"), elem_id="mw-memory")

        # --- chat --------------------------------------------------------------------------
        def respond(message, messages, meta_rows, nodes_v, gpn_v, gpu_v, model_v, lang_v, llm_v):
            ui = _ui_lang(lang_v)
            message = (message or "").strip()
            messages = list(messages or [])
            if not message:
                yield messages, meta_rows, gr.update(), gr.update(), ""
                return
            answer_lang = lang_v if lang_v in ("en", "zh") else detect_language(message)
            messages.append({"role": "user", "content": message})
            if len(message) > MAX_QUESTION_CHARS:
                messages.append({"role": "assistant", "content": t("too_long", answer_lang, size=len(message), limit=MAX_QUESTION_CHARS)})
                meta_rows = meta_rows + [None]
                yield messages, meta_rows, gr.update(), gr.update(), ""
                return
            req = AskRequest(question=message, world_size=_world(nodes_v, gpn_v), gpus_per_node=int(gpn_v) if gpn_v else None,
                             lang=lang_v if lang_v in ("en", "zh") else "auto", history=_history(messages[:-1]),
                             llm="openai" if (llm_v == "openai" and llm_ok) else "offline",
                             gpu=gpu_v or None, model=model_v or None, id=f"web-{uuid.uuid4().hex[:12]}")
            messages.append({"role": "assistant", "content": ""})
            try:
                answer: Answer | None = None
                for item in assistant.ask_stream(req):
                    if isinstance(item, str):
                        messages[-1] = {"role": "assistant", "content": messages[-1]["content"] + item}
                        yield messages, meta_rows, gr.update(), gr.update(), ""
                    else:
                        answer = item
                if answer is None:
                    raise RuntimeError("no answer")
                text = answer.text + ("\n\n" + "\n".join(f"_{n}_" for n in answer.notices) if answer.notices else "")
                messages[-1] = {"role": "assistant", "content": text}
                row = {"answer_id": answer.id, "question": message, "answer": answer.text, "language": answer.language,
                       "settings": {"world_size": req.world_size, "gpus_per_node": req.gpus_per_node, "gpu": req.gpu,
                                    "model": req.model, "lang": lang_v, "llm": req.llm}}
                yield (messages, meta_rows + [row], verdict_md(answer.validation, answer.language),
                       sources_md(answer.sources, answer.language), "")
            except Exception as exc:  # one failed request shows an error; the server keeps serving
                log.exception("answer failed")
                messages[-1] = {"role": "assistant", "content": t("error", answer_lang, kind=type(exc).__name__)}
                yield messages, meta_rows + [None], gr.update(), gr.update(), ""

        chat_inputs = [question, chatbot, meta, nodes, gpn, gpu, model, lang, llm]
        chat_outputs = [chatbot, meta, verdict, sources, thanks]
        ask_btn.click(respond, chat_inputs, chat_outputs, concurrency_limit=4, api_name="ask").then(
            lambda: "", None, question)
        question.submit(respond, chat_inputs, chat_outputs, concurrency_limit=4, api_name=False).then(
            lambda: "", None, question)
        clear_btn.click(lambda lv: ([], [], verdict_md(None, _ui_lang(lv)), sources_md([], _ui_lang(lv)), ""),
                        [lang], chat_outputs, api_name=False)

        def on_like(data: gr.LikeData, meta_rows, lang_v):
            # meta has one row per assistant message, in order; the liked index counts all messages.
            idx = data.index[0] if isinstance(data.index, (list, tuple)) else data.index
            assistant_pos = int(idx) // 2
            row = meta_rows[assistant_pos] if 0 <= assistant_pos < len(meta_rows) else None
            if not row:
                return ""
            feedback.add(Feedback(answer_id=row["answer_id"], liked=bool(data.liked), question=row["question"],
                                  answer=row["answer"], settings=row["settings"], language=row["language"]))
            return t("thanks_up" if data.liked else "thanks_down", _ui_lang(lang_v))

        chatbot.like(on_like, [meta, lang], [thanks], api_name=False)

        def on_world(nodes_v, gpn_v, lang_v):
            ui, n = _ui_lang(lang_v), _world(nodes_v, gpn_v)
            return t("world_size_is", ui, n=n, nodes=int(nodes_v), gpn=int(gpn_v)) if n else t("world_size_auto", ui)

        for comp in (nodes, gpn):
            comp.change(on_world, [nodes, gpn, lang], [world_md], api_name=False)

        # --- validate tab -------------------------------------------------------------------
        def run_validate(text, world, gpn_v, model_v, gpu_v, lang_v):
            ui = _ui_lang(lang_v)
            text = text or ""
            if len(text) > MAX_YAML_CHARS:
                return f"❌ {t('too_long', ui, size=len(text), limit=MAX_YAML_CHARS)}", "", None
            try:
                report = assistant.validate(text, world_size=int(world or 0), gpus_per_node=int(gpn_v or 8),
                                            model=model_v or None, gpu=gpu_v or None)
            except (UnusableInput, ValueError) as exc:
                msg = getattr(exc, "message_zh" if ui == "zh" else "message", None) or str(exc)
                return f"❌ **{t('input_error', ui)}**: {msg}", "", None
            return report_md(report, ui), report.suggested_fix or "", memory_figure(report.memory, ui)

        v_btn.click(run_validate, [yaml_in, v_world, v_gpn, v_model, v_gpu, lang], [v_report, v_fix, v_plot],
                    concurrency_limit=4, api_name="validate")

        # --- interface language -----------------------------------------------------------
        def relabel(lang_v, nodes_v, gpn_v):
            ui = _ui_lang(lang_v)
            return (
                f"# Meshwise\n{t('subtitle', ui)}",
                gr.update(label=t("question_label", ui), placeholder=t("question_placeholder", ui)),
                gr.update(value=t("send", ui)), gr.update(value=t("clear", ui)),
                f"**{t('examples', ui)}**",
                gr.update(label=t("settings", ui)),
                gr.update(label=t("nodes", ui)), gr.update(label=t("gpus_per_node", ui)),
                on_world(nodes_v, gpn_v, lang_v),
                gr.update(label=t("gpu", ui)), gr.update(label=t("model", ui)),
                gr.update(label=t("language", ui)),
                gr.update(label=t("answerer", ui), info=t("llm_available", ui, url=settings.llm_base_url) if llm_ok else t("llm_unavailable", ui)),
                gr.update(label=t("tab_chat", ui)), gr.update(label=t("tab_validate", ui)),
                gr.update(label=t("yaml_label", ui)), gr.update(label=t("world_size", ui)),
                gr.update(label=t("gpus_per_node", ui)), gr.update(label=t("model", ui)), gr.update(label=t("gpu", ui)),
                gr.update(value=t("validate", ui)), gr.update(label=t("suggested_fix", ui)), gr.update(label=t("memory_chart", ui)),
            )

        lang.change(relabel, [lang, nodes, gpn],
                    [header, question, ask_btn, clear_btn, examples_md, settings_box, nodes, gpn, world_md, gpu, model,
                     lang, llm, chat_tab, val_tab, yaml_in, v_world, v_gpn, v_model, v_gpu, v_btn, v_fix, v_plot],
                    api_name=False)
    return demo


def launch(assistant, settings: Settings, *, host: str = "127.0.0.1", port: int = 7860, block: bool = True):
    demo = build_ui(assistant, settings)
    # A bounded queue: beyond it users get a clear "queue full" instead of a hung page.
    demo.queue(default_concurrency_limit=4, max_size=64)
    demo.launch(server_name=host, server_port=port, share=False, show_error=False, prevent_thread_lock=not block,
                quiet=True, footer_links=[])
    return demo
