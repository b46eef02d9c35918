"""Inverse questions: which input value gives the derived number asked (issue 18, t9 forms)."""
from __future__ import annotations

import pytest

from assistant.understand.inverse import solve_target


@pytest.mark.parametrize("clause, before, solved", [
    ("which pipeline microbatch size gives 8 microbatches", "", ("solve:pp_microbatch_size", "microbatches=8")),
    ("what local_batch_size gives grad-acc 4", "", ("solve:local_batch_size", "grad_acc_steps=4")),
    ("local_batch_size 要设多少", "想要梯度累积 4 步", ("solve:local_batch_size", "grad_acc_steps=4")),
    ("pp_microbatch_size 填几", "想要 4 个 microbatch", ("solve:pp_microbatch_size", "microbatches=4")),
    ("what global_batch_size do I need for 8 accumulation steps", "", ("solve:global_batch_size", "grad_acc_steps=8")),
])
def test_the_input_asked_and_the_output_wanted(clause, before, solved):
    assert solve_target(clause, before) == solved


@pytest.mark.parametrize("clause", [
    "what is the grad acc with local_batch_size 4",      # the input given, the output asked: forward
    "how many microbatches with pp_microbatch_size 2",
    "what local_batch_size should I use",                # no output number to solve for
])
def test_forward_questions_are_not_inverse(clause):
    assert solve_target(clause) is None
