"""Cross-validated evaluation of the network and the baselines against the judges, over several seeds.

For every seed: the texts are dealt into folds (seeded), each fold is predicted by a network trained on the
others (and by every baseline fitted on the others), and the pooled held-out predictions are scored per
question: RMSE, Pearson, Spearman and Kendall (tau-b) of the expected answer against the judges' answers
(NA and missing answers left out). Reported: every seed, and mean and standard deviation over seeds; smooth
ECE of the main question's predicted distribution per answer option; and a paired permutation test
(:func:`autograde.metrics.significance.paired_test`, sign flips per annotation) of the network's squared
and absolute errors against the best baseline (lowest mean RMSE on the main question).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from autograde.config.rubric import EvaluationSettings, Hyperparameters, SelectionSettings
from autograde.core.log import logger, progress_bar
from autograde.core.stats import correlation
from autograde.metrics.significance import paired_test
from autograde.rubric.baselines import BASELINES, baseline_predictions
from autograde.rubric.calibration import binned_ece, reliability_svg, smooth_ece
from autograde.rubric.cv import cross_validate, main_log_loss
from autograde.rubric.dataset import CalibrationData, expected_values
from autograde.rubric.tables import MISSING

__all__ = ["METRICS", "Evaluation", "evaluate", "expected_values", "markdown_report", "score"]

METRICS: tuple[str, ...] = ("rmse", "pearson", "spearman", "kendall")
NETWORK = "network"


def score(pred: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """RMSE, Pearson, Spearman, Kendall tau-b and n over the rows where both are present."""
    ok = ~np.isnan(pred) & ~np.isnan(truth)
    p, t = pred[ok], truth[ok]
    return {
        "rmse": float(np.sqrt(np.mean((p - t) ** 2))) if len(p) else float("nan"),
        "pearson": correlation("pearson", p, t),
        "spearman": correlation("spearman", p, t),
        "kendall": correlation("kendall", p, t),
        "n": int(ok.sum()),
    }


@dataclass
class SeedRun:
    seed: int
    folds: np.ndarray
    probs: np.ndarray
    predictions: dict[str, np.ndarray]
    """system -> rows x questions of predicted values (NaN where the system has none)."""
    hyperparameters: list[Hyperparameters]
    unseen_judge_rows: int = 0
    """Held-out annotations whose judge had no annotation in the training folds (judge-independent weights)."""


class SeedReport(TypedDict):
    """One seed in the report's ``per_seed`` list (a JSON object, keys in this order)."""

    seed: int
    main_log_loss: float
    unseen_judge_rows: int
    fold_hyperparameters: list[dict[str, Any]] | None
    """Each fold's selected hyperparameters (only when hyperparameter selection is enabled)."""
    calibration: dict[str, dict[str, float]]
    """answer option -> smooth and binned ECE of the main question."""
    scores: dict[str, dict[str, dict[str, float]]]
    """system -> question -> :func:`score`."""


@dataclass
class Evaluation:
    """Everything ``evaluate`` measured; ``report`` is the JSON document, ``table`` the predictions."""

    report: dict[str, Any]
    table: pd.DataFrame
    svg: str
    runs: list[SeedRun] = field(default_factory=list)


def _seed_run(data: CalibrationData, hp: Hyperparameters, folds: int, seed: int,
              selection: SelectionSettings | None, table1: bool = False,
              fold_done: Callable[[int], None] | None = None) -> SeedRun:
    cv = cross_validate(data, hp, folds, seed, selection, fold_done)
    preds: dict[str, np.ndarray] = {NETWORK: expected_values(cv.probs, data.option_values)}
    n_q = len(data.questions)
    unseen = 0
    for i, f in enumerate(sorted(set(cv.folds.tolist()))):
        train, test = np.flatnonzero(cv.folds != f), np.flatnonzero(cv.folds == f)
        tr, te = data.subset(train), data.subset(test)
        unseen += int((~np.isin(te.judges, tr.judges)).sum())
        for q in range(n_q):
            for name, values in baseline_predictions(tr, te, q).items():
                preds.setdefault(name, np.full((len(data), n_q), np.nan))[test, q] = values
        if table1:  # the other rows of Table 1, main question only, with the hyperparameters of this fold
            from autograde.rubric.systems import TABLE1, system_predictions

            extra = system_predictions(tr, te, cv.hyperparameters[i], seed, TABLE1, cv.probs[test])
            for name, values in extra.items():
                if name not in preds:
                    preds[name] = np.full((len(data), n_q), np.nan)
                preds[name][test, data.main_index] = values
    return SeedRun(seed, cv.folds, cv.probs, preds, cv.hyperparameters, unseen)


def _summary(values: list[float]) -> dict[str, float]:
    """Mean and sd over seeds; NaN when any seed's value is undefined (a constant's correlation)."""
    arr = np.array(values, dtype=np.float64)
    if len(arr) == 0 or np.isnan(arr).any():
        return {"mean": float("nan"), "std": float("nan")}
    return {"mean": float(arr.mean()), "std": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0}


def _calibration(data: CalibrationData, probs: np.ndarray, bins: int) -> dict[str, dict[str, float]]:
    q = data.main_index
    a = data.answers[:, q]
    ok = a != MISSING
    out = {}
    for k, v in enumerate(data.option_values[q]):
        f, y = probs[ok, q, k], (a[ok] == k).astype(np.float64)
        out[f"{v:g}"] = {"smece": float(smooth_ece(f, y)), "binned_ece": binned_ece(f, y, bins)}
    return out


def _permutation(data: CalibrationData, run: SeedRun, baseline: str, settings: EvaluationSettings
                 ) -> dict[str, Any]:
    q = data.main_index
    truth = data.values_of(q)
    keys = data.row_keys()
    per: dict[str, dict[str, dict[str, float]]] = {}
    for system in (NETWORK, baseline):
        pred = run.predictions[system][:, q]
        per[system] = {k: {"squared_error": float((p - t) ** 2), "abs_error": float(abs(p - t))}
                       for k, p, t in zip(keys, pred, truth, strict=True) if not (math.isnan(p) or math.isnan(t))}
    res = paired_test(per[NETWORK], per[baseline], ["squared_error", "abs_error"],
                      n_resamples=settings.permutation_resamples, seed=settings.permutation_seed)
    return {m: {"network_mean": r["A_mean"], "baseline_mean": r["B_mean"], "diff": r["diff"],
                "p_value": r["p_value"], "n": r["n_queries"]} for m, r in res.items()}


def _above(network: list[float], baseline: list[float]) -> bool | None:
    """Whether the network's value is above the baseline's in every seed (None where either is undefined)."""
    if any(math.isnan(v) for v in [*network, *baseline]):
        return None
    return all(a > b for a, b in zip(network, baseline, strict=True))


def evaluate(data: CalibrationData, hp: Hyperparameters, settings: EvaluationSettings,
             selection: SelectionSettings | None = None) -> Evaluation:
    """Cross-validate over ``settings.seeds`` and score the network and every baseline (see module doc)."""
    runs = []
    with progress_bar(len(settings.seeds) * settings.folds, "rubric evaluation", "folds") as bar:
        for seed in settings.seeds:
            run = _seed_run(data, hp, settings.folds, seed, selection, settings.table1, bar.update)
            runs.append(run)
            main = score(run.predictions[NETWORK][:, data.main_index], data.values_of(data.main_index))
            logger.info("seed %d: network %s Pearson %.4f RMSE %.4f", seed, data.main, main["pearson"], main["rmse"])
    systems = list(runs[0].predictions)
    per_seed: list[SeedReport] = []
    for run in runs:
        scores = {s: {qid: score(run.predictions[s][:, q], data.values_of(q)) for q, qid in enumerate(data.questions)}
                  for s in systems}
        per_seed.append({"seed": run.seed, "main_log_loss": main_log_loss(data, run.probs),
                         "unseen_judge_rows": run.unseen_judge_rows,
                         "fold_hyperparameters": ([h.model_dump() for h in run.hyperparameters]
                                                  if selection is not None and selection.enabled else None),
                         "calibration": _calibration(data, run.probs, settings.calibration_bins), "scores": scores})
    summary = {s: {qid: {m: _summary([ps["scores"][s][qid][m] for ps in per_seed]) for m in METRICS}
                   for qid in data.questions} for s in systems}
    main_q = data.main
    baselines = [s for s in systems if s in BASELINES and not math.isnan(summary[s][main_q]["rmse"]["mean"])]
    best = min(baselines, key=lambda s: summary[s][main_q]["rmse"]["mean"])
    tests = [{"seed": r.seed, **_permutation(data, r, best, settings)} for r in runs]
    options = list(per_seed[0]["calibration"])
    calibration = {v: {m: _summary([ps["calibration"][v][m] for ps in per_seed]) for m in ("smece", "binned_ece")}
                   for v in options}
    above = {s: _above([ps["scores"][NETWORK][main_q]["pearson"] for ps in per_seed],
                       [ps["scores"][s][main_q]["pearson"] for ps in per_seed]) for s in baselines}
    report = {
        "main": main_q, "questions": list(data.questions), "rows": len(data),
        "texts": len(set(data.text_ids.tolist())), "judges": len(set(data.judges.tolist())),
        "groups": len(set(data.groups.tolist())), "notes": list(data.notes),
        "hyperparameters": hp.model_dump(), "selection": selection.model_dump() if selection else None,
        "settings": settings.model_dump(), "systems": systems, "best_baseline": best,
        "summary": summary, "calibration": calibration,
        "significance": {"baseline": best, "test": "paired sign-flip permutation test per annotation "
                         "(autograde.metrics.significance.paired_test), two-sided", "per_seed": tests,
                         "max_p_value": {m: max(t[m]["p_value"] for t in tests) for m in ("squared_error",
                                                                                          "abs_error")}},
        "network_pearson_above_every_seed": above,
        "per_seed": per_seed,
    }
    first = runs[0]
    q = data.main_index
    ok = data.answers[:, q] != MISSING
    svg = reliability_svg([(f"{main_q} = {v:g}", first.probs[ok, q, k], (data.answers[ok, q] == k).astype(float))
                           for k, v in enumerate(data.option_values[q])])
    return Evaluation(report, predictions_table(data, runs), svg, runs)


def predictions_table(data: CalibrationData, runs: list[SeedRun]) -> pd.DataFrame:
    """Long table: seed, fold, row key, text, judge, question, answer, system, prediction (+ network probs)."""
    keys = np.array(data.row_keys(), dtype=object)
    frames = []
    for run in runs:
        for q, qid in enumerate(data.questions):
            truth = data.values_of(q)
            n_opt = len(data.option_values[q])
            probs_json = [json.dumps({f"{v:g}": round(float(p), 6) for v, p in zip(data.option_values[q], row[:n_opt],
                                                                                    strict=True)}, sort_keys=True)
                          for row in run.probs[:, q, :]]
            for system, pred in run.predictions.items():
                frames.append(pd.DataFrame({
                    "seed": run.seed, "fold": run.folds, "row": keys, "text_id": data.text_ids, "judge": data.judges,
                    "question": qid, "answer": truth, "system": system, "prediction": pred[:, q],
                    "probs": probs_json if system == NETWORK else None}))
    df = pd.concat(frames, ignore_index=True)
    return df[~df["prediction"].isna()].reset_index(drop=True)


def _fmt(s: dict[str, float], digits: int = 3) -> str:
    if s["mean"] is None or math.isnan(s["mean"]):
        return "n/a"
    return f"{s['mean']:.{digits}f} ± {s['std']:.{digits}f}"


def markdown_report(report: dict[str, Any]) -> str:
    """The main question's table (every system, mean ± std over seeds), per-question table, calibration, test."""
    main = report["main"]
    seeds = report["settings"]["seeds"]
    lines = [f"## {main}: cross-validated ({report['settings']['folds']} folds grouped by text), "
             f"{len(seeds)} seed(s), mean ± std", "",
             f"{report['rows']} annotations, {report['texts']} texts, {report['judges']} judges.", ""]
    lines += [f"- {n}" for n in report["notes"]]
    lines += ["", "| system | RMSE ↓ | Pearson ↑ | Spearman ↑ | Kendall ↑ |", "|---|---|---|---|---|"]
    for s in report["systems"]:
        m = report["summary"][s][main]
        lines.append(f"| {s} | " + " | ".join(_fmt(m[k]) for k in METRICS) + " |")
    lines += ["", "## Per question (network vs LLM expected score)", "",
              "| question | network RMSE | network Pearson | LLM expected RMSE | LLM expected Pearson |",
              "|---|---|---|---|---|"]
    for qid in report["questions"]:
        n, e = report["summary"][report["systems"][0]][qid], report["summary"].get("llm_expected", {}).get(qid)
        row = [_fmt(n["rmse"]), _fmt(n["pearson"])]
        row += [_fmt(e["rmse"]), _fmt(e["pearson"])] if e else ["n/a", "n/a"]
        lines.append(f"| {qid} | " + " | ".join(row) + " |")
    lines += ["", f"## Calibration of the {main} distribution (held-out)", "",
              "| answer | smooth ECE | binned ECE |", "|---|---|---|"]
    for v, c in report["calibration"].items():
        lines.append(f"| {v} | {_fmt(c['smece'])} | {_fmt(c['binned_ece'])} |")
    sig = report["significance"]
    lines += ["", f"## Network vs best baseline ({sig['baseline']}): paired permutation test", "",
              "| seed | network MSE | baseline MSE | p (squared error) | p (absolute error) |", "|---|---|---|---|---|"]
    for t in sig["per_seed"]:
        lines.append(f"| {t['seed']} | {t['squared_error']['network_mean']:.4f} | "
                     f"{t['squared_error']['baseline_mean']:.4f} | {t['squared_error']['p_value']:.4g} | "
                     f"{t['abs_error']['p_value']:.4g} |")
    above = report["network_pearson_above_every_seed"]
    lines += ["", "Network Pearson above the baseline in every seed: "
              + ", ".join(f"{k} {'n/a' if v is None else 'yes' if v else 'no'}" for k, v in above.items()), ""]
    return "\n".join(lines)
