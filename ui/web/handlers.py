"""What the web page does when a user acts: a chat turn, a validation, a thumbs up/down, a world size.

Plain functions over plain values, so they are testable without a browser; `ui/web/app.py` wires them
to Gradio components. Every decision (strategy, YAML, verdict) comes from the `Assistant`.
"""
from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator

from assistant.answer import Answer, AskRequest, Turn
from assistant.defaults import DEFAULT_GPUS_PER_NODE, MAX_GPUS_PER_NODE, MAX_WORLD_SIZE
from assistant.understand.language import detect_language
from assistant.validator import UnusableInput
from assistant.wellformed import well_formed
from ui.web.feedback import Feedback, FeedbackStore
from ui.web.render import BAD_MARK, INFO_MARK, chat_markdown, md_text, memory_details_md, memory_figure, report_md, sources_md, t, verdict_md

log = logging.getLogger("meshwise.web")

MAX_QUESTION_CHARS = 4000
MAX_YAML_CHARS = 256 * 1024  # the validator's own cap is in bytes; this one gives the friendly message
MAX_HISTORY_TURNS = 12  # question/answer pairs sent back to the engine for follow-ups
MAX_TURN_CHARS = 8000  # an earlier answer is cut to this before it goes back as history
MAX_NODES = 4096
MAX_WORLD = MAX_WORLD_SIZE
LANGS = ("auto", "zh", "en")
STREAM_EVERY_S = 0.15  # at most this often a partial answer goes to the browser


def interface_lang(choice: str | None, accept_language: str | None = None) -> str:
    """The language of labels and panels: the chosen one, or for "auto" the browser's preference."""
    if choice in ("en", "zh"):
        return choice
    return "zh" if (accept_language or "").strip().lower().startswith("zh") else "en"


@dataclass(frozen=True)
class ChatOptions:
    """The settings panel, checked. `nodes` None (the field empty or 0): the cluster is read from the question."""
    nodes: int | None = None
    gpus_per_node: int = DEFAULT_GPUS_PER_NODE
    gpu: str | None = None
    model: str | None = None
    lang: str = "auto"
    llm: str = "offline"

    @property
    def world_size(self) -> int | None:
        return self.nodes * self.gpus_per_node if self.nodes else None


class BadSetting(ValueError):
    def __init__(self, key: str, limit: int):
        super().__init__(key)
        self.key, self.limit = key, limit


def _count(value: Any, key: str, limit: int, *, default: int | None, zero_is_default: bool = False) -> int | None:
    if value is None or value == "" or (zero_is_default and value == 0):
        return default
    try:
        n = float(value)
    except (TypeError, ValueError):
        raise BadSetting(key, limit) from None
    if n != int(n) or not 1 <= n <= limit:
        raise BadSetting(key, limit)
    return int(n)


def chat_options(nodes=None, gpus_per_node=None, gpu=None, model=None, lang="auto", llm="offline",
                 *, llm_modes: tuple[str, ...] = ("offline",)) -> ChatOptions:
    """Raw widget values -> ChatOptions; `BadSetting` names the field that is out of range."""
    return ChatOptions(
        nodes=_count(nodes, "nodes", MAX_NODES, default=None, zero_is_default=True),
        gpus_per_node=_count(gpus_per_node, "gpus_per_node", MAX_GPUS_PER_NODE, default=DEFAULT_GPUS_PER_NODE),
        gpu=str(gpu) if gpu else None,
        model=str(model) if model else None,
        lang=lang if lang in LANGS else "auto",
        llm=llm if llm in llm_modes else "offline",
    )


def world_text(nodes, gpus_per_node, lang: str) -> str:
    try:
        o = chat_options(nodes, gpus_per_node)
    except BadSetting as exc:
        return t("bad_setting", lang, name=t(exc.key, lang), limit=exc.limit)
    if o.world_size is None:
        return t("world_size_auto", lang)
    return t("world_size_is", lang, n=o.world_size, nodes=o.nodes, gpn=o.gpus_per_node)


# --- chat --------------------------------------------------------------------------------------

def message_text(content: Any) -> str:
    """A Chatbot message's content as text: Gradio 6 hands back a list of typed parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return str(content.get("text") or content.get("content") or "") if content.get("type", "text") == "text" else ""
    if isinstance(content, (list, tuple)):
        return "\n".join(s for s in (message_text(c) for c in content) if s)
    return ""


def history_turns(messages: list[dict]) -> tuple[Turn, ...]:
    """The conversation so far as engine turns: the last pairs only, long answers cut."""
    turns = []
    for m in messages:
        role, text = m.get("role"), message_text(m.get("content"))
        if role in ("user", "assistant") and text:
            turns.append(Turn(role, text[:MAX_TURN_CHARS]))
    return tuple(turns[-2 * MAX_HISTORY_TURNS:])


@dataclass(frozen=True)
class Panel:
    """What the side panel shows for the latest answer; kept so a language switch can re-render it."""
    report: Any = None  # ValidationReport | None
    sources: tuple = ()
    lang: str = "en"

    def verdict(self, lang: str | None = None) -> str:
        return verdict_md(self.report, lang or self.lang)

    def sources_md(self, lang: str | None = None) -> str:
        return sources_md(list(self.sources), lang or self.lang)


@dataclass
class ChatView:
    """One update of the chat: the messages, per-answer feedback rows, and (when known) the panel."""
    messages: list[dict]
    meta: dict
    panel: Panel | None = None  # None: leave the side panel as it is
    clear_question: bool = False
    status: str = ""
    answer: Answer | None = field(default=None, repr=False)


def _reply(messages: list[dict], meta: dict, text: str) -> ChatView:
    return ChatView(messages + [{"role": "assistant", "content": text}], meta, clear_question=True)


def answer_turn(assistant, message: str, messages: list[dict] | None, meta: dict | None,
                opts: ChatOptions) -> Iterator[ChatView]:
    """One question in the chat: streams the answer, then the final text, verdict and sources.

    Never raises: a failure inside the engine becomes an error message in the chat.
    """
    message = well_formed(message if isinstance(message, str) else "").strip()  # shown back: must encode
    messages = [dict(m) for m in (messages or [])]
    meta = dict(meta or {})
    if not message:
        yield ChatView(messages, meta)
        return
    answer_lang = opts.lang if opts.lang in ("en", "zh") else detect_language(message[:MAX_QUESTION_CHARS])
    history = history_turns(messages)
    messages.append({"role": "user", "content": message})
    if len(message) > MAX_QUESTION_CHARS:
        yield _reply(messages, meta, t("too_long", answer_lang, size=len(message), limit=MAX_QUESTION_CHARS))
        return
    req = AskRequest(question=message, world_size=opts.world_size,
                     gpus_per_node=opts.gpus_per_node if opts.nodes else None,
                     lang=opts.lang if opts.lang in ("en", "zh") else "auto", history=history, llm=opts.llm,
                     gpu=opts.gpu, model=opts.model, id=f"web-{uuid.uuid4().hex[:12]}")
    pos = len(messages)  # index of the assistant message in the chat
    messages.append({"role": "assistant", "content": ""})
    streamed = ""
    first = True
    last_yield = 0.0
    try:
        answer: Answer | None = None
        for item in assistant.ask_stream(req):
            if isinstance(item, str):
                streamed += item
                now = time.monotonic()
                # Every update re-sends the chat to the browser: a few per second read as streaming, while
                # one per engine chunk costs more than the offline answer itself.
                if first or now - last_yield >= STREAM_EVERY_S:
                    messages[pos] = {"role": "assistant", "content": chat_markdown(streamed)}
                    yield ChatView(messages, meta, clear_question=first)
                    first, last_yield = False, now
            else:
                answer = item
        if answer is None:
            raise RuntimeError("the engine returned no answer")
    except Exception as exc:  # noqa: BLE001 - one failed request shows an error; the server keeps serving
        from assistant.engine import BadRequest

        if isinstance(exc, BadRequest):
            text = t("bad_request", answer_lang, reason=md_text(str(exc)))
        else:
            log.exception("answer failed for request %s", req.id)
            text = t("error", answer_lang, kind=type(exc).__name__)
        messages[pos] = {"role": "assistant", "content": text}
        yield ChatView(messages, meta, clear_question=True)
        return
    # The final Answer's text is authoritative (the stream may have been gated or replaced).
    text = answer.text
    extra = [n for n in answer.notices if n not in text]
    if extra:
        text += "\n\n" + "\n".join(f"_{n}_" for n in extra)
    messages[pos] = {"role": "assistant", "content": chat_markdown(text)}
    meta[str(pos)] = {
        "answer_id": answer.id, "question": message, "answer": answer.text, "language": answer.language,
        "intent": answer.intent, "history": [tr.content for tr in history if tr.role == "user"],
        "settings": {"world_size": req.world_size, "gpus_per_node": req.gpus_per_node, "gpu": req.gpu,
                     "model": req.model, "lang": opts.lang, "llm": req.llm},
    }
    panel = Panel(answer.validation, tuple(answer.sources), answer.language)
    yield ChatView(messages, meta, panel=panel, clear_question=True, answer=answer)


def record_feedback(store: FeedbackStore, meta: dict | None, index: Any, liked: Any, lang: str) -> str:
    """A thumbs up/down on the assistant message at `index` -> one JSONL row; returns the thank-you line."""
    if isinstance(index, (list, tuple)):
        index = index[0] if index else None
    row = (meta or {}).get(str(index)) if index is not None else None
    if not row or not isinstance(liked, bool):
        return ""  # an error message or a custom option: nothing to attach the vote to
    try:
        store.add(Feedback(answer_id=row["answer_id"], liked=liked, question=row["question"], answer=row["answer"],
                           settings=row.get("settings") or {}, language=row.get("language", "en"),
                           intent=row.get("intent"), history=tuple(row.get("history") or ())))
    except (OSError, ValueError):  # ValueError: a value strict JSON cannot carry
        log.exception("could not write feedback to %s", store.path)
        return t("feedback_failed", lang)
    return t("thanks_up" if liked else "thanks_down", lang)


# --- validate tab ------------------------------------------------------------------------------

@dataclass
class ValidateView:
    report: str
    fix: str = ""
    figure: Any = None  # a matplotlib Figure or None
    details: str = ""  # how the memory estimate was computed
    ok: bool | None = None  # None: no report (bad input)


def validate_yaml(assistant, text: str | None, world_size, gpus_per_node, model, gpu, lang: str) -> ValidateView:
    """The Validate tab: report with codes and both-language messages, the suggested fix, the memory chart."""
    text = text or ""
    if not text.strip():
        return ValidateView(f"{INFO_MARK} {t('yaml_empty', lang)}")
    if len(text) > MAX_YAML_CHARS:
        return ValidateView(f"{BAD_MARK} {t('yaml_too_long', lang, size=len(text), limit=MAX_YAML_CHARS)}")
    try:
        world = _count(world_size, "world_size", MAX_WORLD, default=None)
        gpn = _count(gpus_per_node, "gpus_per_node", MAX_GPUS_PER_NODE, default=DEFAULT_GPUS_PER_NODE)
    except BadSetting as exc:
        return ValidateView(f"{BAD_MARK} {t('bad_setting', lang, name=t(exc.key, lang), limit=exc.limit)}")
    if world is None:
        return ValidateView(f"{BAD_MARK} {t('bad_setting', lang, name=t('world_size', lang), limit=MAX_WORLD)}")
    try:
        report = assistant.validate(text, world_size=world, gpus_per_node=gpn, model=model or None, gpu=gpu or None)
    except UnusableInput as exc:
        return ValidateView(f"{BAD_MARK} **{t('input_error', lang)}**: {md_text(exc.message_zh if lang == 'zh' else exc.message)}")
    except Exception as exc:  # noqa: BLE001 - a validator bug shows an error; the server keeps serving
        log.exception("validation failed")
        return ValidateView(f"{BAD_MARK} {t('error', lang, kind=type(exc).__name__)}")
    body = report_md(report, lang)
    if report.memory is None and not (model and gpu):
        body += f"\n\n<small>{t('memory_none', lang)}</small>"
    return ValidateView(body, report.suggested_fix or "", memory_figure(report.memory, lang),
                        memory_details_md(report.memory, lang), report.ok)
