"""The length budget: over its asks' allowance an answer loses supporting material in budget.yaml's
order, never an ask's first lead, a named field's sentence or the YAML asked for."""
from __future__ import annotations

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
