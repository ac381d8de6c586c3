"""Cross-validation grouped by text: held-out predictions and hyperparameter selection.

A group (a text, or a query in the relevance setting) never has annotations on both sides of a split.
Selection follows the paper: every grid point is scored by k-fold cross-validation and the one with the
lowest held-out log-loss of the main question wins (the epochs are not in the grid: early stopping
chooses them).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from autograde.config.rubric import Hyperparameters, SelectionSettings
from autograde.core.log import logger
from autograde.rubric.dataset import CalibrationData, group_folds
from autograde.rubric.tables import MISSING
from autograde.rubric.train import fit

__all__ = ["CrossValidated", "cross_validate", "main_log_loss", "select_hyperparameters"]


@dataclass
class CrossValidated:
    """Held-out distributions for every row (rows x questions x options) and each row's fold."""

    probs: np.ndarray
    folds: np.ndarray
    hyperparameters: list[Hyperparameters]
    """The hyperparameters each fold trained with (they differ when selection runs inside the folds)."""


def main_log_loss(data: CalibrationData, probs: np.ndarray) -> float:
    """Mean negative log-likelihood of the present main-question answers under ``probs``."""
    q = data.main_index
    a = data.answers[:, q]
    ok = a != MISSING
    if not ok.any():
        return float("nan")
    p = probs[np.flatnonzero(ok), q, a[ok]]
    return float(-np.mean(np.log(np.clip(p, 1e-12, None))))


def cross_validate(data: CalibrationData, hp: Hyperparameters, folds: int, seed: int,
                   selection: SelectionSettings | None = None,
                   fold_done: Callable[[int], None] | None = None) -> CrossValidated:
    """Held-out predictions: fold f's rows come from a model trained on the other folds (seeded).

    With ``selection.enabled``, hyperparameters are selected inside each training part by an inner
    cross-validation (nested, as the paper), otherwise ``hp`` is used everywhere. ``fold_done(1)`` is called after
    each fold (a :class:`~autograde.core.log.Progress`'s ``update``).
    """
    fold_of = group_folds(data.groups, folds, seed)
    probs = np.zeros((len(data), len(data.questions), max(data.option_counts)))
    used: list[Hyperparameters] = []
    for f in range(folds):
        train, test = np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)
        if len(test) == 0:
            if fold_done is not None:
                fold_done(1)
            continue
        part = data.subset(train)
        chosen = hp
        if selection is not None and selection.enabled:
            chosen, _ = select_hyperparameters(part, hp, selection, seed)
        used.append(chosen)
        model = fit(part, chosen, seed)
        probs[test] = model.predict_proba(data.subset(test))
        if fold_done is not None:
            fold_done(1)
    return CrossValidated(probs, fold_of, used)


def candidate_grid(base: Hyperparameters, selection: SelectionSettings) -> list[Hyperparameters]:
    """The grid points: ``base`` with h1 = h2, learning rate and judge L2 taken from ``selection``."""
    return [base.model_copy(update={"hidden1": h, "hidden2": h, "learning_rate": lr, "judge_l2": l2})
            for h, lr, l2 in itertools.product(selection.hidden, selection.learning_rate, selection.judge_l2)]


def select_hyperparameters(data: CalibrationData, base: Hyperparameters, selection: SelectionSettings, seed: int
                           ) -> tuple[Hyperparameters, list[dict[str, float]]]:
    """The grid point with the lowest cross-validated main-task log-loss, and every point's score."""
    table: list[dict[str, float]] = []
    best, best_loss = base, float("inf")
    for cand in candidate_grid(base, selection):
        cv = cross_validate(data, cand, selection.folds, seed)
        loss = main_log_loss(data, cv.probs)
        table.append({"hidden1": cand.hidden1, "hidden2": cand.hidden2, "learning_rate": cand.learning_rate,
                      "judge_l2": cand.judge_l2, "main_log_loss": loss})
        logger.debug("selection h=%d lr=%g l2=%g: log-loss %.4f", cand.hidden1, cand.learning_rate, cand.judge_l2, loss)
        if loss < best_loss - 1e-12:
            best, best_loss = cand, loss
    logger.info("selected h1=h2=%d lr=%g judge_l2=%g (main log-loss %.4f over %d grid points)", best.hidden1,
                best.learning_rate, best.judge_l2, best_loss, len(table))
    return best, table
