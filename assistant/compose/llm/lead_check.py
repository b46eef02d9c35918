"""Does a model's answer open with Meshwise's direct answer? A cheap check on its first lines.

Per ask: a verdict must be stated with the same polarity (lead_words.yaml), a quantity with the
computed number (a mesh with its shape), a location with the file. The leads of the asks an answer
does not state are what the engine puts before it, so the user always reads the direct answer first.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from assistant.compose.llm.ask_notes import AskNote
from assistant.datafile import read_yaml

HEAD_CHARS = 300  # "the first lines" of one ask's answer: about two sentences
_POLARITY_WITHIN = 40  # a lead states a verdict when its polarity word opens it
_VERDICT_LINES = 2  # an answer states one in its first two lines, not after a restated situation
_NOTICE = re.compile(r"^\s*(?:_.*_|>.*)?\s*$")  # blank, an italic notice line, a gate note
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?![0-9]|\.[0-9])")
_TUPLE = re.compile(r"\(\s*\d+(?:\s*,\s*\d+)+\s*\)")
_IDENT = re.compile(r"[A-Za-z]\w*_\w+")  # dp_size, ep_shard: the name a quantity line gives its result
_VERDICT_KINDS = frozenset({"verdict", "diagnosis", "quantity"})
_SHAPES = frozenset({"mesh_shape", "moe_mesh_shape"})
_NEAR = 30  # characters between a quantity's name and its number
_ASKED = r"(?!\s*(?:[?？吗么]|不))"
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|「[^」\n]*」')  # the question quoted back is not an answer
_PATH = re.compile(r"`([^`\s]+(?:/[^`\s]+|\.py))`")


@lru_cache(maxsize=1)
def _polarity_pattern() -> re.Pattern:
    data = read_yaml(Path(__file__).with_name("lead_words.yaml"))

    def alt(words: Sequence[str]) -> str:
        # "这样能跑吗", "does it work?": a word asked about is no verdict
        return "|".join((rf"(?<![A-Za-z]){w}(?![A-Za-z])" if w.isascii() else w) + _ASKED for w in words)

    return re.compile(rf"(?P<neutral>{alt(data['neutral'])})|(?P<valid>{alt(data['valid'])})"
                      rf"|(?P<invalid>{alt(data['invalid'])})", re.I)


def polarity(text: str, within: int | None = None) -> str | None:
    """"valid" or "invalid": the first verdict word of `text` (only when it opens the text, with `within`);
    a neutral phrase ("it won't hang") is read past."""
    m = next((m for m in _polarity_pattern().finditer(text) if m.lastgroup != "neutral"), None)
    if m is None or (within is not None and m.start() > within):
        return None
    return m.lastgroup


def head(text: str, limit: int = HEAD_CHARS) -> str:
    """An answer's opening, without notice lines (`_..._`) and gate notes (`> ...`)."""
    lines = text.strip().splitlines()
    while lines and _NOTICE.match(lines[0]):
        lines.pop(0)
    return "\n".join(lines)[:limit]


def _leading_name(line: str) -> str | None:
    """The name a quantity line gives its result ("dp_size" in "dp_size = 8: ..."), if any."""
    m = _NUMBER.search(line)
    names = _IDENT.findall(line[:m.start()]) if m else []
    return names[-1] if names else None


def _is_shape(line: str) -> bool:
    m = _NUMBER.search(line)
    return m is not None and any(t.start() <= m.start() < t.end() for t in _TUPLE.finditer(line))


def _number_pattern(line: str) -> re.Pattern | None:
    """The result a quantity line states first: its first number, or the whole shape of a mesh; near
    the quantity's name when the line names one before it ("ep_shard = 4" is not the 4 of tp_size 4)."""
    m = _NUMBER.search(line)
    if m is None:
        return None
    shape = next((t for t in _TUPLE.finditer(line) if t.start() <= m.start() < t.end()), None)
    if shape is not None:
        return re.compile(r"\D{1,4}".join(re.findall(r"\d+", shape.group(0))))
    number = rf"(?<![A-Za-z0-9_.]){re.escape(m.group(0))}(?![0-9]|\.[0-9])"
    name = _leading_name(line)
    if name is None:
        return re.compile(number)
    # the name as the answer may write it: `dp_size`, "dp", "ep shard"
    stem = [rf"(?<![A-Za-z_]){re.escape(name[:-5])}(?![A-Za-z_])"] if name.endswith("_size") else []
    ident = "(?:" + "|".join([re.escape(name), re.escape(name.replace("_", " ")), *stem]) + ")"
    return re.compile(rf"{ident}[^\n]{{0,{_NEAR}}}?{number}|{number}[^\n]{{0,{_NEAR}}}?{ident}", re.I)


def _asked_line(note: AskNote) -> str | None:
    """The lead line that gives the asked quantity: the one named after the target, else the first
    unnamed result ("Gradient accumulation = 4"), else the first; the mesh only when it is asked."""
    lines = [s for s in note.leads if _NUMBER.search(s) and (note.target in _SHAPES or not _is_shape(s))
             and polarity(s, within=_POLARITY_WITHIN) is None]
    named = [s for s in lines if _leading_name(s) == note.target]
    unnamed = [s for s in lines if _leading_name(s) is None]
    return next(iter(named or unnamed or lines), None)


def _first_lines(opening: str, n: int) -> str:
    """An opening's first `n` non-blank lines, without the question quoted back."""
    return _QUOTED.sub("", "\n".join([line for line in opening.splitlines() if line.strip()][:n]))


def states(note: AskNote, opening: str, verdict_lines: int = _VERDICT_LINES) -> bool:
    """Whether `opening` (an answer's first lines) gives this ask's computed answer; a verdict within
    its first `verdict_lines` lines."""
    asked = _asked_line(note) if note.kind == "quantity" else None
    first_lines = _first_lines(opening, verdict_lines)
    for lead in note.leads:
        want = polarity(lead, within=_POLARITY_WITHIN) if note.kind in _VERDICT_KINDS else None
        if want is not None:  # "No: ..." (a quantity of a layout that fails is its verdict)
            if polarity(first_lines) != want:
                return False
        elif lead == asked:
            pat = _number_pattern(lead)
            if pat is not None and not pat.search(opening):
                return False
        elif note.kind == "location":
            m = _PATH.search(lead)
            if m is not None and m.group(1).rsplit("/", 1)[-1] not in opening:
                return False
    return True


def _windows(notes: Sequence[AskNote]) -> list[tuple[int, int]]:
    """Where each ask's answer is due: (characters, lines) of the opening, after the answers to the
    asks before it (a verdict asked second comes after the first ask's numbers)."""
    out, chars, lines = [], 0, 0
    for note in notes:
        out.append((chars + HEAD_CHARS, lines + _VERDICT_LINES))
        chars += sum(len(s) + 1 for s in note.leads)
        lines += len(note.leads)
    return out


def opening_chars(notes: Sequence[AskNote]) -> int:
    """How much of an answer the check reads: the window of its last ask."""
    return max((c for c, _ in _windows(notes)), default=HEAD_CHARS)


def missing_leads(text: str, notes: Sequence[AskNote]) -> list[str]:
    """Meshwise's lead sentences for the asks whose answer `text` does not open with, in ask order."""
    opening = head(text, limit=opening_chars(notes))
    out: list[str] = []
    for note, (chars, lines) in zip(notes, _windows(notes)):
        if not states(note, opening[:chars], lines):
            out += [s for s in note.leads if s not in out]
    return out


def contradicted_leads(text: str, notes: Sequence[AskNote]) -> list[str]:
    """Meshwise's verdict leads that `text` contradicts (the opposite polarity where the verdict is due);
    an ask it answers otherwise, or leaves for later, is the model's to word."""
    opening = head(text, limit=opening_chars(notes))
    out: list[str] = []
    for note, (chars, lines) in zip(notes, _windows(notes)):
        if note.kind not in {"verdict", "diagnosis"}:
            continue
        said = polarity(_first_lines(opening[:chars], lines))
        for lead in note.leads:
            want = polarity(lead, within=_POLARITY_WITHIN)
            if want is not None and said is not None and said != want:
                out += [s for s in note.leads if s not in out]
                break
    return out


def verdict_due(text: str, notes: Sequence[AskNote], want: str) -> bool:
    """Whether a tool's verdict (`want`: "valid" / "invalid") on the user's layout must be put before
    `text`: where the first verdict or diagnosis ask is answered, the opening says the opposite, or a
    verdict ask gets no verdict at all. An advice ask ("is it worth it?") is the model's to answer: a
    layout that starts may still be a bad idea."""
    opening = head(text, limit=opening_chars(notes))
    for note, (chars, lines) in zip(notes, _windows(notes)):
        if note.kind not in {"verdict", "diagnosis"}:
            continue
        if note.target == "advice":
            return False
        said = polarity(_first_lines(opening[:chars], lines))
        return said != want if said is not None else note.kind == "verdict"
    return False


class LeadFirst:
    """On a stream: holds back the answer's opening until it can be checked, then lets it through
    behind Meshwise's leads for the asks it does not state."""

    def __init__(self, notes: Sequence[AskNote]):
        self.notes = tuple(notes)
        self.prefix = ""  # what was put before the model's text
        self._held: list[str] = []
        self._decided = False
        self._need = opening_chars(self.notes)

    def feed(self, text: str) -> str:
        if self._decided:
            return text
        self._held.append(text)
        held = "".join(self._held)
        return self._decide(held) if len(head(held, limit=self._need)) >= self._need else ""

    def close(self) -> str:
        return "" if self._decided else self._decide("".join(self._held))

    def _decide(self, held: str) -> str:
        self._decided = True
        self._held = []
        missing = missing_leads(held, self.notes)
        self.prefix = "\n".join(missing) + "\n\n" if missing else ""
        return self.prefix + held
