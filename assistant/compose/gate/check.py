"""The YAML gate: every config an answer shows is validated against the user's numbers first.

"Shown" means rendered as code by a Markdown renderer: any fence and info string, tildes, indented code,
HTML `<pre>`, in lists and quotes too (`markdown_blocks`), holding YAML, JSON or TOML with a
`distributed` key at any depth (`config_blocks`). Text from a model (`model_text`) is also searched where
a front end shows config-shaped text without a code block: inline code spans, table cells, HTML such as
`<details>`, bare YAML or JSON lines (`config_text`); and a marker shaped like Meshwise's (`# invalid:`)
is taken out of every line it writes before anything is judged, so the only marks left are Meshwise's.
A valid config is shown as is; an invalid one is replaced by the planner's validated YAML with the
validator's reasons, or removed when there is none; the user's own YAML under diagnosis is quoted back
only marked invalid, by the gate. A one-line prose fragment (a code span or bare line setting a few
keys, `pp_size: 2`, with no `distributed:` mapping) names values of a layout, not a layout: it is judged
completed, over each layout the answer is about (`fragment_bases`) and with the blocks its own sizes
require (`pipeline: {}` for `pp_size > 1`), and stands when one completion passes (`tp_size: 3` on 8 GPUs
fails every one). With `strip_claims`, prose that passes its own verdict ("validated by
Meshwise") is dropped: the verdict is the validator's; with `verdict_note`, so is a sentence whose verdict
on the sizes it names in prose ("tp_size 8 and pp_size 3 runs fine") the validator refutes (prose_verdicts.py).

Works on a stream: complete lines pass through once the block they belong to is settled (a later
block, a blank line, its closing fence), a block holding a config is judged whole. `gate_text` is the
same machine fed the whole text, so streamed and final answers agree.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable

from assistant.compose.gate.claims import drop_claims, has_claim, sentences
from assistant.compose.gate.config_blocks import FoundConfig, find_config, find_prose_config, mark_invalid, strip_model_marker
from assistant.compose.gate.config_text import candidates, first_holding
from assistant.compose.gate.markdown_blocks import code_blocks, parser, settled, source_lines, top_starts
from assistant.validator.report import ValidationReport

_REPEAT_MIN_CHARS = 24  # shorter lines ("- yes", "**Why**") may fairly repeat

# check(body) -> report; raises ValueError (e.g. the validator's UnusableInput) for a non-recipe.
Check = Callable[[str], ValidationReport]


@dataclass
class GateResult:
    """What the gate decided for each config block, in order."""
    shown: list[tuple[str, ValidationReport]] = field(default_factory=list)  # YAML shown and its verdict
    replaced: list[tuple[str, str]] = field(default_factory=list)  # (rejected YAML, reasons)
    exempt: list[str] = field(default_factory=list)  # the user's own YAML, quoted back while diagnosing
    marked: list[str] = field(default_factory=list)  # configs Meshwise showed under its own "invalid" mark
    markers_dropped: int = 0  # lines of model text that carried a marker shaped like Meshwise's
    claims_dropped: int = 0
    verdicts_dropped: int = 0  # model sentences whose verdict on the sizes they name the validator refutes
    echo_dropped: int = 0  # model lines that copied the prompt back or repeated an earlier line


@dataclass
class GatePolicy:
    check: Check
    world_size: int | None
    fallback_yaml: str | None  # the planner's validated YAML, or None when there is none
    fallback_report: ValidationReport | None
    lang: str
    replaced_note: Callable[[int | None, str], str]  # (world, reasons) -> sentence
    removed_note: Callable[[int | None, str], str]
    unparseable: str = "not a readable recipe"
    exempt_yaml: str | None = None  # the pasted YAML under diagnosis may be quoted back (marked when invalid)
    # a later invalid block, once the validated YAML has been shown: a note instead of a second copy
    replaced_again_note: Callable[[int | None, str], str] | None = None
    strip_claims: bool = False  # text from a model: its own verdict sentences are dropped
    # ... except where every verdict behind the answer is a pass (the tools validated it): then a model's
    # "this layout is valid" agrees with the validator and stays
    keep_claims: bool = False
    # text from a model: a line that opens with one of the prompt's section names starts a copy of the
    # prompt, dropped up to the next blank line; a line said before is not said again
    echo: re.Pattern | None = None
    # text from a model: config-shaped text outside code blocks is judged too, and its markers removed
    model_text: bool = False
    # the layouts (recipe mappings) the answer is about: a prose fragment is judged completed over each
    fragment_bases: tuple[dict, ...] = ()
    # text from a model: a sentence whose verdict on the sizes it names the validator does not give is
    # dropped, and this note (layout, world, reasons, it said "works") said in its place (prose_verdicts.py)
    verdict_note: Callable[[str, int | None, str, bool], str] | None = None


@dataclass(frozen=True)
class _Unit:
    """Lines the gate judges as one: every config found on them, and the one it shows if it is kept."""
    start: int
    end: int
    configs: tuple[tuple[str, FoundConfig], ...]  # (the text as written, the config in it)
    code: bool  # a code block holds one of them: a valid one counts as a config shown


def _units(text: str, model_text: bool) -> tuple[list[_Unit], int, int]:
    """The configs in `text` merged into line ranges, where its settled part ends, and where its last
    top-level block starts (the next parse may begin there: nothing later reaches back before it)."""
    tokens = parser(inline=model_text).parse(text)
    lines = source_lines(text)
    found = [(first_holding(lines, b.start, b.end) if b.kind == "html" else b.start, b.end, b.body,
              find_config(b.info, b.body), True) for b in code_blocks(text, tokens)]
    if model_text:
        found += [(c.start, c.end, c.body, find_prose_config(c.body), False) for c in candidates(text, tokens)]
    units: list[list] = []
    for start, end, body, config, code in sorted((f for f in found if f[3] is not None), key=lambda f: f[:2]):
        if units and start < units[-1][1]:
            u = units[-1]
            u[1], u[3] = max(u[1], end), u[3] or code
            if all(c.text != config.text for _, c in u[2]):
                u[2].append((body, config))
        else:
            units.append([start, end, [(body, config)], code])
    ready = settled(tokens, lines, lambda start, end: first_holding(lines, start, end))
    tops = top_starts(tokens)
    return [_Unit(a, b, tuple(c), code) for a, b, c, code in units], ready, tops[-1] if tops else len(lines)


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _same(a: str, b: str) -> bool:
    from assistant.validator.coerce import load_yaml

    try:
        return load_yaml(a) == load_yaml(b)
    except ValueError:
        return False


def _fenced(body: str, info: str = "yaml") -> str:
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{fence}{info}\n{body.rstrip()}\n{fence}\n"


def looks_like_config(info: str, body: str) -> bool:
    return find_config(info, body) is not None


class StreamGate:
    """Feed text deltas; get back the text that is safe to show so far."""

    def __init__(self, policy: GatePolicy):
        self.policy = policy
        self.result = GateResult()
        self._pending = ""  # the current, incomplete line
        self._lines: list[str] = []  # every complete line so far
        self._done = 0  # lines before this one are decided and emitted
        self._base = 0  # the first line of the last top-level block seen: parsing starts there
        self._out: list[str] = []
        self._fallback_shown = False
        self._in_echo = False
        self._said: set[str] = set()

    @property
    def text(self) -> str:
        return "".join(self._out)

    def _take(self, complete: list[str], ended: bool = True) -> None:
        for line in complete:
            line += "\n" if ended else ""
            if self.policy.model_text:
                kept = strip_model_marker(line)
                if kept != line:
                    self.result.markers_dropped += 1
                if kept is None:
                    continue
                line = kept
            self._lines.append(line)

    def feed(self, delta: str) -> str:
        self._pending += delta
        # CommonMark ends a line at \r\n, \n or a bare \r: one form here, so the line numbers the
        # parser reports are ours (a trailing \r waits: its \n may come in the next delta).
        held = "\r" if self._pending.endswith("\r") else ""
        self._pending = self._pending[: len(self._pending) - len(held)].replace("\r\n", "\n").replace("\r", "\n")
        if "\n" not in self._pending:
            self._pending += held
            return ""
        *complete, self._pending = self._pending.split("\n")
        self._pending += held
        self._take(complete)
        return self._emit(self._advance(final=False))

    def close(self, rest: str = "") -> str:
        """The end of the text (`rest`: its last part, if not fed): everything held is judged now."""
        # \r\n first: `rest` was not fed (a fed stream holds at most one trailing \r here)
        self._pending = (self._pending + rest).replace("\r\n", "\n").replace("\r", "\n")
        if "\n" in self._pending:
            *complete, self._pending = self._pending.split("\n")
            self._take(complete)
        if self._pending:
            self._take([self._pending], ended=False)
            self._pending = ""
        return self._emit(self._advance(final=True))

    def _emit(self, out: str) -> str:
        self._out.append(out)
        return out

    def _advance(self, final: bool) -> str:
        lines, i, out, base = self._lines, self._done, [], self._base
        # parsed from the last top-level block on: a stream is not re-read from its start at every line
        found, ready, top = _units("".join(lines[base:]), self.policy.model_text)
        units = [replace(u, start=u.start + base, end=u.end + base) for u in found]
        stop = len(lines) if final else ready + base
        for unit in units:
            if unit.end <= i:
                continue
            if unit.end > stop:  # it may still grow: hold it and everything after it
                stop = min(stop, unit.start)
                break
            out += [self._prose(line) for line in lines[i:unit.start]]
            i = max(i, unit.start)
            out.append(self._judge(unit, "".join(lines[i:unit.end])))
            i = unit.end
        out += [self._prose(line) for line in lines[i:max(i, stop)]]
        self._done = max(i, stop)
        self._base = min(base + top, self._done)
        return "".join(out)

    def _prose(self, line: str) -> str:
        if not self.policy.strip_claims:
            return line
        if self._echoed(line):
            self.result.echo_dropped += 1
            return ""
        kept = line if self.policy.keep_claims else drop_claims(line)
        if kept != line:
            self.result.claims_dropped += 1
        return self._verdicts(kept) if self.policy.verdict_note is not None and kept.strip() else kept

    def _verdicts(self, line: str) -> str:
        """The line without its sentences whose verdict on the sizes they name the validator refutes,
        and the gate's note for each in their place."""
        from assistant.compose.gate.prose_verdicts import disagreement
        from assistant.datafile import dump_yaml

        p = self.policy
        end = line[len(line.rstrip("\n")):]
        kept, notes = [], []
        for s in sentences(line.rstrip("\n")):
            d = disagreement(s, p.world_size, lambda recipe: p.check(dump_yaml(recipe, sort_keys=False)),
                             complete_fragment, p.fragment_bases, before=" ".join(kept))
            if d is None:
                kept.append(s)
                continue
            self.result.verdicts_dropped += 1
            notes.append(f"> {p.verdict_note(d.layout, p.world_size, d.reasons, d.positive)}")
        if not notes:
            return line
        return "".join(f"{x}\n" for x in ([" ".join(kept)] if kept else []) + notes) + ("" if end else "")

    def _echoed(self, line: str) -> bool:
        """A copy of the prompt (a section name opens it, a blank line ends it) or a line said before:
        a 135M model loops on both."""
        said = " ".join(line.split()).lower()
        if not said:
            self._in_echo = False
            return False
        if self._in_echo or (self.policy.echo is not None and self.policy.echo.search(line)):
            self._in_echo = True
            return True
        if len(said) >= _REPEAT_MIN_CHARS:
            if said in self._said:
                return True
            self._said.add(said)
        return False

    def _completes(self, found: FoundConfig) -> bool:
        """A prose fragment that passes once completed over one of the answer's layouts (or alone, with
        the blocks its sizes require)."""
        from assistant.datafile import dump_yaml
        from assistant.validator.coerce import load_yaml

        try:
            data = load_yaml(found.text)
        except ValueError:
            return False
        if not isinstance(data, dict) or "distributed" in data:
            return False
        for base in (*self.policy.fragment_bases, None):
            try:
                report = self.policy.check(dump_yaml(complete_fragment(data, base), sort_keys=False))
            except (ValueError, TypeError):
                continue
            if report.ok:
                return True
        return False

    def _verdict(self, found: FoundConfig) -> tuple[ValidationReport | None, str]:
        try:
            report = self.policy.check(found.text)
            return report, ", ".join(f.code for f in report.errors)
        except ValueError:
            return None, self.policy.unparseable

    def _is_exempt(self, body: str, found: FoundConfig) -> bool:
        p = self.policy
        if p.exempt_yaml is None:
            return False
        if _norm(body) == _norm(p.exempt_yaml):
            return True
        own = find_config("yaml", p.exempt_yaml)
        return own is not None and _same(own.text, found.text)

    def _judge(self, unit: _Unit, original: str) -> str:
        p = self.policy
        judged = [(body, found, *self._verdict(found)) for body, found in unit.configs]
        bad = [(body, found, reasons) for body, found, report, reasons in judged if report is None or not report.ok]
        if not unit.code:  # a one-line fragment in prose that completes to a valid layout names its values
            bad = [b for b in bad if "\n" in b[0].strip() or not self._completes(b[1])]
        if not bad:
            for body, found, report, _ in judged:
                if self._is_exempt(body, found):
                    self.result.exempt.append(body)
                elif unit.code:
                    self.result.shown.append((found.text, report))
            # config-shaped prose that holds no bad config is still prose: echoes and verdict claims go
            return original if unit.code else "".join(self._prose(line) for line in original.splitlines(keepends=True))
        if all(self._is_exempt(body, found) for body, found, _ in bad):
            body, _, reasons = bad[0]
            self.result.exempt.append(body)
            self.result.marked.append(body)  # Meshwise's own mark, added here: a model's were taken out
            return _fenced(mark_invalid(body, reasons, p.lang), "yaml")
        body = bad[0][0]
        reasons = ", ".join(dict.fromkeys(code for _, _, r in bad for code in r.split(", ") if code))
        self.result.replaced.append((body, reasons))
        if p.fallback_yaml and p.fallback_report is not None and p.fallback_report.ok:
            if self._fallback_shown and p.replaced_again_note is not None:
                return f"\n> {p.replaced_again_note(p.world_size, reasons)}\n"
            self._fallback_shown = True
            self.result.shown.append((p.fallback_yaml, p.fallback_report))
            return f"\n> {p.replaced_note(p.world_size, reasons)}\n\n{_fenced(p.fallback_yaml)}"
        return f"\n> {p.removed_note(p.world_size, reasons)}\n"


_TOP_LEVEL = frozenset({"step_scheduler", "model", "recipe", "dataset"})


def complete_fragment(fragment: dict, base: dict | None) -> dict:
    """`fragment`'s keys set on a copy of `base` (a recipe mapping; none: an empty `distributed:`), its
    distributed keys under `distributed:`, mappings merged one level deep; a `pipeline: {}` added when the
    sizes turn PP on and neither gives one."""
    import copy

    recipe = copy.deepcopy(base) if isinstance(base, dict) else {}
    if not isinstance(recipe.get("distributed"), dict):
        recipe["distributed"] = {}
    dist = recipe["distributed"]
    for key, value in fragment.items():
        into = recipe if str(key) in _TOP_LEVEL else dist
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            into[key] = {**into[key], **value}
        else:
            into[key] = value
    pp = dist.get("pp_size")
    if isinstance(pp, int) and not isinstance(pp, bool) and pp > 1 and dist.get("pipeline") is None:
        dist["pipeline"] = {}
    return recipe


def gate_text(text: str, policy: GatePolicy) -> tuple[str, GateResult]:
    g = StreamGate(policy)
    g.close(text)  # a whole text: one parse, not one for the fed lines and another for the end
    return g.text, g.result


def yaml_blocks(text: str) -> list[tuple[str, str]]:
    """(info, body) of every block that renders as code, in order: for tests and front ends."""
    return [(b.info, b.body) for b in code_blocks(text)]


def unchecked_config_or_claim(text: str) -> bool:
    """Retrieved text that shows a config or passes a verdict: front ends mark it as not checked."""
    return has_claim(text) or any(find_config(b.info, b.body) is not None for b in code_blocks(text))
