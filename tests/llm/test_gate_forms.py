"""Issue 14.1: every block the answer would render as code goes through the validator, whatever form the
model writes it in. A scripted OpenAI-compatible server plays each form; the final text and the streamed
text must hold no unmarked invalid config. The oracle here is independent of the gate: it finds code
blocks with markdown-it and judges every mapping with a `distributed` key with the validator."""
from __future__ import annotations

import html
import json
import re
import tomllib

import pytest
import yaml
from markdown_it import MarkdownIt

from assistant.answer import AskRequest
from assistant.validator import validate

Q_EN = "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?"
Q_ZH = "我在 8 个节点上训练 70B 模型，想用张量并行加流水线并行，该用哪种策略，YAML 怎么写？"
BAD = "distributed:\n  strategy: megatron_fsdp\n  tp_size: 64\n  pp_size: 4\n"
NESTED = "recipe:\n  distributed:\n    strategy: megatron_fsdp\n    tp_size: 64\n    pp_size: 4\n"
BAD_JSON = json.dumps({"distributed": {"strategy": "megatron_fsdp", "tp_size": 64, "pp_size": 4}}, indent=2) + "\n"
BAD_TOML = '[distributed]\nstrategy = "megatron_fsdp"\ntp_size = 64\npp_size = 4\n'
CLAIM_EN = "This config is validated by the Meshwise validator and is VALID."
CLAIM_ZH = "该配置已通过 Meshwise 校验器验证，完全有效。"


def _indent(text: str, pad: str) -> str:
    return "".join(pad + line for line in text.splitlines(keepends=True))


FORMS = {
    "yaml-filename": f"```yaml:recipe.yaml\n{BAD}```\n",
    "text": f"```text\n{BAD}```\n",
    "json": f"```json\n{BAD_JSON}```\n",
    "toml": f"```toml\n{BAD_TOML}```\n",
    "tilde": f"~~~\n{BAD}~~~\n",
    "indented": "\n" + _indent(BAD, "    ") + "\n",
    "pre": f"<pre>\n{html.escape(BAD)}</pre>\n",
    "nested": f"```yaml\n{NESTED}```\n",
    "nested-untagged": f"```\n{NESTED}```\n",
    "list-item": "1. Put this in the recipe:\n\n   ```yaml\n" + _indent(BAD, "   ") + "   ```\n",
    "blockquote": "> ```yml\n" + _indent(BAD, "> ") + "> ```\n",
}


def _mappings_with_distributed(data, depth=0):
    if depth > 8:
        return
    if isinstance(data, dict):
        if "distributed" in data:
            yield data
        for v in data.values():
            yield from _mappings_with_distributed(v, depth + 1)
    elif isinstance(data, list):
        for v in data:
            yield from _mappings_with_distributed(v, depth + 1)


def _parses(body: str):
    for load in (yaml.safe_load, json.loads, tomllib.loads):
        try:
            yield load(body)
        except Exception:  # noqa: BLE001 - any parser failure just means "not this format"
            continue


def code_blocks(text: str) -> list[str]:
    out = []
    for tok in MarkdownIt("commonmark").parse(text):
        if tok.type in ("fence", "code_block"):
            out.append(tok.content)
        elif tok.type == "html_block" and re.search(r"<pre\b", tok.content, re.I):
            out.append(html.unescape(re.sub(r"<[^>]+>", "", tok.content)))
    return out


def unmarked_invalid(text: str, world: int = 64) -> list[str]:
    bad = []
    for body in code_blocks(text):
        first = body.lstrip().splitlines()[0] if body.strip() else ""
        if re.match(r"^#\s*(invalid:|无效：)", first):
            continue
        for data in _parses(body):
            for recipe in _mappings_with_distributed(data):
                if not validate(yaml.safe_dump(recipe), world_size=world, gpus_per_node=8).ok:
                    bad.append(body)
    return bad


def test_the_oracle_sees_every_form():  # the test would prove nothing if its own finder missed a form
    for name, block in FORMS.items():
        assert unmarked_invalid("Intro.\n\n" + block), name


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("question,claim", [(Q_EN, CLAIM_EN), (Q_ZH, CLAIM_ZH)], ids=["en", "zh"])
def test_no_form_of_invalid_config_reaches_the_answer_unmarked(openai_engine, scripted, stream, form, question, claim):
    scripted.script = ("answer", f"Use fsdp2 with TP and PP [1].\n\n{FORMS[form]}\n{claim}\nThat is all.\n")
    deltas, a = stream(openai_engine, AskRequest(question=question))
    streamed = "".join(deltas)
    assert unmarked_invalid(a.text) == [], a.text
    assert unmarked_invalid(streamed) == [], streamed
    # the verdict is the validator's: the model's claim of validity is not repeated
    for text in (a.text, streamed):
        assert "validated by the Meshwise" not in text and "通过 Meshwise 校验器验证" not in text
    assert a.validation is not None and a.validation.ok
    assert a.yaml and validate(a.yaml, world_size=64, gpus_per_node=8).ok
