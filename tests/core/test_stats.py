"""Cohen's kappa against scikit-learn on random and hand-made labelings."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from autograde.core.stats import cohen_kappa, confusion_matrix


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_equals_sklearn(weights: str | None) -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        a = rng.integers(0, 4, size=int(rng.integers(2, 60))).tolist()
        b = [x if rng.random() < 0.6 else int(rng.integers(0, 4)) for x in a]
        ours = cohen_kappa(a, b, weights=weights)
        theirs = cohen_kappa_score(a, b, weights=weights)
        assert (math.isnan(ours) and math.isnan(theirs)) or ours == pytest.approx(theirs, abs=1e-12)


def test_kappa_hand_made() -> None:
    # 4 items: agree on 3; p_o = 0.75; a: two 0s two 1s; b: three 0s one 1 -> p_e = 0.5*0.75 + 0.5*0.25 = 0.5
    assert cohen_kappa([0, 1, 1, 0], [0, 1, 0, 0]) == pytest.approx(0.5)
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))  # chance agreement is total
    m, labels = confusion_matrix([0, 2, 2], [0, 0, 2])
    assert labels == [0, 2] and m.tolist() == [[1, 0], [1, 1]]
