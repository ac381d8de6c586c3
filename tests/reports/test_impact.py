"""Bank impact: the leaderboard with one item removed vs the full one (hand-computed, and equal to a full rerun)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, rankdata

from autograde.pipeline.leaderboard import evaluate_systems
from autograde.pipeline.qrels import rubric_qrels
from autograde.reports.impact import bank_impact

# q1: items i1, i2; q2: one item j1. Max-mode labels at tau 4: p1 5, p2 4, p3 0; r1 4, r2 0.
GRADES = pd.DataFrame(
    [("q1", "p1", "i1", 5), ("q1", "p1", "i2", 0), ("q1", "p2", "i1", 0), ("q1", "p2", "i2", 4),
     ("q1", "p3", "i1", 0), ("q1", "p3", "i2", 0), ("q2", "r1", "j1", 4), ("q2", "r2", "j1", 0)],
    columns=["query_id", "passage_id", "item_id", "grade"])
# reciprocal rank at level 4: A = (1 + 1)/2, B = (1 + 1/2)/2, C = (1/2 + 1/2)/2 -> A > B > C
RUNS = {"A": {"q1": {"p1": 2.0, "p3": 1.0}, "q2": {"r1": 2.0, "r2": 1.0}},
        "B": {"q1": {"p2": 2.0, "p1": 1.0}, "q2": {"r2": 2.0, "r1": 1.0}},
        "C": {"q1": {"p3": 2.0, "p2": 1.0}, "q2": {"r2": 2.0, "r1": 1.0}}}


def _evaluation(grades: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    return evaluate_systems(rubric_qrels(grades, "max", 4), RUNS, measures, 4, "zero")


def test_bank_impact_hand_computed() -> None:
    ev = _evaluation(GRADES, ["recip_rank"])
    full = ev[ev["query_id"] == "all"].set_index("run")["value"]
    assert full.to_dict() == {"A": 1.0, "B": 0.75, "C": 0.5}
    imp = bank_impact(GRADES, RUNS, ev, "max", 4, ["recip_rank"]).set_index("item_id")
    # without i1: p1 drops to 0 -> A (0 + 1)/2, B (1 + .5)/2, C (.5 + .5)/2: B first, A and C tied -> tau-b 0
    assert imp.loc["i1", ["kendall", "max_rank_shift", "top_changed", "relabelled", "query_dropped"]].tolist() == [
        0.0, 1.5, True, 1, False]
    # without i2: p2 drops to 0 -> A 1, B .5, C .25: same order
    assert imp.loc["i2", ["kendall", "max_rank_shift", "top_changed", "relabelled"]].tolist() == [1.0, 0.0, False, 1]
    # without j1: q2 has no label left and leaves the mean -> A 1, B 1, C .5: tau-b = 2 / sqrt(3 * 2)
    assert imp.loc["j1", "kendall"] == pytest.approx(2 / math.sqrt(6))
    assert imp.loc["j1", ["max_rank_shift", "top_changed", "relabelled", "query_dropped"]].tolist() == [0.5, True, 2, True]
    assert set(imp["variant"]) == {"max-4"} and set(imp["measure"]) == {"recip_rank"}


@pytest.mark.parametrize("mode", ["max", "count"])
def test_incremental_equals_a_full_rerun_without_the_item(mode: str) -> None:
    measures = ["recip_rank", "P_2", "ndcg_cut_10"]
    ev = evaluate_systems(rubric_qrels(GRADES, mode, 4), RUNS, measures, 4 if mode == "max" else 1, "zero")
    imp = bank_impact(GRADES, RUNS, ev, mode, 4, measures)  # type: ignore[arg-type]
    level = 4 if mode == "max" else 1
    full = ev[ev["query_id"] == "all"].pivot(index="run", columns="measure", values="value")
    for item in sorted(GRADES["item_id"].unique()):
        rest = GRADES[GRADES["item_id"] != item]
        again = evaluate_systems(rubric_qrels(rest, mode, 4), RUNS, measures, level, "zero")  # type: ignore[arg-type]
        means = again[again["query_id"] == "all"].pivot(index="run", columns="measure", values="value")
        for m in measures:
            a, b = rankdata(-full[m].to_numpy()), rankdata(-means[m].reindex(full.index).to_numpy())
            want = kendalltau(a, b).statistic
            got = imp[(imp["item_id"] == item) & (imp["measure"] == m)]["kendall"].iloc[0]
            assert (np.isnan(want) and np.isnan(got)) or got == pytest.approx(want), (item, m)


def test_cached_impact_recomputes_the_edited_query_only(tmp_path) -> None:
    from autograde.core.tables import write_table
    from autograde.reports.impact import bank_impact_cached

    rows = [(run, q, p, s) for run, qs in RUNS.items() for q, docs in qs.items() for p, s in docs.items()]
    path = tmp_path / "rankings.parquet"
    write_table(path, pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "score"]), None)
    measures = ["recip_rank", "ndcg_cut_10"]
    cache = tmp_path / "cache"
    for grades, computed in ((GRADES, 2), (GRADES, 0), (GRADES.assign(grade=GRADES["grade"].where(
            GRADES["query_id"] != "q2", 5)), 1)):
        ev = _evaluation(grades, measures)
        got, n = bank_impact_cached(grades, path, ev, "max", 4, measures, "zero", None, cache)
        pd.testing.assert_frame_equal(got, bank_impact(grades, RUNS, ev, "max", 4, measures))
        assert (n["computed"], n["cached"]) == (computed, 2 - computed)
