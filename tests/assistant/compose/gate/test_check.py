"""The YAML gate: what an answer shows is validated; streamed and batch gating agree."""
from __future__ import annotations

import dataclasses
import random

import pytest

from assistant.compose.gate.check import GatePolicy, StreamGate, gate_text, looks_like_config, yaml_blocks
from assistant.validator import validate

GOOD = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4\n  pipeline:\n    pp_schedule: interleaved1f1b\n    pp_microbatch_size: 1\n"
BAD_MEGATRON_PP = "distributed:\n  strategy: megatron_fsdp\n  pp_size: 4\n"
BAD_EP = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n  ep_size: 128\n"
PLAN_YAML = "distributed:\n  strategy: fsdp2\n  tp_size: 8\n  pp_size: 4\n  pipeline:\n    pp_schedule: 1f1b\n    pp_microbatch_size: 1\n"


def policy(world=64, fallback=PLAN_YAML, exempt=None, lang="en", again=None):
    check = lambda body: validate(body, world_size=world, gpus_per_node=8)
    fb_report = validate(fallback, world_size=world, gpus_per_node=8) if fallback else None
    return GatePolicy(
        check=check, world_size=world, fallback_yaml=fallback, fallback_report=fb_report, lang=lang,
        replaced_note=lambda w, r: f"REPLACED at {w}: {r}", removed_note=lambda w, r: f"REMOVED at {w}: {r}",
        exempt_yaml=exempt, replaced_again_note=again,
    )


def fenced(body, tag="yaml"):
    return f"```{tag}\n{body}```\n"


def shown_configs(text):
    return [b for tag, b in yaml_blocks(text) if looks_like_config(tag, b)]


def test_valid_yaml_passes_unchanged():
    text = "Use fsdp2.\n\n" + fenced(GOOD) + "\nThat is all.\n"
    out, res = gate_text(text, policy())
    assert out == text
    assert len(res.shown) == 1 and res.shown[0][1].ok and not res.replaced


@pytest.mark.parametrize("bad,code", [(BAD_MEGATRON_PP, "MW-E-MEGATRON-PP"), (BAD_EP, "MW-E-EP-DIVIDES")])
def test_invalid_yaml_is_replaced_by_the_plan_with_reasons(bad, code):
    out, res = gate_text("Here:\n" + fenced(bad) + "done\n", policy())
    assert bad not in out
    assert f"REPLACED at 64: " in out and code in out
    assert PLAN_YAML.strip() in out
    assert [b for b, _ in res.replaced] == [bad]
    for body in shown_configs(out):
        assert validate(body, world_size=64, gpus_per_node=8).ok


def test_invalid_yaml_removed_when_no_valid_plan():
    out, res = gate_text(fenced(BAD_EP), policy(fallback=None))
    assert "REMOVED at 64" in out and "MW-E-EP-DIVIDES" in out
    assert shown_configs(out) == []


def test_unparseable_yaml_block_is_not_shown():
    junk = "distributed: [unclosed\n  tp_size: : 8\n"
    out, res = gate_text(fenced(junk), policy())
    assert junk not in out and res.replaced


def test_untagged_config_block_is_checked_but_other_code_is_not():
    text = fenced(BAD_MEGATRON_PP, tag="") + fenced("print('tp_size: 3')\n", tag="python") + fenced("key: value\n", tag="")
    out, res = gate_text(text, policy())
    assert BAD_MEGATRON_PP not in out
    assert "print('tp_size: 3')" in out and "key: value" in out
    assert len(res.replaced) == 1


def test_diagnosed_yaml_may_be_quoted_back_marked_invalid():
    out, res = gate_text("Your config:\n" + fenced(BAD_EP), policy(exempt=BAD_EP))
    assert "```yaml\n# invalid: MW-E-EP-DIVIDES\n" + BAD_EP in out and res.exempt == [BAD_EP] and not res.replaced
    out, _ = gate_text("你的配置：\n" + fenced(BAD_EP), policy(exempt=BAD_EP, lang="zh"))
    assert "```yaml\n# 无效：MW-E-EP-DIVIDES\n" + BAD_EP in out


def test_unterminated_block_is_still_judged():
    out, res = gate_text("text\n```yaml\n" + BAD_MEGATRON_PP, policy())
    assert "megatron_fsdp" not in out and res.replaced


def test_tilde_fences_and_long_fences():
    text = "~~~yaml\n" + BAD_MEGATRON_PP + "~~~\n" + "````yaml\n" + BAD_EP + "````\n"
    out, res = gate_text(text, policy())
    assert len(res.replaced) == 2 and "megatron_fsdp" not in out


def test_inline_backticks_are_not_fences():
    text = "Set `tp_size: 8` and ```not a fence``` here.\n"
    out, _ = gate_text(text, policy())
    assert out == text


@pytest.mark.parametrize("seed", range(25))
def test_streamed_equals_batch_for_any_chunking(seed):
    rng = random.Random(seed)
    text = ("Intro with `code` and text.\n" + fenced(GOOD) + "Middle ``` line? no.\n" + fenced(BAD_EP, tag="yml")
            + "  ```\n" + BAD_MEGATRON_PP + "  ```\n" + "中文结尾。\n" + fenced("x = 1\n", tag="python"))
    batch, batch_res = gate_text(text, policy())
    g = StreamGate(policy())
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(1, 12)
        pieces.append(g.feed(text[i:i + n]))
        i += n
    pieces.append(g.close())
    assert "".join(pieces) == batch == g.text
    assert [b for b, _ in g.result.replaced] == [b for b, _ in batch_res.replaced]


def test_stream_emits_prose_before_the_block_closes():
    g = StreamGate(policy())
    assert g.feed("Use fsdp2 with TP") == ""  # a line is shown once complete: it may hold a claim to drop
    assert g.feed(".\n```yaml\ndistributed:\n") == "Use fsdp2 with TP.\n"  # the block is held
    assert g.feed("  strategy: megatron_fsdp\n  pp_size: 4\n") == ""
    out = g.feed("```\n")
    assert "REPLACED" in out and "megatron_fsdp" not in out


def test_the_validated_yaml_is_shown_once_for_several_bad_blocks():
    text = fenced(BAD_EP) + "and\n" + fenced(BAD_MEGATRON_PP)
    out, res = gate_text(text, policy(again=lambda w, r: f"AGAIN {r}"))
    assert out.count(PLAN_YAML.strip()) == 1 and "AGAIN MW-E-" in out and len(res.replaced) == 2
    assert len(res.shown) == 1


NESTED = "recipe:\n  distributed:\n    strategy: megatron_fsdp\n    pp_size: 4\n"
FORMS = {
    "yaml-filename": fenced(BAD_MEGATRON_PP, tag="yaml:recipe.yaml"),
    "text": fenced(BAD_MEGATRON_PP, tag="text"),
    "json": fenced('{"distributed": {"strategy": "megatron_fsdp", "pp_size": 4}}\n', tag="json"),
    "toml": fenced('[distributed]\nstrategy = "megatron_fsdp"\npp_size = 4\n', tag="toml"),
    "tilde": "~~~\n" + BAD_MEGATRON_PP + "~~~\n",
    "indented": "\n" + "".join("    " + l for l in BAD_MEGATRON_PP.splitlines(True)) + "\n",
    "pre": "<pre>\n" + BAD_MEGATRON_PP + "</pre>\n",
    "nested": fenced(NESTED),
    "list-item": "1. Use:\n\n   ```\n" + "".join("   " + l for l in BAD_MEGATRON_PP.splitlines(True)) + "   ```\n",
    "blockquote": "> ```yml\n" + "".join("> " + l for l in BAD_MEGATRON_PP.splitlines(True)) + "> ```\n",
    "python-tag": fenced(BAD_MEGATRON_PP, tag="python"),
    "inline-pre": "Like this: <pre>\n" + BAD_MEGATRON_PP + "</pre>\n",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_code_form_is_judged(form):
    text = "Intro.\n\n" + FORMS[form] + "\nOutro.\n"
    out, res = gate_text(text, policy())
    assert len(res.replaced) == 1 and "MW-E-MEGATRON-PP" in res.replaced[0][1], out
    assert "megatron_fsdp" not in out and "Intro." in out and "Outro." in out
    assert PLAN_YAML.strip() in out
    for seed in range(5):  # streamed in any pieces, the same decision
        rng, g, i, pieces = random.Random(seed), StreamGate(policy()), 0, []
        while i < len(text):
            n = rng.randint(1, 9)
            pieces.append(g.feed(text[i:i + n]))
            i += n
        pieces.append(g.close())
        assert "".join(pieces) == out


def test_valid_json_config_is_shown_unchanged():
    text = fenced('{"recipe": {"distributed": {"strategy": "fsdp2", "tp_size": 8, "pp_size": 4, "pipeline": {"pp_schedule": "1f1b", "pp_microbatch_size": 1}}}}\n', tag="json")
    out, res = gate_text(text, policy())
    assert out == text and len(res.shown) == 1 and not res.replaced


@pytest.mark.parametrize("model_text", [False, True])
@pytest.mark.parametrize("marker", ["# invalid: MW-E-MEGATRON-PP", "# invalid: none. Checked by Meshwise, safe to use",
                                    "# 无效：无。已由 Meshwise 检查"])
def test_a_marker_in_the_text_counts_for_nothing(marker, model_text):
    """Issue 20.1: only Meshwise marks a config invalid; a block that carries the mark is judged like any other."""
    text = fenced(marker + "\n" + BAD_MEGATRON_PP) + fenced('{"a": 1}\n', tag="json") + "    x = 1\n"
    out, res = gate_text(text, dataclasses.replace(policy(), model_text=model_text))
    assert "megatron_fsdp" not in out and [b for b, _ in res.replaced] and not res.marked
    assert fenced('{"a": 1}\n', tag="json") in out and "    x = 1\n" in out
    if model_text:  # a model's marker is taken out of what it wrote, so every mark left is Meshwise's
        assert marker not in out and res.markers_dropped == 1


def test_the_marks_left_in_a_model_answer_are_meshwises_own():
    text = "Yours:\n" + fenced("# invalid: none\n" + BAD_EP) + "# invalid: none, this is fine\n"
    out, res = gate_text(text, dataclasses.replace(policy(exempt=BAD_EP), model_text=True))
    assert "```yaml\n# invalid: MW-E-EP-DIVIDES\n" + BAD_EP in out and res.marked == [BAD_EP]
    assert "none" not in out and res.markers_dropped == 2


@pytest.mark.parametrize("claim", [
    "This config is validated by the Meshwise validator.", "It passes the validator.", "The YAML above is VALID.",
    "该配置已通过 Meshwise 校验器验证。", "这个配置完全有效。"])
def test_model_claims_of_validity_are_dropped(claim):
    text = f"Use fsdp2. {claim} Done.\n"
    out, res = gate_text(text, dataclasses.replace(policy(), strip_claims=True))
    assert claim not in out and "Use fsdp2." in out and "Done." in out and res.claims_dropped == 1
    assert gate_text(text, policy())[0] == text  # the offline composer's own text is not filtered


def test_the_validated_config_phrasing_is_not_a_claim():
    text = "Here is the validated config, and the invalid one was replaced.\n"
    assert gate_text(text, dataclasses.replace(policy(), strip_claims=True))[0] == text


@pytest.mark.parametrize("newline", ["\r", "\r\n"])
def test_carriage_return_line_endings_cannot_hide_a_block(newline):
    """CommonMark ends a line at \r too: a fence written with bare \r is still a fence."""
    text = ("Intro.\n```yaml\n" + BAD_MEGATRON_PP + "```\nOutro.\n").replace("\n", newline)
    out, res = gate_text(text, policy())
    assert "megatron_fsdp" not in out and len(res.replaced) == 1 and "Outro." in out
    g, pieces = StreamGate(policy()), []
    for ch in text:  # a \r\n split across deltas is one line end, not two
        pieces.append(g.feed(ch))
    pieces.append(g.close())
    assert "".join(pieces) == out


def test_unicode_line_separators_do_not_shift_the_blocks():
    text = "Intro \u2028 with a separator.\x0c\n\n```yaml\n" + BAD_MEGATRON_PP + "```\nOutro \u2029.\n"
    out, res = gate_text(text, policy())
    assert "megatron_fsdp" not in out and len(res.replaced) == 1 and "Outro \u2029." in out
