"""Citations point at a chunk that supports the claim, preferring the answer's language."""
from __future__ import annotations

from assistant.compose.citations import Citer, base_id, source_lines, with_citation
from assistant.retrieve.hit import Hit


def hit(doc_id, text, lang=None, kind="doc", n=0):
    lang = lang or doc_id.rsplit(".", 1)[-1]
    return Hit(id=f"{doc_id}#{n}", doc_id=doc_id, title=doc_id, path=f"kb/{lang}/{base_id(doc_id)}.md",
               heading="", kind=kind, lang=lang, score=1.0, text=text)


def test_base_id():
    assert base_id("hsdp.zh") == "hsdp"
    assert base_id("pitfall-ep-divisibility.en") == "pitfall-ep-divisibility"
    assert base_id("SKILL") == "SKILL"


def test_with_citation_goes_before_final_punctuation():
    assert with_citation("Use fsdp2.", [2]) == "Use fsdp2 [2]."
    assert with_citation("使用 fsdp2。", [1, 3]) == "使用 fsdp2 [1][3]。"
    assert with_citation("no punctuation", [1]) == "no punctuation [1]"
    assert with_citation("nothing", []) == "nothing"


def test_prefers_listed_doc_and_terms_and_language():
    hits = [hit("fsdp2.en", "FSDP2 basics"), hit("megatron-fsdp.en", "no pp here", n=0),
            hit("megatron-fsdp.en", "megatron_fsdp rejects pp_size > 1", n=1), hit("megatron-fsdp.zh", "megatron_fsdp 不支持 pp_size")]
    c = Citer(hits, "zh")
    assert c.cite(["megatron-fsdp"], ["pp_size"]) == 4  # same language wins
    c = Citer(hits, "en")
    assert c.cite(["megatron-fsdp"], ["pp_size"]) == 3  # the chunk that names the term
    assert c.cite(["strategy-choice"], ["fsdp2"]) is None  # not retrieved, no lookup: unsupported


def test_lookup_fetches_a_supporting_chunk_and_appends_it():
    extra = hit("moe-expert-parallel.en", "ep_size creates a moe_mesh")
    calls = []

    def lookup(q, docs):
        calls.append(q)
        return [hit("fsdp2.en", "unrelated"), extra]

    c = Citer([hit("fsdp2.en", "FSDP2")], "en", lookup=lookup)
    n = c.cite(["moe-expert-parallel"], ["moe_mesh"], "moe mesh query")
    assert n == 2 and c.sources[1] is extra and calls == ["moe mesh query"]
    assert c.cite(["moe-expert-parallel"], ["moe_mesh"], "again") == 2  # already a source: no new lookup
    assert calls == ["moe mesh query"]


def test_lookup_budget_is_bounded():
    c = Citer([], "en", lookup=lambda q, docs: [], max_lookups=2)
    for _ in range(5):
        assert c.cite(["x"], (), "q") is None
    assert c._lookups_left == 0


def test_cite_by_terms_uses_identifier_map():
    hits = [hit("device-mesh.en", "dp_size is inferred"), hit("hsdp.en", "dp_replicate_size")]
    c = Citer(hits, "en")
    cmap = {"dp_size": ["device-mesh"], "dp_replicate_size": ["hsdp"]}
    assert c.cite_by_terms("dp_size = 64 / (8 × 4 × 1) = 2", cmap) == 1
    assert c.cite_by_terms("dp_replicate_size = 2", cmap) == 2  # whole identifiers only
    assert c.cite_by_terms("nothing to see", cmap) is None


def test_anchor_chunks_are_citable_but_unknown_kinds_are_not():
    c = Citer([hit("x.en", "t", kind="weird"), hit("x.en", "t", kind="pitfall", n=1)], "en")
    assert c.cite(["x"]) == 2


def test_a_chunk_naming_the_terms_beats_one_that_does_not():
    vague = hit("moe-expert-parallel.en", "An overview of experts.")
    precise = hit("moe-expert-parallel.en", "ep_size > 1 builds a moe_mesh", n=3)
    c = Citer([vague], "en", lookup=lambda q, docs: [vague, precise])
    assert c.cite(["moe-expert-parallel"], ["moe_mesh"], "q") == 2 and c.sources[1] is precise


def test_source_lines_mark_a_second_chunk_under_the_same_heading():
    a = Hit("d.en#0", "d.en", "Doc", "kb/en/d.md", "Doc > Part", "doc", "en", 1.0, "x")
    b = Hit("d.en#1", "d.en", "Doc", "kb/en/d.md", "Doc > Part", "doc", "en", 1.0, "y")
    c = Hit("e.en#0", "e.en", "E", "kb/en/e.md", "E", "doc", "en", 1.0, "z")
    assert source_lines([a, b, c]) == ["[1] Doc — `kb/en/d.md` › Doc > Part", "[2] Doc — `kb/en/d.md` › Doc > Part (part 2)",
                                       "[3] E — `kb/en/e.md`"]
