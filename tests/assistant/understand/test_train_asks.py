"""Fitting the ask model's thresholds: the middle of the near-best plateau of the averaged net-gain
curve, not the argmax of one fold split's curve (issue 18: the argmax moved 0.31-0.70 between refits)."""
from __future__ import annotations

import numpy as np

from assistant.understand.ask_model import NEVER
from assistant.understand.train_asks import GRID, plateau_threshold


def _curve(p: list[float], worth: list[int]) -> tuple[np.ndarray, np.ndarray]:
    return np.array(p)[None, :] >= np.array(GRID)[:, None], np.array(worth)


def test_a_flat_curve_gives_the_middle_of_its_plateau_not_its_argmax():
    # 20 right at 0.8, 30 wrong at 0.35, a right and a wrong at each of 0.40..0.70 (net flat) and one
    # right at 0.41: the argmax is 0.36-0.41 by one clause, the curve within 1 of it up to 0.80
    p = [0.8] * 20 + [0.35] * 30 + [round(0.40 + 0.05 * i, 2) for i in range(7) for _ in (0, 1)] + [0.41]
    worth = [1] * 20 + [-1] * 30 + [1, -1] * 7 + [1]
    threshold, net = plateau_threshold([_curve(p, worth)])
    assert 0.5 <= threshold <= 0.65
    assert net == 20


def test_the_curves_of_several_fold_splits_are_averaged():
    # two splits read the wrong clauses at 0.6, one at 0.4: below 0.6 the mean net loses a third of
    # the gain, more than chance explains, so the plateau is the one the two agree on
    a = _curve([0.9] * 10 + [0.6] * 10, [1] * 10 + [-1] * 10)
    b = _curve([0.9] * 10 + [0.4] * 10, [1] * 10 + [-1] * 10)
    assert plateau_threshold([b])[0] == 0.66  # 0.41 .. 0.90
    assert plateau_threshold([a, a, b]) == (plateau_threshold([a])[0], 10.0) == (0.76, 10.0)  # 0.61 .. 0.90


def test_no_gain_at_any_threshold_never_takes_the_model():
    assert plateau_threshold([_curve([0.9, 0.8], [-1, -1])]) == (NEVER, 0.0)


def test_the_target_threshold_is_the_plateau_of_several_splits_too():
    # the target reader's threshold as the ask model's: "none" takes nothing, a wrong target costs -1;
    # the argmax of one split (0.36, the lowest threshold of the widest margin) is not what is taken
    from assistant.understand.target_model import NONE
    from assistant.understand.train_asks import fit_target_threshold

    y = np.array(["dp_size"] * 20 + ["memory"] * 30 + [NONE] * 5)
    pred = np.array(["dp_size"] * 20 + ["dp_size"] * 30 + [NONE] * 5)
    p = np.array([0.8] * 20 + [0.35] * 30 + [0.9] * 5)
    assert 0.5 <= fit_target_threshold([(pred, p)], y) <= 0.65  # flat from 0.36 to 0.80: its middle
