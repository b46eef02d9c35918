"""The bounded tool loop: the model may call Meshwise's tools a few times, then answers in text.

At most `max_calls` tool calls in all (a reply's calls past the budget are dropped, a call once it is
spent gets an error result, and the next request offers the tools with `tool_choice: "none"`), at most `max_calls + 2` requests, and one
deadline by the clock for the whole exchange. Each call goes through `llm_tools.run_tool`, which checks
its arguments like user input; each result goes back as a `tool` message of JSON data. The reply's
final text is what the engine gates; the layouts the tools validated come back with it.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from assistant.compose.llm.openai_client import LLMError
from assistant.compose.llm.tools import ToolContext, Validated, run_tool, tool_specs

MAX_TOOL_CALLS = 6
_BUDGET_SPENT = json.dumps({"error": "tool-call budget spent: answer the user now, without tools"})
_ANSWER_NOW = "The tool budget is spent. Answer the user's questions now, in text, from what you have."


@dataclass(frozen=True)
class CallRecord:
    name: str
    ok: bool
    error: str | None = None


@dataclass
class LoopResult:
    text: str
    calls: list[CallRecord] = field(default_factory=list)
    validated: list[Validated] = field(default_factory=list)  # in call order
    requests: int = 0

    @property
    def users_layout(self) -> Validated | None:
        """The layout the model last validated that the user stated, if any."""
        return next((v for v in reversed(self.validated) if v.user_stated), None)

    @property
    def users_layouts(self) -> int:
        """How many different layouts (at their world sizes) the model validated as the user's."""
        return len({json.dumps([v.recipe, v.world_size, v.gpus_per_node], sort_keys=True, default=str)
                    for v in self.validated if v.user_stated})

    @property
    def last_validated(self) -> Validated | None:
        return self.validated[-1] if self.validated else None


def _calls_of(message: dict) -> list[dict]:
    calls = message.get("tool_calls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def _call_parts(call: dict, i: int) -> tuple[str, Any, str]:
    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
    cid = call.get("id") if isinstance(call.get("id"), str) and len(call["id"]) <= 128 else f"call_{i}"
    return fn.get("name"), fn.get("arguments", "{}"), cid


def run_tool_loop(client, messages: Sequence[dict], ctx: ToolContext, *, timeout_s: float,
                  max_calls: int = MAX_TOOL_CALLS) -> LoopResult:
    """Ask, run the tools the reply calls, ask again, until a reply without calls. Raises LLMError
    (`no_tools` from the first request when the server refuses tools, `no_tools_now` from a later one;
    `timeout`; `empty`)."""
    deadline = time.monotonic() + timeout_s
    convo = list(messages)
    specs = tool_specs()
    out = LoopResult(text="")
    used = 0
    for _ in range(max_calls + 2):
        spent = used >= max_calls
        if spent and out.requests:
            convo.append({"role": "user", "content": _ANSWER_NOW})
        try:
            reply = client.chat(convo, tools=specs, tool_choice="none" if spent else "auto", deadline=deadline)
        except LLMError as exc:
            # a server that took the first request's tools has function calling: a later refusal naming
            # tools (of `tool_choice: "none"`, of one tool message) ends this answer's loop, not tools for good
            if exc.kind == "no_tools" and out.requests:
                raise LLMError("no_tools_now", str(exc)) from exc
            raise
        out.requests += 1
        calls = _calls_of(reply)
        content = reply.get("content") if isinstance(reply.get("content"), str) else ""
        # only the calls the budget runs (one past it, to be told so) are echoed and answered: a reply of
        # a thousand calls would otherwise be sent back, with an error for each, on every later request
        calls = calls[:max(1, max_calls - used)]
        if not calls:
            if not content.strip():
                raise LLMError("empty")
            out.text = content
            return out
        convo.append({"role": "assistant", "content": content or None,
                      "tool_calls": [{"id": cid, "type": "function",
                                      "function": {"name": str(name)[:60],
                                                   "arguments": args if isinstance(args, str) and len(args) <= 2000
                                                   else "{}"}}
                                     for name, args, cid in (_call_parts(c, i) for i, c in enumerate(calls))]})
        for i, call in enumerate(calls):
            name, args, cid = _call_parts(call, i)
            if used >= max_calls:
                convo.append({"role": "tool", "tool_call_id": cid, "content": _BUDGET_SPENT})
                out.calls.append(CallRecord(str(name)[:60], False, "budget spent"))
                continue
            used += 1
            result = run_tool(name, args, ctx)
            out.calls.append(CallRecord(result.name, result.ok, result.error))
            if result.validated is not None:
                out.validated.append(result.validated)
            convo.append({"role": "tool", "tool_call_id": cid, "content": result.content})
        if time.monotonic() > deadline:
            raise LLMError("timeout", "total answer time exceeded")
    raise LLMError("empty", "the model kept calling tools")
