"""Answers from the kb's own sentences: the sentences inside the retrieved chunks that answer a
question (compose/knowledge/extract.py), and a pasted error explained by the kb section headed by its message.

The fallback of every answer module that has no number, field or plan to state.
"""
from __future__ import annotations

import re

from assistant.compose.answers.base import ComposeInput, Part
from assistant.compose.citations import with_citation
from assistant.compose.knowledge.extract import select_sentences, split_sentences
from assistant.compose.writer import Writer, first_sentence
from assistant.understand.cues import read


def retrieved(w: Writer, inp: ComposeInput, ask=None) -> Part:
    """No field and no known topic: the kb sentences that answer the question, chosen inside the
    retrieved chunks by its identifiers and meaning (compose/knowledge/extract.py), each cited."""
    picked = select_sentences(read(ask, inp.query), w.citer.sources, w.lang) or \
        select_sentences(read(inp.query), w.citer.sources, w.lang)
    items = [with_citation(p.sentence, [w.citer.add(p.hit) + 1]) for p in picked]
    for p in picked:
        w.citer.cited.add(w.citer.add(p.hit) + 1)
    if not items:  # nothing answers it: say what the nearest chunk is about
        h = next(iter(w.citer.sources), None)
        s = first_sentence(h.text) if h is not None else ""
        if s:
            w.citer.cited.add(1)
            items = [with_citation(s, [1])]
    if items:
        w.answer(items[0])
    w.bullets(items[1:])
    return Part()


def explain_error(w: Writer, inp: ComposeInput, error: str) -> bool:
    """A pasted error that no validator rule matches, explained by the kb section headed by its
    message: its first two sentences (where and why it is raised, then the fix); False when no
    retrieved section quotes it."""
    # the kb section headed by the message: among the retrieved chunks in the answer's language, else
    # in the error-messages document itself, else a retrieved one in the other language
    pool = [h for h in w.citer.sources if h.lang == w.lang] + w.citer.chunks_of(_ERRORS_DOC) + list(w.citer.sources)
    hit = next((h for h in pool if any(_quotes_error(t, error) for t in _headings(h))), None)
    sentences = split_sentences(hit.text) if hit is not None else []
    if not sentences:
        return False
    n = w.citer.add(hit) + 1
    w.citer.cited.add(n)
    w.answer(with_citation(w.space.join(s.rstrip() for s in sentences[:2]), [n]))
    return True


_ERRORS_DOC = "error-messages"  # kb/{en,zh}/error-messages.md: one section per message, headed by it


def _headings(hit) -> list[str]:
    """The chunk's heading path and the headings inside its text (the chunker keeps a short section's
    own heading in the text of the chunk it joins)."""
    return [hit.heading] + [line for line in hit.text.splitlines() if line.startswith("#")]


def _quotes_error(heading: str, error: str) -> bool:
    """Whether a chunk's heading quotes the error's message: its words up to the first placeholder
    (`'X'`, `(N)`, `=P`) appear in the error."""
    for quoted in re.findall(r'"([^"]+)"', heading):
        head = re.split(r"\b[A-Z]\b|'X'|\(|\[|=", quoted)[0].strip()
        if len(head) >= 20 and head.lower() in error.lower():
            return True
    return False
