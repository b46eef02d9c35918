"""The lead check: a model's opening states Meshwise's verdict, numbers and file, or gets the lead put first."""
from __future__ import annotations

import pytest

from assistant.compose.llm.ask_notes import AskNote
from assistant.compose.llm.lead_check import HEAD_CHARS, LeadFirst, missing_leads, polarity, states
from assistant.compose.phrases import Phrases

VALUES = dict(layout="`tp_size: 4`", world=16, gpn=8, mesh="(pp, dp_replicate, dp_shard, cp, tp) = (2, 1, 2, 1, 4)",
              message="world_size (40) must be divisible by tp_size*cp_size*pp_size (4*1*3 = 12)",
              code="MW-E-WORLD-DIVISIBLE")


@pytest.mark.parametrize("key,want", [("verdict_yes", "valid"), ("verdict_yes_worry", "valid"),
                                      ("verdict_no", "invalid"), ("verdict_no_worry", "invalid")])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_offline_verdict_states_its_own_polarity(key, want, lang):
    line = Phrases.load().say(key, lang, **VALUES)
    assert polarity(line, within=40) == want, line
    assert states(AskNote("verdict", "does it run?", None, (line,), ()), line)


NO = AskNote("verdict", "Does tp 4 with pp 3 work on 40 GPUs?", None,
             ("No: world_size (40) must be divisible by tp_size*cp_size*pp_size (4*1*3 = 12) (`MW-E-WORLD-DIVISIBLE`).",), ())


@pytest.mark.parametrize("opening,ok", [
    ("No. 40 is not divisible by tp*pp = 12, so the mesh cannot be built.", True),
    ("It fails at start-up: 40 % 12 != 0.", True),
    ("不行：40 不能被 12 整除。", True),
    ("Recommendation: use fsdp2 with tp_size 4 and pp_size 2; it works well on 40 GPUs.", False),  # buried
    ("Yes, that layout is valid.", False),  # the wrong verdict
    ("Use fsdp2 [1]. " + "It shards parameters across the data-parallel ranks. " * 8 + "No: 40 % 12 != 0.", False),
])
def test_a_verdict_must_open_the_answer_with_the_computed_polarity(opening, ok):
    assert states(NO, missing_opening := opening[:HEAD_CHARS]) is ok, missing_opening
    assert missing_leads(opening, [NO]) == ([] if ok else list(NO.leads))


QTY = (AskNote("quantity", "what are dp_size and ep_shard", "dp_size",
               ("dp_size = 8: world_size / (tp_size × pp_size × cp_size) = 32 / (4 × 1 × 1) [4].",
                "The device mesh is (pp, dp_replicate, dp_shard, cp, tp) = (1, 1, 8, 1, 4) [6]."), ()),
       AskNote("quantity", "what are dp_size and ep_shard", "ep_shard",
               ("ep_shard = 4: dp_size × cp_size × tp_size / ep_size = 8 × 1 × 4 / 8.",), ()))


def test_quantities_need_their_numbers_and_the_mesh_its_shape():
    assert missing_leads("dp_size is 8, the mesh is 1x1x8x1x4 and ep_shard is 4.", QTY) == []
    assert missing_leads("dp_size = 8 and the mesh (1, 1, 8, 1, 4); ep_shard = 4", QTY) == []
    # ep_shard missing: only its lead is put first
    assert missing_leads("dp_size is 8 with mesh (1, 1, 8, 1, 4).", QTY) == list(QTY[1].leads)
    # digits inside identifiers or other numbers are not the result
    assert missing_leads("With fsdp2 and tp_size 4 on 32 GPUs, dp is 32/4 = ... the mesh is 1,1,8,1,4", QTY)[0] \
        == QTY[0].leads[0]


def test_location_needs_the_file():
    note = AskNote("location", "where is the mesh built?", None,
                   ("`nemo_automodel/components/distributed/mesh_utils.py` — `_create_device_meshes`: builds it [3]",), ())
    assert missing_leads("It is built in `mesh_utils.py` by `_create_device_meshes`.", [note]) == []
    assert missing_leads("The device mesh is built at start-up.", [note]) == list(note.leads)


def test_lead_first_holds_the_opening_then_puts_the_lead_before_it_once():
    lf = LeadFirst([NO])
    pieces = ["Use fsdp2 ", "with tp_size 4 and pp_size 2 [1]. ", "It shards parameters. " * 20, "The end."]
    out = [lf.feed(p) for p in pieces] + [lf.close()]
    assert out[0] == "" and out[1] == ""  # held until the opening can be judged
    text = "".join(out)
    assert text.startswith(NO.leads[0] + "\n\n") and text.count(NO.leads[0]) == 1
    assert text.endswith("The end.") and lf.prefix == NO.leads[0] + "\n\n"
    short = LeadFirst([NO])
    assert short.feed("No: 40 % 12 != 0.") == "" and short.close() == "No: 40 % 12 != 0." and short.prefix == ""


def test_a_quantity_of_a_failing_layout_is_checked_as_its_verdict():
    note = AskNote("quantity", "what is dp_size?", "dp_size", NO.leads, ())
    assert missing_leads("No: 40 GPUs do not divide by 12, so there is no dp_size.", [note]) == []
    assert missing_leads("dp_size would be 3.", [note]) == list(NO.leads)


def test_only_the_asked_quantity_is_required():
    grad = AskNote("quantity", "how many grad-acc steps?", "grad_acc_steps",
                   ("dp_size = 8: world_size / (tp_size × pp_size × cp_size) = 32 / (4 × 1 × 1).",
                    "Gradient accumulation = 4 step(s): global_batch_size / (local_batch_size × dp_size) = 64 / (2 × 8).",
                    "The device mesh is (pp, dp_replicate, dp_shard, cp, tp) = (1, 1, 8, 1, 4)."), ())
    assert missing_leads("You get 4 gradient-accumulation steps.", [grad]) == []
    assert missing_leads("You get 8 data-parallel ranks.", [grad]) == list(grad.leads)


def test_a_verdict_after_a_restated_situation_is_buried():
    parroted = ("Situation (read from the question):\n- world_size: 40 (stated in the question)\n"
                "- The world size must be divisible by tp_size * cp_size * pp_size, and 40 is not.")
    assert missing_leads(parroted, [NO]) == list(NO.leads)
    assert missing_leads("Short answer:\nNo, 40 is not a multiple of 12.", [NO]) == []


def test_the_opening_skips_notices_not_identifiers():
    from assistant.compose.llm.lead_check import head

    assert head("_The LLM timed out._\n\n> replaced\n\nNo: it fails.") == "No: it fails."
    assert head("_create_device_meshes builds it.").startswith("_create_device_meshes")


def test_the_question_quoted_back_is_no_verdict():
    yes = AskNote("verdict", "这样能跑吗", None, (Phrases.load().say("verdict_yes", "zh", **VALUES),), ())
    parroted = '1. verdict: "我有 16 张卡,tp_size 4,pp_size 2,cp 是 1,这样能跑吗"\n- verdict: "这样能跑吗"'
    assert missing_leads(parroted, [yes]) == list(yes.leads)
    assert missing_leads("这样能跑吗？能跑：16 卡下 tp_size 4、pp_size 2 通过全部启动检查。", [yes]) == []
    assert missing_leads("Does it work? Let me explain the mesh first.", [yes]) == list(yes.leads)


@pytest.mark.parametrize("opening, want", [
    ("Yes, that's true: `ddp` cannot do TP, so `tp_size: 2` is rejected at start-up.", "invalid"),
    ("No, that's not true: `megatron_fsdp` supports TP; your layout passes.", "valid"),
    ("对，没错：`ddp` 不能开 TP，所以 `tp_size: 2` 启动就报错。", "invalid"),
    ("不对，`megatron_fsdp` 支持 TP，这个布局可以跑。", "valid"),
])
def test_the_truth_of_a_claim_is_read_past_to_the_layouts_verdict(opening, want):
    assert polarity(opening, within=80) == want


def test_accepted_is_the_valid_polarity_even_before_not_rejected():
    assert polarity("It is accepted, not rejected: TP counts in the expert-parallel rule.", within=40) == "valid"
    assert polarity("It is not accepted: ep_size must divide dp*cp*tp.", within=40) == "invalid"
