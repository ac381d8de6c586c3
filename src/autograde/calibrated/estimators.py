"""Estimators of the relevance-level distribution of a passage from its encoded sources: one interface, several
implementations (in the manner of scikit-learn's estimators: ``fit`` then ``predict_proba``, parameters set at
construction), each saved to and loaded from a model folder without re-fitting.

- ``network``: LLM-RUBRIC's calibration network with one judge (the assessor) and one question (the level);
- ``ensemble``: the mean of k such networks trained with seeds ``seed .. seed + k - 1``;
- ``logistic``: L2-regularized multinomial logistic regression (scikit-learn);
- ``ordinal_logistic``: one L2-regularized binary logistic regression per cumulative event level >= L
  (Frank and Hall's ordinal decomposition), P(level >= L) made non-increasing in L.

Predictions are computed here from the fitted parameters (numpy for the regressions, torch for the networks),
the same code in the fitting process and after loading, so a loaded model gives bit-identical probabilities.

>>> import numpy as np
>>> x = np.array([[1, 0], [1, 0], [0, 1], [0, 1]] * 5, dtype=np.float32); y = np.array([0, 0, 1, 1] * 5)
>>> est = LogisticEstimator(2, c=10.0).fit(x, y, np.arange(20) // 4)
>>> est.predict_proba(x[:1]).argmax(axis=1).tolist(), est.predict_proba(x[2:3]).argmax(axis=1).tolist()
([0], [1])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from autograde.config.rubric import Hyperparameters
from autograde.core.errors import Problems
from autograde.rubric.dataset import CalibrationData

__all__ = ["ESTIMATOR_KINDS", "LogisticEstimator", "NetworkEstimator", "RelevanceEstimator", "load_estimator"]

ESTIMATOR_KINDS: tuple[str, ...] = ("network", "ensemble", "logistic", "ordinal_logistic")
ASSESSOR = "assessor"
QUESTION = "relevance"


class RelevanceEstimator(Protocol):
    """What every estimator offers: fit on (features, level index, query), predict, save, describe."""

    n_levels: int

    @property
    def name(self) -> str: ...

    def fit(self, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> RelevanceEstimator: ...

    def predict_proba(self, x: np.ndarray) -> np.ndarray: ...

    def save(self, folder: Path) -> dict[str, Any]: ...


def _relevance_data(x: np.ndarray, y: np.ndarray, groups: np.ndarray, n_levels: int,
                    feature_names: tuple[str, ...]) -> CalibrationData:
    return CalibrationData(
        text_ids=np.array([f"r{i}" for i in range(len(y))], dtype=object),
        judges=np.full(len(y), ASSESSOR, dtype=object),
        groups=np.asarray(groups, dtype=object),
        features=np.ascontiguousarray(x, dtype=np.float32),
        answers=np.asarray(y, dtype=np.int64).reshape(-1, 1),
        questions=(QUESTION,),
        option_values=(tuple(float(v) for v in range(n_levels)),),
        main=QUESTION,
        feature_names=feature_names,
    )


@dataclass
class NetworkEstimator:
    """``seeds`` networks (one: the network; several: their seed ensemble), each itself the configured
    early-stopping ensemble of ``hp.members`` networks; the prediction is the mean of all members."""

    n_levels: int
    hp: Hyperparameters
    seeds: tuple[int, ...] = (0,)
    model: Any = None

    @property
    def name(self) -> str:
        return "network" if len(self.seeds) == 1 else f"ensemble of {len(self.seeds)}"

    def fit(self, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> NetworkEstimator:
        from autograde.rubric.train import fit

        names = tuple(f"x{i}" for i in range(x.shape[1]))
        data = _relevance_data(x, y, groups, self.n_levels, names)
        models = [fit(data, self.hp, s) for s in self.seeds]
        first = models[0]
        first.members = [m for model in models for m in model.members]
        first.reports = [r for model in models for r in model.reports]
        self.model = first
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        y = np.full(len(x), -1)
        data = _relevance_data(x, y, np.zeros(len(x)), self.n_levels, self.model.feature_names)
        return np.asarray(self.model.predict_proba(data)[:, 0, :self.n_levels], dtype=np.float64)

    def save(self, folder: Path) -> dict[str, Any]:
        from autograde.rubric.train import save_network

        save_network(folder / "network.pt", self.model)
        return {"kind": "network", "seeds": list(self.seeds), "hyperparameters": self.hp.model_dump(),
                "file": "network.pt", "epochs": [r.__dict__ for r in self.model.reports]}

    @classmethod
    def load(cls, folder: Path, params: dict[str, Any], n_levels: int) -> NetworkEstimator:
        from autograde.rubric.train import load_network

        hp = Hyperparameters.model_validate(params["hyperparameters"])
        return cls(n_levels, hp, tuple(int(s) for s in params["seeds"]), load_network(folder / params["file"]))


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


@dataclass
class LogisticEstimator:
    """L2-regularized logistic regression (inverse strength ``c``): multinomial, or ordinal as one binary
    regression per event level >= L. ``coef`` holds one row per class (multinomial) or per event (ordinal)."""

    n_levels: int
    c: float = 1.0
    ordinal: bool = False
    coef: np.ndarray | None = None
    intercept: np.ndarray | None = None
    classes: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return f"{'ordinal_logistic' if self.ordinal else 'logistic'} C={self.c:g}"

    def _regression(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        from sklearn.linear_model import LogisticRegression

        from autograde.core.runtime import blas_threads

        with blas_threads(1):  # one BLAS thread: identical coefficients on every machine and load
            lr = LogisticRegression(C=self.c, max_iter=5000, tol=1e-8).fit(x.astype(np.float64), y)
        coef, intercept = lr.coef_.astype(np.float64), lr.intercept_.astype(np.float64)
        if len(lr.classes_) == 2:  # sklearn keeps one row for two classes: the second class's logit
            coef, intercept = np.vstack([np.zeros_like(coef), coef]), np.concatenate([[0.0], intercept])
        return coef, intercept

    def fit(self, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> LogisticEstimator:
        present = sorted(set(np.asarray(y).tolist()))
        if len(present) < 2:
            problems = Problems()
            problems.add("judgments", None, f"the training passages have one relevance level only ({present})",
                         "give judgments with relevant and non-relevant passages")
            problems.raise_if_any()
        if not self.ordinal:
            self.coef, self.intercept = self._regression(x, y)
            self.classes = tuple(int(c) for c in present)
            return self
        rows, biases = [], []
        for level in range(1, self.n_levels):
            event = (y >= level).astype(int)
            if event.min() == event.max():  # no passage (or every passage) at this level: a constant
                rows.append(np.zeros(x.shape[1]))
                biases.append(50.0 if event.min() else -50.0)
                continue
            coef, intercept = self._regression(x, event)
            rows.append(coef[1])
            biases.append(float(intercept[1]))
        self.coef, self.intercept = np.array(rows), np.array(biases)
        self.classes = tuple(range(self.n_levels))
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        assert self.coef is not None and self.intercept is not None
        z = x.astype(np.float64) @ self.coef.T + self.intercept
        out = np.zeros((len(x), self.n_levels))
        if not self.ordinal:
            out[:, list(self.classes)] = _softmax(z)
            return out
        tail = np.minimum.accumulate(_sigmoid(z), axis=1)  # P(level >= L), L = 1.., non-increasing
        tail = np.concatenate([np.ones((len(x), 1)), tail, np.zeros((len(x), 1))], axis=1)
        return tail[:, :-1] - tail[:, 1:]

    def save(self, folder: Path) -> dict[str, Any]:
        assert self.coef is not None and self.intercept is not None
        return {"kind": "ordinal_logistic" if self.ordinal else "logistic", "c": self.c,
                "classes": list(self.classes), "coef": self.coef.tolist(), "intercept": self.intercept.tolist()}

    @classmethod
    def load(cls, params: dict[str, Any], n_levels: int) -> LogisticEstimator:
        return cls(n_levels, float(params["c"]), params["kind"] == "ordinal_logistic",
                   np.array(params["coef"], dtype=np.float64), np.array(params["intercept"], dtype=np.float64),
                   tuple(int(c) for c in params["classes"]))


def load_estimator(folder: Path, params: dict[str, Any], n_levels: int) -> RelevanceEstimator:
    """The estimator a model folder describes (``params`` from its ``model.json``)."""
    if params.get("kind") == "network":
        return NetworkEstimator.load(folder, params, n_levels)
    if params.get("kind") in ("logistic", "ordinal_logistic"):
        return LogisticEstimator.load(params, n_levels)
    problems = Problems()
    problems.add(folder / "model.json", None, f"unknown estimator kind {params.get('kind')!r}",
                 f"refit the model (kinds: {', '.join(ESTIMATOR_KINDS)})")
    problems.raise_if_any()
    raise AssertionError("unreachable")
