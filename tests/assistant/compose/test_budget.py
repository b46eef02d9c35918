"""The length budget: over its asks' allowance an answer loses supporting material in budget.yaml's
order, never an ask's first lead, a named field's sentence or the YAML asked for."""
from __future__ import annotations

from pathlib import Path

from assistant.compose.budget import Budget, budget, dropped_code, trim
from assistant.compose.citations import Citer
from assistant.compose.phrases import Phrases
from assistant.compose.writer import Writer
from assistant.understand.query import Ask

_SMALL = Budget(base={"en": 100, "zh": 70}, per_ask={"verdict": {"en": 100, "zh": 70}, "unknown": {"en": 50, "zh": 35},
                                                      "recommendation": {"en": 100, "zh": 70}},
                yaml_asked_kinds=frozenset({"config"}),
                trim=("pitfalls", "fields", "yaml_unasked"))


def _writer() -> Writer:
    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index, w.kind = 0, "verdict"
    w.answer("Yes: the layout is valid.")
    w.answer("A supporting sentence that says more about why the layout is valid, at some length here.")
    w.ask_index, w.kind = 1, "recommendation"  # the second ask: its config answers no first ask
    w.answer("Use strategy fsdp2.")
    w.code("distributed:\n  strategy: fsdp2\n  ep_size: 8")
    w.bullets(["field one explained at length " * 3, "`reshard_after_forward` is false by default here"],
              heading="fields")
    w.bullets(["pitfall one " * 5, "pitfall two " * 5], heading="pitfalls")
    return w


def _asks() -> tuple:
    return (Ask("verdict", "is it valid?"), Ask("recommendation", "which strategy?"))


def test_within_budget_nothing_is_trimmed():
    w = _writer()
    roomy = Budget(_SMALL.base, {k: {"en": 5000, "zh": 5000} for k in _SMALL.per_ask}, _SMALL.yaml_asked_kinds, _SMALL.trim)
    assert trim(w, _asks(), b=roomy) == []
    assert "pitfall one" in w.render()


def test_over_budget_trims_in_order_and_keeps_first_leads():
    w = _writer()
    before = len(w.render(sources=False))
    trimmed = trim(w, _asks(), b=_SMALL)
    text = w.render(sources=False)
    assert len(text) < before
    assert trimmed[:2] == ["pitfalls", "pitfalls"]  # the last item of the list first, then the rest
    assert "pitfall" not in text and "Pitfalls" not in text  # an emptied list takes its heading along
    # every ask keeps its first lead sentence, whatever else goes
    assert "Yes: the layout is valid." in text and "Use strategy fsdp2." in text


def test_unasked_yaml_goes_and_leaves_the_answer():
    w = _writer()
    tiny = Budget({"en": 0}, {k: {"en": 60} for k in _SMALL.per_ask}, _SMALL.yaml_asked_kinds, _SMALL.trim)
    # a recommendation after a fact (no verdict before it): its config replaces nothing the user stated
    trimmed = trim(w, (Ask("fact", "what is ep?"), Ask("recommendation", "which strategy?")), b=tiny)
    assert trimmed[-1] == "yaml_unasked"
    assert "A supporting sentence" in w.render()  # a lead sentence is never trimmed
    assert "```yaml" not in w.render()
    assert "ep_size: 8" in dropped_code(w)


def test_a_recommendation_after_a_verdict_keeps_its_config():
    # "tp_size 16 across nodes, bad idea? What would you use instead?": the config is the replacement (a fix)
    w = _writer()
    tiny = Budget({"en": 0}, {k: {"en": 60} for k in _SMALL.per_ask}, _SMALL.yaml_asked_kinds, _SMALL.trim)
    trimmed = trim(w, (Ask("verdict", "bad idea?"), Ask("recommendation", "what would you use instead?")), b=tiny)
    assert "yaml_unasked" not in trimmed and "ep_size: 8" in w.render()


def test_asked_yaml_stays_and_counts_beside_the_allowance():
    w = _writer()
    asks = (Ask("verdict", "is it valid?"), Ask("recommendation", "give me the yaml for it"))
    trim(w, asks, b=_SMALL)
    assert "```yaml" in w.render()  # the clause requests YAML (understand/cues.py)


def test_the_first_asks_config_stays():
    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index, w.kind = 0, "recommendation"
    w.answer("Use strategy fsdp2 with tp_size 8 and pp_size 4.")
    w.code("distributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4")
    w.bullets(["pitfall " * 40], heading="pitfalls")
    tiny = Budget({"en": 0}, {k: {"en": 60} for k in _SMALL.per_ask}, _SMALL.yaml_asked_kinds, _SMALL.trim)
    trim(w, (Ask("recommendation", "what layout for 70B on 64 GPUs?"),), b=tiny)
    text = w.render()
    assert "```yaml" in text and "pitfall" not in text


def test_a_field_the_question_names_keeps_its_sentence():
    class _Sit:
        class pasted:
            prose = "is reshard_after_forward on by default?"
    class _Q:
        situation = _Sit
    w = _writer()
    trim(w, _asks(), _Q, b=_SMALL)
    text = w.render()
    assert "`reshard_after_forward` is false by default here" in text
    assert "field one" not in text


def test_asks_of_one_clause_share_its_allowance():
    b = budget()
    one = b.allowance((Ask("quantity", "what are dp_size and ep_shard?"),), "en")
    two = b.allowance((Ask("quantity", "what are dp_size and ep_shard?"), Ask("quantity", "what are dp_size and ep_shard?")), "en")
    assert one == two
    assert b.allowance((Ask("quantity", "a"), Ask("verdict", "b")), "en") > one
    assert b.allowance((Ask("verdict", "b"),), "zh") < b.allowance((Ask("verdict", "b"),), "en")


def test_later_clauses_get_a_share_and_later_fields_go():
    b = budget()
    one, two = b.allowance((Ask("verdict", "a"),), "en"), b.allowance((Ask("verdict", "a"), Ask("verdict", "b")), "en")
    assert one < two < 2 * one - b.base["en"]  # the second clause gets less than the first
    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index, w.kind = 0, "verdict"
    w.answer("Yes: valid.")
    w.ask_index, w.kind = 1, "config"
    w.answer("Your layout as YAML:")
    w.bullets(["field explained " * 30], heading="fields")
    tiny = Budget({"en": 0}, {k: {"en": 60} for k in ("verdict", "config", "unknown")}, frozenset(), ("fields.later",))
    assert trim(w, (Ask("verdict", "is it valid?"), Ask("config", "the yaml")), b=tiny) == ["fields.later"]


def _mesh_writer() -> Writer:
    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index, w.kind = 0, "verdict"
    w.answer("Yes: the layout is valid; mesh (pp, dp_replicate, dp_shard, cp, tp) = (1, 1, 16, 1, 1).")
    w.ask_index, w.kind = 1, "quantity"
    w.answer("dp_size = 16: world_size / (tp_size × pp_size × cp_size) = 16 / (1 × 1 × 1).")
    w.answer(w.say("q_mesh", mesh="(pp, dp_replicate, dp_shard, cp, tp) = (1, 1, 16, 1, 1)"))
    return w


def test_a_mesh_the_lead_already_states_is_not_said_again():
    from assistant.compose.budget import drop_repeated_mesh

    w = _mesh_writer()
    assert drop_repeated_mesh(w) == 1
    assert len(w.leads) == 2 and w.lead_asks == [0, 1] and w.render().count("(1, 1, 16, 1, 1)") == 1
    # a mesh of another layout (the fix's) is a fact of its own and stays, as does an ask's first lead
    other = _mesh_writer()
    other.leads[-1] = other.say("q_mesh", mesh="(pp, dp_replicate, dp_shard, cp, tp) = (1, 2, 8, 1, 1)")
    assert drop_repeated_mesh(other) == 0
    alone = Writer("en", Phrases.load(), Citer([], "en"))
    alone.ask_index = 0
    alone.answer(alone.say("q_mesh", mesh="(pp, dp_replicate, dp_shard, cp, tp) = (1, 1, 16, 1, 1)"))
    alone.ask_index = 1
    alone.answer("Yes: mesh (pp, dp_replicate, dp_shard, cp, tp) = (1, 1, 16, 1, 1).")
    assert drop_repeated_mesh(alone) == 0  # each is its ask's first statement


def test_a_long_lead_of_several_asks_moves_the_mesh_beside_a_number_into_the_body():
    from assistant.compose.budget import fit_lead

    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index = 0
    w.answer("This error is upstream's divisibility check: " + "the world does not divide; " * 8)
    w.answer(w.say("q_mesh", mesh="(pp, dp_replicate, dp_shard, cp, tp) = (2, 1, 3, 1, 2)"))
    w.ask_index = 1
    w.answer("With `tp_size: 2`: dp_size = 3.")
    tight = Budget(_SMALL.base, _SMALL.per_ask, _SMALL.yaml_asked_kinds, _SMALL.trim, lead_max={"en": 300})
    assert fit_lead(w, tight) and w.lead_asks == [0, 1]
    text = w.render()
    lead, body = text.split("\n\n", 1)
    assert "dp_size = 3" in lead and "(2, 1, 3, 1, 2)" in body  # moved, not lost
    roomy = _mesh_writer()
    assert fit_lead(roomy, Budget(_SMALL.base, _SMALL.per_ask, _SMALL.yaml_asked_kinds, _SMALL.trim,
                                  lead_max={"en": 4000})) == []


def test_a_warning_the_lead_states_goes_first_from_the_body():
    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index, w.kind = 0, "verdict"
    w.answer("Not a good idea as it stands: CP with packing on SDPA (`MW-W-CP-PACKING-SDPA`).")
    w.bullets(["`MW-W-CP-PACKING-SDPA` at `model.attn_implementation`: " + "the mask is dropped; " * 10,
               "`MW-W-TP-CROSS-NODE` at `distributed.tp_size`: another warning " * 2], heading="warnings")
    b = Budget(_SMALL.base, _SMALL.per_ask, _SMALL.yaml_asked_kinds, ("restated",))
    assert trim(w, (Ask("verdict", "good idea?"),), b=b) == ["restated"]
    body = w.render().split("\n\n", 1)[1]
    assert "MW-W-CP-PACKING-SDPA" not in body and "MW-W-TP-CROSS-NODE" in body


def _fact_writer(second_kind: str) -> Writer:
    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index, w.kind = 0, "fact"
    w.answer("Each CP rank holds 8192 tokens.")
    w.bullets(["first supporting fact, kept " * 3, "second supporting fact " * 6, "third supporting fact " * 6])
    w.ask_index, w.kind = 1, second_kind
    w.answer("dp_size = 2.")
    return w


def test_a_facts_list_beside_another_kind_is_trimmed_from_two_asks_on():
    b = Budget({"en": 0}, {k: {"en": 60} for k in ("fact", "quantity", "unknown")}, frozenset(), ("bullets.fact",),
               keep_items={"bullets.fact": 1}, min_asks={"bullets.fact": 3}, min_asks_mixed={"bullets.fact": 2})
    mixed = _fact_writer("quantity")
    assert trim(mixed, (Ask("fact", "how many tokens per rank"), Ask("quantity", "what is dp_size", "dp_size")), b=b)
    assert "first supporting fact" in mixed.render() and "third supporting fact" not in mixed.render()
    facts = _fact_writer("fact")  # two facts: their lists are the answer
    assert trim(facts, (Ask("fact", "what does PP need"), Ask("fact", "what must the model do")), b=b) == []


def test_the_lead_parts_are_still_where_the_validator_writes_them():
    from assistant.datafile import read_yaml
    from assistant.validator import memory

    b = budget()
    rules = (Path(memory.__file__).with_name("model_rules_table.yaml")).read_text(encoding="utf-8")
    others = read_yaml(Path(memory.__file__).with_name("memory_knobs.yaml"))["others"]
    for lang in ("en", "zh"):
        assert b.lead_parts["basis"][lang][0] in rules and b.lead_parts["others"][lang][0] in others[lang]


def test_an_over_long_memory_lead_loses_its_basis_then_its_other_options_but_keeps_verdict_and_fix():
    w = Writer("en", Phrases.load(), Citer([], "en"))
    w.ask_index, w.kind = 0, "verdict"
    w.answer("No: it does not fit in memory: estimated peak memory 83.7 GiB per GPU exceeds 79.6 GiB (105%). "
             "The knob that helps most: enable activation_checkpointing: true (-21.0 GiB, to 62.7 GiB). "
             "Other options: raise tp_size to 4 (-12.7 GiB, to 71.0 GiB). Basis: 16 B per trained parameter; "
             "sequence length 4096 (default); the estimate's assumptions list the rest (`MW-E-MEMORY`). "
             "Fix: `activation_checkpointing: true`.")
    tight = Budget({"en": 0}, {k: {"en": 10} for k in ("verdict", "unknown")}, frozenset(), ("lead.basis", "lead.others"),
                   lead_parts=budget().lead_parts)
    assert trim(w, (Ask("verdict", "does it fit?"),), b=tight) == ["lead.basis", "lead.others"]
    lead = w.leads[0]
    assert "Basis" not in lead and "Other options" not in lead
    assert "83.7 GiB" in lead and "activation_checkpointing: true (-21.0 GiB" in lead and "(`MW-E-MEMORY`). Fix:" in lead
