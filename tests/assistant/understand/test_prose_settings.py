"""Recipe settings stated in prose (issue 18, t10 stories): a packed length and SDPA as the attention
in use, read exactly; a count or an attention not used reads nothing."""
from __future__ import annotations

import pytest

from assistant.understand.prose_settings import settings_in

_PACK = "packed_sequence.packed_sequence_size"
_ATTN = "model.attn_implementation"


@pytest.mark.parametrize("text, want", [
    ("so we pack sequences to 8k and attention is just the default sdpa.", {_PACK: 8192, _ATTN: "sdpa"}),
    ("所以开了 packing，packed 到 4096，attention 用的默认 sdpa。", {_PACK: 4096, _ATTN: "sdpa"}),
    ("开了 packed_sequence_size: 4096，distributed 里 fsdp2 cp_size 2", {_PACK: 4096}),
    ("数据打包到 2048 了", {_PACK: 2048}),
    ("so we pack them to 16k, and we never changed attention from sdpa.", {_PACK: 16384, _ATTN: "sdpa"}),
    # nothing guessed: a count of samples, an attention named as the one not used, sizes only
    ("we pack 4 samples per sequence", {}),
    ("should I use te attention instead of sdpa?", {}),
    ("pp_size 4, cp_size 2", {}),
])
def test_settings_are_read_as_stated(text, want):
    assert settings_in(text) == want
