"""LLM-RUBRIC (Hashemi et al., ACL 2024) Table 1 and the calibrated-relevance comparison on DL20, through the rubric stage.

Rows are read generically from the rubric stage's outputs by system name (``report["systems"]``), so a
system a newer rubric stage adds (a random baseline, an ablation) appears in ``measured.json`` without a
change here, and the paper YAML decides which paper row it stands for.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from autograde.reproduce.config import CalibratedSettings, RubricRealSettings, RubricSyntheticSettings
from autograde.reproduce.measured import Measurement, Value, summarize
from autograde.rubric.evaluate import METRICS

__all__ = ["CALIBRATED_ROWS", "from_rubric_report", "measure_calibrated", "measure_rubric_real",
           "measure_rubric_synthetic"]

CALIBRATED_ROWS = {
    "kappa": "calibrated labels (cross-validated by query)",
    "single_cv_kappa": "best single prompt chosen on the training folds",
    "best_single": "best single prompt at its best threshold on all judged passages (oracle)",
    "gain": "calibrated minus the oracle single prompt",
}
"""Row names of the calibrated-qrels table (column ``kappa``)."""


def from_rubric_report(table: str, report: dict[str, Any]) -> Measurement:
    """Every system of a ``rubric evaluate`` report on the main question: mean +- sd over its seeds."""
    main = report["main"]
    n = len(report.get("settings", {}).get("seeds", [])) or None
    values = []
    for system in report["systems"]:
        for m in METRICS:
            s = report["summary"][system][main][m]
            values.append(Value(system, m, float(s["mean"]), float(s["std"]), n))
    notes = [f"{report['rows']} annotations of {report['texts']} texts by {report['judges']} judges; main question "
             f"{main}; {report['settings']['folds']} folds grouped by text; {n} seed(s)", *report.get("notes", [])]
    return Measurement(table, values=values, notes=notes)


def measure_rubric_synthetic(s: RubricSyntheticSettings, out_dir: Path) -> Measurement:
    """Cross-validated evaluation (``autograde rubric evaluate``); its report is kept beside ``measured.json``."""
    from autograde.rubric.stages import run_evaluate

    report = run_evaluate(s.rubric_config(), out_dir / "evaluation.json", out_dir / "evaluation.md")
    return from_rubric_report("llm_rubric_synthetic", report)


def measure_rubric_real(s: RubricRealSettings, train: RubricSyntheticSettings, out_dir: Path) -> Measurement:
    """Fit on every synthetic annotation (one fit per seed), predict each real judge's Q0; baselines fitted on
    the synthetic data too. Scores as in the cross-validated table (RMSE, Pearson, Spearman, Kendall)."""
    from autograde.config.rubric import RubricConfig
    from autograde.rubric.baselines import baseline_predictions
    from autograde.rubric.dataset import expected_values
    from autograde.rubric.evaluate import score
    from autograde.rubric.report import write_json
    from autograde.rubric.stages import load_training_data
    from autograde.rubric.train import fit

    train_cfg = train.rubric_config()
    _rubric, train_data = load_training_data(train_cfg)
    test_cfg = RubricConfig.model_validate({"rubric": s.rubric, "llm": s.llm, "human": s.human, "texts": s.texts})
    _rubric, test = load_training_data(test_cfg)
    q = test.main_index
    truth = test.values_of(q)
    samples: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for seed in s.seeds:
        model = fit(train_data, train_cfg.network, seed)
        pred = expected_values(model.predict_proba(test), test.option_values)[:, q]
        for m, v in score(pred, truth).items():
            samples["network"][m].append(float(v))
    for name, pred in baseline_predictions(train_data, test, q).items():
        for m, v in score(pred, truth).items():
            samples[name][m].append(float(v))
    values = [summarize(system, m, per[m]) for system, per in samples.items() for m in METRICS]
    judges = sorted(set(test.judges.tolist()))
    unseen = sorted(set(judges) - set(train_data.judges.tolist()))
    report = {"main": test.questions[q], "rows": len(test), "judges": judges,
              "unseen_judges": unseen, "seeds": s.seeds, "scores": {k: dict(v) for k, v in samples.items()}}
    write_json(out_dir / "transfer.json", report)
    notes = [f"trained on {len(train_data)} synthetic annotations; tested on {len(test)} real annotations by "
             f"{len(judges)} judges ({len(unseen)} never seen in training: judge-independent weights)",
             *test.notes]
    return Measurement("llm_rubric_real", values=values, notes=notes)


def measure_calibrated(s: CalibratedSettings, out_dir: Path) -> Measurement:
    """Calibrated qrels (``autograde rubric calibrate-qrels``) per seed against the single prompts (kappa)."""
    from autograde.calibrated.cv import cross_validate_qrels
    from autograde.calibrated.features import features_from_sources
    from autograde.calibrated.report import cv_markdown
    from autograde.io.trec import read_qrels
    from autograde.rubric.report import write_json

    first = s.calibrated_config(s.seeds[0])
    features = features_from_sources(first.sources, first)
    judgments = read_qrels(first.judgments)
    samples: dict[str, list[float]] = defaultdict(list)
    oracle = ""
    for seed in s.seeds:
        _qrels, report, _table = cross_validate_qrels(s.calibrated_config(seed), features, judgments)
        o = report["overall"]
        samples["kappa"].append(o["kappa"])
        samples["single_cv_kappa"].append(o["single_cv_kappa"])
        samples["best_single"].append(o["best_single"]["kappa"])
        samples["gain"].append(o["kappa"] - o["best_single"]["kappa"])
        oracle = f"{o['best_single']['source']} >= {o['best_single']['threshold']}"
        if seed == s.seeds[0]:
            write_json(out_dir / f"report-seed{seed}.json", report)
            (out_dir / f"report-seed{seed}.md").write_text(cv_markdown(report), encoding="utf-8")
    values = [summarize(CALIBRATED_ROWS[k], "kappa", samples[k]) for k in CALIBRATED_ROWS]
    notes = [f"{len(features.keys)} passages, {len(features.names)} features from {len(s.sources)} sources; "
             f"judged level >= {first.level} is relevant; {first.folds} folds grouped by query; seeds "
             f"{s.seeds}", f"the oracle single prompt is {oracle}"]
    return Measurement("calibrated_qrels_dl20", values=values, notes=notes)
