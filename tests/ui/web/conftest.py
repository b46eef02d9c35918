"""Web-chat fixtures: the real app served on 127.0.0.1 (one per session), a free port, a browser."""
from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from assistant.config import REPO_ROOT

CHROMIUM = Path(os.environ.get("MESHWISE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = REPO_ROOT / "artifacts" / "screenshots"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_http(url: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)


class _Flaky:
    """Test double for a failure: a real Assistant whose ask_stream raises on chosen calls (1-based)."""

    def __init__(self, real, fail_on=(1,), after_text=False, exc=None):
        self.real, self.fail_on, self.after_text = real, set(fail_on), after_text
        self.exc = exc or RuntimeError("boom: internal detail")
        self.llm_mode = "offline"
        self.calls = 0

    def ask_stream(self, req):
        self.calls += 1
        if self.calls not in self.fail_on:
            yield from self.real.ask_stream(req)
            return
        if self.after_text:
            yield "Partial answer that never finishes"
        raise self.exc

    def validate(self, *a, **kw):
        return self.real.validate(*a, **kw)


@pytest.fixture(scope="session")
def flaky():
    """The class of a failing Assistant wrapper: `flaky(real, fail_on=(1,), after_text=False, exc=None)`."""
    return _Flaky


@pytest.fixture(scope="session")
def free_port():
    return _free_port


@pytest.fixture(scope="session")
def serve_app():
    """Start `launch(...)` for an assistant on a free loopback port; returns (url, demo); closed at session end."""
    from ui.web.app import launch

    started = []

    def start(assistant, settings):
        port = _free_port()
        demo = launch(assistant, settings, host="127.0.0.1", port=port, block=False)
        url = f"http://127.0.0.1:{port}/"
        _wait_http(url)
        started.append(demo)
        return url, demo

    yield start
    for demo in started:
        demo.close()


@pytest.fixture(scope="session")
def web_server(serve_app, mw_assistant, mw_settings):
    """The `meshwise serve` app on the session's real Assistant; data dir (feedback) is the temp one."""
    url, demo = serve_app(mw_assistant, mw_settings)
    return {"url": url, "demo": demo, "feedback": mw_settings.data_dir / "feedback.jsonl"}


@pytest.fixture(scope="session")
def web_client(web_server):
    from gradio_client import Client

    return Client(web_server["url"], verbose=False)


@pytest.fixture(scope="module")
def browser_context():
    """Debian's chromium through Playwright (never `playwright install`), fresh profile, loopback only.

    Module scope: Playwright's sync API keeps an event loop running on this thread until it stops, which
    would break later tests that start their own loop."""
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is missing: run `make install-browser` (apt package chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra) is not installed")
    profile = tempfile.mkdtemp(prefix="mw-chromium-")
    pw = sync_api.sync_playwright().start()
    ctx = pw.chromium.launch_persistent_context(profile, executable_path=str(CHROMIUM), headless=True,
                                                args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 1000},
                                                locale="en-US")
    ctx.set_default_timeout(30_000)
    try:
        yield ctx
    finally:
        ctx.close()
        pw.stop()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser_context, web_server):
    """A fresh tab on the app; fails the test if the page asks any host other than the loopback server."""
    p = browser_context.new_page()
    outside = []
    p.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("http://127.0.0.1", "data:", "blob:")) else None)
    p.goto(web_server["url"])
    p.wait_for_selector("#mw-question textarea")
    yield p
    p.close()
    assert not outside, f"the page requested non-local URLs: {outside[:5]}"


@pytest.fixture(scope="session")
def screenshots():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
