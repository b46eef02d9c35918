"""Issue 20.3: secrets are redacted across stream deltas, so a key split over two deltas is never shown."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from assistant.redact import REDACTED, Redactor

API_KEY = "sk-testsecret-0123456789abcdef"
CONFIGURED = "correct-horse.battery/staple"  # no well-known shape: only its value gives it away
SHAPED = ("hf_" + "A1b2C3d4E5f6G7h8I9j0K1", "xoxb-1234567890-abcdefghij", "xapp-1-A0123456789-zz")
R = Redactor.of([API_KEY, CONFIGURED, None, "abc"])  # too short and unset values are ignored


def streamed(text: str, cuts: list[int]) -> list[str]:
    s, out, last = R.stream(), [], 0
    for cut in sorted(set(cuts)) + [len(text)]:
        out.append(s.feed(text[last:cut]))
        last = cut
    out.append(s.close())
    return out


def _windows(secret: str, n: int = 6):
    return [secret[i:i + n] for i in range(len(secret) - n + 1)]


def test_configured_values_and_known_shapes_are_redacted():
    text = f"key {API_KEY}, pass {CONFIGURED}, " + ", ".join(SHAPED) + ", 密钥sk-proj-ABCDEFGHIJ0123456789 end"
    out = R.scrub(text)
    assert out.count(REDACTED) == 6 and "abc" not in R.secrets
    for secret in (API_KEY, CONFIGURED, *SHAPED, "sk-proj-ABCDEFGHIJ0123456789"):
        assert not any(w in out for w in _windows(secret)), out
    assert out.startswith("key [redacted], pass [redacted], ") and out.endswith(" end")
    names = "`validate_hf_model_for_pipeline_support` stays"
    assert R.scrub(names) == names


def test_a_secret_split_at_every_position_is_redacted_in_every_piece():
    for secret in (API_KEY, CONFIGURED, *SHAPED):
        text = f"Your key: {secret}. Done.\n"
        at = text.index(secret)
        for cut in range(at, at + len(secret) + 1):
            pieces = streamed(text, [cut])
            shown = ""
            for piece in pieces:
                shown += piece
                assert secret[:4] not in shown.replace(REDACTED, ""), (secret, cut, pieces)
            assert shown == R.scrub(text) == "Your key: [redacted]. Done.\n"


@settings(max_examples=150, deadline=2000)
@given(parts=st.lists(st.sampled_from([API_KEY, CONFIGURED, *SHAPED, " ", "-", "_", "x", "\n", "中", "sk-", "[", "a1"]),
                      max_size=12),
       cuts=st.lists(st.integers(0, 400), max_size=10))
def test_streamed_pieces_join_to_the_redaction_of_the_whole(parts, cuts):
    text = "".join(parts)
    pieces = streamed(text, [c for c in cuts if c <= len(text)])
    assert "".join(pieces) == R.scrub(text)
    assert API_KEY not in "".join(pieces) and CONFIGURED not in "".join(pieces)
