"""The answer engine: question -> understanding -> plan -> retrieval -> answer -> YAML gate -> Answer.

`Assistant.load()` loads settings, the index (built when missing), the retriever and its models once;
`ask()` and `ask_stream()` then answer any number of questions. The validator decides which YAML is
shown, whatever the question or the LLM says.
"""
from __future__ import annotations

import threading
import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Iterator, Mapping

from assistant import memo
from assistant.answer import Answer, AskRequest, Turn
from assistant.compose.knowledge.anchors import Anchor, load_anchors
from assistant.compose.citations import Citer, source_lines
from assistant.compose.answers import ComposeInput, needs_of
from assistant.compose.gate.check import GatePolicy, StreamGate, gate_text
from assistant.compose.knowledge.judge import judge_user_layout, understood_errors
from assistant.compose.offline import Composed, compose
from assistant.compose.phrases import Phrases
from assistant.config import Settings, load_settings
from assistant.defaults import DEFAULT_GPUS_PER_NODE, MAX_GPUS_PER_NODE, MAX_WORLD_SIZE
from assistant.redact import Redactor
from assistant.retrieve.hit import Hit
from assistant.understand.ask_model import ClauseEncoders
from assistant.understand.asks import load_asks
from assistant.understand.planned import planned_asks
from assistant.understand.query import Query
from assistant.validator.report import ValidationReport
from assistant.wellformed import well_formed_request

MAX_QUESTION_CHARS = 20_000
MAX_HISTORY_TURNS = 20
MAX_TURN_CHARS = 20_000
MAIN_K = 5
_LOOKUP_CACHE_MAX = 2048
_STREAM_CHUNK = 160
LLM_MODES = ("offline", "openai", "local")
# One question per code path (model table, MoE, Chinese, pasted YAML, anchors) so the first real
# question does not pay for lazy loads.
_WARM_UP = (
    "Which strategy for Llama 3.1 70B on 2 nodes of 8 H100 with TP and PP?",
    "我在 16 张卡上训练 Qwen3-30B-A3B，想用专家并行，怎么配？",
    "What is wrong with this on 8 GPUs?\n```yaml\ndistributed:\n  strategy: ddp\n  tp_size: 2\n```",
    "Where is the device mesh built?",
)


class BadRequest(ValueError):
    """The request itself is unusable (empty question, absurd world size, ...)."""


def check_request(req: AskRequest) -> None:
    if not isinstance(req.question, str):
        raise BadRequest("question must be a string")
    if len(req.question) > MAX_QUESTION_CHARS:
        raise BadRequest(f"question longer than {MAX_QUESTION_CHARS} characters")
    for name, limit in (("world_size", MAX_WORLD_SIZE), ("gpus_per_node", MAX_GPUS_PER_NODE)):
        v = getattr(req, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v <= 0):
            raise BadRequest(f"{name} must be a positive integer, got {v!r}")
        if v is not None and v > limit:
            raise BadRequest(f"{name} must be at most {limit}, got {v}")
    if req.lang not in ("auto", "en", "zh"):
        raise BadRequest(f"lang must be auto, en or zh, got {req.lang!r}")
    if req.llm is not None and req.llm not in LLM_MODES:
        raise BadRequest(f"llm must be one of {', '.join(LLM_MODES)}, got {req.llm!r}")
    if len(req.history) > MAX_HISTORY_TURNS * 2:
        raise BadRequest(f"history longer than {MAX_HISTORY_TURNS * 2} turns")
    for t in req.history:
        if not isinstance(t, Turn) or t.role not in ("user", "assistant") or not isinstance(t.content, str):
            raise BadRequest("history entries must be turns with role user|assistant and text content")
        if len(t.content) > MAX_TURN_CHARS:
            raise BadRequest(f"a history turn is longer than {MAX_TURN_CHARS} characters")


@dataclass
class _Prepared:
    """Everything the offline part decides; the LLM path reuses it."""
    query: Query
    plan: object | None
    composed: Composed
    sources: list[Hit]
    diagnosis: object | None
    timings: dict[str, float] = field(default_factory=dict)
    asks: tuple = ()
    inp: ComposeInput | None = None  # what the answer modules were given: the LLM prompt's computed facts


def _recipe_of(text: str | None) -> dict | None:
    """A validated YAML as its recipe mapping (None for none or an unreadable one)."""
    if not text:
        return None
    from assistant.validator.coerce import load_yaml

    try:
        data = load_yaml(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _intent_of(q: Query, asks: list[str]) -> str:
    """The intent an answer reports: the question's, unless its asks say otherwise (an off-topic
    question told so is out_of_scope; "sbatch script, and what tp/pp?" answers the tp/pp part)."""
    if q.intent in ("out_of_scope", "nonsense") and asks:
        if set(asks) == {"out_of_scope"}:
            return "out_of_scope"
        in_scope = next((a for a in asks if a not in ("out_of_scope", "nonsense")), None)
        if in_scope:
            return load_asks().to_intent.get(in_scope, q.intent)
    return q.intent


def _params_dict(query: Query) -> dict:
    out = {}
    for k, v in asdict(query.params).items():
        if k == "yaml_text":
            if v:
                out["yaml_pasted"] = True
            continue
        if isinstance(v, (set, frozenset)):
            v = sorted(v)
            if not v:
                continue
        if v is not None:
            out[k] = v
    return out


class Assistant:
    """One loaded engine: settings, index, retriever, phrasing and (optionally) an LLM client."""

    def __init__(self, settings: Settings, retriever, phrases: Phrases, llm_mode: str = "offline",
                 llm_client=None, local_server=None, code_anchors: Mapping[str, Anchor] | None = None):
        self.settings = settings
        self.retriever = retriever
        self.phrases = phrases
        self.code_anchors = dict(code_anchors or {})
        self.llm_mode = llm_mode
        self._llm = llm_client
        self._local = local_server
        self._lock = threading.Lock()  # the retriever and its models are shared; LLM streaming is not locked
        self._lookup_cache: dict[tuple[str, str], list[Hit]] = {}
        self.load_ms: dict[str, float] = {}
        self._closed = False
        self._tools_ok = True  # cleared when the endpoint refuses `tools`: the single-shot prompt from then on
        # the ask model reads clauses with the retriever's own encoders: no second load
        encs = tuple(getattr(retriever, "encoders", None) or ())
        glossary = getattr(retriever, "glossary", None)
        self._clause_encoders = ClauseEncoders(encs, glossary.expand) if encs and glossary is not None else None
        self._redactor = Redactor.of((settings.llm_api_key, settings.slack_bot_token, settings.slack_app_token,
                                      settings.slack_signing_secret))

    # --- lifecycle ---------------------------------------------------------------------------
    @classmethod
    def load(cls, settings: Settings | None = None, *, llm: str = "offline", warm_up: bool = True,
             record_dir=None) -> "Assistant":
        """Settings, index (built when missing), retriever and models, once. `warm_up` answers a few
        questions so the first real one pays no lazy-load costs; a one-shot CLI call skips it.
        `record_dir`: every request to the model and its reply is stored there (llm_record.py)."""
        if llm not in LLM_MODES:
            raise ValueError(f"llm must be one of {', '.join(LLM_MODES)}, got {llm!r}")
        timings: dict[str, float] = {}
        t = time.perf_counter()
        settings = settings or load_settings()
        from assistant.retrieve.retriever import Retriever
        from ingest.refresh import refresh_index

        # A missing or stale index is built or updated first, from the sources it was built from.
        retriever = Retriever.load(settings, warm_up=warm_up, build=refresh_index)
        phrases = Phrases.load()
        code_anchors = load_anchors(settings.kb_dir / "anchors.yaml")
        timings["index_and_retriever"] = (time.perf_counter() - t) * 1000

        client = server = None
        t = time.perf_counter()
        if llm == "openai":
            if not settings.llm_base_url:
                raise ValueError("--llm openai needs an endpoint: set MESHWISE_LLM_BASE_URL (and MESHWISE_LLM_MODEL)"
                                 " or llm_base_url in the config file")
            from assistant.compose.llm.openai_client import OpenAICompatClient

            client = OpenAICompatClient(settings.llm_base_url, model=settings.llm_model or "default",
                                        api_key=settings.llm_api_key, timeout_s=settings.llm_timeout_s,
                                        tools=settings.llm_tools)
        elif llm == "local":
            from assistant.compose.llm.local_server import LocalServer, find_gguf
            from assistant.compose.llm.openai_client import OpenAICompatClient

            server = LocalServer(find_gguf(settings.llm_gguf))
            url = server.start()
            # A 135M model on 2 cores: a short context and answer keep it within seconds.
            client = OpenAICompatClient(url, model="local", timeout_s=settings.llm_timeout_s,
                                        max_tokens=400, context_window=4096, tools=False)
        if client is not None:
            client.warm()
        if client is not None and record_dir is not None:
            from assistant.compose.llm.record import RecordingClient

            client = RecordingClient(client, record_dir)
        timings["llm"] = (time.perf_counter() - t) * 1000

        a = cls(settings, retriever, phrases, llm, client, server, code_anchors)
        t = time.perf_counter()
        if warm_up:
            a._warm_up()
        timings["warm_up"] = (time.perf_counter() - t) * 1000
        a.load_ms = timings
        return a

    def _warm_up(self) -> None:
        """First-call costs (model graphs, tokenizer tables, regex compiles) paid at load, not per answer."""
        for q in _WARM_UP:
            try:
                self.ask(AskRequest(question=q, llm="offline"))
            except Exception:  # noqa: BLE001 - warm-up is an optimisation; a real ask reports real errors
                pass

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._local is not None:
            self._local.close()

    def __enter__(self) -> "Assistant":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- validator pass-through -----------------------------------------------------------
    def validate(self, recipe, **kwargs) -> ValidationReport:
        from assistant.validator import validate

        return validate(recipe, **kwargs)

    # --- the offline part -------------------------------------------------------------------
    def _lookup(self, lang: str):
        """Support for one fact: the chunks of the documents that state it, straight from the index
        (no encoding needed), in the answer's language first."""

        def lookup(text: str, docs) -> list[Hit]:
            key = ("\0".join(docs), lang)
            hits = self._lookup_cache.get(key)
            if hits is None:
                hits = [h for d in docs for h in self.retriever.doc_chunks(d, lang=lang)]
                if len(self._lookup_cache) >= _LOOKUP_CACHE_MAX:
                    self._lookup_cache.clear()
                self._lookup_cache[key] = hits
            return hits

        return lookup

    def _prefetch(self, retrieval_text: str) -> None:
        """The retriever starts embedding the retrieval text while the asks are still read: most
        questions retrieve, and the embedding runs on the other core (Retriever.prefetch)."""
        prefetch = getattr(self.retriever, "prefetch", None)  # test doubles of the retriever have none
        if prefetch is not None:
            prefetch(retrieval_text)

    def _prepare(self, req: AskRequest) -> _Prepared:
        """Understanding -> the asks -> what they need (plan, retrieval, anchors, the user's layout
        validated, pasted errors matched) -> the registry's answer modules."""
        from assistant.planner import plan as make_plan
        from assistant.understand import understand

        timings: dict[str, float] = {}
        self.retriever.forget_embeddings()  # each text is embedded once per question, then shared
        memo.forget()  # and each pure reading of a text computed once per question (assistant/memo.py)
        t = time.perf_counter()
        q = understand(req.question, history=req.history, lang=req.lang, world_size=req.world_size,
                       gpus_per_node=req.gpus_per_node, model=req.model, gpu=req.gpu,
                       encoders=self._clause_encoders, on_retrieval_text=self._prefetch)
        asks = planned_asks(q)
        needs = needs_of(asks, q)
        gpn = q.situation.gpus_per_node or DEFAULT_GPUS_PER_NODE
        timings["understand"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        plan = None
        if "plan" in needs:
            try:
                plan = make_plan(q)
            except Exception:  # noqa: BLE001 - a planner bug must not take the answer down; no YAML is shown then
                plan = None
        timings["plan"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        text = q.retrieval_text or q.text
        hits: list[Hit] = []
        anchors: list[Hit] = []
        if needs & {"retrieval", "anchors"} and text.strip():
            hits = list(self.retriever.search(text, k=MAIN_K, lang=q.lang))
            if "anchors" in needs:
                anchors = list(self.retriever.search(text, k=MAIN_K, kinds=("anchor", "code")))
        timings["retrieve"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        errors = tuple(understood_errors(q)) if "errors" in needs else ()
        judged = judge_user_layout(q, gpn, errors) if "validation" in needs else None
        timings["validate"] = (time.perf_counter() - t) * 1000

        t = time.perf_counter()
        citer = Citer(hits, q.lang, lookup=self._lookup(q.lang), max_lookups=40)
        inp = ComposeInput(q, plan, gpn, judged, anchors, self.code_anchors, asks, errors)
        composed = compose(inp, citer, self.phrases)
        timings["compose"] = (time.perf_counter() - t) * 1000
        return _Prepared(q, plan, composed, list(citer.sources), judged, timings, asks, inp)

    # --- gate and answer assembly --------------------------------------------------------
    def _policy(self, prep: _Prepared) -> GatePolicy:
        from assistant.validator import validate

        q, plan = prep.query, prep.plan
        d = prep.diagnosis
        world = (d.world_size if d is not None and d.world_size else None) or q.params.world_size \
            or (plan.report.world_size if plan is not None else None) or (plan.world_size if plan is not None else None)
        gpn = q.params.gpus_per_node or (plan.gpus_per_node if plan is not None else DEFAULT_GPUS_PER_NODE)
        lang = q.lang
        ph = self.phrases

        def check(body: str) -> ValidationReport:
            return validate(body, world_size=world or gpn, gpus_per_node=gpn, model=q.params.model, gpu=q.params.gpu)

        ok_plan = plan is not None and plan.report.ok and bool(plan.yaml)
        if ok_plan:
            # the fallback passes the gate's own check (this world, model and GPU), not only the planner's
            fallback_report = check(plan.yaml)
            ok_plan = fallback_report.ok
        # the layouts the answer is about: a prose fragment (`pp_size: 2`) is judged completed over them
        bases = [d.judged if d is not None else None, _recipe_of(plan.yaml if ok_plan else None),
                 _recipe_of(prep.composed.yaml)]
        return GatePolicy(
            check=check,
            world_size=world or gpn,
            fallback_yaml=plan.yaml if ok_plan else None,
            fallback_report=fallback_report if ok_plan else None,
            lang=lang,
            replaced_note=lambda w, reasons: ph.say("gate_replaced", lang, world=w, reasons=reasons),
            removed_note=lambda w, reasons: ph.say("gate_removed", lang, world=w, reasons=reasons),
            replaced_again_note=lambda w, reasons: ph.say("gate_replaced_again", lang, world=w, reasons=reasons),
            unparseable=ph.say("gate_unparseable", lang),
            exempt_yaml=d.yaml_text if d is not None and d.pasted else None,
            fragment_bases=tuple(b for b in bases if isinstance(b, dict)),
            verdict_note=lambda layout, w, reasons, works: ph.say("gate_verdict_fails" if works else "gate_verdict_passes",
                                                                  lang, layout=layout, world=w, reasons=reasons),
        )

    def _scrub(self, text: str) -> str:
        return self._redactor.scrub(text)

    def _answer(self, req: AskRequest, prep: _Prepared, text: str, yaml_text, report, notices, timings,
                sources: list[Hit], yaml_report: ValidationReport | None = None, *, llm_path: str | None = None,
                judged: dict | None = None, model_validated: dict | None = None,
                tool_calls: list[dict] | None = None) -> Answer:
        q = prep.query
        return Answer(
            id=req.id or uuid.uuid4().hex[:12],
            text=self._scrub(text),
            language=q.lang,
            intent=_intent_of(q, prep.composed.asks),
            strategy=prep.composed.strategy or (report.derived.strategy if report is not None and report.derived else None),
            yaml=yaml_text,
            validation=report,
            sources=sources,
            timings_ms=timings,
            notices=notices,
            params=_params_dict(q),
            judged=judged if judged is not None else (prep.composed.judged if report is prep.composed.validation else None),
            asks=list(prep.composed.asks),
            yaml_validation=yaml_report if yaml_text else None,
            llm_path=llm_path or "offline",
            model_validated=model_validated,
            tool_calls=list(tool_calls or []),
        )

    def _offline_answer(self, req: AskRequest, prep: _Prepared, t0: float, notices: list[str]) -> Answer:
        t = time.perf_counter()
        c = prep.composed
        text, result = gate_text(c.text, self._policy(prep))
        timings = dict(prep.timings)
        timings["gate"] = (time.perf_counter() - t) * 1000
        yaml_text, report, yaml_report = c.yaml, c.validation, c.yaml_validation
        if result.replaced:  # cannot happen with a correct planner; the gate still has the last word
            yaml_text, report = (result.shown[0] if result.shown else (None, None))
            yaml_report = report
        if notices:
            text = "\n".join(f"_{n}_" for n in notices) + "\n\n" + text
        timings["total"] = (time.perf_counter() - t0) * 1000
        return self._answer(req, prep, text, yaml_text, report, notices, timings, prep.sources, yaml_report)

    # --- public API -------------------------------------------------------------------------
    def ask(self, req: AskRequest) -> Answer:
        answer = None
        for item in self.ask_stream(req):
            if isinstance(item, Answer):
                answer = item
        assert answer is not None
        return answer

    def ask_stream(self, req: AskRequest) -> Iterator[str | Answer]:
        """Text deltas, then the final Answer (its text is authoritative: replace what was streamed)."""
        if self._closed:
            raise RuntimeError("this Assistant is closed")
        check_request(req)
        req = well_formed_request(req)  # a lone surrogate would break every encoder downstream
        t0 = time.perf_counter()
        with self._lock:
            prep = self._prepare(req)
        # The request's explicit choice wins ("offline" forces the offline answer even with an LLM
        # loaded); None means the mode this Assistant was loaded with.
        mode = req.llm if req.llm is not None else self.llm_mode
        usable = mode != "offline" and self._llm is not None and mode == self.llm_mode
        # Nonsense and out-of-scope answers are fixed, short and grounded: no model needed.
        if not usable or set(prep.composed.asks) <= {"nonsense", "out_of_scope"}:
            notices = []
            if mode != "offline" and not usable:
                lang = prep.query.lang
                notices = [self.phrases.say("llm_not_configured", lang) if self._llm is None else
                           self.phrases.say("llm_mode_unavailable", lang, mode=mode, loaded=self.llm_mode)]
            answer = self._offline_answer(req, prep, t0, notices)
            for i in range(0, len(answer.text), _STREAM_CHUNK):
                yield answer.text[i:i + _STREAM_CHUNK]
            yield answer
            return
        yield from self._llm_stream(req, prep, t0)

    def _llm_stream(self, req: AskRequest, prep: _Prepared, t0: float) -> Iterator[str | Answer]:
        """The model words the answer Meshwise computed: the prompt carries the situation, the asks
        and each ask's computed answer; the gate judges every YAML it shows. With tools (an endpoint
        that speaks function calling) the model may validate its own reading first; a server that
        refuses `tools` gets the single-shot prompt from then on."""
        from assistant.compose.llm.ask_notes import computed_for
        from assistant.compose.llm.openai_client import LLMError
        from assistant.compose.llm.prompts import build_messages, prompt_room

        q, c = prep.query, prep.composed
        computed = computed_for(prep.inp, prep.sources, self.phrases, config_yaml=c.yaml, config_report=c.yaml_validation)
        room = prompt_room(getattr(self._llm, "context_window", 8192), getattr(self._llm, "max_tokens", 900))
        # a 135M model on 2 cores pays for every prompt token before its first one: fewer, shorter sources
        local = self._local is not None
        tools = not local and bool(getattr(self._llm, "tools", False)) and self._tools_ok
        messages = build_messages(q, computed, prep.sources, req.history, prompt_tokens=room, tools=tools,
                                  max_chunk_chars=500 if local else 1200, max_sources=3 if local else None)
        t = time.perf_counter()
        if tools:
            try:
                yield from self._tool_answer(req, prep, computed, messages, t0)
                return
            except LLMError as exc:
                if exc.kind not in ("no_tools", "no_tools_now"):
                    yield from self._llm_fallback(req, prep, t0, t, exc, streamed=False)
                    return
                if exc.kind == "no_tools":
                    self._tools_ok = False  # this endpoint or model has no function calling
                messages = build_messages(q, computed, prep.sources, req.history, prompt_tokens=room)
        yield from self._single_shot(req, prep, computed, messages, t0)

    def _llm_fallback(self, req: AskRequest, prep: _Prepared, t0: float, t: float, exc, streamed: bool):
        q = prep.query
        why = f"llm_why_{exc.kind}" if f"llm_why_{exc.kind}" in self.phrases.text else "llm_why_other"
        notice = self.phrases.say("llm_fallback", q.lang, why=self.phrases.say(why, q.lang))
        answer = self._offline_answer(req, prep, t0, [notice])
        answer.timings_ms["llm"] = (time.perf_counter() - t) * 1000
        if streamed:
            yield "\n\n---\n\n"
        for i in range(0, len(answer.text), _STREAM_CHUNK):
            yield answer.text[i:i + _STREAM_CHUNK]
        yield answer

    def _single_shot(self, req: AskRequest, prep: _Prepared, computed, messages, t0: float) -> Iterator[str | Answer]:
        """One prompt, streamed through the gate; an opening that does not state the computed verdict
        or number gets Meshwise's lead put before it."""
        from assistant.compose.llm.lead_check import LeadFirst
        from assistant.compose.llm.openai_client import LLMError
        from assistant.compose.llm.prompts import PROMPT_ECHO

        q, c = prep.query, prep.composed
        # the model's own verdict sentences and markers are dropped and config-shaped text anywhere in it is
        # judged: the verdict is the validator's, and an opening left without one gets Meshwise's lead
        gate = StreamGate(replace(self._policy(prep), strip_claims=True, echo=PROMPT_ECHO, model_text=True))
        lead = LeadFirst(computed.notes)
        # redacted before the gate sees it: a secret split across deltas is one secret, and nothing the
        # gate keeps (a shown config) holds one
        redact = self._redactor.stream()
        t = time.perf_counter()
        sent: list[str] = []  # what the user has read: the final text is exactly this, nothing shown twice
        try:
            for delta in self._llm.stream(messages):
                out = lead.feed(gate.feed(redact.feed(delta)))
                if out and (sent or out.strip()):
                    out = out if sent else out.lstrip()
                    sent.append(out)
                    yield out
            tail = lead.feed(gate.feed(redact.close()) + gate.close()) + lead.close()
            if tail and (sent or tail.strip()):
                tail = tail if sent else tail.lstrip()
                sent.append(tail)
                yield tail
        except LLMError as exc:
            yield from self._llm_fallback(req, prep, t0, t, exc, streamed=bool(sent))
            return
        timings = dict(prep.timings)
        timings["llm"] = (time.perf_counter() - t) * 1000
        text = "".join(sent)
        if not text.endswith("\n"):
            sent.append("\n")
            yield "\n"
            text += "\n"
        # The verdict is Meshwise's own; the gate's only where Meshwise judged nothing.
        yaml_text, report, yaml_report = c.yaml, c.validation, c.yaml_validation
        if report is None and gate.result.shown:
            yaml_text, report = gate.result.shown[0]
            yaml_report = report
        extra = ""
        if not gate.result.shown and computed.config_yaml:
            # The model left the config out: the validated one the offline answer shows belongs here too.
            extra += f"\n```yaml\n{computed.config_yaml.rstrip()}\n```\n"
        extra = self._scrub(extra + "\n" + self._sources_block(prep.sources, q.lang))
        yield extra
        text += extra
        timings["total"] = (time.perf_counter() - t0) * 1000
        yield self._answer(req, prep, text, yaml_text, report, [], timings, prep.sources, yaml_report,
                           llm_path="single_shot")

    def _tool_answer(self, req: AskRequest, prep: _Prepared, computed, messages, t0: float) -> Iterator[str | Answer]:
        """The bounded tool loop, then its final text through the gate. The layout the model last
        validated as the user's (the user stated it: llm_tools.stated_by_user) is the answer's judged
        layout, and the gate judges YAML at its numbers; without one, Meshwise's reading and leads stand."""
        from assistant.compose.llm.lead_check import contradicted_leads
        from assistant.compose.llm.tools import ToolContext, question_numbers
        from assistant.compose.llm.prompts import PROMPT_ECHO
        from assistant.compose.llm.tool_loop import run_tool_loop
        from assistant.validator import validate

        q, c, d = prep.query, prep.composed, prep.diagnosis
        gpn = q.situation.gpus_per_node or DEFAULT_GPUS_PER_NODE

        def search(text: str, k: int) -> list[Hit]:
            with self._lock:
                return list(self.retriever.search(text, k=k, lang=q.lang))

        said = [q.text, *(t.content for t in req.history if t.role == "user")]
        # the world the user gave: in the request, or as nodes x GPUs per node, is theirs though never written as one number
        sit = q.situation
        implied = {n for n in (sit.world_size, sit.nodes and sit.gpus_per_node and sit.nodes * sit.gpus_per_node) if n}
        worlds = implied | {n for n in (q.params.prior_world_size, d.world_size if d is not None else None) if n}
        ctx = ToolContext(lang=q.lang, question_numbers=question_numbers(*said) | implied,
                          user_layout=d.judged if d is not None else None, user_worlds=frozenset(worlds),
                          gpus_per_node=gpn,
                          search=search, sources=list(prep.sources))
        t = time.perf_counter()
        timeout = getattr(self._llm, "total_timeout_s", None) or 4 * getattr(self._llm, "timeout_s", 60.0)
        loop = run_tool_loop(self._llm, [{"role": r, "content": m} for r, m in messages], ctx, timeout_s=timeout)
        mine = loop.users_layout
        # the model's text, whole: markers count for nothing and config-shaped text anywhere is judged
        policy = replace(self._policy(prep), strip_claims=True, echo=PROMPT_ECHO, model_text=True)
        if mine is not None:  # the user's layout as the model read and validated it: YAML is judged at its numbers
            if policy.world_size != mine.world_size:  # the planner's YAML was validated at other numbers
                policy = replace(policy, fallback_yaml=None, fallback_report=None)
            policy = replace(policy, world_size=mine.world_size,
                             check=lambda body: validate(body, world_size=mine.world_size,
                                                         gpus_per_node=mine.gpus_per_node, model=q.params.model,
                                                         gpu=q.params.gpu))
        # the layouts the model validated are what its prose fragments refer to, first the user's
        policy = replace(policy, fragment_bases=tuple(v.recipe for v in sorted(loop.validated, key=lambda v: not v.user_stated)
                                                      if v.report.ok or v.user_stated) + policy.fragment_bases)
        judged_fails = computed.judged is not None and computed.judged.report is not None and not computed.judged.report.ok
        agreed = bool(loop.validated) and all(v.report.ok for v in loop.validated) and (mine is not None or not judged_fails)
        text, result = gate_text(self._scrub(loop.text), replace(policy, keep_claims=agreed))
        if agreed and result.replaced:  # a config the validator refused: no verdict sentence of the model's stands
            text, result = gate_text(self._scrub(loop.text), policy)
        text = text.strip() + "\n"
        if mine is None and computed.judged is not None:
            # the model's reading is its own (it had the tools); only a verdict on the layout the user
            # stated, as Meshwise judged it, may not be contradicted
            against = contradicted_leads(text, computed.notes)
            text = "\n".join(against) + "\n\n" + text if against else text
        elif loop.users_layouts == 1:  # with several (an alternative asked about) no one verdict leads
            text = self._tool_verdict_first(text, mine, q.lang, computed.notes)
        timings = dict(prep.timings)
        timings["llm"] = (time.perf_counter() - t) * 1000
        # the model left a config out: the validated one the offline answer shows belongs here too
        appended = not result.shown and computed.config_yaml is not None and mine is None
        yaml_text, yaml_report = (result.shown[0] if result.shown else
                                  (computed.config_yaml, computed.config_report) if appended else (None, None))
        # the verdict is on the user's layout: as the model validated it, else as Meshwise read it
        report = mine.report if mine is not None else (c.validation if c.validation is not None else
                                                       (result.shown[0][1] if result.shown else None))
        judged = mine.recipe if mine is not None else None
        if appended:
            text += f"\n```yaml\n{computed.config_yaml.rstrip()}\n```\n"
        text += "\n" + self._sources_block(ctx.sources, q.lang)
        for i in range(0, len(text), _STREAM_CHUNK):
            yield text[i:i + _STREAM_CHUNK]
        timings["total"] = (time.perf_counter() - t0) * 1000
        last = loop.last_validated
        yield self._answer(req, prep, text, yaml_text, report, [], timings, ctx.sources, yaml_report, llm_path="tools",
                           judged=judged, model_validated=last.to_json() if last is not None else None,
                           tool_calls=[{"name": r.name, "ok": r.ok, "error": r.error} for r in loop.calls])

    def _tool_verdict_first(self, text: str, mine, lang: str, notes) -> str:
        """The tool's verdict on the user's layout, put first where the model's opening contradicts it
        or leaves an asked verdict out (lead_check.verdict_due)."""
        from assistant.compose.llm.lead_check import verdict_due

        if not verdict_due(text, notes, "valid" if mine.report.ok else "invalid"):
            return text
        reasons = "; ".join(f"{f.code} ({f.message_zh if lang == 'zh' else f.message})" for f in mine.report.errors[:2])
        key = "tool_verdict_ok" if mine.report.ok else "tool_verdict_fails"
        return self.phrases.say(key, lang, world=mine.world_size, reasons=reasons) + "\n\n" + text

    def _sources_block(self, sources: list[Hit], lang: str) -> str:
        if not sources:
            return ""
        return "\n".join([f"**{self.phrases.heading('sources', lang)}**", "", *source_lines(sources)]) + "\n"
