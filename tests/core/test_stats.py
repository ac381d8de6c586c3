"""Cohen's kappa against scikit-learn on random and hand-made labelings; Krippendorff's alpha against the
``krippendorff`` package (random labelings here, DL20's released prompt qrels in tests/audit); the rank statistics
with one truth per row against the same statistic row by row; top-k Kendall and the bootstrap helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from autograde.core.stats import (
    cohen_kappa,
    confusion_matrix,
    correlation,
    kendall_matrix,
    kendall_top_k_matrix,
    krippendorff_alpha,
    mean_interval,
    spearman_matrix,
    tau_ap_matrix,
)


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


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_equals_krippendorff(level: str) -> None:
    import krippendorff

    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(3, 300))
        a = rng.integers(0, 4, size=n)
        b = np.clip(a + rng.integers(-2, 3, size=n), 0, 5)
        theirs = krippendorff.alpha(reliability_data=np.vstack([a, b]).astype(float), level_of_measurement=level)
        assert krippendorff_alpha(a.tolist(), b.tolist(), level) == pytest.approx(theirs, abs=1e-12)  # type: ignore[arg-type]
    assert math.isnan(krippendorff_alpha([1, 1, 1], [1, 1, 1]))


def test_rank_statistics_with_a_truth_per_row() -> None:
    rng = np.random.default_rng(5)
    ours, truth = rng.normal(size=(6, 9)), rng.normal(size=(6, 9))
    for fn in (kendall_matrix, spearman_matrix, tau_ap_matrix):
        rowwise = [float(fn(ours[i:i + 1], truth[i])[0]) for i in range(6)]
        assert fn(ours, truth).tolist() == pytest.approx(rowwise, abs=1e-12)
    for i in range(6):  # and Kendall is scipy's tau-b
        assert float(kendall_matrix(ours[i:i + 1], truth[i])[0]) == pytest.approx(correlation("kendall", ours[i], truth[i]))


def test_top_k_kendall_keeps_the_truths_best() -> None:
    truth = np.array([9.0, 8.0, 7.0, 1.0, 2.0, 3.0])
    ours = np.array([[1.0, 2.0, 3.0, 9.0, 8.0, 7.0]])  # reversed at the top, right at the bottom
    assert float(kendall_top_k_matrix(ours, truth, 3)[0]) == pytest.approx(-1.0)
    assert float(kendall_top_k_matrix(ours, truth, 6)[0]) == pytest.approx(float(kendall_matrix(ours, truth)[0]))
    assert math.isnan(float(kendall_top_k_matrix(ours, truth, 2)[0]))  # fewer than 3 systems (as AutoJudge)
    tied = np.array([5.0, 5.0, 5.0, 4.0, 5.0])  # a tie at the cut: the earlier systems are kept (0, 1, 2)
    assert math.isnan(float(kendall_top_k_matrix(np.array([[1.0, 2.0, 3.0, 9.0, 0.0]]), tied, 3)[0]))


def test_mean_interval_is_seeded() -> None:
    x = np.random.default_rng(1).normal(size=40)
    first = mean_interval(x, 500, 7)
    assert first == mean_interval(x, 500, 7) and first != mean_interval(x, 500, 8)
    assert first[1] < first[0] < first[2]


def test_average_ranks_equal_scipy_rankdata() -> None:
    """Our average ranks (no scipy.stats import in the rule jobs) equal scipy's, ties, NaN rows and -0.0 included."""
    from scipy.stats import rankdata

    from autograde.core.stats import average_ranks, ranks_desc

    rng = np.random.default_rng(7)
    for shape in [(1,), (2,), (7,), (5, 9), (40, 13)]:
        for values in (rng.integers(0, 4, size=shape).astype(float), rng.normal(size=shape)):
            assert np.array_equal(average_ranks(values), rankdata(values, axis=-1, method="average"))
            assert np.array_equal(ranks_desc(values.ravel()), rankdata(-values.ravel(), method="average"))
    with_nan = np.array([[1.0, np.nan, 2.0], [0.0, -0.0, 3.0]])
    assert np.array_equal(average_ranks(with_nan), rankdata(with_nan, axis=-1, method="average"), equal_nan=True)
    assert average_ranks(np.array([])).shape == (0,)


def test_correlation_equals_scipy_without_importing_it() -> None:
    """Pearson, Spearman and Kendall's tau-b equal scipy's on random, tied and near-constant data; the module does not
    import scipy.stats for them (a fresh process: the reports jobs call it)."""
    import subprocess
    import sys

    from scipy import stats

    rng = np.random.default_rng(7)
    cases = [(rng.normal(size=n), rng.normal(size=n)) for n in (2, 3, 10, 59)]
    cases += [(rng.integers(0, 3, 40).astype(float), rng.integers(0, 4, 40).astype(float)),
              (np.array([1e9, 1e9 + 1, 1e9 + 3]), np.array([1.0, 2.0, 2.0]))]
    for a, b in cases:
        for kind, fn in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
            assert correlation(kind, a, b) == pytest.approx(float(fn(a, b)[0]), abs=1e-12), (kind, a, b)
    code = ("import sys; from autograde.core.stats import correlation; "
            "correlation('kendall', [1, 2, 3], [1, 3, 2]); correlation('pearson', [1, 2, 3], [1, 3, 2]); "
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
