"""Rubric-Cover / EXAM-Cover: how many of a query's test items a system's top-k passages cover.

For one system and query: cover = |items graded >= tau in any of the system's top-k passages| /
|items of the query that were graded|; n-cover divides instead by the items that ANY pooled passage
covers. A system's score is the mean over queries with its standard error (sample stdev / sqrt(n)).

Matches the workbench's ``compute_exam_cover_scores`` on the same graded file:

- a query whose pool covers none of its items has n-cover 0 and is kept in the mean (the workbench's
  ``frac`` returns 0 for a zero denominator);
- a query where the system's top-k holds no graded passage (no row in the grades table: the passage is
  not in the pool) is skipped under ``missing_queries="skip"`` (the workbench never sees the system for
  that query) and scores 0 under ``"zero"``; a query the system returned nothing for is treated alike;
- the top-k is taken in trec_eval order (score desc, doc id desc); ``export-workbench`` writes that rank,
  so the workbench's rank cut-off selects the same passages.

>>> import pandas as pd
>>> grades = pd.DataFrame({"query_id": ["q"] * 4, "passage_id": ["a", "a", "b", "b"],
...                        "item_id": ["i1", "i2", "i1", "i2"], "grade": [5, 0, 0, 0]})
>>> rankings = pd.DataFrame({"run": ["s"], "query_id": ["q"], "passage_id": ["a"], "score": [1.0]})
>>> cover_per_query(grades, rankings, threshold=4, depth=20)[["run", "cover", "ncover"]].values.tolist()
[['s', 0.5, 1.0]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from autograde.core.errors import InvalidValueError
from autograde.core.layout import MissingQueries
from autograde.core.stats import ranks_desc
from autograde.io.trec import trec_ranked

if TYPE_CHECKING:
    from autograde.core.querycache import QueryStats



COVER_COLUMNS = ["run", "query_id", "covered", "items", "pool_covered", "cover", "ncover"]


def cover_per_query(grades: pd.DataFrame, rankings: pd.DataFrame, threshold: int, depth: int,
                    missing_queries: MissingQueries = "skip", runs: Sequence[str] | None = None) -> pd.DataFrame:
    """Per (run, query): covered items, cover and n-cover; columns run, query_id, covered, items, pool_covered, cover,
    ncover. ``runs``: every system (under ``missing_queries="zero"`` each scores on every query; default: the runs of
    ``rankings``)."""
    ok = grades.dropna(subset=["grade"])
    items = ok.groupby("query_id")["item_id"].nunique()
    hits = ok[ok["grade"] >= threshold][["query_id", "passage_id", "item_id"]]
    pool_cov = hits.groupby("query_id")["item_id"].nunique()
    top = trec_ranked(rankings)
    top = top[top["trec_rank"] <= depth][["run", "query_id", "passage_id"]]
    covered = top.merge(hits, on=["query_id", "passage_id"]).groupby(["run", "query_id"])["item_id"].nunique()
    graded = grades[["query_id", "passage_id"]].drop_duplicates()
    present = top.merge(graded, on=["query_id", "passage_id"])[["run", "query_id"]].drop_duplicates()
    if missing_queries == "zero":
        systems = rankings["run"].unique() if runs is None else list(runs)
        present = pd.MultiIndex.from_product([systems, items.index], names=["run", "query_id"]).to_frame(index=False)
    elif missing_queries != "skip":
        raise InvalidValueError(f"missing_queries must be 'skip' or 'zero', got {missing_queries!r}")
    rows = []
    for run, q in present.itertuples(index=False):
        if q not in items.index:
            continue  # no graded items for this query: nothing to cover
        c = int(covered.get((run, q), 0))
        pc = int(pool_cov.get(q, 0))
        rows.append((run, q, c, int(items[q]), pc, c / items[q], c / pc if pc else 0.0))
    return pd.DataFrame(rows, columns=COVER_COLUMNS)


COVER_VERSION = 1
"""Bumped when what :func:`cover_per_query` computes changes (stored per-query values of older code are unused)."""


def cover_cached(grades: pd.DataFrame, rankings_path: str | Path, threshold: int, depth: int,
                 missing_queries: MissingQueries, cache_dir: str | Path | None) -> tuple[pd.DataFrame, QueryStats]:
    """:func:`cover_per_query` over the rankings table at ``rankings_path``, rows sorted by run and query, computing
    only the queries whose grades or rankings changed since a stored computation (the per-query cache of
    ``cache_dir``; None: none). A query's key is its grade rows, every run's rows for it, the run list, the
    threshold, the depth, the policy and :data:`COVER_VERSION`."""
    from autograde.core.querycache import QueryCache
    from autograde.pipeline.perquery import query_digests, rankings_digests, read_rankings

    digests = rankings_digests(rankings_path, cache_dir)
    graded = query_digests(grades, ["passage_id", "item_id", "grade"])
    cache = QueryCache(cache_dir, "cover", COVER_VERSION)
    keys = {q: cache.key({"grades": graded[q], "rankings": digests.of(q), "runs": digests.runs,
                          "threshold": int(threshold), "depth": int(depth), "missing": missing_queries})
            for q in sorted(graded)}

    def compute(queries: list[str]) -> dict[str, list[list[Any]]]:
        sub = grades[grades["query_id"].isin(set(queries))]
        per_q = cover_per_query(sub, read_rankings(rankings_path, queries, digests), threshold, depth,
                                missing_queries, digests.runs)
        out: dict[str, list[list[Any]]] = {q: [] for q in queries}
        for run, q, c, n, pc, cov, ncov in per_q.itertuples(index=False):
            out[str(q)].append([str(run), str(q), int(c), int(n), int(pc), float(cov), float(ncov)])
        return out

    values = cache.values(keys, compute)
    rows = sorted((tuple(r) for q in keys for r in values[q]), key=lambda r: (r[0], r[1]))
    return pd.DataFrame(rows, columns=COVER_COLUMNS), cache.stats


def _mean_stderr(values: pd.Series) -> tuple[float, float, int]:
    v = values.dropna()
    n = len(v)
    if n == 0:
        return math.nan, math.nan, 0
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0, n


def cover_leaderboard(per_query: pd.DataFrame, measure: Literal["cover", "ncover"]) -> pd.DataFrame:
    """Mean over queries with standard error, best first: rank, run, score, stderr, n_queries."""
    rows = [(run, *_mean_stderr(g[measure])) for run, g in per_query.groupby("run", sort=True)]
    lb = pd.DataFrame(rows, columns=["run", "score", "stderr", "n_queries"])
    lb["rank"] = ranks_desc(lb["score"].fillna(-1).to_numpy())
    lb = lb.sort_values(["rank", "run"], kind="mergesort")
    return lb[["rank", "run", "score", "stderr", "n_queries"]].reset_index(drop=True)
