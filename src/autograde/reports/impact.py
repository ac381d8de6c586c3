"""Bank impact: how a leaderboard changes when one test item is removed.

For item ``i`` of query ``q`` only ``q``'s passage labels can change, so only ``q`` is re-evaluated: its
Rubric-Qrels labels are rebuilt without ``i`` and every system is evaluated on ``q`` alone (all systems in
one trec_eval call, one pseudo-query per system); each system's mean then swaps ``q``'s old value for the
new one (or drops ``q`` when no label is left). The result is Kendall's tau-b between the full and the
reduced leaderboard, the largest rank shift of a system, and how many passage labels changed. An item whose
removal changes no label (in max mode: it is nowhere the only item with the passage's max grade) leaves the
leaderboard as it is (tau 1) without an evaluation.

Means are arithmetic over the evaluated queries, as trec_eval's "all" line for every measure except
``gm_*`` / ``num_*`` (those are not supported here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from autograde.core.stats import correlation, rank_scores
from autograde.io.trec import RunDict
from autograde.metrics.trec import evaluate_run
from autograde.pipeline.qrels import QrelsMode, relevance_level, rubric_qrels

if TYPE_CHECKING:
    from autograde.core.querycache import QueryStats

IMPACT_COLUMNS = ["variant", "measure", "query_id", "item_id", "kendall", "max_rank_shift", "top_changed",
                  "relabelled", "query_dropped"]


def _compare(full: pd.Series, reduced: pd.Series) -> tuple[float, float, bool]:
    """Kendall tau-b, max |rank shift| and whether the best system changed."""
    a, b = full.to_numpy(dtype=float), reduced.reindex(full.index).to_numpy(dtype=float)
    ra, rb = rank_scores(np.nan_to_num(a, nan=-np.inf)), rank_scores(np.nan_to_num(b, nan=-np.inf))
    tau = correlation("kendall", ra, rb) if len(a) > 1 else float("nan")
    top_a = set(full.index[ra == ra.min()]) if len(a) else set()
    top_b = set(full.index[rb == rb.min()]) if len(a) else set()
    return tau, float(np.abs(ra - rb).max()) if len(a) else 0.0, top_a != top_b


ItemValues = list[Any]
"""One item of a query without it: ``[item_id, relabelled, query_dropped, values]`` with ``values`` (system -> measure
-> value on the query) None when no label changes."""


def query_reevaluations(gq: pd.DataFrame, runs: dict[str, RunDict], q: str, mode: QrelsMode, threshold: int,
                        measures: Sequence[str], missing_queries: str = "zero") -> list[ItemValues]:
    """Every item of query ``q`` (grades ``gq``, that query's rows only) left out in turn: how many passage labels
    change, whether the query loses every label, and every system's values on ``q`` without the item."""
    level = relevance_level(mode, threshold)
    systems = sorted(runs)
    full_labels = rubric_qrels(gq, mode, threshold).get(str(q), {})
    out: list[ItemValues] = []
    for item in sorted(gq["item_id"].unique()):
        labels = rubric_qrels(gq[gq["item_id"] != item], mode, threshold).get(str(q), {})
        relabelled = sum(1 for p, v in full_labels.items() if labels.get(p) != v)
        dropped = not labels
        if relabelled == 0 and not dropped:  # no label changes: the leaderboard is the full one
            out.append([item, 0, False, None])
            continue
        new_vals: dict[str, dict[str, float]] = {}
        if not dropped:
            pseudo_qrels = {s: labels for s in systems}  # one pseudo-query per system: one trec_eval call
            pseudo_run = {s: runs[s][q] for s in systems if q in runs[s]}
            new_vals = evaluate_run(pseudo_qrels, pseudo_run, measures, level, missing_queries)  # type: ignore[arg-type]
        out.append([item, relabelled, dropped, {s: {m: float(v[m]) for m in measures if m in v}
                                                for s, v in new_vals.items()}])
    return out


def bank_impact(grades: pd.DataFrame, runs: dict[str, RunDict], evaluation: pd.DataFrame, mode: QrelsMode,
                threshold: int, measures: Sequence[str], missing_queries: str = "zero",
                variant: str | None = None) -> pd.DataFrame:
    """One row per (measure, item): the leaderboard without that item vs the full one (see the module doc).

    ``evaluation`` is the variant's per-query evaluation (run, query_id, measure, value; the "all" rows are
    ignored) computed from the same grades; ``runs`` are the systems (run -> query -> doc -> score).
    """
    measures = _measures(evaluation, measures)
    g = grades[["query_id", "passage_id", "item_id", "grade"]]
    per_query = {str(q): query_reevaluations(gq, runs, str(q), mode, threshold, measures, missing_queries)
                 for q, gq in g.groupby("query_id", sort=True)}
    return impact_table(per_query, sorted(runs), evaluation, mode, threshold, measures, variant)


def _measures(evaluation: pd.DataFrame, measures: Sequence[str]) -> list[str]:
    """The measures of ``measures`` the evaluation has (result keys such as ``P_10``; a bare ``P`` is left out)."""
    have = set(evaluation.loc[evaluation["query_id"] != "all", "measure"])
    return [m for m in measures if m in have]


IMPACT_VERSION = 1
"""Bumped when what :func:`query_reevaluations` computes changes (stored per-query values of older code are unused)."""


def bank_impact_cached(grades: pd.DataFrame, rankings_path: str | Path, evaluation: pd.DataFrame, mode: QrelsMode,
                       threshold: int, measures: Sequence[str], missing_queries: str, variant: str | None,
                       cache_dir: str | Path | None) -> tuple[pd.DataFrame, QueryStats]:
    """:func:`bank_impact` over the rankings table at ``rankings_path``: each query's re-evaluations (the costly
    part: one trec_eval call per item) computed only when its grades or rankings changed, the others read from the
    per-query cache of ``cache_dir`` (None: none); the leaderboard comparisons are then made from them and the
    evaluation as a full computation makes them (they change with every query's values)."""
    from importlib.metadata import version

    from autograde.core.querycache import QueryCache
    from autograde.pipeline.leaderboard import runs_from_rankings
    from autograde.pipeline.perquery import query_digests, rankings_digests, read_rankings

    measures = _measures(evaluation, measures)
    g = grades[["query_id", "passage_id", "item_id", "grade"]]
    digests = rankings_digests(rankings_path, cache_dir)
    graded = query_digests(g)
    cache = QueryCache(cache_dir, "impact", f"{IMPACT_VERSION}/{version('pytrec-eval-terrier')}")
    keys = {q: cache.key({"grades": graded[q], "rankings": digests.of(q), "runs": digests.runs, "mode": mode,
                          "threshold": int(threshold), "measures": measures, "missing": missing_queries})
            for q in sorted(graded)}

    def compute(queries: list[str]) -> dict[str, list[ItemValues]]:
        runs = runs_from_rankings(read_rankings(rankings_path, queries, digests), digests.runs)
        sub = g[g["query_id"].isin(set(queries))]
        return {str(q): query_reevaluations(gq, runs, str(q), mode, threshold, measures, missing_queries)
                for q, gq in sub.groupby("query_id", sort=True)}

    per_query = cache.values(keys, compute)
    return impact_table(per_query, digests.runs, evaluation, mode, threshold, measures, variant), cache.stats


def impact_table(per_query: Mapping[str, Sequence[ItemValues]], systems: Sequence[str], evaluation: pd.DataFrame,
                 mode: QrelsMode, threshold: int, measures: Sequence[str], variant: str | None = None) -> pd.DataFrame:
    """The impact rows from each query's re-evaluations (:func:`query_reevaluations`) and the full evaluation."""
    variant = variant or f"{mode}-{threshold}"
    per_q = evaluation[evaluation["query_id"] != "all"]
    systems = sorted(systems)
    # per measure: values[system, query] (NaN = not evaluated), and each system's sum and count over queries
    tables, sums, counts, fulls = {}, {}, {}, {}
    for m in measures:
        t = per_q[per_q["measure"] == m].pivot(index="run", columns="query_id", values="value").reindex(index=systems)
        tables[m] = t
        v = t.to_numpy(dtype=float)
        sums[m], counts[m] = np.nansum(v, axis=1), (~np.isnan(v)).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            fulls[m] = pd.Series(sums[m] / counts[m], index=systems)
    same = {m: _compare(fulls[m], fulls[m]) for m in measures}
    rows: list[tuple[str, str, Any, Any, float, float, bool, int, bool]] = []  # query and item ids as grouped
    for q in sorted(per_query):
        for item, relabelled, dropped, values in per_query[q]:
            if values is None:  # no label changes: the leaderboard is the full one
                rows.extend((variant, m, q, item, *same[m], 0, False) for m in measures)
                continue
            for m in measures:
                old = tables[m][q].to_numpy(dtype=float) if q in tables[m].columns else np.full(len(systems), np.nan)
                new = np.array([values.get(s, {}).get(m, np.nan) for s in systems], dtype=float)
                total = sums[m] - np.nan_to_num(old) + np.nan_to_num(new)
                n = counts[m] - ~np.isnan(old) + ~np.isnan(new)
                with np.errstate(invalid="ignore", divide="ignore"):
                    reduced = pd.Series(np.where(n > 0, total / np.where(n > 0, n, 1), np.nan), index=systems)
                tau, shift, top = _compare(fulls[m], reduced)
                rows.append((variant, m, q, item, tau, shift, top, int(relabelled), bool(dropped)))
    return pd.DataFrame(rows, columns=IMPACT_COLUMNS)
