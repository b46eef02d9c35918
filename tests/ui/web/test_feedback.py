"""ui/web/feedback.py: the JSONL store and thumbs-down -> draft eval cases."""
from __future__ import annotations

import argparse
import json
import threading
from dataclasses import asdict

import pytest
import yaml

from evals.schema import case_from_dict, load_case_file, load_fact_library
from ui.web.feedback import MAX_FIELD_CHARS, Feedback, FeedbackStore, draft_cases, latest_votes


def _fb(answer_id: str, liked: bool, question: str = "Which strategy for 70B on 8 nodes?", **kw) -> Feedback:
    return Feedback(answer_id=answer_id, liked=liked, question=question, answer=kw.pop("answer", "Use fsdp2."),
                    settings=kw.pop("settings", {"world_size": 64, "gpus_per_node": 8, "llm": "offline"}), **kw)


def test_add_then_read_round_trips_chinese_text(tmp_path):
    store = FeedbackStore(tmp_path / "sub" / "feedback.jsonl")
    store.add(_fb("a1", False, question="70B 模型，8 个节点，要 TP+PP？", language="zh", intent="strategy"))
    raw = store.path.read_text(encoding="utf-8")
    assert "70B 模型" in raw  # stored readable, not \u-escaped
    [row] = store.read()
    assert row["answer_id"] == "a1" and row["liked"] is False and row["language"] == "zh"
    assert row["settings"]["world_size"] == 64 and row["intent"] == "strategy"
    assert isinstance(row["ts"], float)


def test_oversize_fields_are_cut_not_the_file(tmp_path):
    store = FeedbackStore(tmp_path / "f.jsonl")
    store.add(_fb("big", False, question="q" * (MAX_FIELD_CHARS + 10), answer="a" * (MAX_FIELD_CHARS * 2)))
    [row] = store.read()
    assert len(row["question"]) == MAX_FIELD_CHARS and len(row["answer"]) == MAX_FIELD_CHARS


def test_concurrent_appends_never_interleave(tmp_path):
    store = FeedbackStore(tmp_path / "f.jsonl")

    def worker(n):
        for i in range(25):
            store.add(_fb(f"{n}-{i}", i % 2 == 0, answer="x" * 3000))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    lines = store.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 200
    assert len({json.loads(line)["answer_id"] for line in lines}) == 200


def test_read_skips_torn_lines_and_missing_file(tmp_path):
    store = FeedbackStore(tmp_path / "f.jsonl")
    assert store.read() == []
    store.add(_fb("ok1", True))
    with store.path.open("a", encoding="utf-8") as f:
        f.write('{"answer_id": "torn", "liked": fal\n[1, 2]\n')
    store.add(_fb("ok2", False))
    assert [r["answer_id"] for r in store.read()] == ["ok1", "ok2"]


def test_latest_vote_per_answer_wins():
    rows = [{"answer_id": "a", "liked": False}, {"answer_id": "b", "liked": True}, {"answer_id": "a", "liked": True}]
    assert {r["answer_id"]: r["liked"] for r in latest_votes(rows)} == {"a": True, "b": True}


def test_draft_cases_only_from_thumbs_down_deduplicated():
    rows = [
        asdict(_fb("u1", True)),
        {**asdict(_fb("d1", False)), "intent": "diagnose"},
        {**asdict(_fb("d2", False)), "intent": "diagnose"},  # same question again: one draft
        {**asdict(_fb("d3", False, question="MoE 模型 ep_size 约束？", language="zh")), "intent": "howto",
         "settings": {}},
        {**asdict(_fb("changed", False, question="changed my mind"))},
        {**asdict(_fb("changed", True, question="changed my mind"))},
    ]
    drafts = draft_cases(rows)
    assert [d["id"] for d in drafts] == ["feedback-d1", "feedback-d3"]
    d1, d3 = drafts
    assert d1["category"] == "diagnosis" and d1["world_size"] == 64 and d1["gpus_per_node"] == 8
    assert d3["lang"] == "zh" and d3["category"] == "requirements" and "world_size" not in d3
    assert "Use fsdp2." in d1["note"] and d1["expect"] == {}


def test_follow_up_drafts_keep_the_earlier_questions():
    row = {**asdict(_fb("f1", False, question="what if only 4 nodes?")),
           "history": ["70B on 8 nodes with TP+PP: which YAML?"]}
    [draft] = draft_cases([row])
    assert draft["category"] == "followup"
    assert draft["history"] == [{"role": "user", "content": "70B on 8 nodes with TP+PP: which YAML?"}]


def test_drafts_load_as_eval_cases():
    lib = load_fact_library()
    rows = [{**asdict(_fb("d1", False)), "intent": "sizing"},
            {**asdict(_fb("f1", False, question="what if only 4 nodes?")), "history": ["first question"]},
            {**asdict(_fb("z1", False, question="怎么配？", language="zh")), "intent": "nonsense"}]
    for d in draft_cases(rows):
        case = case_from_dict(d, lib, source="feedback")
        assert case.question == d["question"] and case.lang == d["lang"]


def test_feedback_export_command_writes_loadable_cases(tmp_path, monkeypatch):
    from assistant.cli import feedback_cmd

    monkeypatch.setenv("MESHWISE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MESHWISE_CONFIG", str(tmp_path / "none.toml"))
    store = FeedbackStore(tmp_path / "feedback.jsonl")
    store.add(_fb("e1", False, intent="strategy"))
    store.add(_fb("e2", True, question="another"))
    out = tmp_path / "drafts.yaml"
    assert feedback_cmd.run(argparse.Namespace(action="export", out=str(out))) == 0
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert [c["id"] for c in data["cases"]] == ["feedback-e1"]
    [case] = load_case_file(out)
    assert case.category == "strategy" and case.world_size == 64


def test_unreadably_large_store_is_refused(tmp_path, monkeypatch):
    import ui.web.feedback as fbmod

    store = FeedbackStore(tmp_path / "f.jsonl")
    store.add(_fb("x", False))
    monkeypatch.setattr(fbmod, "MAX_READ_BYTES", 10)
    with pytest.raises(ValueError, match="larger than"):
        store.read()
