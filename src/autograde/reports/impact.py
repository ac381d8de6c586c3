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

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from autograde.core.stats import correlation, ranks_desc
from autograde.io.trec import RunDict
from autograde.metrics.trec import evaluate_run
from autograde.pipeline.qrels import QrelsMode, relevance_level, rubric_qrels

IMPACT_COLUMNS = ["variant", "measure", "query_id", "item_id", "kendall", "max_rank_shift", "top_changed",
                  "relabelled", "query_dropped"]


def _compare(full: pd.Series, reduced: pd.Series) -> tuple[float, float, bool]:
    """Kendall tau-b, max |rank shift| and whether the best system changed."""
    a, b = full.to_numpy(dtype=float), reduced.reindex(full.index).to_numpy(dtype=float)
    ra, rb = ranks_desc(np.nan_to_num(a, nan=-np.inf)), ranks_desc(np.nan_to_num(b, nan=-np.inf))
    tau = correlation("kendall", ra, rb) if len(a) > 1 else float("nan")
    top_a = set(full.index[ra == ra.min()]) if len(a) else set()
    top_b = set(full.index[rb == rb.min()]) if len(a) else set()
    return tau, float(np.abs(ra - rb).max()) if len(a) else 0.0, top_a != top_b


def bank_impact(grades: pd.DataFrame, runs: dict[str, RunDict], evaluation: pd.DataFrame, mode: QrelsMode,
                threshold: int, measures: Sequence[str], missing_queries: str = "zero",
                variant: str | None = None) -> pd.DataFrame:
    """One row per (measure, item): the leaderboard without that item vs the full one (see the module doc).

    ``evaluation`` is the variant's per-query evaluation (run, query_id, measure, value; the "all" rows are
    ignored) computed from the same grades; ``runs`` are the systems (run -> query -> doc -> score).
    """
    variant = variant or f"{mode}-{threshold}"
    level = relevance_level(mode, threshold)
    per_q = evaluation[evaluation["query_id"] != "all"]
    measures = [m for m in measures if m in set(per_q["measure"])]
    systems = sorted(runs)
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
    g = grades[["query_id", "passage_id", "item_id", "grade"]]
    rows: list[tuple[str, str, Any, Any, float, float, bool, int, bool]] = []  # query and item ids as grouped
    for q, gq in g.groupby("query_id", sort=True):
        full_labels = rubric_qrels(gq, mode, threshold).get(str(q), {})
        for item in sorted(gq["item_id"].unique()):
            labels = rubric_qrels(gq[gq["item_id"] != item], mode, threshold).get(str(q), {})
            relabelled = sum(1 for p, v in full_labels.items() if labels.get(p) != v)
            dropped = not labels
            if relabelled == 0 and not dropped:  # no label changes: the leaderboard is the full one
                rows.extend((variant, m, q, item, *same[m], 0, False) for m in measures)
                continue
            new_vals: dict[str, dict[str, float]] = {}
            if not dropped:
                pseudo_qrels = {s: labels for s in systems}  # one pseudo-query per system: one trec_eval call
                pseudo_run = {s: runs[s][q] for s in systems if q in runs[s]}
                new_vals = evaluate_run(pseudo_qrels, pseudo_run, measures, level, missing_queries)  # type: ignore[arg-type]
            for m in measures:
                old = tables[m][q].to_numpy(dtype=float) if q in tables[m].columns else np.full(len(systems), np.nan)
                new = np.array([new_vals.get(s, {}).get(m, np.nan) for s in systems], dtype=float)
                total = sums[m] - np.nan_to_num(old) + np.nan_to_num(new)
                n = counts[m] - ~np.isnan(old) + ~np.isnan(new)
                with np.errstate(invalid="ignore", divide="ignore"):
                    reduced = pd.Series(np.where(n > 0, total / np.where(n > 0, n, 1), np.nan), index=systems)
                tau, shift, top = _compare(fulls[m], reduced)
                rows.append((variant, m, q, item, tau, shift, top, relabelled, dropped))
    return pd.DataFrame(rows, columns=IMPACT_COLUMNS)
