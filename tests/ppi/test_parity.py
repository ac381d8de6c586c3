"""Our i.i.d. prediction-powered mean equals the reference implementation's (PyPI ppi-python: ppi_mean_pointestimate
and ppi_mean_ci, with and without its power tuning) to 1e-9, run in its own environment (make ppi-env)."""

from __future__ import annotations

import numpy as np
from support.ppi_reference import PPI_VERSION, reference_means

from autograde.core.survey import ppi_mean


def _cases() -> list[dict]:
    rng = np.random.default_rng(11)
    cases = []
    for i in range(12):
        n, big_n = int(rng.integers(10, 300)), int(rng.integers(50, 3000))
        if i % 3 == 2:  # relevance grades and a grader's labels: discrete, correlated
            y = rng.integers(0, 4, n).astype(float)
            yhat = np.clip(y + rng.integers(-1, 2, n), 0, 3)
            unl = rng.integers(0, 4, big_n).astype(float)
        else:
            y = rng.normal(size=n)
            yhat = (0.9 if i % 2 else -0.3) * y + rng.normal(size=n) * 0.6
            unl = rng.normal(size=big_n)
        lam = [None, 1.0, 0.0, 0.5][i % 4]
        cases.append({"y": y.tolist(), "yhat": yhat.tolist(), "yhat_unlabeled": unl.tolist(), "lam": lam,
                      "alpha": [0.05, 0.1][i % 2]})
    return cases


def test_ppi_mean_equals_ppi_py() -> None:
    cases = _cases()
    ref = reference_means(cases)
    assert ref["version"] == PPI_VERSION
    for c, theirs in zip(cases, ref["results"], strict=True):
        ours = ppi_mean(np.array(c["y"]), np.array(c["yhat"]), np.array(c["yhat_unlabeled"]), lam=c["lam"],
                        confidence=1.0 - c["alpha"])[:3]
        assert np.abs(np.array(ours) - np.array(theirs)).max() < 1e-9, (c["lam"], ours, theirs)


def test_power_tuning_never_loses_to_plain_ppi_or_the_classical_mean() -> None:
    """PPI++'s weight minimizes the estimated variance over lam in [0, 1]: its interval is never wider than plain
    PPI's (lam 1) or the labels' alone (lam 0) by more than the estimation of lam itself allows."""
    for c in _cases():
        y, f, u = np.array(c["y"]), np.array(c["yhat"]), np.array(c["yhat_unlabeled"])
        tuned = ppi_mean(y, f, u, lam=None, confidence=0.95)
        widths = [ppi_mean(y, f, u, lam=lam, confidence=0.95) for lam in (0.0, 1.0)]
        assert tuned[2] - tuned[1] <= min(w[2] - w[1] for w in widths) * 1.05
