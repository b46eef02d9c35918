"""What one clause (or the whole question) says, as typed flags: the cues compose/ decides by, read
here so that compose/ matches no pattern on the question's text (issue 18). compose/ asks
`read(ask).yes_no`, never `_YES_NO.search(ask.text)`.

A Reading is keyed by its text and each flag is read on first use: planned.py builds asks of its own
when it reconciles them, and a flag read late, on the same text, is the same answer.
The patterns are the exact ones compose/ held before they moved (answers identical, benchmarks/
answers_diff.py), kept in cues.yaml `patterns` (the facts' cues in `fact_cues`); the ones asks.py owns (`_WHAT_HAPPENS`, `_CONDITION`, `_capability`) are read
through it, not copied.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from assistant.datafile import read_yaml
from assistant.understand.asks import _CONDITION, _WHAT_HAPPENS, SOFT_WRAP, _capability, _kinds_in, cue_kinds, load_asks, quoted_error
from assistant.understand.claims import Claim
from assistant.understand.field_question import FieldQuestion
from assistant.understand.off_topic import is_off_topic, names_the_domain, neighbour_topic
from assistant.understand.params import extract_params, history_spans, mask_formulas, normalize
from assistant.understand.fact_cues import FactRoles, cued_facts, fact_cue_keys, fact_roles  # noqa: F401 (re-exported)
from assistant.understand.query import Params
from assistant.understand.question_terms import QuestionTerms
from assistant.understand.scale import find_scale
from assistant.understand.stated import pipeline_block_stated
from assistant.understand.wishes import wished_values
from assistant.validator.fields import FieldRef, field_table
from assistant.validator.upstream_errors import match_upstream_error

_CUES = Path(__file__).with_name("cues.yaml")


@lru_cache(maxsize=1)
def _patterns() -> dict[str, str]:
    return {str(k): str(v) for k, v in read_yaml(_CUES)["patterns"].items()}


def _pattern(name: str) -> re.Pattern[str]:
    """A cue pattern of cues.yaml `patterns` (the words a flag is read from; the reading is code here)."""
    return re.compile(_patterns()[name], re.I)


# The word cues of the flags below are data (cues.yaml `patterns`); the patterns of the text's own
# structure (words, sentences, quotes, two sizes compared) stay here with the code that reads them.
_WORRY = _pattern("worry")
_YES_NO = _pattern("yes_no")
_CHANGE_ASKED = _pattern("change_asked")
_REQUEST_YAML = _pattern("request_yaml")
_NEEDS = _pattern("needs")
_WORTH = _pattern("worth")
_FIX_BY_SETTING = _pattern("fix_by_setting")
_MECHANISM = _pattern("mechanism")
_REQUEST = _pattern("request")
_YAML_AS_PLACE = _pattern("yaml_as_place")
_STRATEGY_WORD = _pattern("strategy_word")
_LAYOUT_WISH = _pattern("layout_wish")
_WHY = _pattern("why")
_DEFINITION = _pattern("definition")
_STRATEGY_ASKED = _pattern("strategy_asked")
_TOGETHER = _pattern("together")
_POSSIBLE = _pattern("possible")
_LAYERS_STATED = _pattern("layers_stated")
_STAGE_RATIO = _pattern("stage_ratio")
INTERLEAVED = _pattern("interleaved")
_BF16 = _pattern("bf16")
_NO_PIPELINE_BLOCK = _pattern("no_pipeline_block")
_WORD = re.compile(r"(?<![A-Za-z0-9_])_?[A-Za-z][A-Za-z0-9_]{3,}(?![A-Za-z0-9_])")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")  # MeshContext, FSDP2Config; not GPUs or H100s
_SIZES = ("tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size")
# a text's words for overlap tests: identifiers and English words of 3+ letters, and Chinese character
# pairs (Chinese has no spaces; a pair is the smallest unit that still means something)
_TEXT_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{2,}|[\u4e00-\u9fff]+")


def words(text: str) -> frozenset[str]:
    """The words of any text (an answer's sentence as well as a clause), lower case."""
    out: set[str] = set()
    for m in _TEXT_WORD.finditer((text or "").lower()):
        w = m.group(0).strip(".")
        if "\u4e00" <= w[0] <= "\u9fff":
            out.update(w[i:i + 2] for i in range(len(w) - 1))
        elif len(w) >= 3:
            out.add(w)
    return frozenset(out)


# a sentence ends at its punctuation or at a line break, unless the line is soft-wrapped ("our other
# configs keep a\npipeline: block with pp_size 1"): asks.SOFT_WRAP, the rule clauses are cut by
_SENTENCE_END = re.compile(r"[.!?。！？]\s*|\n\s*")
_BACK_REFERENCE = _pattern("back_reference")
_SENTENCE = re.compile(r"[^.?!。？！]+[.?!。？！]?")
_QUOTED_MESSAGE = re.compile(r"[\"'“‘「]([^\"'”’」\n]{6,200})[\"'”’」]")

# "tp 从 1 改成 2", "going from pp 2 to pp 4", "ep 4 vs 8": two values of one size, compared
_KEY = r"(?P<key>tp|pp|cp|ep|dp_replicate)(?:_size)?"
_TO = r"(?:改成|改为|变成|换成|调到|调成|增加到|加到|升到|降到|到|to|->|→|=>|vs\.?|versus|还是|or)"
_VALUE = r"\s*(?:=|:)?\s*"
_COMPARED = (
    re.compile(rf"(?<![a-z_]){_KEY}{_VALUE}(?:从|from)\s*(?P<a>\d+)\s*{_TO}\s*(?:(?P=key)(?:_size)?{_VALUE})?(?P<b>\d+)", re.I),
    re.compile(rf"(?:从|from)\s*{_KEY}{_VALUE}(?P<a>\d+)\s*{_TO}\s*(?:(?P=key)(?:_size)?{_VALUE})?(?P<b>\d+)", re.I),
    re.compile(rf"(?<![a-z_]){_KEY}{_VALUE}(?P<a>\d+)\s*{_TO}\s*(?:(?P=key)(?:_size)?{_VALUE})?(?P<b>\d+)", re.I),
)
_NOT_A_SIZE = _pattern("not_a_size")


def compared_sizes(text: str) -> tuple[str, int, int] | None:
    """("tp_size", 1, 2) when the question compares two values of one size; None otherwise."""
    for pat in _COMPARED:
        for m in pat.finditer(text):
            a, b = int(m.group("a")), int(m.group("b"))
            if a != b and a >= 1 and b >= 1 and not _NOT_A_SIZE.match(text, m.end()):
                return f"{m.group('key').lower()}_size", a, b
    return None


class Reading:
    """The flags of one text. Built only by `read`, `read_prose` and `read_sentence` (cached by text)."""

    def __init__(self, text: str):
        self._text = text

    # -- what is asked about the run
    @cached_property
    def what_happens(self) -> bool:
        """"what happens if ...", "会怎样": what the run does, not only whether it starts."""
        return _WHAT_HAPPENS.search(self._text) is not None

    @cached_property
    def worry(self) -> bool:
        """"will it hang?", "会 OOM 吗": a worry about run time."""
        return _WORRY.search(self._text) is not None

    @cached_property
    def memory_worry(self) -> bool:
        """asks.yaml's memory quantity cue: "会爆显存吗", "will 70b fit"."""
        return dict(load_asks().quantity_targets)["memory"].search(self._text) is not None

    @cached_property
    def yes_no(self) -> bool:
        return _YES_NO.search(self._text) is not None

    @cached_property
    def back_reference(self) -> bool:
        """"Do those fail too?", "那些也会挂吗": the clause points back at what the sentence before describes."""
        return _BACK_REFERENCE.search(self._text) is not None

    @cached_property
    def together(self) -> bool:
        """Several features asked about in one layout ("TP + CP at the same time")."""
        return _TOGETHER.search(self._text) is not None

    @cached_property
    def possible(self) -> bool:
        """Whether something can be done at all ("is it possible", "支持吗")."""
        return _POSSIBLE.search(self._text) is not None

    @cached_property
    def last_part_yes_no(self) -> bool:
        """The part after the last comma is a yes/no question ("if I switch to ddp, can I keep X?")."""
        return _YES_NO.search(re.split(r"[,，]\s*", self._text.strip())[-1]) is not None

    @cached_property
    def condition(self) -> bool:
        """The clause opens with a condition ("if I switch strategy to ddp, ...")."""
        return _CONDITION.match(self._text) is not None

    @cached_property
    def capability(self) -> bool:
        """What a strategy or feature supports, no numbers, no "it" (asks._capability)."""
        return _capability(self._text)

    @cached_property
    def change_asked(self) -> bool:
        return _CHANGE_ASKED.search(self._text) is not None

    @cached_property
    def requests_yaml(self) -> bool:
        return _REQUEST_YAML.search(self._text) is not None

    @cached_property
    def needs(self) -> bool:
        return _NEEDS.search(self._text) is not None

    @cached_property
    def worth(self) -> bool:
        return _WORTH.search(self._text) is not None

    @cached_property
    def fix_by_setting(self) -> bool:
        """"Does setting activation_checkpointing: true fix this?": what a setting does to a failure."""
        return _FIX_BY_SETTING.search(self._text) is not None

    @cached_property
    def mechanism(self) -> bool:
        return _MECHANISM.search(self._text) is not None

    @cached_property
    def request(self) -> bool:
        """Asks or requests something at all (a question mark, a question or request word)."""
        return _REQUEST.search(self._text) is not None

    @cached_property
    def yaml_as_place(self) -> bool:
        return _YAML_AS_PLACE.search(self._text) is not None

    @cached_property
    def strategy_word(self) -> bool:
        return _STRATEGY_WORD.search(self._text) is not None

    @cached_property
    def layout_wish(self) -> bool:
        return _LAYOUT_WISH.search(self._text) is not None

    @cached_property
    def why(self) -> bool:
        return _WHY.search(self._text) is not None

    @cached_property
    def definition(self) -> bool:
        """"what is ep_shard?", "什么是 HSDP": a definition asked."""
        return _DEFINITION.search(self._text) is not None

    # -- what it names
    @cached_property
    def quantity_targets(self) -> tuple[str, ...]:
        """asks.yaml's quantity targets whose cue the text holds, in the table's order."""
        return tuple(name for name, pat in load_asks().quantity_targets if pat.search(self._text))

    @cached_property
    def layers_stated(self) -> int | None:
        """A decoder layer count the text states ("80 层", "80 decoder layers")."""
        m = _LAYERS_STATED.search(normalize(self._text))
        return int(m.group(1)) if m else None

    @cached_property
    def stage_ratio(self) -> int:
        """"4x as many microbatches as stages": the ratio asked for; 0 without one."""
        m = _STAGE_RATIO.search(normalize(self._text))
        return int(m.group(1) or m.group(2)) if m else 0

    @cached_property
    def interleaved(self) -> bool:
        return INTERLEAVED.search(self._text) is not None

    @cached_property
    def bf16(self) -> bool:
        return _BF16.search(self._text) is not None

    @cached_property
    def no_pipeline_block(self) -> bool:
        """"pp_size 2, no pipeline block written", "没写 pipeline 段"."""
        return _NO_PIPELINE_BLOCK.search(self._text) is not None

    @cached_property
    def identifiers(self) -> frozenset[str]:
        """snake_case and CamelCase names, lower case: `global_batch_size`, `_pp_plan`, `FSDP2Config`."""
        return frozenset(t.lower() for t in _WORD.findall(self._text) if "_" in t or _CAMEL.search(t))

    @cached_property
    def strategy_asked(self) -> bool:
        return _STRATEGY_ASKED.search(self._text) is not None

    @cached_property
    def compared_sizes(self) -> tuple[str, int, int] | None:
        """("tp_size", 1, 2): two values of one size compared."""
        return compared_sizes(self._text)

    @cached_property
    def size_choice(self) -> str | None:
        """"ep 设多少": the size the size-choice cue names (`ep_size`), "" when it names none, None
        without the cue."""
        key = dict(load_asks().quantity_targets)["size_choice"].search(self._text)
        if key is None:
            return None
        return next((f"{k}_size" for k in ("tp", "pp", "cp", "ep") if re.search(rf"(?<![a-z_]){k}", key.group(0), re.I)), "")

    @cached_property
    def kinds(self) -> tuple[str, ...]:
        """The ask kinds asks.yaml's cues read in the text, in order."""
        return tuple(k for _, k in _kinds_in(self._text))

    @cached_property
    def cue_kinds(self) -> tuple[str, ...]:
        """The same, an aside and a quoted message taken out (asks.cue_kinds)."""
        return tuple(k for _, k in cue_kinds(self._text))

    @cached_property
    def quoted_error(self) -> str | None:
        return quoted_error(self._text)

    @cached_property
    def upstream_error(self) -> bool:
        """An upstream error message occurs in the text."""
        return bool(match_upstream_error(self._text))

    @cached_property
    def scale(self) -> bool:
        """A change of cluster size ("go from 1 node to 4")."""
        return find_scale(self._text)[1] is not None

    @cached_property
    def params(self) -> Params:
        return extract_params(self._text)

    @cached_property
    def params_normalized(self) -> Params:
        """The params of the text normalised first (NFKC, spelling) as the question's own are."""
        return extract_params(normalize(self._text))

    @cached_property
    def story_params(self) -> tuple[Params, ...]:
        """The params of each earlier run the text tells about ("之前 ... tp 2"), in order."""
        prose = normalize(self._text)
        return tuple(extract_params(prose[a:b]) for a, b in history_spans(prose))

    @cached_property
    def quoted_messages(self) -> tuple[str, ...]:
        """Each quoted message ("which file raises 'must be >= pp_size'?"), lower case, spaces collapsed."""
        return tuple(re.sub(r"\s+", " ", q.lower()) for q in _QUOTED_MESSAGE.findall(self._text))

    @cached_property
    def words(self) -> frozenset[str]:
        """The clause's words (`words`): what compose/budget.py matches a supporting sentence against."""
        return words(self._text)

    @cached_property
    def fields(self) -> tuple[FieldRef, ...]:
        """The field rows the text names, in order of first mention."""
        return tuple(field_table().mentioned(self._text))

    @cached_property
    def named_sizes(self) -> tuple[str, ...]:
        """The size keys a one-line clause (under 200 characters) names; () for a longer text."""
        t = self._text
        if not t or "\n" in t or len(t) >= 200:
            return ()
        return tuple(r.key for r in self.fields if r.key in _SIZES)

    @cached_property
    def pipeline_block(self) -> str | None:
        """"absent", "present" or None: the pipeline block stated left out or written."""
        return pipeline_block_stated(self._text) if self._text else None

    @cached_property
    def wished(self) -> tuple[tuple[str, Any], ...]:
        """(key below `distributed:`, value) the text wishes a config to have: "param bf16", "把 AC 打开"."""
        return wished_values(self._text)

    @cached_property
    def cued_facts(self) -> tuple[str, ...]:
        """The facts whose cues (cues.yaml fact_cues) the text holds, in the table's order; a cue "a + b"
        needs every part."""
        return cued_facts(self._text)

    @property
    def text_given(self) -> bool:
        """The text holds more than white space."""
        return bool(self._text.strip())

    @cached_property
    def terms(self) -> QuestionTerms:
        """The text as the extractive answer weighs it (question_terms.py): terms, identifiers, values."""
        return QuestionTerms(self._text)

    @cached_property
    def claim(self) -> Claim:
        """What the text claims (claims.py): a claim made at all, the claims of claims.yaml, a default."""
        return Claim(self._text)

    @cached_property
    def field_question(self) -> FieldQuestion:
        """What the text asks about the fields it names (field_question.py): kinds, values, sizes."""
        return FieldQuestion(self._text)

    @cached_property
    def neighbour_topic(self) -> str | None:
        """The neighbouring topic the text is about ("slurm", "checkpoints", "peft"; off_topic.yaml)."""
        return neighbour_topic(self._text)

    @cached_property
    def off_topic(self) -> bool:
        """A poem, the weather, a restaurant: not about distributed training at all."""
        return is_off_topic(self._text)

    @cached_property
    def names_domain(self) -> bool:
        """Distributed training named (sizes, strategies, GPUs, sharding ...)."""
        return names_the_domain(self._text)

    def says(self, word: str) -> bool:
        """The word occurs in the text as written (a finding's key named in the clause)."""
        return word in self._text

    def says_any_case(self, word: str) -> bool:
        """The word occurs in the text in any case (a fact's term named in the question); a name inside a
        formula, "(dp_size × cp_size) % ep_size", is not named."""
        return word.lower() in self._lower

    @cached_property
    def _lower(self) -> str:
        return mask_formulas(self._text).lower()


@lru_cache(maxsize=4096)
def _reading(text: str) -> Reading:
    return Reading(text)


def reading_of(text: str) -> Reading:
    """The reading of a text built from the question (an ask's clause joined to it)."""
    return _reading(text)


def read_with(query, asked=None) -> Reading:
    """The reading of the question with an ask's clause joined to it ("a pipline block" read as
    "pipeline" either way): what the question and the clause that asks say together."""
    clause = getattr(asked, "text", "") if asked is not None else ""
    return _reading(f"{query.text} {clause}")


def read(said, fallback=None) -> Reading:
    """The reading of an ask's clause or a query's question; an ask with no text is read as
    `fallback`'s (the question)."""
    text = getattr(said, "text", "") or (getattr(fallback, "text", "") if fallback is not None else "")
    return _reading(text)


def read_prose(query) -> Reading:
    """The reading of the question's own prose (what was pasted taken out)."""
    return _reading(query.situation.pasted.prose)


def _loose(text: str) -> str:
    return re.sub(r"[\s:：,，?？。.!！]+", " ", text).strip().lower()


def read_unclaimed(query, asks) -> Reading:
    """The reading of the question without the clauses of `asks` (clauses are normalised: compared
    loosely, lower case, punctuation and spaces as one space): what no ask of them took."""
    rest = _loose(query.text)
    for a in asks:
        if a.text:  # an ask with no clause of its own takes nothing away
            rest = rest.replace(_loose(a.text), " ")
    return _reading(rest)


def sentence_of(question: str, clause: str, back: int = 0) -> str:
    """The sentence an ask's clause stands in: "别的配置里留着 pipeline: 段但 pp_size 是 1，那些也会挂吗" is
    what "那些也会挂吗" is asked about (the clause alone states none of it); `back` sentences before it too."""
    at = question.find(clause)
    if at < 0:
        return clause
    wraps = {m.start() + m.group(0).index("\n") for m in SOFT_WRAP.finditer(question)}
    starts = [m.end() for m in _SENTENCE_END.finditer(question, 0, at)
              if not (m.group(0)[0] == "\n" and m.start() in wraps)]
    start = starts[-1 - back] if len(starts) > back else 0
    return question[start:at + len(clause)]


def read_sentence(query, ask, back: int = 0) -> Reading:
    """The reading of the sentence the ask's clause stands in (the question when the ask has no text),
    with `back` sentences before it."""
    clause = getattr(ask, "text", "") or query.text
    return _reading(sentence_of(query.text, clause, back))


def asking_sentence(query, ask) -> Reading | None:
    """The sentence of the (normalised) question the ask's clause ends in: a clause can begin in the
    story before it. None when no sentence holds the clause's last 40 characters."""
    core = getattr(ask, "text", "").strip(" ?？.。")[-40:]
    sentence = next((m.group(0) for m in _SENTENCE.finditer(normalize(query.text)) if core and core in m.group(0)), None)
    return None if sentence is None else _reading(sentence)


def same_clause(ask, other) -> bool:
    """One ask's clause is the other's or holds it ("what are dp_size and ep_shard?": two asks, one clause)."""
    a, b = getattr(ask, "text", ""), getattr(other, "text", "")
    return a == b or b in a or a in b


def is_whole_question(ask, query) -> bool:
    """The ask's clause is the whole question."""
    return getattr(ask, "text", "").strip() == query.text.strip()
