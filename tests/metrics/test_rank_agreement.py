"""Leaderboard agreement (the one function of the correlation report and the judge audit): tau-ap by hand, Spearman /
Kendall tau-b as scipy, seeded bootstrap intervals, the missing-query policy of the leaderboard."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr
from support.leaderboards import per_query_table

from autograde.core.stats import kendall_matrix, spearman_matrix, tau_ap_matrix
from autograde.metrics.rank_agreement import leaderboard_agreement
from autograde.pipeline.leaderboard import rank_correlation


def test_tau_ap_hand_computed() -> None:
    # ours: A > B > C > D. Official B, A, C, D (swap at the top): C(2)=0/1, C(3)=2/2, C(4)=3/3 -> 2/3*2 - 1 = 1/3.
    # Official A, B, D, C (swap at the bottom): 1/1, 2/2, 2/3 -> 2/3*(8/3) - 1 = 7/9. Kendall is 2/3 for both.
    ours = np.array([[4.0, 3.0, 2.0, 1.0]])
    top, bottom = np.array([3.0, 4.0, 2.0, 1.0]), np.array([4.0, 3.0, 1.0, 2.0])
    assert tau_ap_matrix(ours, top)[0] == pytest.approx(1 / 3)
    assert tau_ap_matrix(ours, bottom)[0] == pytest.approx(7 / 9)
    assert kendall_matrix(ours, top)[0] == pytest.approx(2 / 3) == kendall_matrix(ours, bottom)[0]
    assert tau_ap_matrix(ours, ours[0])[0] == 1.0 and tau_ap_matrix(ours, -ours[0])[0] == -1.0


def test_vectorized_spearman_and_kendall_equal_scipy_with_ties() -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 5, size=(50, 9)).astype(float)  # many ties
    truth = rng.integers(0, 4, size=9).astype(float)
    for row, rho, tau in zip(scores, spearman_matrix(scores, truth), kendall_matrix(scores, truth), strict=True):
        if len(set(row)) > 1:
            assert rho == pytest.approx(spearmanr(row, truth).statistic)
            assert tau == pytest.approx(kendalltau(row, truth).statistic)  # tau-b
        else:
            assert np.isnan(rho) and np.isnan(tau)


def test_point_estimates_match_the_leaderboard_correlation() -> None:
    per_q, official = per_query_table()
    res = leaderboard_agreement(per_q, official, samples=0)
    means = per_q.groupby("run")["value"].mean()
    lb = pd.DataFrame({"run": means.index, "score": means.to_numpy()})
    ref = rank_correlation(lb, official)
    assert res.point["spearman"] == pytest.approx(ref["spearman"]) and res.point["kendall"] == pytest.approx(ref["kendall"])
    assert res.n_systems == 6 and res.n_queries == 12 and np.isnan(res.low["kendall"])


def test_bootstrap_intervals_identical_for_the_same_seed() -> None:
    per_q, official = per_query_table(n_sys=25, n_q=15)
    a = leaderboard_agreement(per_q, official, samples=300, seed=11)
    b = leaderboard_agreement(per_q.sample(frac=1.0, random_state=1), official, samples=300, seed=11)  # row order does not matter
    c = leaderboard_agreement(per_q, official, samples=300, seed=12)
    assert a.low == b.low and a.high == b.high
    assert (a.low, a.high) != (c.low, c.high)
    for m in ("spearman", "kendall", "tau_ap"):
        assert -1.0 <= a.low[m] <= a.high[m] <= 1.0


def test_missing_values_and_systems_outside_the_official_leaderboard() -> None:
    per_q, official = per_query_table()
    per_q = per_q[~((per_q["run"] == "s0") & (per_q["query_id"] == "q0"))]  # s0 skipped q0 (cover's skip policy)
    extra = pd.DataFrame([("unofficial", "q0", 1.0)], columns=["run", "query_id", "value"])
    res = leaderboard_agreement(pd.concat([per_q, extra]), official, samples=50, seed=0, missing_queries="skip")
    assert res.n_systems == 6 and "unofficial" not in res.scores
    assert res.scores["s0"] == pytest.approx(per_q[per_q["run"] == "s0"]["value"].mean())  # mean over its 11 queries
