"""Estimators of the relevance-level distribution of a passage from its encoded sources: one contract and the
kinds of the registry (:mod:`autograde.calibrated.registry`), in the manner of scikit-learn.

The contract (:class:`Estimator`): the parameters are the constructor's arguments (:meth:`Estimator.get_params`,
:meth:`Estimator.clone`); ``fit(x, y)`` learns attributes whose names end in ``_`` and returns the estimator;
``predict_proba(x)`` gives rows x levels. ``fit`` takes no groups: where rows must be split by query, the split
is a parameter (:class:`~autograde.calibrated.registry.GroupSplit`, made from the groups), as scikit-learn passes
groups to a splitter. Every fitted estimator is written as its kind, parameters and learned
state (``state``; a network's weights in a file beside) and read back without re-fitting (``restore``), by
:func:`autograde.calibrated.registry.save_estimator` and :func:`~autograde.calibrated.registry.load_estimator`.

Kinds (the registry, :data:`autograde.calibrated.registry.ESTIMATORS`; the two combinations live there too):

- ``logistic``: L2-regularized multinomial logistic regression (scikit-learn);
- ``ordinal_logistic``: one L2-regularized binary logistic regression per event level >= L (Frank and Hall's
  ordinal decomposition), P(level >= L) made non-increasing in L;
- ``network``: LLM-RUBRIC's calibration network (:mod:`autograde.rubric.train`) with one judge, the assessor, and
  one question, the level;
- ``ensemble``: the mean of such networks trained with consecutive seeds;
- ``mean`` (:class:`~autograde.calibrated.registry.MeanEstimator`): the weighted mean of its members' probabilities (the deployed combination
  of the candidates, :mod:`autograde.calibrated.fit`);
- ``cross_fitted`` (:class:`~autograde.calibrated.registry.CrossFitted`): an estimator fitted once per fold of a
  :class:`~autograde.calibrated.registry.GroupSplit` on the other
  folds; it keeps the out-of-fold probabilities of the training rows and predicts new rows by the mean of the
  fold models (the deployed calibrated-qrels model).

Predictions are computed here from the learned attributes (numpy for the regressions, torch for the networks),
the same code in the fitting process and after loading, so a loaded model gives bit-identical probabilities.

>>> x = np.array([[1, 0], [1, 0], [0, 1], [0, 1]] * 5, dtype=np.float32); y = np.array([0, 0, 1, 1] * 5)
>>> est = LogisticEstimator(2, c=10.0).fit(x, y)
>>> est.predict_proba(x[:1]).argmax(axis=1).tolist(), est.predict_proba(x[2:3]).argmax(axis=1).tolist()
([0], [1])
>>> est.get_params(), est.clone().coef_ is None
({'n_levels': 2, 'c': 10.0}, True)
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

import numpy as np

from autograde.config.rubric import Hyperparameters
from autograde.core.errors import Problems

if TYPE_CHECKING:
    from autograde.config.rubric import CalibratedQrelsConfig
    from autograde.rubric.dataset import CalibrationData

__all__ = ["EnsembleEstimator", "Estimator", "LogisticEstimator", "NetworkEstimator", "OrdinalLogisticEstimator"]

ASSESSOR = "assessor"
QUESTION = "relevance"


class Estimator:
    """The contract every kind implements (module doc)."""

    kind: ClassVar[str] = ""

    @property
    def name(self) -> str:
        """A short label for reports (the kind and its distinguishing parameter)."""
        return self.kind

    def get_params(self) -> dict[str, Any]:
        """The constructor's arguments (scikit-learn's ``get_params(deep=False)``)."""
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names}

    def set_params(self, **params: Any) -> Self:
        known = self.get_params()
        for key, value in params.items():
            if key not in known:
                raise TypeError(f"{type(self).__name__} has no parameter {key!r}")
            setattr(self, key, value)
        return self

    def clone(self) -> Self:
        """An unfitted estimator with the same parameters."""
        return type(self)(**self.get_params())

    def fit(self, x: np.ndarray, y: np.ndarray) -> Self:
        """Learn from features ``x`` (rows x columns) and level indices ``y`` (0 .. n_levels - 1)."""
        raise NotImplementedError

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        """P(level) per row: rows x n_levels."""
        raise NotImplementedError

    def params_json(self) -> dict[str, Any]:
        """The parameters as JSON values."""
        return self.get_params()

    def describe(self) -> dict[str, Any]:
        """The estimator's kind and parameters as JSON (what an unfitted clone needs)."""
        return {"kind": self.kind, "params": self.params_json()}

    @classmethod
    def params_from_json(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """Constructor arguments from :meth:`params_json`'s output."""
        return dict(raw)

    def state(self, folder: Path, name: str) -> dict[str, Any]:
        """The learned attributes as JSON values (large ones written to files in ``folder`` named after ``name``)."""
        raise NotImplementedError

    def restore(self, folder: Path, state: dict[str, Any]) -> None:
        """Set the learned attributes from :meth:`state`'s output."""
        raise NotImplementedError

    @classmethod
    def from_config(cls, cfg: CalibratedQrelsConfig, n_levels: int) -> list[Estimator]:
        """The candidates of this kind that a ``calibrated_qrels:`` section asks for (unfitted)."""
        raise NotImplementedError


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _regression(x: np.ndarray, y: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """(coef, intercept) of scikit-learn's L2 logistic regression, one row per class (two classes: two rows)."""
    from sklearn.linear_model import LogisticRegression

    from autograde.core.runtime import blas_threads

    with blas_threads(1):  # one BLAS thread: identical coefficients on every machine and load
        lr = LogisticRegression(C=c, max_iter=5000, tol=1e-8).fit(x.astype(np.float64), y)
    coef, intercept = lr.coef_.astype(np.float64), lr.intercept_.astype(np.float64)
    if len(lr.classes_) == 2:  # sklearn keeps one row for two classes: the second class's logit
        coef, intercept = np.vstack([np.zeros_like(coef), coef]), np.concatenate([[0.0], intercept])
    return coef, intercept


def _two_levels_at_least(y: np.ndarray) -> list[int]:
    present = sorted(set(np.asarray(y).tolist()))
    if len(present) < 2:
        problems = Problems()
        problems.add("judgments", None, f"the training passages have one relevance level only ({present})",
                     "give judgments with relevant and non-relevant passages")
        problems.raise_if_any()
    return [int(v) for v in present]


@dataclass(eq=False)
class LogisticEstimator(Estimator):
    """L2-regularized multinomial logistic regression (inverse strength ``c``); ``coef_`` has a row per level
    seen in training (``classes_``); a level never seen gets probability 0."""

    kind: ClassVar[str] = "logistic"
    n_levels: int
    c: float = 1.0
    coef_: np.ndarray | None = field(default=None, init=False, repr=False)
    intercept_: np.ndarray | None = field(default=None, init=False, repr=False)
    classes_: tuple[int, ...] = field(default=(), init=False)

    @property
    def name(self) -> str:
        return f"{self.kind} C={self.c:g}"

    @classmethod
    def from_config(cls, cfg: CalibratedQrelsConfig, n_levels: int) -> list[Estimator]:
        return [cls(n_levels, c) for c in cfg.logistic_c]

    def fit(self, x: np.ndarray, y: np.ndarray) -> Self:
        self.classes_ = tuple(_two_levels_at_least(y))
        self.coef_, self.intercept_ = _regression(x, y, self.c)
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        assert self.coef_ is not None and self.intercept_ is not None, "fit first"
        out = np.zeros((len(x), self.n_levels))
        out[:, list(self.classes_)] = _softmax(x.astype(np.float64) @ self.coef_.T + self.intercept_)
        return out

    def state(self, folder: Path, name: str) -> dict[str, Any]:
        assert self.coef_ is not None and self.intercept_ is not None, "fit first"
        return {"classes": list(self.classes_), "coef": self.coef_.tolist(), "intercept": self.intercept_.tolist()}

    def restore(self, folder: Path, state: dict[str, Any]) -> None:
        self.classes_ = tuple(int(c) for c in state["classes"])
        self.coef_ = np.array(state["coef"], dtype=np.float64)
        self.intercept_ = np.array(state["intercept"], dtype=np.float64)


@dataclass(eq=False)
class OrdinalLogisticEstimator(Estimator):
    """One L2-regularized binary logistic regression per event level >= L (``coef_``: a row per L = 1..);
    P(level >= L) is made non-increasing in L. An event no training passage (or every one) has is a constant."""

    kind: ClassVar[str] = "ordinal_logistic"
    n_levels: int
    c: float = 1.0
    coef_: np.ndarray | None = field(default=None, init=False, repr=False)
    intercept_: np.ndarray | None = field(default=None, init=False, repr=False)

    @property
    def name(self) -> str:
        return f"{self.kind} C={self.c:g}"

    @classmethod
    def from_config(cls, cfg: CalibratedQrelsConfig, n_levels: int) -> list[Estimator]:
        return [cls(n_levels, c) for c in cfg.logistic_c]

    def fit(self, x: np.ndarray, y: np.ndarray) -> Self:
        _two_levels_at_least(y)
        rows, biases = [], []
        for level in range(1, self.n_levels):
            event = (y >= level).astype(int)
            if event.min() == event.max():
                rows.append(np.zeros(x.shape[1]))
                biases.append(50.0 if event.min() else -50.0)
                continue
            coef, intercept = _regression(x, event, self.c)
            rows.append(coef[1])
            biases.append(float(intercept[1]))
        self.coef_, self.intercept_ = np.array(rows), np.array(biases)
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        assert self.coef_ is not None and self.intercept_ is not None, "fit first"
        tail = np.minimum.accumulate(_sigmoid(x.astype(np.float64) @ self.coef_.T + self.intercept_), axis=1)
        tail = np.concatenate([np.ones((len(x), 1)), tail, np.zeros((len(x), 1))], axis=1)
        return tail[:, :-1] - tail[:, 1:]

    def state(self, folder: Path, name: str) -> dict[str, Any]:
        assert self.coef_ is not None and self.intercept_ is not None, "fit first"
        return {"coef": self.coef_.tolist(), "intercept": self.intercept_.tolist()}

    def restore(self, folder: Path, state: dict[str, Any]) -> None:
        self.coef_ = np.array(state["coef"], dtype=np.float64)
        self.intercept_ = np.array(state["intercept"], dtype=np.float64)


def _relevance_data(x: np.ndarray, y: np.ndarray, n_levels: int, feature_names: tuple[str, ...]) -> Any:
    """The rows as LLM-RUBRIC training data: one judge, one question; every row its own group (the early-stopping
    folds of the members split rows: the features carry no query, so a held-out row tells as much as a
    held-out query about over-fitting the feature-to-level map)."""
    from autograde.rubric.dataset import CalibrationData

    return CalibrationData(
        text_ids=np.array([f"r{i}" for i in range(len(y))], dtype=object),
        judges=np.full(len(y), ASSESSOR, dtype=object),
        groups=np.arange(len(y), dtype=np.int64).astype(object),
        features=np.ascontiguousarray(x, dtype=np.float32),
        answers=np.asarray(y, dtype=np.int64).reshape(-1, 1),
        questions=(QUESTION,),
        option_values=(tuple(float(v) for v in range(n_levels)),),
        main=QUESTION,
        feature_names=feature_names,
    )


@dataclass(eq=False)
class NetworkEstimator(Estimator):
    """LLM-RUBRIC's network (``hp``: itself an early-stopping ensemble of ``hp.members`` networks) fitted with
    every seed of ``seeds``; the prediction is the mean of all members (``network_``)."""

    kind: ClassVar[str] = "network"
    n_levels: int
    hp: Hyperparameters
    seeds: tuple[int, ...] = (0,)
    network_: Any = field(default=None, init=False, repr=False)

    @classmethod
    def from_config(cls, cfg: CalibratedQrelsConfig, n_levels: int) -> list[Estimator]:
        return [cls(n_levels, cfg.network, (cfg.seed,))]

    def fit(self, x: np.ndarray, y: np.ndarray) -> Self:
        return self.fit_rows(_relevance_data(x, y, self.n_levels, tuple(f"x{i}" for i in range(x.shape[1]))))

    def fit_rows(self, data: CalibrationData) -> Self:
        """Fit on LLM-RUBRIC's training rows as they are (every judge, every question): ``fit`` is this on one
        judge and one question, ``autograde rubric fit`` this on the rubric's rows (its model file is
        ``network_``, written by :meth:`state`)."""
        from autograde.rubric.train import fit

        models = [fit(data, self.hp, s) for s in self.seeds]
        first = models[0]
        first.members = [m for model in models for m in model.members]
        first.reports = [r for model in models for r in model.reports]
        self.network_ = first
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        assert self.network_ is not None, "fit first"
        data = _relevance_data(x, np.full(len(x), -1), self.n_levels, self.network_.feature_names)
        return np.asarray(self.network_.predict_proba(data)[:, 0, :self.n_levels], dtype=np.float64)

    def params_json(self) -> dict[str, Any]:
        return {"n_levels": self.n_levels, "hp": self.hp.model_dump(), "seeds": list(self.seeds)}

    @classmethod
    def params_from_json(cls, raw: dict[str, Any]) -> dict[str, Any]:
        return {"n_levels": int(raw["n_levels"]), "hp": Hyperparameters.model_validate(raw["hp"]),
                "seeds": tuple(int(s) for s in raw["seeds"])}

    def state(self, folder: Path, name: str) -> dict[str, Any]:
        from autograde.rubric.train import save_network

        assert self.network_ is not None, "fit first"
        save_network(folder / f"{name}.pt", self.network_)
        return {"file": f"{name}.pt", "epochs": [r.__dict__ for r in self.network_.reports]}

    def restore(self, folder: Path, state: dict[str, Any]) -> None:
        from autograde.rubric.train import load_network

        self.network_ = load_network(folder / state["file"])


@dataclass(eq=False)
class EnsembleEstimator(NetworkEstimator):
    """The network fitted with ``ensemble_size`` consecutive seeds, all members averaged."""

    kind: ClassVar[str] = "ensemble"

    @property
    def name(self) -> str:
        return f"ensemble of {len(self.seeds)}"

    @classmethod
    def from_config(cls, cfg: CalibratedQrelsConfig, n_levels: int) -> list[Estimator]:
        return [cls(n_levels, cfg.network, tuple(range(cfg.seed, cfg.seed + cfg.ensemble_size)))]
