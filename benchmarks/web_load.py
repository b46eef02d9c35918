"""Load on the web chat: concurrent sessions through `gradio_client` against `meshwise serve`.

    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 \
        .venv/bin/python benchmarks/web_load.py [--sessions 20] [--duration 60] [--url URL --pid PID]
                                               [--index-dir DIR] [--json OUT]

Without `--url` it starts `meshwise serve --host 127.0.0.1` on a free port (offline answerer,
`MESHWISE_DATA_DIR` in a temp dir, the index from `--index-dir` or the usual settings) and stops it at
the end. With `--url` it only talks to that server, which must be on the loopback interface; `--pid`
then names the process whose memory is reported.

Each session is one browser-like client (its own Gradio session) asking English and Chinese questions
from benchmarks/web_load.yaml in a bounded loop until the duration is over, following up in the same
conversation now and then. A request fails when it raises, times out, or its answer is the chat's error
or "too long" message or lacks a verdict. Prints the number of failed requests (target: 0), p50/p95
answer time, throughput, and the server's resident memory before and after the load.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import yaml  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUESTIONS = REPO / "benchmarks" / "web_load.yaml"
MAX_REQUESTS_PER_SESSION = 10_000  # the loop is bounded even if the clock misbehaves
FOLLOW_UP_EVERY = 3  # every third question continues the conversation; the others start a new one
MAX_TURNS_KEPT = 6  # messages sent back with a follow-up (3 question/answer pairs)
FAILURE_MARKERS = ("this request failed", "这次请求失败", "too long", "问题太长", "cannot be answered", "无法回答")


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(0.95 * len(xs) + 0.5) - 1))]


def rss_mib(pid: int | None) -> float | None:
    if not pid:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def children_rss_mib(pid: int | None) -> float | None:
    """The server's RSS plus its children's (none expected for the offline answerer)."""
    total = rss_mib(pid)
    if total is None:
        return None
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        kids = []
    return total + sum(rss_mib(int(k)) or 0 for k in kids)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen | None, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"the server exited with code {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    raise SystemExit(f"{url} was not ready after {timeout_s:.0f} s")


def start_server(index_dir: str | None, data_dir: Path, log_path: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = dict(os.environ, MESHWISE_DATA_DIR=str(data_dir), MESHWISE_CONFIG=str(data_dir / "none.toml"))
    if index_dir:
        env["MESHWISE_INDEX_DIR"] = index_dir
    cmd = [sys.executable, "-c", "import sys; from assistant.cli import main; sys.exit(main())",
           "serve", "--host", "127.0.0.1", "--port", str(port), "--llm", "offline"]
    log = log_path.open("w")
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    return proc, f"http://127.0.0.1:{port}/"


def text_of(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


class Session(threading.Thread):
    def __init__(self, n: int, url: str, questions: dict, deadline: float, timeout_s: float, results: list, lock):
        super().__init__(name=f"session-{n}", daemon=True)
        self.n, self.url, self.questions, self.deadline, self.timeout_s = n, url, questions, deadline, timeout_s
        self.results, self.lock = results, lock
        self.rng = random.Random(n)

    def record(self, **row) -> None:
        with self.lock:
            self.results.append(row)

    def run(self) -> None:
        from gradio_client import Client

        try:
            client = Client(self.url, verbose=False)
        except Exception as exc:  # noqa: BLE001 - a session that cannot connect counts as one failure
            self.record(session=self.n, ok=False, seconds=0.0, lang="-", error=f"connect: {exc!r}")
            return
        messages: list = []
        for i in range(MAX_REQUESTS_PER_SESSION):
            if time.monotonic() >= self.deadline:
                break
            follow = bool(messages) and i % FOLLOW_UP_EVERY == FOLLOW_UP_EVERY - 1
            lang = self.rng.choice(("en", "zh"))
            pool = self.questions["follow_ups"][lang] if follow else self.questions["questions"][lang]
            question = self.rng.choice(pool)
            history = messages[-MAX_TURNS_KEPT:] if follow else []
            t = time.perf_counter()
            try:
                job = client.submit(question, history, 0, 8, "", "", "auto", "offline", api_name="/ask")
                _, out_messages, verdict, sources, _ = job.result(timeout=self.timeout_s)
                seconds = time.perf_counter() - t
                answer = text_of(out_messages[-1]) if out_messages else ""
                error = None
                if not answer or any(m in answer for m in FAILURE_MARKERS):
                    error = f"error answer: {answer[:120]!r}"
                elif not isinstance(verdict, str) or not isinstance(sources, str):
                    error = "no verdict or sources"
                self.record(session=self.n, ok=error is None, seconds=seconds, lang=lang, follow=follow, error=error)
                messages = out_messages if error is None else []
            except Exception as exc:  # noqa: BLE001 - every failure is counted, none stops the run
                self.record(session=self.n, ok=False, seconds=time.perf_counter() - t, lang=lang, follow=follow,
                            error=repr(exc)[:200])
                messages = []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before one request counts as failed")
    ap.add_argument("--url", help="an already running server on 127.0.0.1 (default: start one)")
    ap.add_argument("--pid", type=int, help="with --url: the server process, for its memory")
    ap.add_argument("--index-dir", help="index for the started server (default: the usual settings)")
    ap.add_argument("--ready-timeout", type=float, default=900.0, help="seconds to wait for the server to start")
    ap.add_argument("--json", help="also write the numbers to this file")
    args = ap.parse_args()
    if not 1 <= args.sessions <= 200 or not 0 < args.duration <= 3600:
        ap.error("--sessions must be 1..200 and --duration 0..3600 s")

    questions = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))
    tmp = Path(tempfile.mkdtemp(prefix="mw-web-load-"))
    proc = None
    try:
        if args.url:
            if urlsplit(args.url).hostname not in ("127.0.0.1", "localhost", "::1"):
                ap.error("--url must be a loopback address: this script never loads a remote server")
            url, pid = args.url.rstrip("/") + "/", args.pid
        else:
            proc, url = start_server(args.index_dir, tmp, tmp / "server.log")
            pid = proc.pid
        t = time.perf_counter()
        wait_ready(url, proc, args.ready_timeout)
        start_s = time.perf_counter() - t
        # One untimed request: first-use costs are not the steady state this measures.
        from gradio_client import Client

        Client(url, verbose=False).predict("Which strategy for an 8B model on 8 GPUs?", [], 0, 8, "", "", "auto",
                                           "offline", api_name="/ask")
        rss_before = children_rss_mib(pid)

        results: list[dict] = []
        lock = threading.Lock()
        t0 = time.monotonic()
        sessions = [Session(n, url, questions, t0 + args.duration, args.timeout, results, lock)
                    for n in range(args.sessions)]
        for s in sessions:
            s.start()
        for s in sessions:
            s.join(args.duration + args.timeout + 60)
        wall = time.monotonic() - t0
        rss_after = children_rss_mib(pid)
        alive = proc is None or proc.poll() is None
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
            if proc.returncode not in (0, -15, None):
                print((tmp / "server.log").read_text(errors="replace")[-3000:], file=sys.stderr)

    ok = [r["seconds"] for r in results if r["ok"]]
    failed = [r for r in results if not r["ok"]]
    by_lang = {lang: [r["seconds"] for r in results if r["ok"] and r["lang"] == lang] for lang in ("en", "zh")}
    summary = {
        "sessions": args.sessions, "duration_s": args.duration, "wall_s": round(wall, 1),
        "server_start_s": round(start_s, 1) if proc is not None else None,
        "requests": len(results), "failed": len(failed),
        "answers_per_s": round(len(ok) / wall, 2) if wall else None,
        "p50_s": round(statistics.median(ok), 3) if ok else None,
        "p95_s": round(p95(ok), 3) if ok else None,
        "max_s": round(max(ok), 3) if ok else None,
        "p50_en_s": round(statistics.median(by_lang["en"]), 3) if by_lang["en"] else None,
        "p50_zh_s": round(statistics.median(by_lang["zh"]), 3) if by_lang["zh"] else None,
        "follow_ups": sum(1 for r in results if r.get("follow")),
        "rss_before_mib": round(rss_before, 1) if rss_before else None,
        "rss_after_mib": round(rss_after, 1) if rss_after else None,
        "server_alive_after": alive,
    }
    print(f"web load: {args.sessions} sessions x {args.duration:.0f} s against {url}")
    print(f"  requests {summary['requests']}  failed {summary['failed']}  "
          f"({summary['follow_ups']} follow-ups; {summary['answers_per_s']} answers/s)")
    print(f"  answer time p50 {summary['p50_s']} s  p95 {summary['p95_s']} s  max {summary['max_s']} s  "
          f"(p50 en {summary['p50_en_s']} s, zh {summary['p50_zh_s']} s)")
    if rss_before is not None and rss_after is not None:
        print(f"  server RSS before {rss_before:.0f} MiB  after {rss_after:.0f} MiB  "
              f"(ratio {rss_after / rss_before:.2f})")
    else:
        print("  server RSS: unknown (pass --pid with --url)")
    for r in failed[:5]:
        print(f"  failure: session {r['session']} ({r['lang']}): {r['error']}")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2, allow_nan=False), encoding="utf-8")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if not failed and alive and results else 1


if __name__ == "__main__":
    sys.exit(main())
