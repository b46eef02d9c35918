"""Every ask covered: an ask with no direct statement is told plainly what Meshwise cannot tell,
with the closest kb section cited, not answered by a neighbour."""
from __future__ import annotations

from assistant.compose.citations import Citer
from assistant.compose.coverage import ask_terms, cannot_tell, closest_section, covered
from assistant.compose.phrases import Phrases
from assistant.compose.writer import Writer
from assistant.retrieve.hit import Hit
from assistant.understand.query import Ask


def _hit(i: int, lang: str, kind: str = "doc") -> Hit:
    return Hit(id=f"d{i}#0", doc_id=f"d{i}", title=f"Doc {i}", path=f"kb/{lang}/d{i}.md", heading=f"Section {i}",
               kind=kind, lang=lang, score=1.0, text="...")


def test_the_closest_section_is_the_best_ranked_kb_section_in_the_answer_language():
    hits = [_hit(0, "en", "anchor"), _hit(1, "zh"), _hit(2, "en")]
    assert closest_section(hits, "en").doc_id == "d2"
    assert closest_section(hits, "zh").doc_id == "d1"
    assert closest_section([_hit(0, "en", "anchor")], "en") is None


def test_cannot_tell_states_the_clause_and_cites_the_closest_section():
    w = Writer("en", Phrases.load(), Citer([_hit(1, "en")], "en"))
    cannot_tell(w, "how does the wobble factor interact with ep")
    assert len(w.leads) == 1
    lead = w.leads[0]
    assert "cannot tell" in lead and "wobble factor" in lead and "Section 1" in lead and "[1]" in lead
    zh = Writer("zh", Phrases.load(), Citer([], "zh"))
    cannot_tell(zh, "这个咋整")
    assert "找不到" in zh.leads[0] and "这个咋整" in zh.leads[0]


def test_an_ask_is_covered_by_a_lead_that_speaks_about_what_it_asks():
    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index = 0
    w.answer("dp_size = 4: world_size / (tp_size × pp_size × cp_size) = 16 / (2 × 2 × 1).")
    dp = Ask("quantity", "what is the resulting dp_size", "dp_size")
    assert covered((0, 0), w, dp)  # its module wrote the lead, and the lead names dp_size
    # a neighbouring number does not stand in for the largest ep_size, even from the same clause
    assert not covered((0, 0), w, Ask("quantity", "what's the largest ep", "max_ep"))
    w.ask_index = 1
    w.answer("The largest ep_size is 16: ep_size must divide dp_size × cp_size × tp_size = 4 × 1 × 4 = 16.")
    assert covered((2, 0), w, Ask("quantity", "dp_size and the largest ep", "dp_size"))  # named by an earlier lead
    # an ask that names no target is covered by its own module's lead only, never by body lines alone
    other = Ask("fact", "is it off by default")
    assert covered((1, 0), w, other)
    w.ask_index = 2
    w.lines.append("a body line")
    assert not covered((2, 0), w, other)
    w.answer("dp_size = 4: world_size / (tp_size × pp_size × cp_size) = 16 / (2 × 2 × 1).")
    assert covered((2, 0), w, other)  # its lead is one already there, word for word
    assert not covered((0, 0), w, Ask("unknown", "what now"))


def test_a_diagnosis_or_a_verdict_on_the_users_layout_is_spoken_for_by_any_lead():
    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index = 0
    w.answer("This error is upstream's microbatch check.")
    w.ask_index = 1
    assert covered((1, 0), w, Ask("verdict", "why does this fail"))
    assert covered((1, 0), w, Ask("diagnosis", "the pasted log"))
    assert not covered((1, 0), w, Ask("verdict", "ep 16 instead?", "ep_size=16"))  # another layout: its own lead


def test_ask_terms_read_the_target_field_and_layout():
    assert ask_terms(Ask("quantity", "q", "values:pp_size")) == ("pp_size",)
    assert ask_terms(Ask("quantity", "q", "grad_acc_steps")) == ("accumulation", "累积")
    assert ask_terms(Ask("verdict", "ep 16 instead?", "ep_size=16,pp_size=2")) == ("ep_size", "pp_size")
    assert ask_terms(Ask("fact", "what does pp_schedule default to", "pp_schedule")) == ("pp_schedule",)
    assert ask_terms(Ask("fact", "what's ep_shard_size then", "ep_shard_size")) == ("ep_shard_size", "ep_shard")
    assert ask_terms(Ask("verdict", "good idea?", "advice")) == ()


def test_an_unknown_ask_beside_a_fact_gets_its_own_plain_lead(engine):
    from dataclasses import replace

    from assistant.answer import AskRequest
    from assistant.compose.offline import compose

    prep = engine._prepare(AskRequest(question="What does an empty moe: {} default to?"))
    fact = prep.inp.asks[0]
    inp = replace(prep.inp, asks=(fact, Ask("unknown", "and how does the wibble factor scale")))
    out = compose(inp, Citer(prep.sources, "en"), engine.phrases)
    lead = out.text.split("\n\n")[0].splitlines()
    assert len(lead) == 2 and "cannot tell" in lead[1] and "wibble factor" in lead[1]
    assert "cannot tell" not in lead[0]
    assert out.uncovered == ["unknown: and how does the wibble factor scale"]


def test_good_idea_on_a_layout_that_starts_with_a_warning_leads_with_no(engine):
    from assistant.answer import AskRequest

    a = engine.ask(AskRequest(question="tp_size 16 on two 8-GPU nodes for a 70B model, good idea?"))
    assert a.text.startswith("Not a good idea as it stands") and "MW-W-TP-CROSS-NODE" in a.text.split("\n\n")[0]
    plain = engine.ask(AskRequest(question="tp_size 16 on two 8-GPU nodes for a 70B model, is it valid?"))
    assert plain.text.startswith("Yes")


def test_a_lead_of_the_same_clause_a_config_body_or_a_failed_check_speak_for_their_asks():
    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index = 0
    w.answer("The optional `moe:` block maps to MoEParallelizerConfig and is read only with expert parallelism on.")
    first = Ask("fact", "which fields does the moe block have, when is it read", "moe")
    w.ask_index = 1
    second = Ask("fact", "which fields does the moe block have, when is it read")
    assert covered((1, 0), w, second, (first,))  # one clause, one sentence for both
    assert not covered((1, 0), w, Ask("quantity", "which fields, and the largest ep", "max_ep"), (first,))
    w.ask_index = 2
    w.lines.append("```yaml")
    assert covered((1, 0), w, Ask("config", "the key yaml fields"))  # its config is in the body
    failed = Writer("en", Phrases.load(), Citer([], "en"))
    failed.ask_index = 0
    failed.answer("No: world_size (40) must be divisible by tp_size*cp_size*pp_size (`MW-E-WORLD-DIVISIBLE`).")
    failed.ask_index = 1
    assert covered((1, 0), failed, Ask("quantity", "what's dp_size", "dp_size"))  # no dp_size on a layout that fails
