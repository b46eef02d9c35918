"""Off-topic questions are told so plainly; keyboard mash gets a request to rephrase, never a YAML."""
from __future__ import annotations

from answer_checks import shown_configs
from tests.assistant.compose.answers.conftest import body, lead


def test_off_topic_is_out_of_scope_and_short(ask):
    a = ask("what's the weather going to be in Santa Clara tomorrow?")
    assert a.intent == "out_of_scope" and a.asks == ["out_of_scope"] and a.yaml is None
    assert len(body(a.text)) < 600 and a.judged is None


def test_gibberish_with_tp_is_not_a_tp_recommendation(ask):
    # issue 11: gibberish containing "tp" got a TP recommendation with a YAML
    a = ask("tp tp asdkj qwe pp zzz??")
    assert a.asks == ["nonsense"] and shown_configs(a.text) == [] and a.yaml is None
    assert "rephrase" in a.text and len(body(a.text)) < 500


def test_an_asked_neighbouring_topic_is_one_sentence_after_the_in_scope_answer(ask):
    a = ask("I'm fine-tuning with PEFT on Slurm, 2 nodes x 8, tp 2: what's dp_shard, and how do I write the sbatch file?")
    lines = lead(a.text).splitlines()
    assert a.asks == ["quantity", "out_of_scope"] and lines[0].startswith("dp_shard = 8")  # the number asked leads (issue 18)
    scope = [line for line in lines if "outside what Meshwise covers" in line]
    assert len(scope) == 1 and "Meshwise answers" not in scope[0]  # no second "what we cover" sentence


def test_a_neighbouring_topic_only_mentioned_adds_nothing(ask):
    a = ask("My Slurm job runs 4 nodes x 8 GPUs with pp 4. Do I need to set dp_size myself?")
    assert "out_of_scope" not in a.asks and "Slurm" not in a.text.split("**Sources**")[0]
    assert "dp_size = 8" in a.text


def test_other_work_naming_the_domain_is_out_of_scope(ask):
    a = ask("帮我写个周报，内容就是这周调了调 FSDP2")
    assert a.asks == ["out_of_scope"] and a.judged is None and "```" not in a.text


def test_keywords_in_filler_get_a_short_rephrase_request(ask):
    a = ask("ep ep ep lorem ipsum ???")
    assert a.asks == ["nonsense"] and "```" not in a.text and len(body(a.text)) < 500
