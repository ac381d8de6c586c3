"""The registry of estimator kinds, the two combinations the fit builds from them, and fitted estimators on disk.

- :data:`ESTIMATORS`: kind -> class, every kind of :mod:`autograde.calibrated.estimators` and the two below (the kinds a
  model folder may hold);
- :class:`MeanEstimator` (``mean``): the weighted mean of its members' probabilities (the deployed combination of the
  candidates, :mod:`autograde.calibrated.fit`);
- :class:`GroupSplit` and :class:`CrossFitted` (``cross_fitted``): an estimator fitted once per fold of a split by
  query; it keeps the out-of-fold probabilities of the training rows and predicts new rows by the mean of the fold
  models (the deployed calibrated-qrels model);
- :func:`save_estimator` / :func:`load_estimator`: a fitted estimator as a JSON document (files beside it), read back
  without re-fitting;
- :func:`network_kind`: the ``network`` kind, which also fits LLM-RUBRIC's own model (``autograde rubric fit``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from autograde.calibrated.estimators import (
    EnsembleEstimator,
    Estimator,
    LogisticEstimator,
    NetworkEstimator,
    OrdinalLogisticEstimator,
)
from autograde.core.errors import InvalidValueError, Problems

__all__ = ["ESTIMATORS", "CrossFitted", "GroupSplit", "MeanEstimator", "load_estimator", "network_kind",
           "save_estimator"]


@dataclass(eq=False)
class MeanEstimator(Estimator):
    """The weighted mean of ``members``' P(level) (``weights``: one per member, summing to 1; ``fit`` fits every
    member on the same rows). Not a candidate of its own: the fit builds it from the cross-fitted candidates."""

    kind: ClassVar[str] = "mean"
    members: list[Estimator]
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.members) != len(self.weights) or not self.members or abs(sum(self.weights) - 1.0) > 1e-9:
            raise InvalidValueError(f"one weight per member, summing to 1 (members {len(self.members)}, weights "
                             f"{self.weights})")

    @property
    def name(self) -> str:
        return "mean of " + ", ".join(m.name for m in self.members)

    def clone(self) -> Self:
        return type(self)([m.clone() for m in self.members], self.weights)

    def fit(self, x: np.ndarray, y: np.ndarray) -> Self:
        for m in self.members:
            m.fit(x, y)
        return self

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        out = self.weights[0] * self.members[0].predict_proba(x)
        for w, m in zip(self.weights[1:], self.members[1:], strict=True):
            out = out + w * m.predict_proba(x)
        return out

    def params_json(self) -> dict[str, Any]:
        return {"members": [m.describe() for m in self.members], "weights": list(self.weights)}

    @classmethod
    def params_from_json(cls, raw: dict[str, Any]) -> dict[str, Any]:
        return {"members": [load_estimator(Path("."), doc) for doc in raw["members"]],
                "weights": tuple(float(w) for w in raw["weights"])}

    def state(self, folder: Path, name: str) -> dict[str, Any]:
        return {"members": [save_estimator(m, folder, f"{name}-m{i}") for i, m in enumerate(self.members)]}

    def restore(self, folder: Path, state: dict[str, Any]) -> None:
        self.members = [load_estimator(folder, doc) for doc in state["members"]]


@dataclass(frozen=True, eq=False)
class GroupSplit:
    """The fold of every training row; a group (query) never spans two folds."""

    folds: np.ndarray

    @classmethod
    def of(cls, groups: np.ndarray, k: int, seed: int | list[int]) -> GroupSplit:
        from autograde.rubric.dataset import group_folds

        return cls(group_folds(np.asarray(groups, dtype=object), k, seed))

    def split(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(training rows, held-out rows) of every fold that holds rows."""
        return [(np.flatnonzero(self.folds != f), np.flatnonzero(self.folds == f))
                for f in sorted(set(self.folds.tolist()))]


@dataclass(eq=False)
class CrossFitted(Estimator):
    """``estimator`` fitted on every fold's training rows of ``split`` (``estimators_``); ``oof_proba_``: each
    training row predicted by the fold model that never saw it; a new row: the mean of the fold models."""

    kind: ClassVar[str] = "cross_fitted"
    estimator: Estimator
    split: GroupSplit | None = None
    estimators_: list[Estimator] = field(default_factory=list, init=False, repr=False)
    oof_proba_: np.ndarray | None = field(default=None, init=False, repr=False)

    @property
    def name(self) -> str:
        return self.estimator.name

    def fit(self, x: np.ndarray, y: np.ndarray) -> Self:
        assert self.split is not None and len(self.split.folds) == len(y), "a split of the training rows"
        self.oof_proba_ = None
        self.estimators_ = []
        for train, test in self.split.split():
            est = self.estimator.clone().fit(x[train], y[train])
            held = est.predict_proba(x[test])
            if self.oof_proba_ is None:
                self.oof_proba_ = np.zeros((len(y), held.shape[1]))
            self.oof_proba_[test] = held
            self.estimators_.append(est)
        return self

    @classmethod
    def mean_of(cls, fitted: list[CrossFitted], weights: tuple[float, ...]) -> CrossFitted:
        """The weighted mean of estimators cross-fitted on the same split, without refitting: fold f's model is
        the mean of their fold-f models, the out-of-fold probabilities the mean of theirs (what
        ``CrossFitted(MeanEstimator(...), split).fit`` would give)."""
        split = fitted[0].split
        oofs = [f.oof_proba_ for f in fitted if f.split is split and f.oof_proba_ is not None]
        assert len(oofs) == len(fitted), "estimators fitted on one split"
        out = cls(MeanEstimator([f.estimator for f in fitted], weights), split)
        out.estimators_ = [MeanEstimator(list(models), weights)
                           for models in zip(*(f.estimators_ for f in fitted), strict=True)]
        oof = np.zeros_like(oofs[0])
        for w, o in zip(weights, oofs, strict=True):
            oof = oof + w * o
        out.oof_proba_ = oof
        return out

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        assert self.estimators_, "fit first"
        out = self.estimators_[0].predict_proba(x)
        for est in self.estimators_[1:]:
            out = out + est.predict_proba(x)
        return out / len(self.estimators_)

    def params_json(self) -> dict[str, Any]:
        return {"estimator": self.estimator.describe()}

    @classmethod
    def params_from_json(cls, raw: dict[str, Any]) -> dict[str, Any]:
        return {"estimator": load_estimator(Path("."), raw["estimator"])}

    def state(self, folder: Path, name: str) -> dict[str, Any]:
        return {"estimators": [save_estimator(e, folder, f"{name}-fold{i}") for i, e in enumerate(self.estimators_)]}

    def restore(self, folder: Path, state: dict[str, Any]) -> None:
        self.estimators_ = [load_estimator(folder, doc) for doc in state["estimators"]]


ESTIMATORS: dict[str, type[Estimator]] = {cls.kind: cls for cls in (
    LogisticEstimator, OrdinalLogisticEstimator, NetworkEstimator, EnsembleEstimator, MeanEstimator, CrossFitted)}
"""kind -> class: every estimator kind (``calibrated_qrels.estimators`` names the first four; ``mean`` and
``cross_fitted`` are built by the fit) and every kind a model folder may hold."""


def network_kind() -> type[NetworkEstimator]:
    """The registry's ``network`` kind: LLM-RUBRIC's network, which ``autograde rubric fit`` fits on the rubric's
    rows (:meth:`~autograde.calibrated.estimators.NetworkEstimator.fit_rows`; the rubric stage takes the kind from
    its caller, as the rubric package sits below this one)."""
    kind = ESTIMATORS["network"]
    assert issubclass(kind, NetworkEstimator)
    return kind


def save_estimator(est: Estimator, folder: Path, name: str = "estimator") -> dict[str, Any]:
    """A fitted estimator as a JSON document (the files it needs are written into ``folder``)."""
    return {**est.describe(), "name": est.name, "state": est.state(folder, name)}


def load_estimator(folder: Path, doc: dict[str, Any]) -> Estimator:
    """The estimator a document of :func:`save_estimator` describes (unfitted without ``state``: an
    :meth:`~autograde.calibrated.estimators.Estimator.describe` document)."""
    cls = ESTIMATORS.get(str(doc.get("kind")))
    if cls is None:
        problems = Problems()
        problems.add(folder / "model.json", None, f"unknown estimator kind {doc.get('kind')!r}",
                     f"refit the model with this version (kinds: {', '.join(sorted(ESTIMATORS))})")
        problems.raise_if_any()
        raise AssertionError("unreachable")
    est = cls(**cls.params_from_json(doc["params"]))
    if "state" in doc:
        est.restore(folder, doc["state"])
    return est
