"""Runner mechanics (history replay, engine failures, latency) with a recording asker, and the CLI's
argument handling. The real engine runs in test_default_run.py (slow)."""
from __future__ import annotations

import pytest

from assistant.answer import Answer, AskRequest
from assistant.cli import build_parser, main
from evals.runner import resolve_history, run
from evals.schema import Case, Expectation, Turn


class RecordingAsker:
    """Answers every question with a fixed English sentence and remembers the requests."""

    def __init__(self, fail_on: str | None = None):
        self.requests: list[AskRequest] = []
        self.fail_on = fail_on

    def ask(self, req: AskRequest) -> Answer:
        self.requests.append(req)
        if self.fail_on and self.fail_on in req.question:
            raise RuntimeError("index missing")
        return Answer(id=req.id or "", text=f"Answer to: {req.question}. Use fsdp2 on every node.", language="en",
                      intent="strategy", strategy="fsdp2", yaml=None, validation=None)


def case(cid: str, question: str, history=(), **kw) -> Case:
    return Case(id=cid, lang="en", category="followup", question=question, expect=Expectation(strategy="fsdp2"),
                history=tuple(history), **kw)


def test_unanswered_user_turns_are_answered_by_the_engine_first():
    asker = RecordingAsker()
    c = case("f", "What if only 4 nodes?", [Turn("user", "70B on 8 nodes?")], world_size=64)
    history = resolve_history(asker, c, "offline")
    assert [t.role for t in history] == ["user", "assistant"]
    assert history[1].content == "Answer to: 70B on 8 nodes?. Use fsdp2 on every node."
    assert asker.requests[0].history == () and asker.requests[0].world_size == 64


def test_given_assistant_turns_are_kept_verbatim():
    asker = RecordingAsker()
    c = case("f", "and then?", [Turn("user", "q1"), Turn("assistant", "a1"), Turn("user", "q2")])
    history = resolve_history(asker, c, "offline")
    assert [(t.role, t.content) for t in history][:3] == [("user", "q1"), ("assistant", "a1"), ("user", "q2")]
    assert len(asker.requests) == 1  # only q2 needed an answer
    assert [t.content for t in asker.requests[0].history] == ["q1", "a1"]


def test_run_scores_cases_records_latency_and_survives_engine_errors():
    asker = RecordingAsker(fail_on="boom")
    cases = [case("ok", "Which strategy?"), case("bad", "boom?")]
    result = run(cases, assistant=asker, progress=False)
    ok, bad = result.scores
    assert ok.passed and ok.latency_ms is not None and ok.latency_ms >= 0
    assert not bad.passed and "RuntimeError: index missing" in bad.error
    assert set(result.answers) == {"ok"}
    assert asker.requests[-1].question == "boom?" and asker.requests[0].id == "ok"


def test_cli_parses_eval_options():
    args = build_parser().parse_args(["eval", "--set", "a.yaml", "--set", "b.jsonl", "--min-pass", "95",
                                      "--min-yaml-valid", "1", "--llm", "openai", "--out", "o"])
    assert [str(p) for p in args.sets] == ["a.yaml", "b.jsonl"]
    assert args.min_pass == 0.95 and args.min_yaml_valid == 1.0 and args.llm == "openai"


def test_cli_rejects_an_unusable_set(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("cases: [{id: x, lang: xx, category: sizing, question: q}]\n", encoding="utf-8")
    assert main(["eval", "--set", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "lang must be one of" in capsys.readouterr().err
    assert main(["eval", "--set", str(tmp_path / "missing.yaml")]) == 2


def test_cli_rejects_a_bad_threshold():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["eval", "--min-pass", "-3"])


def test_cli_runs_a_named_set_and_prints_the_answer_shape(tmp_path, monkeypatch, capsys):
    """`meshwise eval --set DIR` runs exactly that directory's cases (how the held-out set is run) and
    the summary prints the answer-length distribution and the YAML share per language."""
    import evals.runner

    heldout = tmp_path / "heldout"
    heldout.mkdir()
    (heldout / "heldout_en.yaml").write_text(
        "cases:\n  - {id: h-en-1, lang: en, category: verdict, question: 'Does tp 4 with pp 3 run on 40 GPUs?'}\n"
        "  - {id: h-en-2, lang: en, category: quantity, question: 'dp_size for tp 2 on 16 GPUs?'}\n", encoding="utf-8")
    seen: list[str] = []
    real_run = evals.runner.run

    def recording_run(cases, **kw):
        cases = list(cases)
        seen.extend(c.id for c in cases)
        return real_run(cases, assistant=RecordingAsker(), progress=False)

    monkeypatch.setattr(evals.runner, "run", recording_run)
    monkeypatch.setenv("MESHWISE_CONFIG", str(tmp_path / "none.toml"))
    assert main(["eval", "--set", str(heldout), "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    assert seen == ["h-en-1", "h-en-2"]
    out = capsys.readouterr().out
    assert "answer length (sources excluded): en median" in out and "YAML in 0.0%" in out
