"""Cohen's kappa against scikit-learn on random and hand-made labelings; Krippendorff's alpha against the
``krippendorff`` package (two coders and any number of coders with missing values here, DL20's released prompt
qrels in tests/audit); the rank statistics with one truth per row against the same statistic row by row; tau-ap and
Kendall undefined together on constant leaderboards; ranks from rounded scores, whatever the order a mean was summed
in; top-k Kendall and the bootstrap helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from autograde.core.agreement import cohen_kappa, confusion_matrix, krippendorff_alpha, krippendorff_alpha_data
from autograde.core.errors import InvalidValueError
from autograde.core.stats import (
    RANK_PRECISION,
    correlation,
    kendall_matrix,
    kendall_top_k_matrix,
    mean_interval,
    rank_scores,
    round_scores,
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


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_of_many_coders_with_missing_values_equals_krippendorff(level: str) -> None:
    """3 to 7 assessors, each leaving out some units (NaN), on scales of 2 to 5 grades: the ``krippendorff``
    package's alpha to 1e-12; where it refuses (one value, or no unit with two values) ours is NaN."""
    import krippendorff

    rng = np.random.default_rng(11)
    compared = 0
    for _ in range(60):
        coders, units = int(rng.integers(3, 8)), int(rng.integers(2, 120))
        truth = rng.integers(0, int(rng.integers(2, 6)), size=units)
        data = np.clip(truth[None, :] + rng.integers(-1, 2, size=(coders, units)), 0, None).astype(float)
        data[rng.random((coders, units)) < rng.uniform(0.0, 0.7)] = np.nan
        ours = krippendorff_alpha_data(data, level)  # type: ignore[arg-type]
        try:
            theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        except ValueError:
            assert math.isnan(ours)
            continue
        assert ours == pytest.approx(theirs, abs=1e-12)
        compared += 1
    assert compared > 40


def test_alpha_of_many_coders_by_hand() -> None:
    nan = float("nan")
    # unit 1: one value (pairs nothing); units 2-3: all agree; unit 4: 3, 2, 3 -> the only disagreement
    data = [[1, 2, 3, 3], [nan, 2, 3, 2], [nan, 2, 3, 3]]
    # coincidences: unit 2 adds o[2,2] = 3*2/2 = 3, unit 3 o[3,3] = 3, unit 4 o[3,3] = 1, o[2,3] = o[3,2] = 1
    # n_2 = 4, n_3 = 5, n = 9; nominal: D_o = 2, D_e = (2 * 4 * 5) / 8 = 5 -> alpha = 1 - 2 / 5
    assert krippendorff_alpha_data(data, "nominal") == pytest.approx(0.6, abs=1e-12)
    assert math.isnan(krippendorff_alpha_data([[1, nan], [nan, 1]], "nominal"))  # no unit with two values
    with pytest.raises(InvalidValueError, match="unknown alpha level"):
        krippendorff_alpha_data(data, "ratio")  # type: ignore[arg-type]


def test_kappa_with_a_label_outside_its_labels_is_a_clear_error() -> None:
    assert cohen_kappa([0, 1, 1], [0, 1, 0], labels=[0, 1, 2]) == pytest.approx(cohen_kappa_score(
        [0, 1, 1], [0, 1, 0], labels=[0, 1, 2]))
    with pytest.raises(InvalidValueError, match=r"label 3 \(second labelling\) is not one of the labels \[0, 1\]"):
        cohen_kappa([0, 1], [0, 3], labels=[0, 1])
    with pytest.raises(InvalidValueError, match="labels 5, 7"):
        confusion_matrix([5, 7, 0], [0, 0, 0], labels=[0, 1])


def test_tau_ap_and_kendall_are_undefined_together_on_constant_leaderboards() -> None:
    """scipy's Kendall is NaN where either leaderboard is constant; so are ours, and tau-ap with them (it was -1 for
    a constant human leaderboard, and a value set by the run order for a constant grader's)."""
    from scipy.stats import kendalltau

    rng = np.random.default_rng(2)
    varied = rng.normal(size=8)
    constant = np.full(8, 0.25)
    almost = np.full(8, sum([0.1, 0.2, 0.3]) / 3)  # equal means summed in different orders: one ulp apart
    almost[::2] = sum([0.3, 0.2, 0.1]) / 3
    assert len(set(almost.tolist())) == 2
    for ours, truth in ((varied, constant), (constant, varied), (constant, constant), (varied, almost),
                        (almost, varied)):
        k = float(kendall_matrix(ours[None, :], truth)[0])
        t = float(tau_ap_matrix(ours[None, :], truth)[0])
        assert math.isnan(k) and math.isnan(t)
        assert math.isnan(correlation("kendall", ours, truth)) and math.isnan(float(spearman_matrix(ours[None, :], truth)[0]))
        if not (np.ptp(ours) and np.ptp(truth)):
            assert math.isnan(kendalltau(ours, truth).statistic)
    rows = np.vstack([varied, constant, -varied])
    both_k, both_t = kendall_matrix(rows, varied), tau_ap_matrix(rows, varied)
    assert np.isnan(both_k).tolist() == np.isnan(both_t).tolist() == [False, True, False]
    assert both_t[0] == pytest.approx(1.0) and both_t[2] == pytest.approx(-1.0)


def test_rounded_scores_tie_whatever_the_summation_order() -> None:
    assert RANK_PRECISION == 12
    x = np.array([0.1234567890123456, -98765.43210987654, 0.0, np.inf, -np.inf, np.nan, 1e-300, 7.0])
    r = round_scores(x)
    assert r[2] == 0.0 and r[3] == np.inf and r[4] == -np.inf and math.isnan(r[5]) and r[7] == 7.0
    assert r[0] == 0.123456789012 and r[1] == -98765.4321099 and r[6] == pytest.approx(1e-300, rel=1e-12)
    assert (round_scores(r) == r)[~np.isnan(r)].all()  # idempotent
    assert rank_scores([3.0, 1.0, 3.0, 2.0]).tolist() == [1.5, 4.0, 1.5, 3.0]
    assert np.isnan(rank_scores([3.0, 1.0, np.nan])).all()  # as scipy's rankdata: a row holding NaN is all NaN


def test_ranks_are_identical_whatever_the_order_topics_are_summed_in() -> None:
    """Per-topic values whose means are equal in exact arithmetic (each run's values are a permutation of another's)
    differ in the last bit depending on the summation order; ranks, Kendall and Spearman do not move."""
    rng = np.random.default_rng(8)
    topics = [0.1, 0.7, 0.2, 0.30000000000000004, 0.9, 0.05, 0.6, 0.33]
    per_topic = {f"r{i}": rng.permutation(topics) for i in range(4)} | {"x": np.array(topics[:-1] + [0.5]),
                                                                         "y": np.array(topics[:-1] + [0.1])}
    truth = np.array([4.0, 3.0, 2.0, 1.0, 5.0, 0.0])
    seen_means, seen = set(), set()
    for _ in range(40):
        order = rng.permutation(len(topics))
        means = np.array([float(np.cumsum(v[order])[-1]) / len(topics) for v in per_topic.values()])
        seen_means.add(tuple(means.tolist()))
        stats = (tuple(rank_scores(means).tolist()), float(kendall_matrix(means[None, :], truth)[0]),
                 float(spearman_matrix(means[None, :], truth)[0]), float(tau_ap_matrix(means[None, :], truth)[0]),
                 correlation("kendall", means, truth), correlation("spearman", means, truth))
        seen.add(stats)
    assert len(seen_means) > 1  # the raw means do depend on the order
    assert len(seen) == 1, seen
    assert next(iter(seen))[0] == (3.5, 3.5, 3.5, 3.5, 1.0, 6.0)  # x has a higher last topic, y a lower one


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

    from autograde.core.stats import average_ranks, rank_scores

    rng = np.random.default_rng(7)
    for shape in [(1,), (2,), (7,), (5, 9), (40, 13)]:
        for values in (rng.integers(0, 4, size=shape).astype(float), rng.normal(size=shape)):
            assert np.array_equal(average_ranks(values), rankdata(values, axis=-1, method="average"))
            assert np.array_equal(rank_scores(values.ravel()), rankdata(-values.ravel(), method="average"))
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
