"""ui/web/app.py: the Blocks as served on 127.0.0.1, driven through gradio_client (no browser)."""
from __future__ import annotations

import re
import urllib.error
import urllib.request

import gradio as gr
import pytest

from ui.web import app as web_app
from ui.web import handlers as h

ZH_QUESTION = "70B 模型，8 个节点，要 TP+PP，YAML 怎么写？"
EN_QUESTION = "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?"


def ask(client, question, messages=None, nodes=0, gpn=8, gpu="", model="", lang="auto"):
    """The /ask endpoint: (question box, chat messages, verdict, sources, status line)."""
    return client.predict(question, messages or [], nodes, gpn, gpu, model, lang, "offline", api_name="/ask")


def text_of(message) -> str:
    return h.message_text(message["content"])


def test_build_ui_wires_a_bounded_queue_and_private_internals(mw_assistant, mw_settings):
    demo = web_app.build_ui(mw_assistant, mw_settings)
    assert isinstance(demo, gr.Blocks)
    public = {d.api_name for d in demo.fns.values() if d.api_visibility == "public"}
    assert public == {"ask", "validate"}  # likes, relabels and clears are not API endpoints
    for d in demo.fns.values():
        if d.api_name in ("ask", "validate"):
            assert d.concurrency_limit == web_app.CONCURRENCY
    # The chat answers share one concurrency slot set whether sent by button, Enter or an example.
    ids = {d.concurrency_id for d in demo.fns.values() if d.fn is not None and getattr(d.fn, "__name__", "") == "respond"}
    assert len(ids) == 1


def test_server_binds_loopback_without_share(web_server):
    demo = web_server["demo"]
    assert demo.server_name == "127.0.0.1"
    assert not demo.share and demo.share_url is None
    assert demo._queue.max_size == web_app.QUEUE_MAX


def test_serve_command_defaults_to_loopback():
    import argparse

    from assistant.cli import serve_cmd

    parser = argparse.ArgumentParser()
    serve_cmd.add_parser(parser.add_subparsers())
    args = parser.parse_args(["serve"])
    assert (args.host, args.port, args.llm) == ("127.0.0.1", 7860, "offline")


def test_chinese_question_over_http(web_client):
    question_box, messages, verdict, sources, _ = ask(web_client, ZH_QUESTION)
    assert question_box == ""
    assert [m["role"] for m in messages] == ["user", "assistant"]
    answer = text_of(messages[-1])
    assert "```yaml" in answer and re.search(r"[\u4e00-\u9fff]", answer)
    assert "在 world_size=64 下校验通过" in verdict
    assert "kb/zh/" in sources and sources.count("<details>") >= 3


def test_english_question_and_follow_up_over_http(web_client):
    _, messages, verdict, sources, _ = ask(web_client, EN_QUESTION)
    assert "Valid for world size 64" in verdict and "kb/en/" in sources
    assert "strategy: fsdp2" in text_of(messages[-1])
    _, messages2, verdict2, _, _ = ask(web_client, "what if only 4 nodes?", messages)
    assert len(messages2) == 4
    assert "Valid for world size 32" in verdict2


def test_oversize_question_over_http(web_client):
    _, messages, verdict, _, _ = ask(web_client, "x" * (h.MAX_QUESTION_CHARS + 1))
    assert "too long" in text_of(messages[-1])
    assert isinstance(verdict, dict) and "value" not in verdict  # an update that leaves the panel as it was


def test_out_of_range_setting_is_refused_by_the_form(web_client):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError):
        ask(web_client, EN_QUESTION, gpn=1000)


def test_validate_endpoint(web_client):
    report, fix, plot, details = web_client.predict("distributed:\n  strategy: megatron_fsdp\n  pp_size: 2\n", 16, 8,
                                                    "", "", "en", api_name="/validate")
    assert "MW-E-MEGATRON-PP" in report and "Invalid for world size 16" in report
    assert "strategy: fsdp2" in fix
    assert plot.get("visible") is False and details == ""  # no model: no chart box
    report, fix, plot, details = web_client.predict("distributed:\n  strategy: fsdp2\n  tp_size: 8\n", 16, 8, "llama-3.1-70b",
                                           "h100-80gb", "zh", api_name="/validate")
    assert "单卡显存估算" in report
    assert plot["visible"] is True
    assert plot["value"]["type"] == "matplotlib" and plot["value"]["plot"].startswith("data:image/")
    assert details.startswith("<details><summary>显存估算的依据</summary>")
    report, _, _, _ = web_client.predict("distributed: [unclosed", 16, 8, "", "", "en", api_name="/validate")
    assert "Unusable input" in report


def test_engine_exception_keeps_the_server_serving(serve_app, mw_assistant, mw_settings, flaky):
    from gradio_client import Client

    url, _ = serve_app(flaky(mw_assistant, fail_on=(1, 3), after_text=True), mw_settings)
    client = Client(url, verbose=False)
    _, failed, _, _, _ = ask(client, EN_QUESTION)
    assert "this request failed (RuntimeError)" in text_of(failed[-1])
    _, ok, verdict, _, _ = ask(client, EN_QUESTION)
    assert "Valid for world size 64" in verdict and "strategy: fsdp2" in text_of(ok[-1])
    _, failed_again, _, _, _ = ask(client, ZH_QUESTION, ok)
    assert "请求失败" in text_of(failed_again[-1]) and len(failed_again) == 4
    with urllib.request.urlopen(url, timeout=10) as r:
        assert r.status == 200


def test_oversize_request_body_is_refused(web_server):
    import http.client
    from urllib.parse import urlsplit

    # Announce a body over the cap: the answer is 413 before any of it is read or parsed.
    u = urlsplit(web_server["url"])
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.putrequest("POST", "/gradio_api/queue/join")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(web_app.MAX_BODY_BYTES + 1))
    conn.endheaders()
    resp = conn.getresponse()
    assert resp.status == 413
    conn.close()
    with urllib.request.urlopen(web_server["url"], timeout=10) as r:
        assert r.status == 200


def test_no_files_outside_the_app_are_served(web_server, mw_settings):
    secret = mw_settings.data_dir / "secret-note.txt"
    secret.write_text("MW-SECRET-MARKER", encoding="utf-8")
    for path in (f"gradio_api/file={secret}", f"file={secret}", "gradio_api/file=/etc/passwd"):
        try:
            with urllib.request.urlopen(web_server["url"] + path, timeout=10) as r:
                body = r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            assert e.code in (403, 404), path
            continue
        assert "MW-SECRET-MARKER" not in body and "root:x:" not in body, path


# --- issue 14.6: a web session survives any string ------------------------------------------------------
def ask_raw(url: str, question: str, messages=None) -> list:
    """/ask over Gradio's REST API with the JSON a browser sends: a lone surrogate travels as a `\\ud800`
    escape (gradio_client cannot send one: it encodes the request as UTF-8 first)."""
    import json

    body = json.dumps({"data": [question, messages or [], 0, 8, "", "", "auto", "offline"]}).encode("ascii")
    req = urllib.request.Request(url + "gradio_api/call/ask", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        event_id = json.loads(r.read())["event_id"]
    with urllib.request.urlopen(f"{url}gradio_api/call/ask/{event_id}", timeout=120) as r:
        stream = r.read().decode("utf-8")
    events = re.findall(r"^event: (\w+)\ndata: (.*)$", stream, re.M)
    assert events and events[-1][0] == "complete", stream[-500:]
    return json.loads(events[-1][1])


@pytest.mark.parametrize("bad", ["\ud800", "\udfff?", "\udc80\ud83d"], ids=["lone-high", "lone-low", "reversed-pair"])
def test_lone_surrogates_do_not_break_the_session(web_server, bad):
    url = web_server["url"]
    out = ask_raw(url, f"Which strategy for 70B on 8 nodes? {bad}")
    messages = out[1]
    assert messages and messages[-1]["role"] == "assistant" and "fsdp2" in text_of(messages[-1])
    out2 = ask_raw(url, "what if only 4 nodes?", messages)  # the next question in the session works
    assert len(out2[1]) == len(messages) + 2 and "32" in text_of(out2[1][-1])


# --- issue 14.7: no unauthenticated uploads -------------------------------------------------------------
def test_upload_route_accepts_no_files(web_server):
    import uuid

    boundary = uuid.uuid4().hex
    marker = f"MW-UPLOAD-{uuid.uuid4().hex}"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"x.txt\"\r\n"
            f"Content-Type: text/plain\r\n\r\n{marker}\r\n--{boundary}--\r\n").encode()
    req = urllib.request.Request(web_server["url"] + "gradio_api/upload", data=body, method="POST",
                                 headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            status, answer = r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        status, answer = e.code, ""
    assert status in (403, 404, 405, 413), (status, answer)
    assert web_server["demo"].delete_cache == web_app.CACHE_CLEANUP  # Gradio's own temporary files are cleaned
    # and nothing was stored where gradio keeps uploads
    import os
    import tempfile
    root = os.environ.get("GRADIO_TEMP_DIR") or os.path.join(tempfile.gettempdir(), "gradio")
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            try:
                with open(path, "rb") as f:
                    assert marker.encode() not in f.read(4096), path
            except OSError:
                continue
