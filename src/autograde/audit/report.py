"""Markdown of the judge audit: the meta-evaluation tables, the judge x collection table and the robustness audit.

Numbers have 3 decimals; an interval is written ``value [low, high]``; NaN is ``–``.

>>> cell(0.51234), cell(float("nan")), interval({"k": 0.5, "k_low": 0.25, "k_high": 0.75}, "k")
('0.512', '–', '0.500 [0.250, 0.750]')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from autograde.metrics.report import markdown_table


def cell(x: Any) -> str:
    """A number with 3 decimals (integers as they are), NaN or None as ``–``."""
    if x is None or (isinstance(x, float) and x != x):
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) >= 2):
        return str(int(x))
    if isinstance(x, float):
        return f"{x:.3f}"
    return str(x)


def interval(row: Mapping[str, Any], name: str) -> str:
    """``value [low, high]`` of ``name`` in a row (the value alone when it has no interval)."""
    lo, hi = row.get(f"{name}_low"), row.get(f"{name}_high")
    if lo is None or hi is None or lo != lo or hi != hi:
        return cell(row.get(name))
    return f"{cell(row.get(name))} [{cell(lo)}, {cell(hi)}]"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    return markdown_table(list(headers), [list(r) for r in rows]) + "\n"


def labels_markdown(labels: pd.DataFrame) -> str:
    """Label-level agreement: one row per (grader, variant)."""
    rows = [(r["grader"], r["variant"], f"≥{r['threshold']} / ≥{r['relevant_level']}",
             f"{r['n_covered']} of {r['n_judged']}", cell(r["kappa"]), cell(r["kappa_linear"]), cell(r["alpha_ordinal"]),
             f"{cell(r['topic_kappa_median'])} [{cell(r['topic_kappa_q10'])}, {cell(r['topic_kappa_q90'])}]",
             str(r["topic_kappa_n"])) for r in labels.to_dict("records")]
    return _table(["grader", "variant", "label / judgment", "judged covered", "κ binary", "κ linear",
                   "α ordinal", "per-topic κ median [10%, 90%]", "topics"], rows)


def systems_markdown(systems: pd.DataFrame, top_k: Sequence[int]) -> str:
    """System-level agreement: one row per (grader, variant, measure), intervals in brackets."""
    names = ["kendall", "tau_ap", "spearman", *(f"kendall@{k}" for k in top_k)]
    rows = [(r["grader"], r["variant"], r["measure"], str(r["n_systems"]), str(r["n_queries"]),
             *(interval(r, n) for n in names),
             f"{cell(r['topic_tau_median'])} [{cell(r['topic_tau_q10'])}, {cell(r['topic_tau_q90'])}]")
            for r in systems.to_dict("records")]
    return _table(["grader", "variant", "measure", "systems", "queries", "Kendall τ", "τ-ap", "Spearman ρ",
                   *(f"top-{k} τ" for k in top_k), "per-topic τ median [10%, 90%]"], rows)


def meta_markdown(labels: pd.DataFrame, systems: pd.DataFrame | None, top_k: Sequence[int], title: str) -> str:
    """The meta-evaluation report: label level, then system level (when there are leaderboards)."""
    parts = [f"# {title}\n\n## Label level\n\n", labels_markdown(labels) if len(labels) else "_no labels_\n"]
    if systems is not None:
        parts += ["\n## System level\n\nIntervals: bootstrap percentile over queries.\n\n",
                  systems_markdown(systems, top_k) if len(systems) else "_no leaderboards_\n"]
    return "".join(parts)


def judge_table_markdown(long: pd.DataFrame, statistics: Sequence[str]) -> str:
    """Judge x collection tables (one per statistic) from the long table (judge, collection, statistic values)."""
    parts = []
    collections = list(dict.fromkeys(long["collection"]))
    for stat in statistics:
        if stat not in long:
            continue
        wide = long.pivot_table(index="judge", columns="collection", values=stat, aggfunc="first")
        rows = [(judge, *(cell(wide.loc[judge, c]) if c in wide.columns else "–" for c in collections))
                for judge in wide.index]
        parts += [f"\n### {stat}\n\n", _table(["judge", *collections], rows)]
    return "".join(parts).lstrip("\n")


def robustness_markdown(grader: str, summary: pd.DataFrame, leaderboard: pd.DataFrame, stats: Mapping[str, Any]
                        ) -> str:
    """One grader's robustness audit: shifts and lifts per perturbation, then the leaderboard consequence."""
    rows = [(r["perturbation"], str(r["n"]), interval(r, "mean_shift"), f"{r['lifted']} of {r['n_nonrelevant']}",
             interval(r, "lifted_share"), cell(r["unchanged_share"])) for r in summary.to_dict("records")]
    parts = [f"## {grader}\n\n{stats.get('sampled_pairs')} sampled pairs, relevant at grade ≥ {stats.get('threshold')}, "
             f"seed {stats.get('seed')}.\n\n",
             _table(["perturbation", "copies", "mean grade shift", "non-relevant lifted", "lifted share",
                     "unchanged"], rows)]
    if len(leaderboard):
        lb = [(r["perturbation"], r["system"], r["measure"], f"{cell(r['rank_before'])} → {cell(r['rank_after'])} "
               f"of {r['n_systems']}", f"{cell(r['score_before'])} → {cell(r['score_after'])}", str(r["passages"]))
              for r in leaderboard.to_dict("records")]
        parts += ["\n", _table(["perturbation", "system", "measure", "rank", "score", "passages perturbed"], lb)]
    return "".join(parts)
