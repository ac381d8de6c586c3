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

from autograde.calibrated.estimators import Estimator
from autograde.calibrated.features import Encoding, RelevanceFeatures, SourceData, SourceEncoding, encode
from autograde.calibrated.registry import load_estimator, save_estimator
from autograde.calibrated.thresholds import threshold_labels
from autograde.core.errors import Problems

__all__ = ["FORMAT", "FORMAT_VERSION", "REQUIRED_FIELDS", "CalibratedQrelsModel", "load_calibrated_model", "output_labels", "read_header"]

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


REQUIRED_FIELDS = ("levels", "relevant_level", "features", "sources", "estimator", "thresholds")
"""The fields of ``model.json`` (beside format and version) that every model folder of this version has."""

_REFIT = "fit a model with 'autograde rubric calibrate-qrels fit --model DIR'"


def read_header(folder: Path) -> dict[str, Any]:
    """``model.json`` of a model folder, after checking that it is one, of this format version, with every
    required field (:data:`REQUIRED_FIELDS`)."""
    problems = Problems()
    path = folder / "model.json"
    doc: Any = None
    if not folder.is_dir():
        problems.add(folder, None, "no such model folder", f"give the folder written by the fit ({_REFIT})")
    elif not path.is_file():
        problems.add(folder, None, "not a calibrated-qrels model folder (no model.json)", _REFIT)
    else:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            problems.add(path, exc.lineno, f"not valid JSON ({exc.msg}, column {exc.colno}): a truncated or "
                         "edited file", f"copy the model folder again, or {_REFIT}")
        except (UnicodeDecodeError, OSError) as exc:
            problems.add(path, None, f"cannot be read: {exc}", f"copy the model folder again, or {_REFIT}")
    if doc is not None and (not isinstance(doc, dict) or doc.get("format") != FORMAT):
        problems.add(path, None, f"not a calibrated-qrels model (format {doc.get('format') if isinstance(doc, dict) else None!r})",
                     _REFIT)
    elif doc is not None and doc.get("format_version") != FORMAT_VERSION:
        problems.add(path, None, f"model format version {doc.get('format_version')!r}; this autograde reads version "
                     f"{FORMAT_VERSION}", f"refit the model with this version: {_REFIT}")
    elif doc is not None:
        missing = [k for k in REQUIRED_FIELDS if k not in doc]
        if missing:
            problems.add(path, None, f"lacks the field(s) {', '.join(missing)} (an edited or damaged file)",
                         f"copy the model folder again, or {_REFIT}")
    problems.raise_if_any()
    return dict(doc)


def _model_from(folder: Path, doc: dict[str, Any]) -> CalibratedQrelsModel:
    levels = tuple(int(v) for v in doc["levels"])
    estimator = load_estimator(folder, doc["estimator"])
    thresholds = tuple(float(doc["thresholds"][str(lv)]) for lv in levels[1:])
    known = {"format", "format_version", *REQUIRED_FIELDS}
    encodings = [SourceEncoding.from_json(s) for s in doc["sources"]]
    mode = doc["features"]
    problems = Problems()
    fix = f"copy the model folder again, or {_REFIT}"
    if mode not in ("onehot", "ordinal", "both"):
        problems.add(folder / "model.json", None, f"features {mode!r} is none of onehot, ordinal, both", fix)
        problems.raise_if_any()
    model = CalibratedQrelsModel(encodings, mode, levels, int(doc["relevant_level"]), estimator, thresholds,
                                 {k: v for k, v in doc.items() if k not in known})
    width = sum(len(e.columns(mode)) for e in encodings)
    probs = model.predict_proba(np.zeros((1, width), dtype=np.float32))
    if probs.shape != (1, len(levels)):
        problems.add(folder / "model.json", None, f"the estimator gives {probs.shape[1]} level probabilities for "
                     f"{len(levels)} levels", fix)
        problems.raise_if_any()
    return model


def load_calibrated_model(folder: str | Path) -> CalibratedQrelsModel:
    """Read a model folder written by :meth:`CalibratedQrelsModel.save` (version checked first). A damaged folder
    (a field missing or of the wrong type, a weights file missing, an estimator that does not fit the sources'
    feature columns) is an :class:`~autograde.core.errors.InputError` naming ``model.json``, never a traceback."""
    import pickle

    from autograde.core.errors import AutogradeError

    folder = Path(folder)
    doc = read_header(folder)
    path = folder / "model.json"
    fix = f"copy the model folder again, or {_REFIT}"
    problems = Problems()
    try:
        return _model_from(folder, doc)
    except AutogradeError:
        raise
    except KeyError as exc:
        problems.add(path, None, f"lacks the field {exc.args[0]!r} (an edited or damaged file)", fix)
    except FileNotFoundError as exc:
        problems.add(path, None, f"the model's file {Path(exc.filename or '?').name} is missing from {folder}", fix)
    except (TypeError, ValueError, AttributeError, IndexError, RuntimeError, EOFError, pickle.UnpicklingError,
            OSError) as exc:
        first = str(exc).splitlines()[0].split(". ")[0] if str(exc) else ""
        problems.add(path, None, f"a damaged model: {type(exc).__name__}: {first}", fix)
    problems.raise_if_any()
    raise AssertionError("unreachable")
