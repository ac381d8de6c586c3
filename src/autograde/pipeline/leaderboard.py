"""Leaderboards (trec_eval measures per system) and their rank correlation with an official leaderboard.

Predicted ranks are ``rankdata(-score, method="average")``; official ranks come from ``{run: rank}``
(ties as average ranks); Spearman and Kendall tau-b from scipy, over the systems in both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from autograde.core.errors import UnknownNameError
from autograde.core.stats import ranks_desc
from autograde.io.trec import Qrels, RunDict
from autograde.metrics.trec import evaluate_run, mean_over_queries, query_sort_key

if TYPE_CHECKING:
    from autograde.core.layout import Leaderboard
    from autograde.core.querycache import QueryStats


def runs_from_rankings(rankings: pd.DataFrame, runs: Iterable[str] = ()) -> dict[str, RunDict]:
    """run -> query -> passage -> score, runs and queries in the order of their first row; every run of ``runs`` is
    there even without a row (an empty run). In bulk (one sort), not a Python step per row."""
    import numpy as np

    out: dict[str, RunDict] = {r: {} for r in runs}
    if rankings.empty:
        return out
    run_codes, run_names = pd.factorize(rankings["run"])
    q_codes, q_names = pd.factorize(rankings["query_id"])
    group = run_codes.astype(np.int64) * len(q_names) + q_codes
    order = np.argsort(group, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(group[order])) + 1]
    ends = np.r_[starts[1:], len(order)]
    passages = rankings["passage_id"].to_numpy(dtype=object)[order].tolist()
    scores = rankings["score"].to_numpy(dtype=float)[order].tolist()
    first = order[starts]  # each group's first row (the sort is stable)
    for i in np.argsort(first, kind="stable").tolist():
        a, b = int(starts[i]), int(ends[i])
        g = int(group[order[a]])
        run, q = str(run_names[g // len(q_names)]), str(q_names[g % len(q_names)])
        out.setdefault(run, {})[q] = dict(zip(passages[a:b], scores[a:b], strict=True))
    return out


QueryValues = dict[str, dict[str, float]]
"""One query's evaluation: run -> measure -> value (runs without a value for the query left out)."""


def evaluate_queries(qrels: Qrels, runs: dict[str, RunDict], queries: Iterable[str], measures: list[str],
                     relevance_level: int, missing_queries: str = "zero") -> dict[str, QueryValues]:
    """Every run's trec_eval values on each of ``queries`` (judged ones; run-major as trec_eval computes them).

    A query's values depend only on its own judgments and rankings, so evaluating some queries gives exactly the
    values a full evaluation gives them."""
    wanted = [q for q in queries if qrels.get(q)]
    sub = {q: qrels[q] for q in wanted}
    out: dict[str, QueryValues] = {q: {} for q in wanted}
    if not wanted:
        return out
    for run in sorted(runs):
        ranking = {q: runs[run][q] for q in wanted if q in runs[run]}
        per_q = evaluate_run(sub, ranking, measures, relevance_level, missing_queries)  # type: ignore[arg-type]
        for q, vals in per_q.items():
            out[q][run] = {m: float(v) for m, v in vals.items()}
    return out


def systems_table(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], runs: Iterable[str]) -> pd.DataFrame:
    """The evaluation table from per-query values (query -> run -> measure -> value): columns run, query_id, measure,
    value, plus each run's query ``all`` (trec_eval's summary over the queries it has values for)."""
    qids = sorted(per_query, key=query_sort_key)
    rows: list[tuple[str, str, str, float]] = []
    for run in sorted(set(runs)):
        per_q = {q: per_query[q][run] for q in qids if run in per_query[q]}
        keys = sorted({m for v in per_q.values() for m in v})
        for q, vals in per_q.items():
            rows.extend((run, q, m, float(vals[m])) for m in keys)
        for m, v in mean_over_queries(per_q, keys).items():
            rows.append((run, "all", m, float(v)))
    return pd.DataFrame(rows, columns=["run", "query_id", "measure", "value"])


def evaluate_systems(qrels: Qrels, runs: dict[str, RunDict], measures: list[str], relevance_level: int,
                     missing_queries: str = "zero") -> pd.DataFrame:
    """Per-query values of every system: columns run, query_id, measure, value (plus query 'all')."""
    per_query = evaluate_queries(qrels, runs, list(qrels), measures, relevance_level, missing_queries)
    return systems_table(per_query, runs)


EVALUATION_VERSION = 1
"""Bumped when what :func:`evaluate_queries` computes changes (stored per-query values of older code are unused)."""


def evaluate_cached(qrels: Qrels, rankings_path: str | Path, measures: list[str], relevance_level: int,
                    missing_queries: str, cache_dir: str | Path | None) -> tuple[pd.DataFrame, QueryStats]:
    """:func:`evaluate_systems` over the rankings table at ``rankings_path``, computing only the queries whose
    judgments or rankings changed since a stored evaluation (the per-query cache of ``cache_dir``; None: none).

    A query's key is its judgments, every run's rows for it, the run list (a run without rows for it scores 0
    under ``missing_queries: zero``), the measures, the relevance level, the policy, and the evaluator's version
    (ours and trec_eval's); the table is then built from the per-query values as a full evaluation builds it."""
    from importlib.metadata import version

    from autograde.core.querycache import QueryCache
    from autograde.pipeline.perquery import qrels_digests, rankings_digests, read_rankings

    digests = rankings_digests(rankings_path, cache_dir)
    cache = QueryCache(cache_dir, "evaluate", f"{EVALUATION_VERSION}/{version('pytrec-eval-terrier')}")
    judged = qrels_digests({q: d for q, d in qrels.items() if d})
    keys = {q: cache.key({"qrels": judged[q], "rankings": digests.of(q), "runs": digests.runs, "measures": measures,
                          "level": int(relevance_level), "missing": missing_queries})
            for q in sorted(judged, key=query_sort_key)}

    def compute(queries: list[str]) -> dict[str, QueryValues]:
        runs = runs_from_rankings(read_rankings(rankings_path, queries, digests), digests.runs)
        return evaluate_queries(qrels, runs, queries, measures, relevance_level, missing_queries)

    per_query = cache.values(keys, compute)
    return systems_table(per_query, digests.runs), cache.stats


def leaderboard(evaluation: pd.DataFrame, measure: str) -> pd.DataFrame:
    """One measure's mean per system, best first: columns rank, run, score, n_queries."""
    allrows = evaluation[(evaluation["query_id"] == "all") & (evaluation["measure"] == measure)]
    if allrows.empty:
        known = sorted(evaluation["measure"].unique())
        raise UnknownNameError(f"measure {measure!r} not in the evaluation; have: {', '.join(known)}")
    nq = evaluation[(evaluation["query_id"] != "all") & (evaluation["measure"] == measure)].groupby("run").size()
    lb = allrows[["run", "value"]].rename(columns={"value": "score"}).copy()
    lb["n_queries"] = lb["run"].map(nq).fillna(0).astype(int)
    lb["rank"] = ranks_desc(lb["score"].to_numpy())
    lb = lb.sort_values(["rank", "run"], kind="mergesort")
    return lb[["rank", "run", "score", "n_queries"]].reset_index(drop=True)


def rank_correlation(lb: pd.DataFrame, official: dict[str, float]) -> dict[str, float | int]:
    """Spearman and Kendall tau-b between a leaderboard and official ranks, over common systems.

    The statistics are :mod:`autograde.core.stats`' (the correlation report's bootstrap uses the same functions).
    """
    import numpy as np

    from autograde.core.stats import kendall_matrix, spearman_matrix

    common = [r for r in lb["run"] if r in official]
    if len(common) < 2:
        return {"n_systems": len(common), "spearman": float("nan"), "kendall": float("nan")}
    sub = lb.set_index("run").loc[common]
    ours = sub["score"].to_numpy(dtype=float)[None, :]
    truth = -ranks_desc([-official[r] for r in common])  # official rank 1 is best; higher = better
    return {"n_systems": len(common), "spearman": float(spearman_matrix(ours, truth)[0]),
            "kendall": float(np.asarray(kendall_matrix(ours, truth))[0])}


def leaderboard_values(lb: Leaderboard, tables: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """The per-query values a leaderboard was averaged from: rows run, query_id, value (trec_eval's summary rows
    left in; :func:`autograde.metrics.rank_agreement.system_query_matrix` leaves them out). ``tables`` keeps each
    table read once when several leaderboards share it."""
    from autograde.core.tables import read_table

    tables = tables if tables is not None else {}
    if lb.per_query not in tables:
        tables[lb.per_query] = read_table(lb.per_query)
    df = tables[lb.per_query]
    if lb.column == "value" and "measure" in df.columns:
        df = df[df["measure"] == lb.measure]
    return df[["run", "query_id", lb.column]].rename(columns={lb.column: "value"})
