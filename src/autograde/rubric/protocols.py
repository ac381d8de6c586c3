"""The paper's two protocols as Table 1: in-domain cross-validation (synthetic side of Table 1) and train on
one set / evaluate on another (real side: train on every synthetic dialogue, evaluate on the real ones).

Train/test: the network (and every Table 1 system) is fitted on all training annotations once per seed; the
test annotations' judges are matched by id, a judge without training annotations gets the judge-independent
prediction and is counted. Hyperparameter selection, when enabled, runs once on the training set (grouped
k-fold CV of the main-task log-loss) and its choice serves every network row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograde.config.rubric import EvaluationSettings, Hyperparameters, SelectionSettings
from autograde.core.errors import Problems
from autograde.core.log import logger
from autograde.rubric.baselines import BASELINES
from autograde.rubric.dataset import CalibrationData, expected_values
from autograde.rubric.evaluate import Evaluation, score
from autograde.rubric.systems import LABELS, TABLE1, main_truth, system_predictions
from autograde.rubric.table1 import SeedPredictions, table1, table1_markdown
from autograde.rubric.train import fit

__all__ = ["cv_table1", "evaluate_transfer", "transfer_markdown"]

BASIC: tuple[str, ...] = ("random", "llm_argmax", "llm_expected", "network")
"""The Table 1 rows that need no extra network (``evaluation.table1: false``)."""


def _ordered(systems: list[str]) -> list[str]:
    order = [*TABLE1, *BASELINES]
    return sorted(systems, key=lambda s: order.index(s) if s in order else len(order))


def cv_table1(evaluation: Evaluation, data: CalibrationData, settings: EvaluationSettings) -> dict[str, Any]:
    """Table 1 of the cross-validation's held-out predictions (every system's main-question values)."""
    q = data.main_index
    runs = []
    for run in evaluation.runs:
        preds = {s: run.predictions[s][:, q] for s in _ordered(list(run.predictions)) if s in LABELS
                 and not np.all(np.isnan(run.predictions[s][:, q]))}
        if "random" not in preds:
            values = np.asarray(data.option_values[q], dtype=np.float64)
            preds = {"random": values[np.random.default_rng([run.seed, 7]).integers(0, len(values), len(data))],
                     **preds}
        runs.append(SeedPredictions(run.seed, preds, main_truth(data)))
    return table1(runs, settings.permutation_resamples, settings.permutation_seed)


def _compatible(train: CalibrationData, test: CalibrationData, where: str) -> None:
    problems = Problems()
    if test.questions != train.questions or test.option_values != train.option_values:
        problems.add(where, None, "the test set's rubric differs from the training set's",
                     "evaluate with the rubric the training set uses")
    elif test.feature_names != train.feature_names:
        problems.add(where, None, "the test set's LLM features differ from the training set's",
                     "give the test texts' distributions for the same input questions")
    if len(test) == 0 or np.all(test.answers[:, test.main_index] < 0):
        problems.add(where, None, f"the test set has no annotation with an answer to {test.main}",
                     "give human answers (with the main question) for texts the LLM table has")
    problems.raise_if_any()


def evaluate_transfer(train: CalibrationData, test: CalibrationData, hp: Hyperparameters,
                      settings: EvaluationSettings, selection: SelectionSettings | None = None,
                      where: str = "test set") -> dict[str, Any]:
    """Fit on all of ``train`` per seed, predict ``test``: Table 1, per-question network scores, unseen judges."""
    _compatible(train, test, where)
    table: list[dict[str, float]] = []
    if selection is not None and selection.enabled:
        from autograde.rubric.cv import select_hyperparameters

        hp, table = select_hyperparameters(train, hp, selection, settings.seeds[0])
    systems = TABLE1 if settings.table1 else BASIC
    unseen = sorted(set(test.judges.tolist()) - set(train.judges.tolist()))
    runs, per_question = [], []
    for seed in settings.seeds:
        probs = fit(train, hp, seed).predict_proba(test)
        preds = system_predictions(train, test, hp, seed, systems, probs)
        runs.append(SeedPredictions(seed, {s: preds[s] for s in _ordered(list(preds))}, main_truth(test)))
        values = expected_values(probs, test.option_values)
        per_question.append({qid: score(values[:, i], test.values_of(i)) for i, qid in enumerate(test.questions)})
        logger.info("seed %d: network %s Pearson %.4f (judge mean %.4f)", seed, test.main,
                    score(preds["network"], runs[-1].truth)["pearson"],
                    score(preds["judge_mean"], runs[-1].truth)["pearson"])
    result = table1(runs, settings.permutation_resamples, settings.permutation_seed)
    return {
        "protocol": "train/test", "main": test.main, "hyperparameters": hp.model_dump(), "selection": table,
        "train": {"rows": len(train), "texts": len(set(train.text_ids.tolist())),
                  "judges": len(set(train.judges.tolist())), "notes": list(train.notes)},
        "test": {"rows": len(test), "texts": len(set(test.text_ids.tolist())),
                 "judges": len(set(test.judges.tolist())), "notes": list(test.notes)},
        "unseen_judges": unseen, "unseen_judge_rows": int(np.isin(test.judges, unseen).sum()),
        "table1": result, "per_question": per_question,
    }


def transfer_markdown(report: dict[str, Any]) -> str:
    """Table 1 of the train/test protocol with the data counts and the unseen judges."""
    tr, te = report["train"], report["test"]
    lines = [table1_markdown(report["table1"], f"{report['main']}: trained on one set, evaluated on another"),
             f"Training: {tr['rows']} annotations of {tr['texts']} texts by {tr['judges']} judges; test: {te['rows']} "
             f"annotations of {te['texts']} texts by {te['judges']} judges; {report['unseen_judge_rows']} test "
             f"annotation(s) by {len(report['unseen_judges'])} judge(s) without training annotations (predicted "
             "with the judge-independent weights)" + (f": {', '.join(report['unseen_judges'])}."
                                                      if report["unseen_judges"] else "."), ""]
    lines += [f"- {n}" for n in [*tr["notes"], *te["notes"]]]
    return "\n".join(lines) + "\n"
