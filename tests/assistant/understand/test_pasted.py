"""Pasted text is sorted into config, error output and the question; a log is never a config."""
from __future__ import annotations

import pytest

from assistant.understand.pasted import is_error_text, split_pasted


def test_assertion_line_in_a_fence_is_error_output_not_a_yaml_mapping():
    p = split_pasted("```\nAssertionError: pp_batch_size 4 // pp_microbatch_size 1 must be >= pp_size 8\n```\nwhy?")
    assert p.configs == ()
    assert len(p.errors) == 1 and "pp_batch_size 4" in p.errors[0]
    assert p.prose == "why?"


def test_fenced_yaml_is_a_config_and_the_question_stays():
    q = "```yaml\ndistributed:\n  strategy: fsdp2\n  tp_size: 8\n```\n48 张卡，会不会卡住？"
    p = split_pasted(q)
    assert len(p.configs) == 1 and "tp_size: 8" in p.configs[0]
    assert p.errors == ()
    assert p.prose == "48 张卡，会不会卡住？"


@pytest.mark.parametrize("fence", ["```text", "```yaml:recipe.yaml", "~~~", "~~~yml", "```"])
def test_any_fence_with_a_distributed_mapping_is_a_config(fence):
    close = "~~~" if fence.startswith("~") else "```"
    p = split_pasted(f"is this ok?\n{fence}\ndistributed:\n  strategy: ddp\n  tp_size: 2\n{close}\n")
    assert len(p.configs) == 1 and "strategy: ddp" in p.configs[0]


def test_bare_distributed_section_in_prose():
    p = split_pasted("I run this on 16 GPUs:\ndistributed:\n  strategy: fsdp2\n  tp_size: 4\nWhat is dp_size?")
    assert len(p.configs) == 1 and p.configs[0].startswith("distributed:")
    assert "What is dp_size?" in p.prose and "tp_size" not in p.prose


def test_traceback_and_yaml_together():
    q = ("My config:\n```yaml\ndistributed:\n  strategy: megatron_fsdp\n  sequence_parallel: true\n```\n"
         "and the log:\n```\nTraceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
         "ValueError: Unknown options for strategy 'megatron_fsdp': ['sequence_parallel']\n```\nwhat's wrong?")
    p = split_pasted(q)
    assert len(p.configs) == 1 and "megatron_fsdp" in p.configs[0]
    assert len(p.errors) == 1 and "Unknown options for strategy" in p.errors[0]
    assert "what's wrong?" in p.prose and "Traceback" not in p.prose


def test_unfenced_rank_prefixed_error_line_leaves_the_prose():
    p = split_pasted("[rank0]: ValueError: non_pp_size=12 must be a multiple of ep_size=8\n我的配置 tp 4 ep 8 12卡")
    assert len(p.errors) == 1 and "non_pp_size=12" in p.errors[0]
    assert "non_pp_size" not in p.prose and "12卡" in p.prose


def test_python_snippet_stays_part_of_the_question():
    p = split_pasted("```python\nsetup = create_distributed_setup_from_config(cfg)\n```\ndoes this create the process group?")
    assert p.configs == () and p.errors == ()


def test_a_question_that_quotes_an_error_message_has_no_error_output():
    p = split_pasted("where does 'Unknown options for strategy' come from?")
    assert p.errors == () and p.configs == ()


@pytest.mark.parametrize("line, expected", [
    ("AssertionError: pp_batch_size 4 // pp_microbatch_size 1 must be >= pp_size 8", True),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", True),
    ("2026-01-02 10:11:12 INFO step 10 loss 2.3", True),
    ("0: [rank2]:   File \"train.py\", line 258, in <module>", True),
    ("[default5]:Traceback (most recent call last):", True),
    ("(EngineCore_DP0 pid=3585) ERROR 12-08 18:21:31 [core.py:844] boom", True),
    ("1:     self.strategy.setup_environment()", False),
    ("distributed:\n  tp_size: 2", False),
    ("what is wrong with tp 2?", False),
])
def test_is_error_text(line, expected):
    assert is_error_text(line) is expected


def test_total_on_odd_input():
    for text in ("", "```", "```yaml\n: : :\n```", "\ud800", "x" * 50_000, "~~~\n" * 100):
        p = split_pasted(text)
        assert isinstance(p.prose, str)


def test_launcher_prefixed_traceback_is_one_error_block():
    log = ("0: [rank2]: Traceback (most recent call last):\n"
           "0: [rank2]:   File \"finetune.py\", line 258, in <module>\n"
           "0: [rank2]:     main()\n"
           "0: [rank2]: ValueError: non_pp_size=12 must be a multiple of ep_size=8\n"
           "any idea?")
    p = split_pasted(log)
    assert p.configs == ()
    assert p.prose == "any idea?"
    assert any("non_pp_size=12" in e for e in p.errors)


def test_an_error_inside_a_line_of_prose_keeps_the_words_around_it():
    # a real-user post on one line: the layout, the torch OOM, then the question
    p = split_pasted("Llama 3.3 70B with pp_size 8, 4 nodes of 8 H100, local_batch_size 8. torch.OutOfMemoryError: "
                     "CUDA out of memory. Tried to allocate 1.96 GiB. GPU 4 has a total capacity of 79.11 GiB. "
                     "If I drop pp_microbatch_size to 1, how many microbatches does each step run?")
    assert len(p.errors) == 1 and p.errors[0].startswith("torch.OutOfMemoryError") and "1.96 GiB" in p.errors[0]
    assert "pp_size 8" in p.prose and "local_batch_size 8" in p.prose and "how many microbatches" in p.prose
    assert "Tried to allocate" not in p.prose


def test_an_inline_chinese_oom_leaves_the_layout_and_the_question():
    p = split_pasted("4 台 8 卡 H100，pp_size 8，local_batch_size 8，第一次 backward 就 CUDA out of memory。"
                     "Tried to allocate 1.96 GiB。如果把 pp_microbatch_size 改成 1，每一步会跑几个 microbatch？")
    assert len(p.errors) == 1 and "Tried to allocate" in p.errors[0]
    assert "pp_size 8" in p.prose and "如果把 pp_microbatch_size 改成 1" in p.prose
