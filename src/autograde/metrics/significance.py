"""Paired significance tests between systems: the reference server's two-sided permutation test, seeded.

>>> a = {"q1": {"map": 0.9}, "q2": {"map": 0.8}, "q3": {"map": 0.7}}
>>> b = {"q1": {"map": 0.1}, "q2": {"map": 0.2}, "q3": {"map": 0.3}}
>>> res = paired_test(a, b, n_resamples=1000, seed=1)["map"]
>>> round(res["diff"], 2), res["p_value"] < 0.5, res["significant"]
(0.6, True, False)

The test (as the reference): for each query the difference d = A - B; the observed statistic is
|mean(d)|; each resample flips the sign of every d independently with probability 1/2 (swapping A and B
on that query); p = (number of resamples with |mean| >= observed) / n_resamples, and
``significant = p < alpha``. ``p_value_variant="plus_one"`` gives (count + 1) / (n + 1), which is never 0
and is a valid Monte-Carlo p-value.

Exact when cheap (as scipy's ``permutation_test``): when all 2^n sign flips of a comparison's n queries fit in
``n_resamples``, they are enumerated instead of sampled, and p = (flips with |mean| >= observed) / 2^n, which
counts the observed arrangement (the smallest two-sided p is 2 / 2^n). Every result says which was used
(``p_method``: ``exact`` or ``monte-carlo``).

Query set: the union of the queries of the two systems; a query one side lacks scores 0 on that side
(as the reference). Per-query values normally come from :mod:`autograde.metrics.retrieval`, whose
default (trec_eval ``-c``) already scores 0 every qrels query a run misses.

Unlike the reference (a Python loop over resamples and queries with the unseeded ``random`` module),
sign flips come from a seeded ``numpy.random.Generator`` and all resamples, measures and comparisons are
one matrix product per chunk of resamples (chunks bound memory; results do not depend on the chunk size).
Many systems at once (all pairs, or each against a baseline) share the same sign flips, and p-values are
corrected across the comparisons of each measure (Holm or Benjamini-Hochberg).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from autograde.core.errors import InvalidValueError, UnknownNameError
from autograde.core.stats import paired_t_pvalues
from autograde.metrics.trec import query_sort_key

Correction = Literal["none", "holm", "bh"]
PValueVariant = Literal["reference", "plus_one"]

__all__ = [
    "Correction",
    "PValueVariant",
    "adjust_pvalues",
    "benjamini_hochberg",
    "bootstrap_ci",
    "compare_systems",
    "compare_to_baseline",
    "exact_sign_flip_counts",
    "holm",
    "paired_test",
    "sign_flip_counts",
]

_CHUNK_BYTES = 1 << 25  # 32 MiB per chunk of sign matrix / permuted statistics


def sign_flip_counts(diffs: np.ndarray, n_resamples: int, rng: np.random.Generator,
                     chunk_bytes: int = _CHUNK_BYTES) -> np.ndarray:
    """For each column of ``diffs`` (queries x tests), how many random sign flips reach |sum| >= |observed sum|.

    Each resample draws its own ``ceil(n / 64)`` random 64-bit words and uses one bit per query (1 = flip),
    so the stream, and the counts, are the same for every chunk size. With B the bit matrix, the flipped
    sums are ``colsum(d) - 2 B d``: one matrix product per chunk for all resamples and columns. Sums
    instead of means: the comparison is scale-free, so zero rows (queries outside a pair's query set)
    change nothing. Ties count, with a tolerance for summation order.
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    n, cols = d.shape
    if n_resamples < 1:
        raise InvalidValueError(f"n_resamples must be >= 1, got {n_resamples}")
    total = d.sum(axis=0)
    threshold = np.abs(total) - 1e-12 * np.abs(d).sum(axis=0)
    counts = np.zeros(cols, dtype=np.int64)
    words = max(1, -(-n // 64))
    rows = max(1, min(n_resamples, chunk_bytes // (8 * max(n, cols, 1))))
    done = 0
    while done < n_resamples:
        size = min(rows, n_resamples - done)
        raw = rng.integers(0, 2**64, size=(size, words), dtype=np.uint64)
        flips = np.unpackbits(raw.view(np.uint8), axis=1, count=n, bitorder="little").astype(np.float64)
        counts += (np.abs(total - 2.0 * (flips @ d)) >= threshold).sum(axis=0)
        done += size
    return counts


def exact_sign_flip_counts(diffs: np.ndarray, chunk_bytes: int = _CHUNK_BYTES) -> np.ndarray:
    """For each column of ``diffs`` (queries x tests), how many of ALL 2^n sign flips reach |sum| >= |observed|.

    The complete null distribution (the observed arrangement is one of the 2^n, so the smallest two-sided p is
    2 / 2^n when every flip but the full one lowers |sum|): what :func:`sign_flip_counts` estimates by sampling.
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    n, cols = d.shape
    if n > 40:
        raise InvalidValueError(f"exact enumeration of 2^{n} sign flips is not feasible; sample them instead")
    total = d.sum(axis=0)
    threshold = np.abs(total) - 1e-12 * np.abs(d).sum(axis=0)
    counts = np.zeros(cols, dtype=np.int64)
    rows = max(1, chunk_bytes // (8 * max(n, cols, 1)))
    start, end = 0, 1 << n
    while start < end:
        stop = min(end, start + rows)
        codes = np.arange(start, stop, dtype=np.uint64)[:, None]
        flips = ((codes >> np.arange(n, dtype=np.uint64)[None, :]) & np.uint64(1)).astype(np.float64)
        counts += (np.abs(total - 2.0 * (flips @ d)) >= threshold).sum(axis=0)
        start = stop
    return counts


def bootstrap_ci(diffs: np.ndarray, n_resamples: int, rng: np.random.Generator, confidence: float = 0.95,
                 chunk_bytes: int = _CHUNK_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of the mean of each column of ``diffs`` (queries resampled with replacement)."""
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[:, None]
    n, cols = d.shape
    rows = max(1, min(n_resamples, chunk_bytes // (8 * max(n, cols, 1))))
    means = np.empty((n_resamples, cols))
    done = 0
    while done < n_resamples:
        size = min(rows, n_resamples - done)
        weights = rng.multinomial(n, np.full(n, 1.0 / n), size=size).astype(np.float64)
        means[done:done + size] = weights @ d / n
        done += size
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail], axis=0)
    return low, high


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p-values (family-wise error control)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg step-up adjusted p-values (false discovery rate control)."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    ranked = p[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def adjust_pvalues(p_values: Sequence[float] | np.ndarray, method: Correction) -> np.ndarray:
    """``none`` (unchanged), ``holm`` or ``bh``."""
    if method == "none":
        return np.asarray(p_values, dtype=np.float64).copy()
    if method == "holm":
        return holm(p_values)
    if method == "bh":
        return benjamini_hochberg(p_values)
    raise InvalidValueError(f"unknown correction {method!r}; valid: none, holm, bh")


def _matrix(per_query: Mapping[str, Mapping[str, float]], qids: list[str], measures: list[str]
            ) -> tuple[np.ndarray, np.ndarray]:
    """(values: queries x measures, with 0 where the query is missing; presence mask per query)."""
    values = np.zeros((len(qids), len(measures)))
    present = np.zeros(len(qids), dtype=bool)
    for i, q in enumerate(qids):
        row = per_query.get(q)
        if row is None:
            continue
        present[i] = True
        for j, m in enumerate(measures):
            if m not in row:
                raise UnknownNameError(f"query {q!r} has no value for measure {m!r}")
            values[i, j] = float(row[m])
    return values, present


def _pair_rng(seed: int, a: str, b: str) -> np.random.Generator:
    """A generator for one comparison that does not depend on which other systems are compared."""
    return np.random.default_rng([seed, zlib.crc32(f"{a}\x00{b}".encode())])


def _p_values(diffs: np.ndarray, masks: list[np.ndarray], n_m: int, n_resamples: int, seed: int,
              p_value_variant: PValueVariant) -> tuple[np.ndarray, np.ndarray]:
    """Permutation p-values of every column of ``diffs`` (comparison-major, ``n_m`` measures per comparison) and
    how each was computed: exact where all 2^n sign flips of the comparison's n queries fit in ``n_resamples``
    (scipy's rule), else from ``n_resamples`` seeded random flips shared by all columns."""
    counts = sign_flip_counts(diffs, n_resamples, np.random.default_rng(seed))
    p_all = (counts + 1) / (n_resamples + 1) if p_value_variant == "plus_one" else counts / n_resamples
    p_method = np.array(["monte-carlo"] * diffs.shape[1], dtype=object)
    for k, mask in enumerate(masks):
        n_k = int(mask.sum())
        if n_k and 2**n_k <= n_resamples:
            cols = slice(k * n_m, (k + 1) * n_m)
            p_all[cols] = exact_sign_flip_counts(diffs[mask, cols]) / 2**n_k
            p_method[cols] = "exact"
    return p_all, p_method


def _resolve_pairs(per_query: Mapping[str, Any], baseline: str | None,
                   pairs: Sequence[tuple[str, str]] | None) -> list[tuple[str, str]]:
    """The comparisons: ``pairs`` if given, else each system against ``baseline``, else all pairs (checked)."""
    systems = list(per_query)
    if pairs is None:
        if baseline is not None:
            if baseline not in per_query:
                raise UnknownNameError(f"baseline {baseline!r} is not among the systems: {', '.join(systems)}")
            pairs = [(s, baseline) for s in systems if s != baseline]
        else:
            pairs = [(systems[i], systems[j]) for i in range(len(systems)) for j in range(i + 1, len(systems))]
    pairs = list(pairs)
    if not pairs:
        raise InvalidValueError("nothing to compare: give at least two systems")
    for a, b in pairs:
        for s in (a, b):
            if s not in per_query:
                raise InvalidValueError(f"system {s!r} has no per-query values; systems: {', '.join(systems)}")
    return pairs


def _resolve_measures(per_query: Mapping[str, Mapping[str, Mapping[str, float]]],
                      measures: Sequence[str] | None) -> list[str]:
    """The measures to test: as given, else those of the first per-query row of any system."""
    if measures is None:
        first = next((row for s in per_query for row in per_query[s].values()), None)
        if first is None:
            raise InvalidValueError("no per-query values in any system")
        measures = list(first)
    return list(measures)


def _compare(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], measures: Sequence[str] | None,
             baseline: str | None, pairs: Sequence[tuple[str, str]] | None, seed: int, n_resamples: int,
             alpha: float, correction: Correction, p_value_variant: PValueVariant, t_test: bool, bootstrap: bool,
             confidence: float) -> dict[str, Any]:
    """The comparisons as columns (numpy arrays / lists), row = (comparison, measure), comparison-major."""
    systems = list(per_query)
    pairs = _resolve_pairs(per_query, baseline, pairs)
    measures = _resolve_measures(per_query, measures)
    if p_value_variant not in ("reference", "plus_one"):
        raise InvalidValueError(f"unknown p_value_variant {p_value_variant!r}; valid: reference, plus_one")
    if correction not in ("none", "holm", "bh"):
        raise InvalidValueError(f"unknown correction {correction!r}; valid: none, holm, bh")
    qids = sorted({q for s in systems for q in per_query[s]}, key=query_sort_key)
    mats = {s: _matrix(per_query[s], qids, measures) for s in dict.fromkeys(x for p in pairs for x in p)}
    n_m, n_p = len(measures), len(pairs)
    diffs = np.zeros((len(qids), n_p * n_m))
    masks = []
    for k, (a, b) in enumerate(pairs):
        (va, pa), (vb, pb) = mats[a], mats[b]
        mask = pa | pb
        masks.append(mask)
        diffs[:, k * n_m:(k + 1) * n_m] = np.where(mask[:, None], va - vb, 0.0)
    p_all, p_method = _p_values(diffs, masks, n_m, n_resamples, seed, p_value_variant)
    n_queries = np.repeat([int(m.sum()) for m in masks], n_m)
    a_mean, b_mean, diff = (np.zeros(n_p * n_m) for _ in range(3))
    t_p = np.full(n_p * n_m, np.nan)
    ci_low, ci_high = np.full(n_p * n_m, np.nan), np.full(n_p * n_m, np.nan)
    for k, (a, b) in enumerate(pairs):
        mask, cols = masks[k], slice(k * n_m, (k + 1) * n_m)
        if not mask.any():
            p_all[cols] = 1.0
            continue
        va, vb = mats[a][0][mask], mats[b][0][mask]
        a_mean[cols], b_mean[cols], diff[cols] = va.mean(axis=0), vb.mean(axis=0), (va - vb).mean(axis=0)
        if t_test:
            t_p[cols] = paired_t_pvalues(va, vb)
        if bootstrap:
            ci_low[cols], ci_high[cols] = bootstrap_ci(va - vb, n_resamples, _pair_rng(seed, a, b), confidence)
    # Correction across the comparisons of each measure: rows j, j + n_m, j + 2 n_m, ...
    by_pair = p_all.reshape(n_p, n_m)
    p_adj = np.column_stack([adjust_pvalues(by_pair[:, j], correction) for j in range(n_m)]).reshape(-1)
    columns: dict[str, Any] = {
        "measure": measures * n_p,
        "system": [a for a, _ in pairs for _ in range(n_m)],
        "baseline": [b for _, b in pairs for _ in range(n_m)],
        "n_queries": n_queries, "A_mean": a_mean, "B_mean": b_mean, "diff": diff,
        "p_value": p_all, "p_adjusted": p_adj, "significant": p_adj < alpha, "p_method": list(p_method),
    }
    if t_test:
        columns["t_p_value"] = t_p
    if bootstrap:
        columns["ci_low"], columns["ci_high"] = ci_low, ci_high
    return columns


def compare_systems(per_query: Mapping[str, Mapping[str, Mapping[str, float]]], measures: Sequence[str] | None = None,
                    baseline: str | None = None, pairs: Sequence[tuple[str, str]] | None = None, *, seed: int = 0,
                    n_resamples: int = 10000, alpha: float = 0.05, correction: Correction = "holm",
                    p_value_variant: PValueVariant = "reference", t_test: bool = False, bootstrap: bool = False,
                    confidence: float = 0.95) -> Any:
    """Paired permutation tests for many systems at once -> a pandas DataFrame, one row per (comparison, measure).

    ``per_query`` is system -> query -> measure -> value. Comparisons: ``pairs`` if given, else each system
    against ``baseline``, else all pairs (in the given system order). Columns: measure, system (A),
    baseline (B), n_queries, A_mean, B_mean, diff (A - B), p_value, p_adjusted, significant
    (p_adjusted < alpha), then t_p_value and ci_low/ci_high when asked. The correction runs across the
    comparisons of each measure. All comparisons share one seeded stream of sign flips.
    """
    import pandas as pd

    return pd.DataFrame(_compare(per_query, measures, baseline, pairs, seed, n_resamples, alpha, correction,
                                 p_value_variant, t_test, bootstrap, confidence))


def paired_test(a_per_query: Mapping[str, Mapping[str, float]], b_per_query: Mapping[str, Mapping[str, float]],
                measures: Sequence[str] | None = None, *, n_resamples: int = 10000, seed: int = 0,
                alpha: float = 0.05, p_value_variant: PValueVariant = "reference", t_test: bool = False,
                bootstrap: bool = False, confidence: float = 0.95) -> dict[str, dict[str, Any]]:
    """The reference server's A/B test: ``{measure: {A_mean, B_mean, diff, p_value, significant, ...}}``.

    ``a_per_query`` / ``b_per_query`` are query -> measure -> value. Extra keys ``t_p_value`` and
    ``ci_low``/``ci_high`` appear when ``t_test`` / ``bootstrap`` are set; ``n_queries`` is the query set size.
    """
    cols = _compare({"A": a_per_query, "B": b_per_query}, measures, None, [("A", "B")], seed, n_resamples, alpha,
                    "none", p_value_variant, t_test, bootstrap, confidence)
    out: dict[str, dict[str, Any]] = {}
    for i, m in enumerate(cols["measure"]):
        entry = {"A_mean": float(cols["A_mean"][i]), "B_mean": float(cols["B_mean"][i]),
                 "diff": float(cols["diff"][i]), "p_value": float(cols["p_value"][i]),
                 "significant": bool(cols["significant"][i]), "n_queries": int(cols["n_queries"][i]),
                 "p_method": str(cols["p_method"][i])}
        for extra in ("t_p_value", "ci_low", "ci_high"):
            if extra in cols:
                entry[extra] = float(cols[extra][i])
        out[m] = entry
    return out


def compare_to_baseline(per_query: Mapping[str, Mapping[str, float]], baseline: str, seed: int = 0,
                        n_resamples: int = 10000, alpha: float = 0.05, correction: Correction = "holm",
                        p_value_variant: PValueVariant = "reference") -> Any:
    """Each system against ``baseline`` on one measure -> DataFrame (system, baseline, A_mean, B_mean, diff,
    p_value, p_adjusted, significant, p_method), p-values corrected across the systems.

    ``per_query`` is system -> query -> value. A = the system, B = the baseline; query set per comparison =
    union of the two systems' queries, a missing side scored 0.
    """
    wrapped = {s: {q: {"value": v} for q, v in rows.items()} for s, rows in per_query.items()}
    df = compare_systems(wrapped, ["value"], baseline=baseline, seed=seed, n_resamples=n_resamples, alpha=alpha,
                         correction=correction, p_value_variant=p_value_variant)
    return df[["system", "baseline", "A_mean", "B_mean", "diff", "p_value", "p_adjusted", "significant", "p_method"]
              ].reset_index(drop=True)
