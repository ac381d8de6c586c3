"""Predictions of the human grade of every pooled passage, as a distribution over the human grades.

A grader's labels (a qrels variant or any qrels file) and expected grades (a grades table) are put on the human
scale by ``level`` (a label at or above it predicts the human relevance level, lower labels predict 0: the same
decision the grader's own leaderboard makes) or by ``scale`` (label -> human grade, interpolated between labels);
a calibrated-qrels passage table gives the distribution itself. A pooled passage without a prediction is predicted
grade 0, as the grader's leaderboard counts it, and is counted.

>>> grade_distribution(np.array([0.0, 1.5, 9.0]), [0, 1, 2, 3]).tolist()
[[1.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0], [0.0, 0.0, 0.0, 1.0]]
>>> on_human_scale(np.array([2.0, 4.0, 5.0]), None, {4: 2, 5: 3}).tolist()
[0.0, 2.0, 3.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from autograde.config.human_sample import PredictionConfig
from autograde.core.errors import InvalidValueError
from autograde.core.ids import PairKey
from autograde.core.tables import read_table
from autograde.io.trec import read_qrels
from autograde.ppi.workflow import prediction_source

if TYPE_CHECKING:
    from autograde.config.model import Config


@dataclass(frozen=True)
class Prediction:
    """One prediction over the pool: ``probs[i]`` the distribution over the human grades of unit i, how many units
    had no prediction, and where it came from (for the reports)."""

    name: str
    probs: np.ndarray
    missing: int
    source: str


def grade_distribution(grades: np.ndarray, levels: Sequence[int]) -> np.ndarray:
    """Real-valued human grades as distributions over ``levels`` with the same mean (mass split between the two
    neighbouring levels; values outside the levels are clipped)."""
    lv = np.asarray(levels, dtype=np.float64)
    g = np.clip(np.asarray(grades, dtype=np.float64), lv[0], lv[-1])
    hi = np.clip(np.searchsorted(lv, g, side="left"), 0, len(lv) - 1)
    lo = np.where(lv[hi] > g, hi - 1, hi)
    width = lv[hi] - lv[lo]
    frac = np.divide(g - lv[lo], width, out=np.zeros_like(g), where=width > 0)
    out = np.zeros((len(g), len(lv)))
    rows = np.arange(len(g))
    np.add.at(out, (rows, lo), 1.0 - frac)
    np.add.at(out, (rows, hi), frac)
    return out


def on_human_scale(labels: np.ndarray, level: tuple[float, int] | None, scale: dict[int, float] | None) -> np.ndarray:
    """Labels (or expected grades) as predicted human grades: ``scale`` (label -> grade, linear in between, 0 below
    its smallest label), else ``level`` = (threshold, relevance level): at or above the threshold the relevance
    level, else 0."""
    x = np.asarray(labels, dtype=np.float64)
    if scale:
        keys = np.array(sorted(scale), dtype=np.float64)
        vals = np.array([scale[int(k)] for k in keys], dtype=np.float64)
        return np.asarray(np.where(x < keys[0], 0.0, np.interp(x, keys, vals)), dtype=np.float64)
    assert level is not None
    threshold, relevant = level
    return np.asarray(np.where(x >= threshold, float(relevant), 0.0), dtype=np.float64)


def _labels_for(keys: Sequence[PairKey], table: dict[PairKey, float]) -> tuple[np.ndarray, int]:
    vals = np.array([table.get(k, np.nan) for k in keys], dtype=np.float64)
    missing = int(np.isnan(vals).sum())
    return np.nan_to_num(vals, nan=-np.inf), missing


def predict(cfg: PredictionConfig, config: Config, keys: Sequence[PairKey], levels: Sequence[int],
            relevance_level: int) -> Prediction:
    """The :class:`Prediction` of one ``human_sample.predictions`` entry for the pool units ``keys``."""
    kind, path, threshold = prediction_source(cfg, config)
    if kind == "table":
        return _from_table(cfg.name, path, keys, levels)
    if kind == "qrels":
        qrels = read_qrels(path)
        table = {(q, d): float(v) for q, docs in qrels.items() for d, v in docs.items()}
        what = f"labels of {path}"
    else:
        g = read_table(path, ["query_id", "passage_id", "grade", "expected_grade"])
        value = g["expected_grade"].astype("float64").fillna(g["grade"].astype("float64"))
        best = g.assign(v=value).dropna(subset=["v"]).groupby(["query_id", "passage_id"])["v"].max()
        table = {(str(q), str(d)): float(v) for (q, d), v in best.items()}
        what = f"expected grades of {path} (max over a passage's items)"
    labels, missing = _labels_for(keys, table)
    cut = cfg.level if cfg.level is not None else (threshold if threshold is not None else float(relevance_level))
    grades = on_human_scale(labels, (cut, relevance_level), cfg.scale)
    how = f"scale {dict(sorted(cfg.scale.items()))}" if cfg.scale else f"label >= {cut:g} -> grade {relevance_level}"
    return Prediction(cfg.name, grade_distribution(grades, levels), missing, f"{what}; {how}")


def _from_table(name: str, path: str, keys: Sequence[PairKey], levels: Sequence[int]) -> Prediction:
    cols = [f"p_level_{v}" for v in levels]
    if not Path(path).is_file():
        raise InvalidValueError(f"{path}: the prediction table {name!r} reads does not exist (fix: run the "
                                "calibrated-qrels rules first, or name an existing passages.parquet)")
    t = read_table(path)
    absent = [c for c in cols if c not in t.columns]
    if absent:
        raise InvalidValueError(f"{path}: prediction {name!r} needs the columns {', '.join(cols)} (one per human "
                                f"grade of human_sample.levels); missing: {', '.join(absent)}")
    t = t.astype({"query_id": str, "passage_id": str})
    probs = t[cols].to_numpy(dtype=np.float64)
    index = pd.MultiIndex.from_frame(t[["query_id", "passage_id"]])
    pos = index.get_indexer(pd.MultiIndex.from_tuples(list(keys), names=["query_id", "passage_id"]))
    out = np.zeros((len(keys), len(cols)))
    out[:, 0] = 1.0
    out[pos >= 0] = probs[pos[pos >= 0]]
    total = out.sum(axis=1, keepdims=True)
    return Prediction(name, out / np.where(total > 0, total, 1.0), int((pos < 0).sum()),
                      f"calibrated distribution of {path}")
