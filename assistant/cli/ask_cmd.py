"""`meshwise ask`: one question (or a JSON-lines batch) through the answer engine.

Exit status: 0 answered; 1 a batch line failed or the engine failed; 2 unusable input (bad arguments,
empty question, unreadable JSON line in single mode, LLM mode that cannot start).
"""
from __future__ import annotations

import argparse
import json
import sys

from assistant.answer import AskRequest, Turn
from assistant.cli.jsonlines import json_line, parse_line, read_lines
from assistant.wellformed import well_formed

MAX_LINE_BYTES = 1024 * 1024


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("ask", help="ask a distributed-training question",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("question", nargs="?", help="the question, in English or Chinese (or '-' to read it from stdin)")
    p.add_argument("--world-size", type=int, default=None, metavar="N", help="total number of GPUs")
    p.add_argument("--gpus-per-node", type=int, default=None, metavar="G", help="GPUs per node (default 8)")
    p.add_argument("--gpu", default=None, help="GPU type for the memory estimate, e.g. h100-80gb")
    p.add_argument("--model", default=None, help="model name from the bundled table, e.g. llama-3.1-70b")
    p.add_argument("--lang", choices=("auto", "en", "zh"), default="auto", help="answer language (default: the question's)")
    p.add_argument("--llm", choices=("offline", "openai", "local"), default="offline",
                   help="offline composer (default), an OpenAI-compatible endpoint, or a local llama.cpp server")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of Markdown")
    p.add_argument("--stdin", action="store_true",
                   help="with --json: read JSON lines {id, question, world_size?, gpus_per_node?, history?}, "
                        "write one object per line, in order")
    return p


def _err(msg: str) -> None:
    print(f"meshwise ask: {msg}", file=sys.stderr)


def _positive(name: str, v) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return v


def request_from_json(obj, *, defaults: argparse.Namespace, line_no: int) -> AskRequest:
    """One batch line -> AskRequest; ValueError with a clear message when the line is unusable."""
    if not isinstance(obj, dict):
        raise ValueError("each line must be a JSON object")
    q = obj.get("question")
    if not isinstance(q, str) or not q.strip():
        raise ValueError("'question' must be a non-empty string")
    history = []
    raw_hist = obj.get("history") or []
    if not isinstance(raw_hist, list):
        raise ValueError("'history' must be a list of {role, content}")
    for t in raw_hist:
        if not isinstance(t, dict) or t.get("role") not in ("user", "assistant") or not isinstance(t.get("content"), str):
            raise ValueError("history entries must be {\"role\": \"user\"|\"assistant\", \"content\": str}")
        history.append(Turn(t["role"], t["content"]))
    lang = obj.get("lang", defaults.lang)
    if lang not in ("auto", "en", "zh"):
        raise ValueError("'lang' must be auto, en or zh")
    rid = obj.get("id")
    return AskRequest(
        question=q,
        world_size=_positive("world_size", obj.get("world_size", defaults.world_size)),
        gpus_per_node=_positive("gpus_per_node", obj.get("gpus_per_node", defaults.gpus_per_node)),
        lang=lang,
        history=tuple(history),
        llm=None,  # the loaded Assistant's mode (`--llm`)
        gpu=obj.get("gpu", defaults.gpu) if isinstance(obj.get("gpu", defaults.gpu), (str, type(None))) else None,
        model=obj.get("model", defaults.model) if isinstance(obj.get("model", defaults.model), (str, type(None))) else None,
        id=str(rid) if rid is not None else f"line-{line_no}",
    )


def _load(args):
    from assistant.engine import Assistant

    # a single question needs no warm-up pass; a batch amortises it
    return Assistant.load(llm=args.llm, warm_up=bool(args.stdin))


def run_batch(assistant, args, stdin=None, stdout=None) -> int:
    stdin = stdin or sys.stdin.buffer  # bytes: invalid UTF-8 is one line's error, not the batch's end
    stdout = stdout or sys.stdout
    failed = 0
    for line_no, raw in enumerate(read_lines(stdin, MAX_LINE_BYTES), 1):
        if raw is not None and not raw.strip():
            continue
        rid = None
        try:
            if raw is None:
                raise ValueError(f"line longer than {MAX_LINE_BYTES} bytes")
            obj = parse_line(raw, line_no)
            rid = obj.get("id") if isinstance(obj, dict) else None
            req = request_from_json(obj, defaults=args, line_no=line_no)
            out = assistant.ask(req).to_json()
            if rid is not None:
                out["id"] = rid  # echo the caller's id as given (a number stays a number)
        except (ValueError, json.JSONDecodeError) as exc:
            failed += 1
            out = {"id": rid if rid is not None else f"line-{line_no}", "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 - one bad line must not stop the batch
            failed += 1
            out = {"id": rid if rid is not None else f"line-{line_no}", "error": f"internal error: {type(exc).__name__}"}
        try:
            line = json_line(out)
        except ValueError:  # a value strict JSON cannot carry (NaN) in the answer: that line's error
            failed += 1
            line = json_line({"id": rid if rid is not None else f"line-{line_no}",
                              "error": "the answer holds a value strict JSON cannot carry (NaN or Infinity)"})
        stdout.write(line + "\n")
        stdout.flush()
    return 1 if failed else 0


def run_single(assistant, args, question: str, stdout=None) -> int:
    from assistant.answer import Answer

    stdout = stdout or sys.stdout
    req = AskRequest(question=question, world_size=args.world_size, gpus_per_node=args.gpus_per_node,
                     lang=args.lang, llm=None, gpu=args.gpu, model=args.model)
    if args.json:
        answer = assistant.ask(req)
        stdout.write(json_line(answer.to_json()) + "\n")
        return 0
    answer = None
    streamed = []
    for item in assistant.ask_stream(req):
        if isinstance(item, Answer):
            answer = item
        else:
            streamed.append(item)
            stdout.write(item)
            stdout.flush()
    if answer is not None and "".join(streamed) != answer.text:
        # A fallback replaced what was streamed: make the final text unmistakable.
        stdout.write("\n\n" + answer.text)
    if answer is not None:
        for n in answer.notices:
            print(n, file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    for name in ("world_size", "gpus_per_node"):
        v = getattr(args, name)
        if v is not None and v <= 0:
            _err(f"--{name.replace('_', '-')} must be a positive integer")
            return 2
    if args.stdin and not args.json:
        _err("--stdin reads JSON lines; use it with --json")
        return 2
    question = None
    if not args.stdin:
        question = args.question
        if question == "-":
            try:
                question = sys.stdin.buffer.read(MAX_LINE_BYTES + 1).decode("utf-8")
            except UnicodeDecodeError as exc:
                _err(f"the question is not valid UTF-8 text ({exc.reason} at byte {exc.start})")
                return 2
        if isinstance(question, str) and well_formed(question) != question:
            # argv and stdin decode undecodable bytes to lone surrogates (surrogateescape)
            _err("the question is not valid UTF-8 text; check the terminal's or the file's encoding")
            return 2
        if not question or not question.strip():
            _err("give a question, e.g. meshwise ask \"Which strategy for a 70B model on 8 nodes?\"")
            return 2
        from assistant.engine import MAX_QUESTION_CHARS

        if len(question) > MAX_QUESTION_CHARS:
            _err(f"the question is longer than {MAX_QUESTION_CHARS} characters")
            return 2
    elif args.question:
        _err("--stdin takes the questions from standard input; drop the positional question")
        return 2

    try:
        assistant = _load(args)
    except ValueError as exc:
        _err(str(exc))
        return 2
    except Exception as exc:  # noqa: BLE001 - e.g. the local LLM could not start: say what, not a traceback
        _err(f"could not start ({type(exc).__name__}: {exc})")
        return 2 if type(exc).__name__ == "LocalLLMUnavailable" else 1
    try:
        if args.stdin:
            return run_batch(assistant, args)
        try:
            return run_single(assistant, args, question)
        except ValueError as exc:
            _err(str(exc))
            return 2
    finally:
        assistant.close()
