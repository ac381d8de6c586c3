"""A fitted calibrated-qrels model: what labels a new collection, saved as a folder with its provenance.

The folder holds ``model.json`` (format and version, the sources with their encodings, the levels, the
estimator: its kind, parameters and learned state (the cross-fitted kind holds one fitted estimator per fold); the per-level
thresholds of the deployed model, the seeds, the training data's digest, counts and level shares, the selection
table) and a weights file per network (``*.pt``, weights only). :func:`load_calibrated_model` checks the format
and version before anything else; a folder from another version is an input error that says to refit.

How a model is fitted lives in :mod:`autograde.calibrated.fit`; this module only predicts, saves and loads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograde.calibrated.estimators import Estimator, load_estimator, save_estimator
from autograde.calibrated.features import Encoding, RelevanceFeatures, SourceData, SourceEncoding, encode
from autograde.calibrated.thresholds import threshold_labels
from autograde.core.errors import Problems

__all__ = ["FORMAT", "FORMAT_VERSION", "CalibratedQrelsModel", "load_calibrated_model", "output_labels", "read_header"]

FORMAT = "autograde-calibrated-qrels"
FORMAT_VERSION = 2
"""2: the estimator as kind, parameters and learned state, cross-fitted; 1 (refused): an estimator refitted on all
judgments."""


def output_labels(probs: np.ndarray, levels: tuple[int, ...], relevant_level: int, thresholds: tuple[float, ...],
                  output: str) -> np.ndarray:
    """Exported labels: ``threshold`` (per-level thresholds), ``expected`` (rounded expected level) or
    ``probability`` (round(100 P(level >= relevant_level)))."""
    lv = np.asarray(levels, dtype=np.float64)
    if output == "expected":
        return np.rint(probs @ lv).astype(int)
    if output == "probability":
        return np.rint(100.0 * probs[:, lv >= relevant_level].sum(axis=1)).astype(int)
    return np.asarray(levels)[threshold_labels(probs, thresholds)]


@dataclass
class CalibratedQrelsModel:
    """Source encodings + an estimator + per-level thresholds; ``info`` is the provenance written with it."""

    encodings: list[SourceEncoding]
    mode: Encoding
    levels: tuple[int, ...]
    relevant_level: int
    estimator: Estimator
    thresholds: tuple[float, ...]
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def source_names(self) -> list[str]:
        return [e.name for e in self.encodings]

    def features(self, sources: list[SourceData]) -> RelevanceFeatures:
        """A new collection's sources encoded as at training time (matched by name; see :func:`encode`)."""
        return encode(sources, self.mode, self.encodings)

    def predict_proba(self, matrix: np.ndarray) -> np.ndarray:
        """P(level) per row (rows x levels)."""
        return self.estimator.predict_proba(matrix)

    def labels(self, probs: np.ndarray, output: str = "threshold") -> np.ndarray:
        return output_labels(probs, self.levels, self.relevant_level, self.thresholds, output)

    def save(self, folder: str | Path) -> None:
        """Write the folder (``model.json`` last, so a half-written folder has no valid header)."""
        from autograde.core.text import atomic_write_text
        from autograde.rubric.report import to_jsonable

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        doc = {"format": FORMAT, "format_version": FORMAT_VERSION, "levels": list(self.levels),
               "relevant_level": self.relevant_level, "features": self.mode,
               "sources": [e.to_json() for e in self.encodings], "estimator": save_estimator(self.estimator, out),
               "thresholds": {str(lv): tau for lv, tau in zip(self.levels[1:], self.thresholds, strict=True)},
               **self.info}
        atomic_write_text(out / "model.json", json.dumps(to_jsonable(doc), indent=1, sort_keys=True) + "\n")


def read_header(folder: Path) -> dict[str, Any]:
    """``model.json`` of a model folder, after checking that it is one, of this format version."""
    problems = Problems()
    path = folder / "model.json"
    refit = "fit a model with 'autograde rubric calibrate-qrels fit --model DIR'"
    doc: Any = None
    if not path.exists():
        problems.add(folder, None, "not a calibrated-qrels model folder (no model.json)", refit)
    else:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            problems.add(path, None, f"not valid JSON: {exc}", refit)
    if doc is not None and (not isinstance(doc, dict) or doc.get("format") != FORMAT):
        problems.add(path, None, f"not a calibrated-qrels model (format {doc.get('format') if isinstance(doc, dict) else None!r})",
                     refit)
    elif doc is not None and doc.get("format_version") != FORMAT_VERSION:
        problems.add(path, None, f"model format version {doc.get('format_version')!r}; this autograde reads version "
                     f"{FORMAT_VERSION}", f"refit the model with this version: {refit}")
    problems.raise_if_any()
    return dict(doc)


def load_calibrated_model(folder: str | Path) -> CalibratedQrelsModel:
    """Read a model folder written by :meth:`CalibratedQrelsModel.save` (version checked first)."""
    folder = Path(folder)
    doc = read_header(folder)
    levels = tuple(int(v) for v in doc["levels"])
    estimator = load_estimator(folder, doc["estimator"])
    thresholds = tuple(float(doc["thresholds"][str(lv)]) for lv in levels[1:])
    known = {"format", "format_version", "levels", "relevant_level", "features", "sources", "estimator", "thresholds"}
    return CalibratedQrelsModel([SourceEncoding.from_json(s) for s in doc["sources"]], doc["features"], levels,
                                int(doc["relevant_level"]), estimator, thresholds,
                                {k: v for k, v in doc.items() if k not in known})
