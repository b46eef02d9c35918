"""What the ask model reads of one clause besides its sentence embeddings: the rule cues, as 0/1
features. The same function serves training (train_asks.py) and query time (ask_model.py), so the
stored model and the reader can never see different features for one clause.
"""
from __future__ import annotations

import re
import zlib

import numpy as np

from assistant.understand.asks import (
    GOOD_IDEA, _ASKING_WORD, _CONDITION, _INSTEAD, _QUESTION_FORM, _WHAT_HAPPENS, _capability, _kinds_in,
    _out_of_scope, _quantity_targets, load_asks, quoted_error,
)
from assistant.understand.gibberish import looks_like_gibberish
from assistant.validator.fields import field_table

# The labels a clause can have: the answer registry's kinds, plus `context` (a statement that asks
# nothing: "we have 2 nodes of 8 H100"). `unknown` is never a label: it is what the reader says when
# the model is not sure.
LABELS: tuple[str, ...] = ("verdict", "quantity", "fact", "location", "recommendation", "config", "diagnosis",
                           "out_of_scope", "nonsense", "context")

_CJK = re.compile(r"[\u3400-\u9fff]")
_DIGIT = re.compile(r"\d")
_EXTREME = re.compile(r"\b(?:largest|biggest|maximum|max|most|upper\s+bound|smallest|minimum|min|lowest|least|fewest)\b"
                      r"|最大|最多|上限|最小|最少|至少|下限", re.I)
_DEFAULT = re.compile(r"\bdefaults?\b|\{\s*\}|默认|空着|不写", re.I)
_NEGATION = re.compile(r"\b(?:can'?t|cannot|don'?t|doesn'?t|won'?t|not|no)\b|不能|不行|没法|无法|不要|不用", re.I)


# The clause's own words, hashed: the particles and short turns that make a clause ask or state in the
# user's wording ("…吧", "还是", ", right", "you know") weigh on their own, not only through a sentence
# embedding that blurs them. Word and digit runs, single CJK characters and question marks; their
# unigrams, bigrams and CJK trigrams, each set at crc32 % NGRAM_DIM (stable across runs and machines).
# Measured (issue 18, 3555 clauses, USE + rules, C 0.03): cross-validated 0.845 without, 0.842 with;
# tuning cases' decisions a refit without a tenth of the paraphrases changes, 5.3 without, 0.7 with.
NGRAM_DIM = 1024
_TOKEN = re.compile(r"[a-z_]+|\d+|[\u3400-\u9fff]|[?？]")


def _grams(clause: str) -> set[str]:
    toks = ["<s>", *_TOKEN.findall(clause.lower()), "</s>"]
    out = set(toks)
    out.update(f"{a} {b}" for a, b in zip(toks, toks[1:]))
    out.update(f"{a} {b} {c}" for a, b, c in zip(toks, toks[1:], toks[2:]) if len(a) == len(b) == len(c) == 1)
    return out


def ngram_features(clause: str) -> np.ndarray:
    """0/1 per hashed n-gram bucket of the clause (NGRAM_DIM of them)."""
    row = np.zeros(NGRAM_DIM, dtype=np.float32)
    row[[zlib.crc32(g.encode("utf-8")) % NGRAM_DIM for g in _grams(clause)]] = 1.0
    return row


def rule_feature_names() -> tuple[str, ...]:
    kinds = tuple(f"cue_{k}" for k in load_asks().kinds)
    return kinds + ("quantity_target", "field_named", "digit", "question_form", "asking_word", "out_of_scope_rule",
                    "gibberish", "capability", "instead", "condition", "what_happens", "quoted_error", "zh",
                    "extreme", "default_word", "good_idea", "negation", "short", "long") + tuple(
                        f"ngram_{i}" for i in range(NGRAM_DIM))


def rule_features(clause: str) -> np.ndarray:
    """0/1 per name in `rule_feature_names()`, in that order: the cues, then the hashed n-grams."""
    found = {k for _, k in _kinds_in(clause)}
    kinds = [k in found for k in load_asks().kinds]
    fields = [r for r in field_table().mentioned(clause) if not r.is_strategy_name]
    flags = [
        bool(_quantity_targets(clause)), bool(fields), bool(_DIGIT.search(clause)),
        bool(_QUESTION_FORM.search(clause)), bool(_ASKING_WORD.search(clause)), _out_of_scope(clause),
        looks_like_gibberish(clause), _capability(clause), bool(_INSTEAD.search(clause)),
        bool(_CONDITION.match(clause)), bool(_WHAT_HAPPENS.search(clause)), quoted_error(clause) is not None,
        bool(_CJK.search(clause)), bool(_EXTREME.search(clause)), bool(_DEFAULT.search(clause)),
        bool(GOOD_IDEA.search(clause)), bool(_NEGATION.search(clause)), len(clause) < 12, len(clause) > 120,
    ]
    return np.concatenate([np.asarray(kinds + flags, dtype=np.float32), ngram_features(clause)])
