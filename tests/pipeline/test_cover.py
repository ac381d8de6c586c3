"""Rubric-Cover semantics on inline data (hand-computed)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from autograde.pipeline.cover import cover_leaderboard, cover_per_query

# q1 has items a, b, c (all graded); q2 has items x, y.
# passage p1 covers a (5) and b (4); p2 covers c (4); p3 covers nothing; q2's passage r1 covers nothing.
GRADES = pd.DataFrame(
    [("q1", "p1", "a", 5), ("q1", "p1", "b", 4), ("q1", "p1", "c", 1),
     ("q1", "p2", "a", 0), ("q1", "p2", "b", 0), ("q1", "p2", "c", 4),
     ("q1", "p3", "a", 0), ("q1", "p3", "b", 3), ("q1", "p3", "c", None),
     ("q2", "r1", "x", 1), ("q2", "r1", "y", 2)],
    columns=["query_id", "passage_id", "item_id", "grade"]).astype({"grade": "Int64"})
# S1 ranks p1 then p3 (top-1 = p1); S2 ranks p3, p2, p1; S3 only answers q2.
RANKINGS = pd.DataFrame(
    [("S1", "q1", "p1", 2.0), ("S1", "q1", "p3", 1.0), ("S1", "q2", "r1", 1.0),
     ("S2", "q1", "p3", 3.0), ("S2", "q1", "p2", 2.0), ("S2", "q1", "p1", 1.0),
     ("S3", "q2", "r1", 1.0)],
    columns=["run", "query_id", "passage_id", "score"])


def test_cover_at_depth_and_threshold() -> None:
    pq = cover_per_query(GRADES, RANKINGS, threshold=4, depth=2).set_index(["run", "query_id"])
    assert pq.loc[("S1", "q1"), "covered"] == 2 and pq.loc[("S1", "q1"), "cover"] == pytest.approx(2 / 3)
    assert pq.loc[("S1", "q1"), "ncover"] == pytest.approx(2 / 3)  # the pool covers a, b, c
    assert pq.loc[("S2", "q1"), "covered"] == 1  # top-2 = p3, p2 -> only c
    assert pq.loc[("S1", "q2"), "ncover"] == 0.0 and pq.loc[("S1", "q2"), "cover"] == 0.0  # pool covers nothing
    assert ("S3", "q1") not in pq.index  # skipped: S3 returned nothing for q1
    zero = cover_per_query(GRADES, RANKINGS, threshold=4, depth=2, missing_queries="zero").set_index(["run", "query_id"])
    assert zero.loc[("S3", "q1"), "cover"] == 0.0
    assert cover_per_query(GRADES, RANKINGS, threshold=3, depth=3).set_index(["run", "query_id"]).loc[("S2", "q1"), "covered"] == 3


def test_cover_leaderboard_mean_and_stderr() -> None:
    lb = cover_leaderboard(cover_per_query(GRADES, RANKINGS, threshold=4, depth=2), "cover").set_index("run")
    assert lb.loc["S1", "score"] == pytest.approx((2 / 3 + 0) / 2)
    assert lb.loc["S1", "stderr"] == pytest.approx(pd.Series([2 / 3, 0.0]).std(ddof=1) / math.sqrt(2))
    assert lb.loc["S1", "n_queries"] == 2 and lb.loc["S3", "n_queries"] == 1
    assert list(lb.sort_values("rank").index) == ["S1", "S2", "S3"]
    nc = cover_leaderboard(cover_per_query(GRADES, RANKINGS, threshold=4, depth=2), "ncover").set_index("run")
    assert nc.loc["S1", "n_queries"] == 2  # q2's pool covers nothing: n-cover 0, kept (as the workbench does)
    assert nc.loc["S1", "score"] == pytest.approx((2 / 3 + 0.0) / 2)


def test_ncover_query_whose_pool_covers_nothing_scores_zero_and_is_kept() -> None:
    """Workbench parity (a): ``frac(0, 0) == 0``; the query stays in the mean."""
    # qA: items i1, i2; passage a covers i1. qB: items j1, j2; no passage reaches 4.
    grades = pd.DataFrame([("qA", "a", "qA/i1", 5), ("qA", "a", "qA/i2", 1), ("qB", "b", "qB/j1", 2),
                           ("qB", "b", "qB/j2", 3)], columns=["query_id", "passage_id", "item_id", "grade"])
    rankings = pd.DataFrame([("S", "qA", "a", 1.0), ("S", "qB", "b", 1.0)], columns=["run", "query_id", "passage_id", "score"])
    pq = cover_per_query(grades, rankings, threshold=4, depth=20)
    assert pq[["query_id", "covered", "pool_covered", "cover", "ncover"]].values.tolist() == [
        ["qA", 1, 1, 0.5, 1.0], ["qB", 0, 0, 0.0, 0.0]]
    lb = cover_leaderboard(pq, "ncover")
    assert lb[["run", "score", "n_queries"]].values.tolist() == [["S", 0.5, 2]]  # (1.0 + 0.0) / 2


def test_topk_without_graded_passage_follows_missing_queries() -> None:
    """Workbench parity (c): S's top-2 for qB holds only ungraded passages (not in the pool)."""
    grades = pd.DataFrame([("qA", "a", "qA/i1", 5), ("qB", "b", "qB/j1", 5)],
                          columns=["query_id", "passage_id", "item_id", "grade"])
    rankings = pd.DataFrame([("S", "qA", "a", 3.0), ("S", "qB", "x", 2.0), ("S", "qB", "y", 1.0), ("S", "qB", "b", 0.5),
                             ("T", "qA", "a", 1.0), ("T", "qB", "b", 1.0)],
                            columns=["run", "query_id", "passage_id", "score"])
    skip = cover_per_query(grades, rankings, threshold=4, depth=2, missing_queries="skip")
    assert skip[["run", "query_id", "cover"]].values.tolist() == [["S", "qA", 1.0], ["T", "qA", 1.0], ["T", "qB", 1.0]]
    assert cover_leaderboard(skip, "cover")[["run", "score", "n_queries"]].values.tolist() == [["S", 1.0, 1], ["T", 1.0, 2]]
    zero = cover_per_query(grades, rankings, threshold=4, depth=2, missing_queries="zero")
    assert zero[["run", "query_id", "cover"]].values.tolist() == [
        ["S", "qA", 1.0], ["S", "qB", 0.0], ["T", "qA", 1.0], ["T", "qB", 1.0]]
    with pytest.raises(ValueError, match="missing_queries"):
        cover_per_query(grades, rankings, threshold=4, depth=2, missing_queries="drop")  # type: ignore[arg-type]


def test_cover_leaderboard_ties_runs_whose_means_differ_only_by_summation_order() -> None:
    """Two runs with the same per-query covers on different queries: their pandas means may differ in the last bit,
    their ranks tie (scores are ranked at autograde.core.stats.RANK_PRECISION)."""
    import numpy as np

    values = [0.1, 0.7, 0.2, 0.30000000000000004, 0.9, 0.05, 0.6, 0.33, 0.45, 0.125]
    rng = np.random.default_rng(1)
    seen_means, seen_ranks = set(), set()
    for _ in range(30):
        rows = [(run, f"q{i}", v) for run in ("A", "B") for i, v in enumerate(rng.permutation(values))]
        rows.append(("C", "q0", 0.2))
        lb = cover_leaderboard(pd.DataFrame(rows, columns=["run", "query_id", "cover"]), "cover")
        seen_means.add(tuple(lb.sort_values("run")["score"]))
        seen_ranks.add(tuple(zip(lb["run"], lb["rank"], strict=True)))
    assert len(seen_means) > 1
    assert seen_ranks == {(("A", 1.5), ("B", 1.5), ("C", 3.0))}
