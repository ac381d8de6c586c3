"""LLM-RUBRIC's Table 1 from held-out predictions: RMSE, Pearson, Spearman and Kendall of every system's
main-question prediction, mean ± standard deviation over seeds, and the paired permutation test's marks; as
Markdown and as LaTeX.

The test (as the paper's superscripts): for two systems A and B scored on the same annotations, each resample
swaps A's and B's predictions of every annotation independently with probability 1/2 and recomputes the metric
difference; p = (1 + resamples with |difference| >= observed) / (1 + resamples), two-sided. A system's cell
carries the mark of every other system it beats with p < 0.05 in every seed (RMSE and Pearson columns; the
same sign flips are shared by all pairs of a seed).

An undefined metric (the Pearson correlation of a constant predictor, such as the training mean) is NaN end to
end: its cell reads "n/a", its mean over seeds is NaN when any seed's is, and no test is run against it (p NaN:
no win and no loss), since a permutation test of an undefined difference means nothing.

>>> t = np.array([1.0, 2.0, 3.0, 4.0] * 10); good = t + 0.1; bad = t[::-1].copy()
>>> p = swap_test(good, bad, t, "rmse", 999, np.random.default_rng(0))
>>> p < 0.01
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograde.core.stats import is_constant
from autograde.rubric.evaluate import METRICS, score
from autograde.rubric.systems import LABELS

__all__ = ["SeedPredictions", "latex_table", "table1_markdown", "swap_test", "table1"]

MARKED: tuple[str, ...] = ("rmse", "pearson")
EXTRA_MARKS = {"constant": "C", "judge_mean": "J", "judge_isotonic": "I"}
_CHUNK = 2000


@dataclass
class SeedPredictions:
    """One seed's main-question predictions per system and the judges' answers, on the same annotations."""

    seed: int
    predictions: dict[str, np.ndarray]
    truth: np.ndarray


def _metric_rows(pred: np.ndarray, truth: np.ndarray, metric: str) -> np.ndarray:
    """``metric`` of every row of ``pred`` (resamples x annotations) against ``truth``."""
    if metric == "rmse":
        return np.sqrt(np.mean((pred - truth) ** 2, axis=1))
    tc = truth - truth.mean()
    pc = pred - pred.mean(axis=1, keepdims=True)
    denom = np.sqrt((pc**2).sum(axis=1)) * np.sqrt((tc**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return (pc @ tc) / denom


def swap_test(a: np.ndarray, b: np.ndarray, truth: np.ndarray, metric: str, resamples: int,
              rng: np.random.Generator | None = None, swaps: np.ndarray | None = None) -> float:
    """Two-sided p of the paired swap permutation test of ``metric`` (module doc); ``swaps`` (resamples x
    annotations, bool) are drawn from ``rng`` unless given."""
    if swaps is None:
        assert rng is not None
        swaps = rng.random((resamples, len(a))) < 0.5
    if metric != "rmse" and (is_constant(a) or is_constant(b) or is_constant(truth)):
        return float("nan")  # the correlation of a constant is undefined (module doc)
    observed = _metric_rows(a[None, :], truth, metric)[0] - _metric_rows(b[None, :], truth, metric)[0]
    if math.isnan(observed):
        return float("nan")
    hits = 0
    for start in range(0, len(swaps), _CHUNK):
        s = swaps[start:start + _CHUNK]
        pa, pb = np.where(s, b, a), np.where(s, a, b)
        diff = _metric_rows(pa, truth, metric) - _metric_rows(pb, truth, metric)
        hits += int(np.sum(np.abs(diff) >= abs(observed) - 1e-12))
    return (hits + 1) / (len(swaps) + 1)


def _mark(system: str) -> str:
    return LABELS.get(system, ("", ""))[0] or EXTRA_MARKS.get(system, system)


def _summary(values: list[float]) -> dict[str, float]:
    """Mean and sd over seeds; NaN when any seed's value is undefined."""
    arr = np.array(values, dtype=np.float64)
    if not len(arr) or np.isnan(arr).any():
        return {"mean": float("nan"), "std": float("nan")}
    return {"mean": float(arr.mean()), "std": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0}


def table1(runs: list[SeedPredictions], resamples: int, seed: int = 0) -> dict[str, Any]:
    """Scores per seed, mean ± sd, pairwise test p-values per seed and the marks of every system."""
    systems = list(runs[0].predictions)
    per_seed: list[dict[str, Any]] = []
    wins: dict[str, dict[str, dict[str, int]]] = {m: {s: {} for s in systems} for m in MARKED}
    for run in runs:
        ok = ~np.isnan(run.truth)
        t = run.truth[ok]
        scores = {s: score(run.predictions[s][ok], t) for s in systems}
        swaps = np.random.default_rng([seed, run.seed]).random((resamples, int(ok.sum()))) < 0.5
        tests: dict[str, dict[str, float]] = {}
        for i, a in enumerate(systems):
            for b in systems[i + 1:]:
                pa, pb = run.predictions[a][ok], run.predictions[b][ok]
                for m in MARKED:
                    defined = not (math.isnan(scores[a][m]) or math.isnan(scores[b][m]))
                    p = swap_test(pa, pb, t, m, resamples, swaps=swaps) if defined else float("nan")
                    tests.setdefault(f"{a} vs {b}", {})[m] = p
                    better_a = scores[a][m] < scores[b][m] if m == "rmse" else scores[a][m] > scores[b][m]
                    winner, loser = (a, b) if better_a else (b, a)
                    if not math.isnan(p) and p < 0.05:
                        wins[m][winner][loser] = wins[m][winner].get(loser, 0) + 1
        per_seed.append({"seed": run.seed, "n": int(ok.sum()), "scores": scores, "tests": tests})
    summary = {s: {m: _summary([ps["scores"][s][m] for ps in per_seed]) for m in METRICS} for s in systems}
    marks = {m: {s: sorted((_mark(o) for o, c in wins[m][s].items() if c == len(runs)), key=_mark_order)
                 for s in systems} for m in MARKED}
    return {"systems": systems, "seeds": [r.seed for r in runs], "resamples": resamples, "summary": summary,
            "marks": marks, "per_seed": per_seed, "rows": per_seed[0]["n"] if per_seed else 0}


def _mark_order(mark: str) -> tuple[int, str]:
    return (0, mark) if mark.isdigit() else (1, mark)


def _cell(report: dict[str, Any], system: str, metric: str, digits: int, latex: bool) -> str:
    s = report["summary"][system][metric]
    if s["mean"] is None or math.isnan(s["mean"]):
        return "n/a"
    text = f"{s['mean']:.{digits}f} ± {s['std']:.{digits}f}" if not latex else \
        f"{s['mean']:.{digits}f} $\\pm$ {s['std']:.{digits}f}"
    marks = "".join(report["marks"].get(metric, {}).get(system, []))
    if marks:
        text += f"$^{{{marks}}}$" if latex else f"<sup>{marks}</sup>"
    return text


def table1_markdown(report: dict[str, Any], title: str) -> str:
    """Table 1 as Markdown (marks as superscripts)."""
    lines = [f"## {title}", "",
             f"{report['rows']} annotations; mean ± sd over seeds {', '.join(map(str, report['seeds']))}; a "
             "superscript lists the rows a system beats with p < 0.05 (paired swap permutation test, "
             f"{report['resamples']} resamples) in every seed, for RMSE and Pearson; n/a: undefined (the "
             "correlation of a constant prediction), never tested.", "",
             "| | system | RMSE ↓ | Pearson ↑ | Spearman ↑ | Kendall ↑ |", "|---|---|---|---|---|---|"]
    for system in report["systems"]:
        mark, name = LABELS.get(system, ("", system))
        lines.append(f"| {mark or EXTRA_MARKS.get(system, '')} | {name} | "
                     + " | ".join(_cell(report, system, m, 3, False) for m in METRICS) + " |")
    return "\n".join(lines) + "\n"


def latex_table(report: dict[str, Any], caption: str) -> str:
    """Table 1 as a LaTeX ``table`` (booktabs)."""
    def esc(text: str) -> str:
        return text.replace("&", "\\&").replace("_", "\\_").replace("%", "\\%")

    lines = ["\\begin{table}", "\\centering", "\\begin{tabular}{llllll}", "\\toprule",
             " & Model & RMSE $\\downarrow$ & Pearson $\\uparrow$ & Spearman $\\uparrow$ & Kendall $\\uparrow$ \\\\",
             "\\midrule"]
    for system in report["systems"]:
        mark, name = LABELS.get(system, ("", system))
        cells = " & ".join(_cell(report, system, m, 3, True) for m in METRICS)
        lines.append(f"{mark or EXTRA_MARKS.get(system, '')} & {esc(name)} & {cells} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", f"\\caption{{{esc(caption)}}}", "\\end{table}"]
    return "\n".join(lines) + "\n"
