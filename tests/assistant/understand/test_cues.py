"""understand/cues.py: the flags compose/ decides by, read from a clause or the question."""
from __future__ import annotations

from assistant.understand.cues import Reading, asking_sentence, compared_sizes, read, read_sentence
from assistant.understand.query import Ask, Query, Params


def _query(text: str) -> Query:
    return Query(text=text, lang="en", intent="sizing", params=Params())


def test_compared_sizes_reads_both_values():
    assert compared_sizes("tp 从 1 改成 2 之后") == ("tp_size", 1, 2)
    assert compared_sizes("switching from ep_size=4 to ep_size=8") == ("ep_size", 4, 8)
    assert compared_sizes("cp 2 vs 4 for 128k tokens") == ("cp_size", 2, 4)
    assert compared_sizes("tp 4 to 8 GPUs") is None and compared_sizes("tp 4 on 8 GPUs") is None


def test_a_clause_is_read_into_flags():
    assert read(Ask("verdict", "what happens with tp 4 on 10 GPUs?")).what_happens
    assert read(Ask("verdict", "dp_size 不填的话会怎样")).what_happens
    assert read(Ask("verdict", "will it hang?")).worry and read(Ask("verdict", "会爆显存吗")).worry
    assert read(Ask("verdict", "does it run?")).yes_no and not read(Ask("fact", "what is ep_shard?")).yes_no
    assert read(Ask("fact", "what is ep_shard?")).definition and read(Ask("fact", "什么是 hsdp")).definition
    assert read(Ask("fact", "why does ddp ignore dp_size?")).why
    assert read(Ask("fact", "if I switch strategy to ddp, can I keep enable_fsdp2_prefetch?")).last_part_yes_no


def test_an_ask_without_text_is_read_as_the_question():
    q = _query("tp 4 pp 2 on 8 GPUs, will it hang?")
    assert read(Ask("verdict", ""), q).worry and not read(Ask("verdict", ""), None).worry


def test_the_sentence_a_clause_stands_in_is_read_with_it():
    q = _query("We run 16 GPUs. With tp 4 and pp 2 on those, do those hang too?")
    ask = Ask("verdict", "do those hang too?")
    assert read(ask).params.tp_size is None
    assert read_sentence(q, ask).params.tp_size == 4 and asking_sentence(q, ask).params.pp_size == 2
    assert asking_sentence(q, Ask("verdict", "not in the question at all")) is None


def test_named_sizes_only_on_one_short_line():
    assert read(Ask("verdict", "is ep_size 8 valid?")).named_sizes == ("ep_size",)
    assert Reading("is ep_size 8 valid?\nand tp_size 2").named_sizes == ()
    assert Reading("").named_sizes == () and Reading("").pipeline_block is None


def test_words_are_identifiers_english_words_and_chinese_pairs():
    from assistant.understand.cues import read, words

    assert words("what length does packing pad with cp_size 2?") == {"what", "length", "does", "packing", "pad",
                                                                      "with", "cp_size"}
    assert words("每条序列") == {"每条", "条序", "序列"}
    assert read(Ask("fact", "is `reshard_after_forward` on?")).words == {"reshard_after_forward"}


def test_a_fact_cue_with_parts_needs_every_part():
    from assistant.understand.cues import reading_of

    assert "replicate_not_nodes" in reading_of("Is dp_replicate_size the number of nodes?").cued_facts
    assert "replicate_not_nodes" in reading_of("dp_replicate_size 就是节点数吗").cued_facts
    assert "replicate_not_nodes" not in reading_of("how many nodes do I need for 70B?").cued_facts


def test_the_experts_rule_is_cued_by_its_own_words():
    from assistant.understand.cues import reading_of

    assert "ep_experts" in reading_of("Quick q: does ep_size have to divide the number of experts?").cued_facts
    assert "ep_experts" in reading_of("ep_size 必须整除专家数吗").cued_facts
    assert "ep_experts" not in reading_of("We have 64 experts; what ep_size fits 48 GPUs?").cued_facts


def test_a_claim_is_read_with_the_words_it_is_about():
    from assistant.understand.cues import reading_of

    claim = reading_of("ep_size 必须等于 dp_size 对吧？").claim
    assert claim.makes_claim and [k for k, _ in claim.rows] == ["ep-equals-dp"] and claim.holds("ep-equals-dp")
    said = reading_of("enable_fsdp2_prefetch defaults to True, so prefetching is on?").claim
    assert [(d.raw, d.value) for d in said.defaults_claimed] == [("True", True)]
    assert not reading_of("默认是 true 还是 false？ enable_fsdp2_prefetch").claim.defaults_claimed


def test_a_sentence_is_cut_where_a_clause_is_not_soft_wrapped():
    # one rule for both (asks.SOFT_WRAP): a line that goes on in lower case, or after a backtick, is the
    # same sentence; a line that starts with a capital is a new one
    from assistant.understand.cues import sentence_of

    q = "Our other configs keep a\n`pipeline:` block with pp_size 1\nDo those fail too?"
    assert sentence_of(q, "Do those fail too?", back=1) == q
    assert sentence_of(q, "Do those fail too?") == "Do those fail too?"
    assert sentence_of("We use tp 2 (for\nnow) and pp 4, ok?", "and pp 4, ok?") == "We use tp 2 (for\nnow) and pp 4, ok?"


def test_every_cue_pattern_in_the_data_file_is_read_and_compiles():
    import re
    from pathlib import Path

    from assistant.understand import cues

    source = Path(cues.__file__).read_text(encoding="utf-8")
    read_here = set(re.findall(r'_pattern\("(\w+)"\)', source))
    assert read_here == set(cues._patterns())
    assert all(cues._pattern(name).search("") is None or True for name in read_here)
