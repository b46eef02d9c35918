"""Issue 20.1, as a property: an invalid config a model writes is caught in any Markdown or HTML structure.

Hypothesis embeds `tp_size: 3, pp_size: 5` at world size 8 (block YAML, flow style, JSON, nested under a
recipe, a bare body, indented, under a model-written "# invalid: none" marker) in generated structures:
fences of backticks or tildes of any length and info string, indented code, `<details>` with and without
blank lines, `<pre>` / `<code>`, table cells, list items, blockquotes, inline spans, bare lines in prose,
nested in each other. The oracle is the text itself: the CLI prints the answer raw, so `pp_size: 5` must
not appear anywhere in what the gate lets through, streamed in any pieces.
"""
from __future__ import annotations

import dataclasses
import html
import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.compose.gate.check import GatePolicy, StreamGate, gate_text
from assistant.validator import validate

WORLD = 8
PLAN = "distributed:\n  strategy: fsdp2\n  tp_size: 2\n"
LEAK = re.compile(r"pp_size\W{0,6}5\b")
SIZES = {"strategy": "fsdp2", "tp_size": 3, "pp_size": 5}


def leaks(text: str) -> bool:
    """The invalid size in the text as printed, or as a browser decodes it."""
    return bool(LEAK.search(text) or LEAK.search(html.unescape(text)))


def policy() -> GatePolicy:
    return GatePolicy(check=lambda body: validate(body, world_size=WORLD, gpus_per_node=8), world_size=WORLD,
                      fallback_yaml=PLAN, fallback_report=validate(PLAN, world_size=WORLD, gpus_per_node=8), lang="en",
                      replaced_note=lambda w, r: f"Replaced at {w}: {r}", removed_note=lambda w, r: f"Removed at {w}: {r}",
                      strip_claims=True, model_text=True)


def _yaml_body(keys: list[str], indent: int) -> str:
    pad = " " * indent
    return "".join(f"{pad}{k}: {SIZES[k]}\n" for k in keys)


@st.composite
def multi_line(draw) -> str:
    """A config written over several lines."""
    keys = draw(st.permutations(list(SIZES)))
    kind = draw(st.sampled_from(["block", "nested", "json", "body", "with-model", "flow"]))
    step = draw(st.sampled_from([2, 4]))
    if kind == "block":
        text = "distributed:\n" + _yaml_body(keys, step)
    elif kind == "nested":
        text = "recipe:\n" + " " * step + "distributed:\n" + _yaml_body(keys, 2 * step)
    elif kind == "json":
        text = json.dumps({"distributed": {k: SIZES[k] for k in keys}}, indent=step) + "\n"
    elif kind == "body":
        text = _yaml_body(keys, 0)
    elif kind == "with-model":
        text = "model:\n" + " " * step + "name: llama\ndistributed:\n" + _yaml_body(keys, step)
    else:
        text = "distributed: {" + ", ".join(f"{k}: {SIZES[k]}" for k in keys) + "}\n"
    if draw(st.booleans()):  # the model vouches for it, in Meshwise's own words
        text = draw(st.sampled_from(["# invalid: none. Checked by Meshwise, safe to use\n", "# 无效：无\n"])) + text
    return text


@st.composite
def one_line(draw) -> str:
    """A config written on one line, as it fits in a span or a cell."""
    keys = draw(st.permutations(list(SIZES)))
    kind = draw(st.sampled_from(["flow", "json", "pairs", "nested-flow"]))
    if kind == "flow":
        return "distributed: {" + ", ".join(f"{k}: {SIZES[k]}" for k in keys) + "}"
    if kind == "json":
        return json.dumps({"distributed": {k: SIZES[k] for k in keys}})
    if kind == "nested-flow":
        return "recipe: {distributed: {" + ", ".join(f"{k}: {SIZES[k]}" for k in keys) + "}}"
    return ", ".join(f"{k}: {SIZES[k]}" for k in keys if k != "strategy")


def _indent(text: str, pad: str) -> str:
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


@st.composite
def block(draw) -> str:
    """A config in a block structure, possibly nested in lists and quotes."""
    cfg = draw(multi_line())
    form = draw(st.sampled_from(["fence", "indented", "details", "details-blank", "pre", "pre-code", "bare",
                                 "bare-indented", "details-bare"]))
    if form == "fence":
        ch = draw(st.sampled_from("`~"))
        fence = ch * draw(st.integers(3, 6))
        info = draw(st.sampled_from(["", "yaml", "yml", "json", "text", "python", "yaml title=\"r.yaml\"", "{.yaml}"]))
        out = f"{fence}{info}\n{cfg}{fence}\n"
    elif form == "indented":
        out = "\n" + _indent(cfg, "    ") + "\n"
    elif form in ("details", "details-blank", "details-bare"):
        gap = "\n" if form == "details-blank" else ""
        inner = cfg if form == "details-bare" else f"```yaml\n{cfg}```\n"
        out = f"<details>\n<summary>Config</summary>\n{gap}{inner}{gap}</details>\n"
    elif form == "pre":
        out = f"<pre>\n{html.escape(cfg)}</pre>\n"
    elif form == "pre-code":
        out = f"<pre><code class=\"language-yaml\">{html.escape(cfg)}</code></pre>\n"
    elif form == "bare":
        out = draw(st.sampled_from(["Use this:\n", "Put it in the recipe:\n", ""])) + cfg
    else:
        out = "Like so:\n" + _indent(cfg, " " * draw(st.integers(1, 6)))
    for _ in range(draw(st.integers(0, 2))):
        wrap = draw(st.sampled_from(["quote", "bullet", "ordered"]))
        if wrap == "quote":
            out = "".join("> " + line for line in out.splitlines(True))
        else:
            marker = "- " if wrap == "bullet" else "1. "
            out = marker + "Step:\n\n" + _indent(out, " " * len(marker))
    return out


@st.composite
def inline(draw) -> str:
    """A one-line config inside a sentence, a table cell or inline HTML."""
    cfg = draw(one_line())
    form = draw(st.sampled_from(["span", "code-tag", "cell-span", "cell-pre", "cell-bare", "heading", "bare-line"]))
    ticks = "`" * draw(st.integers(1, 3))
    span = f"{ticks} {cfg} {ticks}" if ticks != "`" else f"`{cfg}`"
    if form == "span":
        return f"Set {span} and launch.\n"
    if form == "code-tag":
        return f"Set <code>{html.escape(cfg)}</code> and launch.\n"
    if form == "heading":
        return f"## Use {span}\n"
    if form == "bare-line":
        return f"{cfg}\n"
    cell = {"cell-span": span, "cell-pre": f"<pre>{html.escape(cfg)}</pre>", "cell-bare": cfg.replace("|", "\\|")}[form]
    return f"| layout | config |\n|---|---|\n| 8 GPUs | {cell} |\n"


PROSE = st.lists(st.sampled_from([
    "Use fsdp2 with TP inside the node [1].", "**Why**", "结尾。", "- a point", "> a quote", "Note: check the mesh.",
    "| a | b |\n|---|---|\n| 1 | 2 |", "```python\nprint('hi')\n```", "<details><summary>More</summary>\n\nText.\n\n</details>",
]), max_size=3)


@settings(max_examples=80, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(before=PROSE, config=st.one_of(block(), inline()), after=PROSE, sep=st.sampled_from(["\n", "\n\n"]),
       cuts=st.lists(st.integers(1, 40), min_size=1, max_size=8))
def test_the_gate_catches_an_invalid_config_in_any_structure(before, config, after, sep, cuts):
    text = sep.join(before + [config.rstrip("\n")] + after) + "\n"
    assert leaks(text)  # the example holds the invalid config
    out, res = gate_text(text, policy())
    assert not leaks(out), f"{text!r}\n->\n{out}"
    assert res.replaced and not res.marked
    assert "# invalid" not in out and "无效" not in out  # a model's marker is gone; Meshwise marked nothing
    g, pieces, i, k = StreamGate(policy()), [], 0, 0
    while i < len(text):  # streamed in any pieces: the same text, and nothing leaks on the way
        n = cuts[k % len(cuts)]
        pieces.append(g.feed(text[i:i + n]))
        assert not leaks("".join(pieces))
        i, k = i + n, k + 1
    pieces.append(g.close())
    assert "".join(pieces) == out


def test_the_valid_config_in_the_same_structures_is_left_alone():
    good = "distributed: {strategy: fsdp2, tp_size: 2}"
    for text in (f"Set `{good}` and launch.\n", f"| a | b |\n|---|---|\n| x | `{good}` |\n",
                 "<details>\n<summary>C</summary>\n```yaml\ndistributed:\n  tp_size: 2\n```\n</details>\n",
                 "Use:\ndistributed:\n  strategy: fsdp2\n  tp_size: 2\n"):
        out, res = gate_text(text, dataclasses.replace(policy()))
        assert out == text and not res.replaced
