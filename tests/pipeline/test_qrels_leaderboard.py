"""Rubric-Qrels semantics, leaderboards and rank correlation, on inline data."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from autograde.pipeline.leaderboard import evaluate_systems, leaderboard, rank_correlation
from autograde.pipeline.qrels import relevance_level, rubric_qrels

# q1/p1: items graded 5, 2, missing (unparseable) -> max 5, count(>=4) 1
# q1/p2: items graded 0, 0, 3               -> max 3, count 0  (zero rows are kept)
# q1/p3: only an unparseable pair            -> no qrels row at all
GRADES = pd.DataFrame(
    [("q1", "p1", "i1", 5), ("q1", "p1", "i2", 2), ("q1", "p1", "i3", None),
     ("q1", "p2", "i1", 0), ("q1", "p2", "i2", 0), ("q1", "p2", "i3", 3),
     ("q1", "p3", "i1", None)],
    columns=["query_id", "passage_id", "item_id", "grade"],
).astype({"grade": "Int64"})


def test_max_and_count_modes() -> None:
    assert rubric_qrels(GRADES, "max", 4) == {"q1": {"p1": 5, "p2": 3}}
    assert rubric_qrels(GRADES, "count", 4) == {"q1": {"p1": 1, "p2": 0}}
    assert rubric_qrels(GRADES, "count", 2) == {"q1": {"p1": 2, "p2": 1}}
    assert relevance_level("max", 4) == 4 and relevance_level("count", 4) == 1
    with pytest.raises(ValueError):
        rubric_qrels(GRADES, "median", 4)  # type: ignore[arg-type]


def test_threshold_is_the_relevance_level() -> None:
    qrels = {"q1": {"a": 5, "b": 3}}
    runs = {"A": {"q1": {"b": 2.0, "a": 1.0}}}
    at3 = evaluate_systems(qrels, runs, ["recip_rank"], relevance_level=3)
    at4 = evaluate_systems(qrels, runs, ["recip_rank"], relevance_level=4)
    assert at3.query("query_id == 'all'")["value"].item() == 1.0
    assert at4.query("query_id == 'all'")["value"].item() == 0.5  # b (grade 3) no longer relevant


def test_leaderboard_and_correlation_with_ties() -> None:
    ev = pd.DataFrame([("A", "all", "m", 0.5), ("B", "all", "m", 0.5), ("C", "all", "m", 0.9), ("D", "all", "m", 0.1)],
                      columns=["run", "query_id", "measure", "value"])
    lb = leaderboard(ev, "m")
    assert list(lb["run"]) == ["C", "A", "B", "D"] and list(lb["rank"]) == [1.0, 2.5, 2.5, 4.0]
    corr = rank_correlation(lb, {"A": 2, "B": 3, "C": 1, "D": 4, "unknown": 5})
    assert corr["n_systems"] == 4
    assert corr["spearman"] == pytest.approx(0.9486833, abs=1e-6)   # scipy spearmanr on average ranks
    assert corr["kendall"] == pytest.approx(0.9128709, abs=1e-6)    # tau-b with one tie
    assert math.isnan(rank_correlation(lb, {"A": 1})["spearman"])


def test_leaderboard_ranks_do_not_depend_on_the_order_topics_are_summed_in() -> None:
    """Runs whose per-topic values are permutations of each other have equal means in exact arithmetic; a mean
    summed topic by topic (as a leaderboard read from elsewhere, or a pandas mean, is) differs in the last bit
    depending on the order. Ranks and the correlation with an official leaderboard are the same for every order."""
    import numpy as np

    values = np.array([0.1, 0.7, 0.2, 0.30000000000000004, 0.9, 0.05, 0.6, 0.33])
    runs = {"A": values, "B": values[::-1], "C": values + 0.1, "D": values - 0.01}
    official = {"A": 2, "B": 3, "C": 1, "D": 4}
    rng = np.random.default_rng(4)
    seen_scores, seen = set(), set()
    for _ in range(30):
        order = rng.permutation(len(values))
        ev = pd.DataFrame([(r, "all", "m", sum(v[order].tolist()) / len(v)) for r, v in runs.items()],
                          columns=["run", "query_id", "measure", "value"])
        lb = leaderboard(ev, "m")
        seen_scores.add(tuple(lb.sort_values("run")["score"]))
        corr = rank_correlation(lb, official)
        seen.add((tuple(lb["run"]), tuple(lb["rank"]), corr["kendall"], corr["spearman"]))
    assert len(seen_scores) > 1  # the means of A and B do move in the last bit
    assert len(seen) == 1, seen
    (names, ranks, kendall, spearman), = seen
    assert names == ("C", "A", "B", "D") and ranks == (1.0, 2.5, 2.5, 4.0)
    assert kendall == pytest.approx(0.9128709, abs=1e-6) and spearman == pytest.approx(0.9486833, abs=1e-6)
