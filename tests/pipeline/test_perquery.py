"""Per-query incremental analysis: evaluation and cover computed for the changed queries only give the bytes of a
full computation (every measure, both missing-query policies, a run without rows for the changed query)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from autograde.core.tables import write_table
from autograde.pipeline.cover import cover_cached, cover_leaderboard, cover_per_query
from autograde.pipeline.leaderboard import evaluate_cached, evaluate_systems, runs_from_rankings
from autograde.pipeline.perquery import query_digests, rankings_digests, read_rankings

MEASURES = ["ndcg_cut_10", "recip_rank", "P_5", "map", "num_rel_ret", "gm_map"]


def _rankings() -> pd.DataFrame:
    """Four runs over six queries; run D has no rows for q3 (and no run has q6)."""
    rng = np.random.default_rng(7)
    rows = []
    for run in "ABCD":
        for q in ("q1", "q2", "q3", "q4", "q5", "10"):
            if run == "D" and q == "q3":
                continue
            docs = rng.choice(30, size=12, replace=False)
            rows += [(run, q, f"d{d}", r + 1, float(rng.normal()), "run") for r, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "rank", "score", "source"])


def _qrels(seed: int = 1) -> dict[str, dict[str, int]]:
    rng = np.random.default_rng(seed)
    out = {q: {f"d{d}": int(rng.integers(0, 4)) for d in rng.choice(30, size=10, replace=False)}
           for q in ("q1", "q2", "q3", "q4", "10", "q6")}
    out["q5"] = {}  # a query without judgments: not evaluated
    return out


def _grades(seed: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(q, f"d{d}", f"{q}/i{i}", None if rng.random() < 0.05 else int(rng.integers(0, 6)))
            for q in ("q1", "q2", "q3", "10") for d in range(0, 30, 2) for i in range(3)]
    return pd.DataFrame(rows, columns=["query_id", "passage_id", "item_id", "grade"]).astype({"grade": "Int64"})


def _bytes(tmp: Path, df: pd.DataFrame, keys: list[str]) -> bytes:
    write_table(tmp / "t.parquet", df, keys)
    return (tmp / "t.parquet").read_bytes()


def test_digests_change_with_the_changed_query_only(tmp_path: Path) -> None:
    rk = _rankings()
    d = query_digests(rk)
    edited = rk.copy()
    edited.loc[(edited["query_id"] == "q2") & (edited["rank"] == 3), "score"] += 1e-9
    assert {q for q, v in query_digests(edited).items() if v != d[q]} == {"q2"}
    assert query_digests(rk.sample(frac=1.0, random_state=3)) == d  # the rows' order does not matter
    assert query_digests(rk[~((rk["query_id"] == "q1") & (rk["run"] == "A") & (rk["rank"] == 12))])["q1"] != d["q1"]
    write_table(tmp_path / "rankings.parquet", rk, ["run", "query_id", "rank", "passage_id"])
    got = rankings_digests(tmp_path / "rankings.parquet", tmp_path / "cache")
    assert got.runs == ["A", "B", "C", "D"] and got.queries == d and got.of("q6") == "-"
    assert list((tmp_path / "cache" / "analysis" / "rankings").rglob("*.json"))  # stored once per file content
    part = read_rankings(tmp_path / "rankings.parquet", ["q3", "10"])
    assert set(part["query_id"]) == {"q3", "10"} and len(part) == 7 * 12
    assert runs_from_rankings(part, ["A", "B", "C", "D"])["D"] == {"10": runs_from_rankings(rk)["D"]["10"]}


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_incremental_evaluation_equals_a_full_one(tmp_path: Path, missing: str) -> None:
    rk = _rankings()
    path = tmp_path / "rankings.parquet"
    write_table(path, rk, ["run", "query_id", "rank", "passage_id"])
    cache = tmp_path / "cache"
    qrels = _qrels()
    full = evaluate_systems(qrels, runs_from_rankings(rk), MEASURES, 2, missing)
    first, n1 = evaluate_cached(qrels, path, MEASURES, 2, missing, cache)
    again, n2 = evaluate_cached(qrels, path, MEASURES, 2, missing, cache)
    assert (n1["computed"], n2["computed"], n2["cached"]) == (6, 0, 6)  # q5 has no judgments (q6 no rankings)
    want = _bytes(tmp_path, full, ["run", "query_id", "measure"])
    assert _bytes(tmp_path, first, ["run", "query_id", "measure"]) == want
    assert _bytes(tmp_path, again, ["run", "query_id", "measure"]) == want
    # edit the judgments of q3 (run D has no rows for it: 0 under "zero", no row under "skip")
    edited = {**qrels, "q3": {**qrels["q3"], "d29": 3, "d28": 2}}
    inc, n3 = evaluate_cached(edited, path, MEASURES, 2, missing, cache)
    assert (n3["computed"], n3["cached"]) == (1, 5)
    full3 = evaluate_systems(edited, runs_from_rankings(rk), MEASURES, 2, missing)
    assert _bytes(tmp_path, inc, ["run", "query_id", "measure"]) == _bytes(tmp_path, full3, ["run", "query_id", "measure"])
    assert (("D", "q3") in set(zip(inc["run"], inc["query_id"], strict=True))) == (missing == "zero")
    # other settings are other keys: a new relevance level computes every query again
    assert evaluate_cached(edited, path, MEASURES, 1, missing, cache)[1]["computed"] == 6


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_incremental_cover_equals_a_full_one(tmp_path: Path, missing: str) -> None:
    rk = _rankings()
    path = tmp_path / "rankings.parquet"
    write_table(path, rk, ["run", "query_id", "rank", "passage_id"])
    grades = _grades()
    full = cover_per_query(grades, rk, 4, 5, missing).sort_values(["run", "query_id"], kind="mergesort")
    full = full.reset_index(drop=True)
    first, n1 = cover_cached(grades, path, 4, 5, missing, tmp_path / "cache")  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(first, full)
    edited = grades.copy()
    edited.loc[edited["query_id"] == "q3", "grade"] = 5
    inc, n2 = cover_cached(edited, path, 4, 5, missing, tmp_path / "cache")  # type: ignore[arg-type]
    want = cover_per_query(edited, rk, 4, 5, missing).sort_values(["run", "query_id"], kind="mergesort")
    pd.testing.assert_frame_equal(inc, want.reset_index(drop=True))
    assert (n1["computed"], n2["computed"], n2["cached"]) == (4, 1, 3)
    for m in ("cover", "ncover"):
        pd.testing.assert_frame_equal(cover_leaderboard(inc, m), cover_leaderboard(want, m))  # type: ignore[arg-type]
