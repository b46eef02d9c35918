"""Every launch code renders in both languages with its upstream file; codes never clash with the validator's."""
from __future__ import annotations

from assistant.launch.codes import CODES, finding, warning
from assistant.validator.findings import RULES


def test_every_code_renders():
    for code, rule in CODES.items():
        w = warning(code, "--x 1") if rule.severity == "warning" else None
        f = finding(code, "distributed.x")
        assert f.message and f.message_zh and f.message != f.message_zh and f.upstream == rule.upstream
        assert code.startswith("MW-E-") == (rule.severity == "error")
        if w is not None:
            assert w.en and w.zh and w.code == code
    assert not set(CODES) & set(RULES)
