"""Markdown reports of calibrated qrels: the cross-validation report (every estimator and every single source,
per fold and overall, label distribution beside the judged one) and the report of applying a saved model."""

from __future__ import annotations

import math
from typing import Any

from autograde.calibrated.thresholds import SHARE_FACTOR

__all__ = ["apply_markdown", "cv_markdown", "shares_table"]


def _k(value: float | None) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"


def shares_table(shares: dict[str, dict[str, float]], columns: dict[str, str]) -> list[str]:
    """Rows: level; columns: the share of that level in each labelling of ``columns`` (key -> heading)."""
    keys = [k for k in columns if k in shares]
    levels = list(shares[keys[0]])
    lines = ["| level | " + " | ".join(columns[k] for k in keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for lv in levels:
        lines.append(f"| {lv} | " + " | ".join(f"{100 * shares[k][lv]:.1f}%" for k in keys) + " |")
    return lines


def cv_markdown(report: dict[str, Any]) -> str:
    """The cross-validation report as Markdown tables."""
    o = report["overall"]
    folds = report["per_fold"]
    rel = report["relevant_level"]
    lines = [f"## Calibrated qrels: Cohen's kappa against the judgments (level >= {rel})", "",
             f"{report['judged']} judged of {report['passages']} passages, {report['queries']} queries, "
             f"{len(report['sources'])} sources, {report['folds']} folds grouped by query (seed {report['seed']}); "
             "every candidate estimator is cross-fitted on inner folds of the training folds and uses thresholds "
             "tuned on its inner held-out predictions; the calibrated labels come from the mean of the candidates' "
             "probabilities (equal weight per kind), thresholds tuned on its inner held-out predictions; a single source "
             "uses the threshold best on the training folds.", "",
             "| estimator | " + " | ".join(f"fold {pf['fold']}" for pf in folds) + " | overall |",
             "|---" * (len(folds) + 2) + "|"]
    names = list(o["per_estimator"])
    for name in names:
        cells = []
        for pf in folds:
            if name in pf["estimators"]:
                cells.append(_k(pf["estimators"][name]))
            elif name.endswith(" (single source)"):
                cells.append(_k(pf["single_sources"][name[: -len(" (single source)")]]["kappa"]))
            else:
                cells.append(_k(pf["single_kappa"]))
        bold = "**" if name.startswith("calibrated") else ""
        lines.append(f"| {bold}{name}{bold} | " + " | ".join(cells) + f" | {bold}{_k(o['per_estimator'][name])}{bold} |")
    lines += ["", "| fold | queries | judged | selected estimator | thresholds | best single on the training folds "
              "| best single on this fold (oracle) |", "|---|---|---|---|---|---|---|"]
    for pf in folds:
        oracle = pf["oracle_single"]
        taus = ", ".join(f"{t:.3f}" for t in pf["thresholds"])
        lines.append(f"| {pf['fold']} | {pf['queries']} | {pf['judged']} | {pf['selected']} | {taus} | "
                     f"{pf['single_source']} >= {pf['single_threshold']}: {_k(pf['single_kappa'])} | "
                     f"{oracle['source']} >= {oracle['threshold']}: {_k(oracle['kappa'])} |")
    b = o["best_single"]
    lines += ["", f"Overall (pooled held-out decisions): calibrated kappa **{_k(o['kappa'])}**; best single source "
              f"at its best threshold on all judged passages (an oracle) {b['source']} >= {b['threshold']}: "
              f"{_k(b['kappa'])}; graded labels, linear weighted kappa {_k(o.get('graded_kappa_linear'))}.", ""]
    if report.get("label_shares"):
        lines += ["Label distribution (labels of the held-out folds):", ""]
        lines += shares_table(report["label_shares"], {"judged": "judged", "labels_of_judged":
                                                       "calibrated, judged passages",
                                                       "labels_of_all": "calibrated, all passages"})
        lines.append("")
    ratios = report.get("share_ratios")
    if ratios:
        lines += ["Labelled share / judged share per level (the band: within "
                  f"{SHARE_FACTOR:g}x): held-out labels of the judged passages; each fold's deployed model on its own "
                  "training passages (lowest and highest over the folds):", "",
                  "| level | held out | deployed model, training passages |", "|---|---|---|"]
        lines += [f"| {lv} | {_r(ratios['held_out'][lv])} | {_r(ratios['training_min'][lv])} .. "
                  f"{_r(ratios['training_max'][lv])} |" for lv in ratios["held_out"]]
        lines.append("")
    return "\n".join(lines)


def _r(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.2f}"


def apply_markdown(report: dict[str, Any]) -> str:
    """What a saved model did to a new collection: counts, label distribution, kappa when judgments were given."""
    lines = [f"## Calibrated qrels from model {report['model']}", "",
             f"{report['passages']} passages of {report['queries']} queries labelled by {report['estimator']} "
             f"(sources {', '.join(report['sources'])}; output {report['output']}).", ""]
    if report.get("ignored_sources"):
        lines += [f"Ignored source(s) the model was not fitted with: {', '.join(report['ignored_sources'])}.", ""]
    shares = report.get("label_shares")
    if shares:
        lines += shares_table(shares, {"judged": "judged", "labels_of_judged": "calibrated, judged passages",
                                       "labels_of_all": "calibrated, all passages",
                                       "training_judged": "judged (training collection)",
                                       "training_deployed": "this model, training collection's judged passages"})
        lines.append("")
    if report.get("kappa") is not None:
        lines += [f"Against the judgments ({report['judged']} judged passages, level >= {report['relevant_level']}): "
                  f"binary kappa **{_k(report['kappa'])}**, linear weighted kappa {_k(report['graded_kappa_linear'])}.",
                  ""]
    return "\n".join(lines)
