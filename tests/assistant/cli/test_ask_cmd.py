"""`meshwise ask`: arguments, exit codes, --json, and the --json --stdin batch mode."""
from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.cli import build_parser, main
from assistant.cli import ask_cmd
from assistant.validator import validate


def parse(*argv):
    return build_parser().parse_args(["ask", *argv])


@pytest.fixture(scope="module")
def a(mw_assistant):
    return mw_assistant


def test_parser_defaults_and_choices():
    args = parse("Which strategy?")
    assert (args.world_size, args.gpus_per_node, args.lang, args.llm, args.json, args.stdin) == (None, None, "auto", "offline", False, False)
    with pytest.raises(SystemExit):
        parse("q", "--llm", "gpt")
    with pytest.raises(SystemExit):
        parse("q", "--lang", "fr")


@pytest.mark.parametrize("argv,msg", [
    (["ask"], "give a question"),
    (["ask", "   "], "give a question"),
    (["ask", "q", "--world-size", "0"], "--world-size must be a positive integer"),
    (["ask", "q", "--gpus-per-node", "-8"], "--gpus-per-node must be a positive integer"),
    (["ask", "--stdin"], "use it with --json"),
    (["ask", "q", "--json", "--stdin"], "drop the positional question"),
])
def test_usage_errors_exit_2_without_loading_anything(argv, msg, capsys, monkeypatch):
    monkeypatch.setattr(ask_cmd, "_load", lambda args: pytest.fail("must not load the engine"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err


def test_openai_without_endpoint_is_a_clear_usage_error(capsys, monkeypatch, mw_settings):
    from assistant.engine import Assistant

    monkeypatch.setattr(ask_cmd, "_load", lambda args: Assistant.load(mw_settings, llm=args.llm))
    assert main(["ask", "Which strategy?", "--llm", "openai"]) == 2
    assert "MESHWISE_LLM_BASE_URL" in capsys.readouterr().err


def test_single_json_object(a, capsys):
    args = parse("Which strategy for a 70B model on 8 nodes with TP and PP?", "--json")
    assert ask_cmd.run_single(a, args, args.question) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    obj = json.loads(out[0])
    assert {"id", "answer", "language", "intent", "strategy", "yaml", "validation", "sources", "timings_ms"} <= set(obj)
    assert obj["strategy"] == "fsdp2" and obj["validation"]["ok"] is True
    assert validate(obj["yaml"], world_size=64, gpus_per_node=8).ok
    assert all({"id", "title", "path", "score"} <= set(s) for s in obj["sources"])


def test_markdown_mode_streams_the_answer(a, capsys):
    args = parse("专家并行怎么配？", "--world-size", "16")
    assert ask_cmd.run_single(a, args, args.question) == 0
    out = capsys.readouterr().out
    assert "```yaml" in out and "ep_size" in out and "来源" in out


def test_world_size_flag_reaches_the_plan(a, capsys):
    args = parse("70B model with TP and PP", "--world-size", "128", "--json")
    ask_cmd.run_single(a, args, args.question)
    obj = json.loads(capsys.readouterr().out)
    assert obj["validation"]["world_size"] == 128


def test_batch_in_order_with_errors_per_line(a):
    lines = [
        {"id": "q1", "question": "Which strategy for a 70B model on 8 nodes with TP and PP?"},
        "this is not json",
        {"id": "q3", "question": ""},
        {"id": "q4", "question": "如果只有 4 个节点呢？",
         "history": [{"role": "user", "content": "8 个节点训练 70B 模型，要 TP 和 PP，用什么策略？"}]},
        {"id": "q5", "question": "ok", "world_size": -1},
        {"id": "q6", "question": "What is wrong?\ndistributed:\n  strategy: megatron_fsdp\n  pp_size: 2\n", "world_size": 8},
        {"id": 7, "question": "Which strategy?", "history": "not a list"},
    ]
    stdin = io.StringIO("\n".join(l if isinstance(l, str) else json.dumps(l, ensure_ascii=False) for l in lines) + "\n\n")
    stdout = io.StringIO()
    args = parse("--json", "--stdin")
    rc = ask_cmd.run_batch(a, args, stdin=stdin, stdout=stdout)
    out = [json.loads(x) for x in stdout.getvalue().splitlines()]
    assert rc == 1 and [o["id"] for o in out] == ["q1", "line-2", "q3", "q4", "q5", "q6", 7]
    assert "answer" in out[0] and out[0]["validation"]["ok"]
    assert "error" in out[1] and "error" in out[2] and "error" in out[4] and "error" in out[6]
    assert out[3]["language"] == "zh" and out[3]["validation"]["world_size"] == 32
    assert out[5]["intent"] == "diagnose" and "MW-E-MEGATRON-PP" in out[5]["answer"]


def test_request_from_json_validates_fields():
    d = argparse.Namespace(world_size=None, gpus_per_node=None, lang="auto", llm="offline", gpu=None, model=None)
    r = ask_cmd.request_from_json({"question": "q", "world_size": 16, "history": [{"role": "user", "content": "x"}]},
                                  defaults=d, line_no=3)
    assert r.world_size == 16 and r.history[0].role == "user" and r.id == "line-3"
    for bad in ({"question": 3}, [], {"question": "q", "world_size": "8"}, {"question": "q", "lang": "de"},
                {"question": "q", "history": [{"role": "system", "content": "x"}]}):
        with pytest.raises(ValueError):
            ask_cmd.request_from_json(bad, defaults=d, line_no=1)


def test_console_script_end_to_end(mw_settings):
    """The real `meshwise ask --json --stdin` process: models loaded once, one object per line."""
    env = dict(os.environ, MESHWISE_INDEX_DIR=str(mw_settings.index_dir), MESHWISE_DATA_DIR=str(mw_settings.data_dir),
               MESHWISE_CONFIG=str(mw_settings.data_dir / "none.toml"), HF_HUB_OFFLINE="1")
    lines = "\n".join(json.dumps({"id": i, "question": q}) for i, q in enumerate(
        ["Which strategy for MoE with expert parallelism on 8 GPUs?", "megatron_fsdp 支持流水线并行吗？"])) + "\n"
    script = Path(sys.executable).with_name("meshwise")
    cmd = [str(script)] if script.exists() else [sys.executable, "-c", "import sys; from assistant.cli import main; sys.exit(main())"]
    p = subprocess.run([*cmd, "ask", "--json", "--stdin"], input=lines,
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert [o["id"] for o in out] == [0, 1]
    assert out[0]["strategy"] == "fsdp2" and out[1]["language"] == "zh"


def _cold_python(code: str, settings) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter on the test index and model cache (a cold one-shot start)."""
    env = dict(os.environ, MESHWISE_INDEX_DIR=str(settings.index_dir), MESHWISE_DATA_DIR=str(settings.data_dir),
               MESHWISE_CONFIG=str(settings.data_dir / "none.toml"), MESHWISE_MODEL_CACHE_DIR=str(settings.model_cache_dir))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return p


def test_a_one_shot_ask_imports_neither_torch_nor_the_ingestion_side(mw_settings):
    """What keeps a cold `meshwise ask` in seconds: the whole path (engine, retrieval, composer, CLI)
    runs on onnxruntime, numpy and faiss once the index is fresh."""
    code = ("import sys\n"
            "from assistant.cli import main\n"
            "rc = main(['ask', '70B 模型，8 个节点，要 TP+PP，YAML 怎么写？', '--json'])\n"
            "heavy = ('torch', 'transformers', 'sentence_transformers', 'sklearn', 'llama_index')\n"
            "sys.stderr.write('HEAVY=' + ','.join(m for m in heavy if m in sys.modules) + '\\n')\n"
            "sys.exit(rc)\n")
    p = _cold_python(code, mw_settings)
    assert json.loads(p.stdout)["yaml"]
    assert "HEAVY=\n" in p.stderr, p.stderr[-500:]


def _strict(line: str):
    """json.loads without NaN/Infinity: what a strict JSON reader on the other end accepts."""
    def bad(name):
        raise ValueError(f"not JSON: {name}")
    return json.loads(line, parse_constant=bad)


def test_console_batch_survives_text_that_is_not_valid_unicode(mw_settings):
    """Issue 14.6: every line gets a strict-JSON answer or error naming its id (or line number); the batch goes on."""
    env = dict(os.environ, MESHWISE_INDEX_DIR=str(mw_settings.index_dir), MESHWISE_DATA_DIR=str(mw_settings.data_dir),
               MESHWISE_CONFIG=str(mw_settings.data_dir / "none.toml"), HF_HUB_OFFLINE="1", PYTHONIOENCODING="")
    lines = [
        b'{"id": "s\\ud800", "question": "Which strategy for 70B on 8 nodes?"}',  # a lone surrogate in the id
        b'{"id": NaN, "question": "Which strategy for 70B on 8 nodes?"}',
        b'{"id": "u8", "question": "Which strategy \xff\xfe for 70B?"}',  # invalid UTF-8
        b'{"id": "q\\udc80", "question": "Which strategy for 8 GPUs \\udfff?"}',  # lone surrogates in the question
        b'{"id": 1e999, "question": "ok"}',
        b'{"id": "last", "question": "megatron_fsdp \xe6\x94\xaf\xe6\x8c\x81\xe6\xb5\x81\xe6\xb0\xb4\xe7\xba\xbf\xe5\xb9\xb6\xe8\xa1\x8c\xe5\x90\x97\xef\xbc\x9f"}',
    ]
    script = Path(sys.executable).with_name("meshwise")
    cmd = [str(script)] if script.exists() else [sys.executable, "-c", "import sys; from assistant.cli import main; sys.exit(main())"]
    p = subprocess.run([*cmd, "ask", "--json", "--stdin"], input=b"\n".join(lines) + b"\n",
                       capture_output=True, env=env, timeout=300)
    out = [_strict(x) for x in p.stdout.decode("utf-8").splitlines()]  # strict UTF-8 and strict JSON
    assert len(out) == len(lines), p.stderr.decode("utf-8", "replace")
    assert p.returncode == 1
    assert out[0]["id"] == "s\ufffd" and out[0]["strategy"] == "fsdp2"
    assert out[1]["id"] == "line-2" and "NaN" in out[1]["error"]
    assert out[2]["id"] == "line-3" and "UTF-8" in out[2]["error"] and "internal error" not in out[2]["error"]
    assert out[3]["id"] == "q\ufffd" and "answer" in out[3]
    assert out[4]["id"] == "line-5" and "error" in out[4]
    assert out[5]["id"] == "last" and out[5]["language"] == "zh"


def test_single_question_that_is_not_valid_utf8_is_a_clear_error(mw_settings):
    env = dict(os.environ, MESHWISE_INDEX_DIR=str(mw_settings.index_dir), MESHWISE_DATA_DIR=str(mw_settings.data_dir),
               MESHWISE_CONFIG=str(mw_settings.data_dir / "none.toml"), HF_HUB_OFFLINE="1")
    script = Path(sys.executable).with_name("meshwise")
    cmd = [str(script)] if script.exists() else [sys.executable, "-c", "import sys; from assistant.cli import main; sys.exit(main())"]
    p = subprocess.run([*cmd, "ask", "-"], input=b"Which strategy \xff for 70B?\n", capture_output=True, env=env, timeout=300)
    err = p.stderr.decode("utf-8", "replace")
    assert p.returncode == 2 and "UTF-8" in err and "Traceback" not in err and "TypeError" not in err


_PEAK_RSS = """
import resource, subprocess, sys
with open(sys.argv[1], "rb") as fh:
    p = subprocess.run(sys.argv[2:], stdin=fh, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)  # KiB on Linux
sys.stdout.write(p.stdout.decode())
"""


@pytest.mark.slow
def test_an_oversized_batch_line_is_never_held_in_memory(mw_settings, tmp_path):
    """Issue 20.6: a 200 MB line costs `ask --json --stdin` at most 150 MB of peak RSS over a normal batch."""
    env = dict(os.environ, MESHWISE_INDEX_DIR=str(mw_settings.index_dir), MESHWISE_DATA_DIR=str(mw_settings.data_dir),
               MESHWISE_CONFIG=str(mw_settings.data_dir / "none.toml"), HF_HUB_OFFLINE="1")
    normal = json.dumps({"id": "q", "question": "Which strategy for a 70B model on 8 nodes?"}).encode() + b"\n"
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_bytes(normal)
    with big.open("wb") as fh:
        fh.write(b'{"id": "huge", "question": "')
        for _ in range(200):
            fh.write(b"x" * (1 << 20))
        fh.write(b'"}\n' + normal)
    cmd = [sys.executable, "-c", "import sys; from assistant.cli import main; sys.exit(main())", "ask", "--json", "--stdin"]
    peaks, outs = [], []
    for f in (small, big):
        p = subprocess.run([sys.executable, "-c", _PEAK_RSS, str(f), *cmd], capture_output=True, env=env, timeout=600)
        first, _, rest = p.stdout.decode().partition("\n")
        peaks.append(int(first) / 1024)
        outs.append([json.loads(x) for x in rest.splitlines()])
    assert [o["id"] for o in outs[1]] == ["line-1", "q"] and "longer than" in outs[1][0]["error"]
    assert outs[1][1]["strategy"] == outs[0][0]["strategy"] == "fsdp2"
    assert peaks[1] - peaks[0] < 150, peaks


def test_a_cold_chinese_ask_loads_jiebas_dictionary_once(mw_settings):
    """Retrieval's BM25 tokenizer and the sentence extractor both segment Chinese; a cold one-shot
    Chinese question reads jieba's dictionary (its own load or the cached table) once, not once each
    (a second load was a 0.55-1.2 s stall and 50 MB)."""
    code = (
        "import sys\n"
        "import jieba\n"
        "from assistant.index import jieba_table, lexical\n"
        "jieba_loads, table_opens, segmenters, readers = [], [], set(), set()\n"
        "_init, _open = jieba.Tokenizer.initialize, jieba_table.FreqTable.__init__\n"
        "_cut, _read = jieba.Tokenizer.cut_for_search, lexical.LexicalTokenizer.__call__\n"
        "def initialize(self, *a, **k):\n"
        "    if not self.initialized:\n"
        "        jieba_loads.append(1)\n"
        "    return _init(self, *a, **k)\n"
        "def open_table(self, *a, **k):\n"
        "    table_opens.append(1)\n"
        "    return _open(self, *a, **k)\n"
        "def cut(self, *a, **k):\n"
        "    segmenters.add(id(self))\n"
        "    return _cut(self, *a, **k)\n"
        "def read(self, text):\n"
        "    if any('\\u4e00' <= ch <= '\\u9fff' for ch in text):\n"
        "        readers.add(id(self))\n"
        "    return _read(self, text)\n"
        "jieba.Tokenizer.initialize, jieba_table.FreqTable.__init__ = initialize, open_table\n"
        "jieba.Tokenizer.cut_for_search, lexical.LexicalTokenizer.__call__ = cut, read\n"
        "from assistant.cli import main\n"
        "rc = main(['ask', '张量并行和序列并行一起用需要什么条件？', '--json'])\n"
        "sys.stderr.write(f'COUNTS={len(jieba_loads)},{len(table_opens)},{len(segmenters)},{len(readers)}\\n')\n"
        "sys.exit(rc)\n")
    p = _cold_python(code, mw_settings)
    assert json.loads(p.stdout)["language"] == "zh"
    counts = next(line for line in p.stderr.splitlines() if line.startswith("COUNTS="))
    jieba_loads, table_opens, segmenters, readers = map(int, counts[len("COUNTS="):].split(","))
    assert readers >= 2, counts  # retrieval and the extractor both read the question: the check means something
    assert segmenters == 1 and jieba_loads <= 1 and table_opens <= 1, counts
