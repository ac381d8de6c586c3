"""Agreement between labellings of the same items: Cohen's kappa (unweighted, weighted, many binary decisions at
once) and Krippendorff's alpha (two or more coders, missing values). The values are scikit-learn's and the
``krippendorff`` package's (tests/core check them); numpy only, no scipy import.

>>> cohen_kappa([0, 1, 1, 0], [0, 1, 0, 0])
0.5
>>> round(cohen_kappa([0, 1, 2], [0, 2, 2], weights="linear"), 4)
0.6667
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from autograde.core.errors import InvalidValueError

KappaWeights = Literal["linear", "quadratic"] | None


def confusion_matrix(a: Sequence[int], b: Sequence[int], labels: Sequence[int] | None = None) -> tuple[np.ndarray, list[int]]:
    """Counts ``m[i, j]`` of items labelled ``labels[i]`` by ``a`` and ``labels[j]`` by ``b`` (labels sorted); a
    label that ``labels`` does not list is an :class:`~autograde.core.errors.InvalidValueError` naming it."""
    if len(a) != len(b):
        raise ValueError(f"label sequences differ in length: {len(a)} vs {len(b)}")
    lab = sorted(set(a) | set(b)) if labels is None else list(labels)
    index = {v: i for i, v in enumerate(lab)}
    for which, seq in (("first", a), ("second", b)):
        outside = sorted({v for v in seq if v not in index}, key=str)
        if outside:
            shown = ", ".join(map(str, outside[:5])) + (" ..." if len(outside) > 5 else "")
            raise InvalidValueError(f"label{'s' if len(outside) > 1 else ''} {shown} ({which} labelling) "
                                    f"{'are' if len(outside) > 1 else 'is'} not one of the labels {lab} (fix: give "
                                    f"every label the sequences use, or map {shown} to one of them first)")
    m = np.zeros((len(lab), len(lab)), dtype=np.int64)
    for x, y in zip(a, b, strict=True):
        m[index[x], index[y]] += 1
    return m, lab


def cohen_kappa(a: Sequence[int], b: Sequence[int], weights: KappaWeights = None,
                labels: Sequence[int] | None = None) -> float:
    """Cohen's kappa of two labelings of the same items (unweighted, or linearly / quadratically weighted).

    Same definition as ``sklearn.metrics.cohen_kappa_score``: disagreement weights ``|i - j|`` (linear) or
    ``(i - j)^2`` (quadratic) over the positions of the sorted label set. Returns NaN when agreement by chance
    is total (one label only on both sides), as sklearn does. With ``labels``, a label outside them is an
    :class:`~autograde.core.errors.InvalidValueError` (:func:`confusion_matrix`).
    """
    m, lab = confusion_matrix(a, b, labels)
    n = m.sum()
    if n == 0:
        return float("nan")
    k = len(lab)
    idx = np.arange(k)
    if weights is None:
        w = (idx[:, None] != idx[None, :]).astype(float)
    elif weights == "linear":
        w = np.abs(idx[:, None] - idx[None, :]).astype(float)
    elif weights == "quadratic":
        w = ((idx[:, None] - idx[None, :]) ** 2).astype(float)
    else:
        raise ValueError(f"unknown kappa weights {weights!r}; valid: None, 'linear', 'quadratic'")
    expected = np.outer(m.sum(axis=1), m.sum(axis=0)) / n
    denom = float((w * expected).sum())
    if denom == 0.0:
        return float("nan")
    return float(1.0 - (w * m).sum() / denom)


def binary_kappa_counts(tp: np.ndarray, pos: np.ndarray, relevant: int, n: int) -> np.ndarray:
    """Cohen's kappa of many binary decisions against one binary truth at once, from each decision's
    true-positive count ``tp`` and positive count ``pos`` (``relevant``: positives of the truth, ``n``: items);
    NaN where chance agreement is total. Equals :func:`cohen_kappa` on the 0/1 labelings."""
    fp, fn = pos - tp, relevant - tp
    tn = n - tp - fp - fn
    po = (tp + tn) / n
    pe = (pos * relevant + (n - pos) * (n - relevant)) / float(n) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1.0, (po - pe) / (1.0 - pe), np.nan)


def binary_kappa(decision: np.ndarray, truth: np.ndarray) -> float:
    """Cohen's kappa of two 0/1 labelings (NaN when chance agreement is total)."""
    return float(binary_kappa_counts(np.array([np.sum(decision & truth)]), np.array([np.sum(decision)]),
                                     int(truth.sum()), len(truth))[0])


AlphaLevel = Literal["nominal", "ordinal", "interval"]


def krippendorff_alpha(a: Sequence[int], b: Sequence[int], level: AlphaLevel = "ordinal") -> float:
    """Krippendorff's alpha of two coders who both labelled every unit (``a[i]``, ``b[i]``):
    :func:`krippendorff_alpha_data` of the two rows.

    >>> round(krippendorff_alpha([0, 1, 2, 3, 1], [0, 1, 3, 3, 0], "ordinal"), 4)
    0.8471
    """
    if len(a) != len(b):
        raise InvalidValueError(f"label sequences differ in length: {len(a)} vs {len(b)}")
    return krippendorff_alpha_data(np.vstack([np.asarray(a, dtype=float), np.asarray(b, dtype=float)]), level)


def krippendorff_alpha_data(data: Sequence[Sequence[float]] | np.ndarray, level: AlphaLevel = "ordinal") -> float:
    """Krippendorff's alpha of any number of coders (rows of ``data``) over units (columns), NaN where a coder did
    not label a unit: the ``krippendorff`` package's ``alpha(reliability_data=data, level_of_measurement=level)``
    with its default value domain, the values used (a test checks the two agree to 1e-12). Each unit with ``m >= 2`` values adds every ordered pair of its values, weighted ``1 / (m - 1)``, to the
    coincidence matrix ``o``; a unit with one value adds nothing. With the value counts ``n_c`` (the sums of
    ``o``) and ``n = sum n_c``: alpha = 1 - sum(o * d) / sum(e * d), e = (n_c n_k - [c = k] n_c) / (n - 1), with
    the distance ``d`` of the level: nominal ``[c != k]``, interval ``(c - k)^2``, ordinal
    ``(sum of n_g for g from c to k - (n_c + n_k) / 2)^2``. NaN where fewer than two values are paired.

    >>> round(krippendorff_alpha_data([[1, 2, 3, 3, np.nan], [1, 2, 3, 2, 1], [np.nan, 2, 3, 3, 1]], "nominal"), 4)
    0.7857
    """
    x = np.asarray(data, dtype=float)
    if x.ndim != 2:
        raise InvalidValueError(f"reliability data must be coders x units, got shape {x.shape}")
    values = np.unique(x[~np.isnan(x)])
    if len(values) < 2:
        return float("nan")
    counts = np.stack([(x == v).sum(axis=0) for v in values], axis=1).astype(float)  # units x values
    counts = counts[counts.sum(axis=1) >= 2]  # a unit with one value pairs nothing
    m = counts.sum(axis=1)
    if not len(m):
        return float("nan")
    w = counts / (m - 1.0)[:, None]
    o = w.T @ counts - np.diag(w.sum(axis=0))
    n_c = o.sum(axis=0)
    n = float(n_c.sum())
    idx = np.arange(len(values))
    if level == "nominal":
        d = (idx[:, None] != idx[None, :]).astype(float)
    elif level == "interval":
        d = (values[:, None] - values[None, :]) ** 2
    elif level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        lo, hi = np.minimum(idx[:, None], idx[None, :]), np.maximum(idx[:, None], idx[None, :])
        d = (cum[hi + 1] - cum[lo] - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    else:
        raise InvalidValueError(f"unknown alpha level {level!r}; valid: nominal, ordinal, interval")
    expected = (np.outer(n_c, n_c) - np.diag(n_c)) / (n - 1.0)
    denom = float((expected * d).sum())
    if denom == 0.0:
        return float("nan")
    return float(1.0 - (o * d).sum() / denom)
