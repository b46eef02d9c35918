"""Issue 20.2: the total LLM deadline holds by the clock and a stream's bytes are capped, against a
scripted OpenAI-compatible server on 127.0.0.1 (keep-alive comments only; endless 64 KB deltas)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from assistant.answer import AskRequest
from assistant.compose.llm.openai_client import LLMError, OpenAICompatClient
from assistant.config import REPO_ROOT

Q = "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?"
MESSAGES = [("system", "You are terse."), ("user", "Which strategy?")]


@pytest.fixture
def engine_with(scripted, mw_assistant):
    """engine_with(client): the session engine's index and retriever answering through `client`."""
    from assistant.engine import Assistant

    made = []

    def make(client: OpenAICompatClient):
        settings = replace(mw_assistant.settings, llm_base_url=scripted.url, llm_model="scripted")
        a = Assistant(settings, mw_assistant.retriever, mw_assistant.phrases, "openai", client)
        made.append(a)
        return a

    yield make
    for a in made:
        a.close()


def _client(scripted, **kw) -> OpenAICompatClient:
    """A client, after one answer in this process: the first call's imports (seconds on a loaded
    machine) are not the time under test."""
    script, scripted.script = scripted.script, ("answer", "ok")
    assert OpenAICompatClient(scripted.url, model="scripted").complete(MESSAGES) == "ok"
    scripted.script = script
    c = OpenAICompatClient(scripted.url, model="scripted", **kw)
    c.warm()
    return c


def test_keep_alive_comments_do_not_outlast_the_total_deadline(scripted):
    c = _client(scripted, timeout_s=5, total_timeout_s=2.0)
    scripted.script = ("ping", 30)  # a read timeout of 5 s never fires: a comment arrives every second
    t = time.monotonic()
    with pytest.raises(LLMError) as err:
        list(c.stream(MESSAGES))
    assert err.value.kind == "timeout"
    assert time.monotonic() - t < 3.5


def test_endless_deltas_stop_at_the_byte_cap(scripted):
    cap = 1 << 20
    c = _client(scripted, timeout_s=5, total_timeout_s=20, max_stream_bytes=cap)
    scripted.script = ("flood", 30)
    t = time.monotonic()
    with pytest.raises(LLMError) as err:
        list(c.stream(MESSAGES))
    assert err.value.kind == "too_long"
    assert time.monotonic() - t < 10
    time.sleep(0.3)  # the server's last writes fail once the client is gone
    # what the client read plus the kernel's socket buffers (several MB on loopback); uncapped, the
    # stream ran for the whole 20 s deadline
    assert scripted.served < 32 << 20


def test_a_keep_alive_endpoint_gets_the_offline_answer_and_a_notice(scripted, engine_with, stream):
    a = engine_with(_client(scripted, timeout_s=5, total_timeout_s=2.5))
    scripted.script = ("ping", 30)
    t = time.monotonic()
    _, answer = stream(a, AskRequest(question=Q))
    assert time.monotonic() - t < 2.5 + 10
    assert len(answer.notices) == 1 and "timed out" in answer.notices[0]
    assert "fsdp2" in answer.text and answer.validation.ok


def test_a_flooding_endpoint_gets_the_offline_answer_and_a_notice(scripted, engine_with, stream):
    a = engine_with(_client(scripted, timeout_s=5, total_timeout_s=20, max_stream_bytes=1 << 20))
    scripted.script = ("flood", 30)
    _, answer = stream(a, AskRequest(question=Q))
    assert len(answer.notices) == 1 and "size limit" in answer.notices[0]
    assert "xxxxxxxx" not in answer.text and answer.validation.ok


@pytest.mark.slow
def test_meshwise_ask_llm_openai_ends_within_the_total_deadline(scripted, mw_settings):
    """The command line of the report: MESHWISE_LLM_TIMEOUT=3 (total 12 s) against keep-alives only."""
    scripted.script = ("ping", 120)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "MESHWISE_LLM_BASE_URL": scripted.url,
           "MESHWISE_LLM_MODEL": "scripted", "MESHWISE_LLM_TIMEOUT": "3",
           "MESHWISE_CONFIG": str(mw_settings.data_dir / "none.toml"),
           "MESHWISE_DATA_DIR": str(mw_settings.data_dir), "MESHWISE_INDEX_DIR": str(mw_settings.index_dir)}
    p = subprocess.run([sys.executable, "-m", "assistant.cli", "ask", "--llm", "openai", "--json", Q], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout)
    assert len(out["notices"]) == 1 and "timed out" in out["notices"][0] and "fsdp2" in out["answer"]
    assert out["timings_ms"]["llm"] < (12 + 10) * 1000  # it pinged for 120 s
