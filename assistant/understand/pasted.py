"""Pasted text sorted into what it is: a config, error output, or the question around them.

A block that parses to a recipe or a `distributed:` mapping is a config; a traceback, an
`AssertionError: ...` line or a log line is error output, even though `AssertionError: x` also parses
as a one-key YAML mapping; everything else is the question. Users paste all three into one message
("this config, this log, why?"), and reading a log as a config gives nonsense such as "unknown FSDP2
option AssertionError".
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.understand.query import Pasted
from assistant.validator import UnusableInput
from assistant.validator.coerce import load_yaml

# Keys that make a mapping a NeMo AutoModel recipe or its distributed section.
_RECIPE_KEYS = frozenset({"distributed", "step_scheduler", "packed_sequence", "model", "dataset", "optimizer",
                          "peft", "checkpoint", "loss_fn", "dataloader", "validation_dataset"})
_DIST_KEYS = frozenset({"strategy", "tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size",
                        "sequence_parallel", "activation_checkpointing", "pipeline", "moe"})

# Any fence: ```lang, ~~~lang, with any info string (`yaml:recipe.yaml`, `text`, `log`).
_FENCE = re.compile(r"(?ms)^[ \t]*(?P<f>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)(?:^[ \t]*(?P=f)[ \t]*$|\Z)")
# Lines that only error output has.
# Launchers prefix every line: "0: [rank2]: ", "[default5]:", "(EngineCore_DP0 pid=3585) ", "node1: ".
_PREFIX = r"^(?:[ \t]*(?:\d{1,4}:|[\w.-]{1,30}:(?=[ \t]*\[)|\[[^\]\n]{1,40}\]:?|\([^)\n]{1,60}\)))*[ \t]*"
# Lines that only error output has.
_ERROR_LINE = re.compile(
    r"Traceback \(most recent call last\)"
    rf"|{_PREFIX}File \"[^\"]+\", line \d+"
    rf"|{_PREFIX}(?:[\w.]+\.)?(?:[A-Z]\w*(?:Error|Exception|Warning)|KeyboardInterrupt|SystemExit)\b[ \t]*(?::|$)"
    r"|^[ \t]*(?:\d{1,4}:[ \t]*)?\[(?:rank|default)[ \t]*\d+\][ \t]*:"
    rf"|{_PREFIX}(?:E\d{{4}}|W\d{{4}}|I\d{{4}})[ \t]+\d"  # glog-style lines of torch / NCCL
    rf"|{_PREFIX}\d{{4}}-\d{{2}}-\d{{2}}[ T]\d{{2}}:\d{{2}}:\d{{2}}"  # timestamped log lines
    rf"|{_PREFIX}(?:ERROR|WARNING|CRITICAL|FATAL)\b[:\s]"
    r"|torch\.distributed\.elastic|ChildFailedError|NCCL (?:error|WARN)|CUDA out of memory|OutOfMemoryError",
    re.M,
)
_LOG_INFO = re.compile(r"^(?:text|txt|log|logs|console|shell|bash|sh|python-traceback|pytb|traceback|output|plain)\b", re.I)
_CODE_INFO = re.compile(r"^(?:py|python|ipython)\b", re.I)
MAX_PASTE_CHARS = 20_000


@dataclass(frozen=True)
class _Block:
    start: int
    end: int
    body: str
    info: str


def is_error_text(text: str) -> bool:
    """A traceback, an exception line or a log line: error output, never a config."""
    return _ERROR_LINE.search(text) is not None


def _config_mapping(body: str) -> dict | None:
    try:
        data = load_yaml(body)
    except UnusableInput:
        return None
    if not isinstance(data, dict) or not data:
        return None
    keys = {str(k) for k in data}
    if keys & _RECIPE_KEYS or keys & _DIST_KEYS:
        return data
    return None


def _kind(body: str, info: str) -> str:
    """config | error | other, for one block of pasted text."""
    if is_error_text(body) or _LOG_INFO.match(info.strip()):
        # A log fence can still hold a config (`text` fences around YAML): the content decides.
        if not is_error_text(body) and _config_mapping(body) is not None:
            return "config"
        return "error" if is_error_text(body) or body.strip() else "other"
    if _CODE_INFO.match(info.strip()):
        return "other"
    return "config" if _config_mapping(body) is not None else "other"


def _fenced(text: str) -> list[_Block]:
    return [_Block(m.start(), m.end(), m.group("body"), m.group("info") or "") for m in _FENCE.finditer(text)]


_BARE_TOP = re.compile(r"^(?:distributed|step_scheduler|packed_sequence)[ \t]*:[ \t]*(?:#.*)?$", re.M)
_YAML_LINE = re.compile(r"^(?:[ \t]+\S.*|[ \t]*[A-Za-z_][\w.\-]*[ \t]*:.*|[ \t]*-[ \t].*|[ \t]*#.*|[ \t]*)$")


def _bare_config(text: str) -> _Block | None:
    """An unfenced recipe pasted into prose: from a top-level recipe key to the first line that is not YAML."""
    m = _BARE_TOP.search(text)
    if not m:
        inline = re.search(r"distributed\s*:\s*\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}", text)
        if inline and _config_mapping(inline.group(0)) is not None:
            return _Block(inline.start(), inline.end(), inline.group(0) + "\n", "")
        return None
    # A recipe may start with other top-level keys just above (`model:` ...): take them too.
    start = m.start()
    lines = text[:start].split("\n")[:-1]
    while lines and re.match(r"^(?:[A-Za-z_][\w.\-]*[ \t]*:.*|[ \t]+\S.*)$", lines[-1]) and not is_error_text(lines[-1]):
        start -= len(lines.pop()) + 1
    kept: list[str] = []
    pos = start
    for i, line in enumerate(text[start:].split("\n")):
        if i > 0 and (not _YAML_LINE.match(line) or is_error_text(line)):
            break
        if i > 0 and line and not line[0].isspace() and ":" not in line and not line.lstrip().startswith(("-", "#")):
            break
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    body = "\n".join(kept) + "\n"
    if _config_mapping(body) is None:
        return None
    end = pos + len("\n".join(kept))
    return _Block(start, end, body, "")


_SENTENCE = re.compile(r"[^.!?。！？]*(?:[.!?]+(?=\s|$)|[。！？]+|$)")
# a sentence of the user's own after an inline error: a question, or words that start prose again
_PROSE_AGAIN = re.compile(r"[?？]|^\W*(?:if|i|we|my|our|what|how|why|is|are|does|do|can|could|should|would|so|but|and|any|"
                          r"please|also|it|this|the\s+(?:recipe|job|run|config|model))\b|[如要假]果|请问|想问|我|是否", re.I)


def _inline_error(line: str, pos: int) -> _Block | None:
    """"... local_batch_size 8. torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB.
    If I drop ...?": error text that starts inside a line of the user's own words; the error runs from
    its marker through the sentences after it, up to the first that is prose again."""
    m = _ERROR_LINE.search(line)
    if m is None:
        return None
    start = m.start()
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] in "._"):
        start -= 1  # "torch.OutOfMemoryError": the module path is part of the error
    if not line[:start].strip():
        return None
    end = start
    for s in _SENTENCE.finditer(line, start):
        if s.start() > start and s.group(0).strip() and _PROSE_AGAIN.search(s.group(0).strip()) \
                and not is_error_text(s.group(0)):
            break
        end = s.end()
        if s.end() >= len(line):
            break
    return _Block(pos + start, pos + end, line[start:end].strip() + "\n", "")


def _error_lines(text: str) -> list[_Block]:
    """Unfenced error output: each run of lines from an error line through its continuation lines."""
    out: list[_Block] = []
    lines = text.split("\n")
    pos = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        inline = _inline_error(line, pos) if is_error_text(line) else None
        if inline is not None:
            out.append(inline)
            pos += len(line) + 1
            i += 1
            continue
        if is_error_text(line):
            start = pos
            j = i
            end = pos + len(line)
            # Continuation: indented frames, `^^^^` markers, further error or log lines.
            while j + 1 < len(lines) and (is_error_text(lines[j + 1]) or re.match(r"^\s+\S|^\s*\^+\s*$", lines[j + 1])):
                j += 1
                end += 1 + len(lines[j])
            out.append(_Block(start, end, text[start:end] + "\n", ""))
            for k in range(i, j + 1):
                pos += len(lines[k]) + 1
            i = j + 1
            continue
        pos += len(line) + 1
        i += 1
    return out


def split_pasted(text: str) -> Pasted:
    """(configs, error output, the question's own words), in the order they were pasted."""
    text = (text or "")[:MAX_PASTE_CHARS]
    configs: list[tuple[int, str]] = []
    errors: list[tuple[int, str]] = []
    cut: list[tuple[int, int]] = []
    for b in _fenced(text):
        kind = _kind(b.body, b.info)
        if kind == "other":
            continue  # a Python snippet or plain text in a fence stays part of the question
        (configs if kind == "config" else errors).append((b.start, b.body.rstrip("\n") + "\n"))
        cut.append((b.start, b.end))
    rest = _blanked(text, cut)
    bare = _bare_config(rest)
    if bare is not None:
        configs.append((bare.start, bare.body))
        rest = _blanked(rest, [(bare.start, bare.end)])
    for b in _error_lines(rest):
        errors.append((b.start, b.body))
        cut.append((b.start, b.end))
    rest = _blanked(rest, [(b.start, b.end) for b in _error_lines(rest)])
    lines = [re.sub(r"[ \t]{2,}", " ", ln).strip() for ln in rest.split("\n")]
    prose = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return Pasted(configs=tuple(c for _, c in sorted(configs)), errors=tuple(e for _, e in sorted(errors)), prose=prose)


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    # Same length, so the offsets of later blocks stay valid.
    chars = list(text)
    for a, b in spans:
        for k in range(a, min(b, len(chars))):
            if chars[k] != "\n":
                chars[k] = " "
    return "".join(chars)
