"""The ask model's rule features: one 0/1 per name, the cues first, then the clause's hashed n-grams, the
same at training and at query time."""
from __future__ import annotations

import zlib

import numpy as np

from assistant.understand.clause_features import NGRAM_DIM, ngram_features, rule_feature_names, rule_features


def test_every_feature_has_its_name():
    assert rule_features("这样算是 HSDP 吧").shape == (len(rule_feature_names()),)
    assert rule_feature_names()[-NGRAM_DIM:] == tuple(f"ngram_{i}" for i in range(NGRAM_DIM))


def test_the_ngrams_are_the_same_on_every_run_and_ignore_case():
    # crc32, not Python's salted hash(): a model fitted in one process reads the same buckets in another
    assert np.array_equal(ngram_features("That makes this HSDP, right"), ngram_features("that makes this hsdp, RIGHT"))
    assert ngram_features("吧")[zlib.crc32("吧".encode()) % NGRAM_DIM] == 1.0


def test_a_tag_particle_sets_buckets_its_statement_does_not():
    plain, tagged = ngram_features("这样算是 HSDP"), ngram_features("这样算是 HSDP 吧")
    assert (tagged - plain).max() == 1.0  # "吧", "p 吧", "吧 </s>" are new
    assert set(np.flatnonzero(tagged)) != set(np.flatnonzero(plain))
