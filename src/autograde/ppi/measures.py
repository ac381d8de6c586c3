"""Retrieval measures as functions of the pool's labels, evaluated on pseudo-labels and linearized for the variance.

Every estimable measure is a per-query function of the labels of the pooled passages (a passage outside the pool
counts as not relevant, as trec_eval counts an unjudged one), averaged over the queries. Evaluated on the
pseudo-labels of :func:`autograde.core.survey.pseudo_labels` it is the prediction-powered estimate:

- P@k, DCG@k and RBP are linear in the gains: exactly unbiased under the design.
- RR is a polynomial in the binary gains in which no passage appears twice in a product: exactly unbiased too
  (independent pseudo-labels), but its products of pseudo-labels make it heavy-tailed.
- AP's numerator (sum over relevant ranks of precision at that rank) is such a polynomial; dividing by the
  estimated number of relevant passages makes AP a ratio, approximately unbiased. recall@k is a ratio of totals.
- nDCG@k divides DCG@k (linear) by the ideal DCG@k, which depends on the query's counts of passages at or above
  each grade: ``IDCG@k = sum_j (g_j - g_{j-1}) * H(c_j)`` with ``H(c)`` the sum of the first ``min(c, k)`` rank
  discounts (extended linearly between integers). The counts are estimated totals; nDCG@k is a ratio.
- ``coherent``: the ratio measures read their numerators from the pseudo-labels of their normalizers (nDCG's gain
  rebuilt from the grade-count indicators, AP's and recall's relevance from the counted one), so that numerator
  and normalizer are one measure of one label vector, as on full judgments.

Estimated counts are projected onto what the sample allows (at least the sampled passages known to be at or
above the grade, at most the pool minus those known to be below it): the projection never moves an estimate away
from the truth. A query whose estimated ideal DCG or number of relevant passages is 0 scores 0 (trec_eval's rule).

``reference``: the ratio measures are linearized around a reference label vector (the calibrated prediction of
:func:`autograde.ppi.estimators.query_calibrated`) instead of being divided by a count estimated from the
pseudo-labels: per query, ``N / D_ref - N_ref * (D - D_ref) / D_ref^2`` with ``N`` the numerator on the
pseudo-labels, ``D`` the normalizer of their counts (linear in the counts around the reference's), ``N_ref`` and
``D_ref`` the same on the reference. Where the reference reproduces the query's sample (its counts equal the
pseudo-labels'), this is the plug-in ratio ``N / D``; it is linear in the pseudo-labels, and its normalizer is the
reference's, which is never near zero unless the reference's numerators are too (no division by a noisy count).
``count_scale``: per query the factor by which a judged unit's residual moves the reference's count (the calibration's
g-weight, Deville and Sarndal 1992), in the count's part of the linearized residuals.

The variance of every measure comes from its linearization (a first-order expansion in the pseudo-labels around
the estimate; Sarndal, Swensson and Wretman 1992, section 5.5): :meth:`Linearized.residuals` gives each unit's
linearized residual per system, whose weighted squares sum to the variance; for a linear measure this is the
exact unbiased variance estimator.

Arrays carry a leading batch axis B (one estimate in a workflow job, many repetitions in a simulation):
labels ``(B, N)``, per-query values ``(B, S, Q)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from autograde.metrics.estimable import EstimableMeasure


@dataclass(frozen=True)
class RankedPool:
    """Every system's ranking of every query, restricted to the pooled passages, in trec_eval order.

    ``pos[s, q, l]`` is the pool index of the l-th pooled passage in system s's ranking of query q (-1: padding)
    and ``rank[s, q, l]`` its rank in the whole ranking (passages outside the pool keep their places);
    ``evaluated[s, q]`` says whether query q counts in system s's mean (every pool query, or only those the system
    ranked); ``query_of[i]`` is the query index of pool unit i.
    """

    systems: list[str]
    queries: list[str]
    query_of: np.ndarray
    pos: np.ndarray
    rank: np.ndarray
    evaluated: np.ndarray

    @property
    def n_units(self) -> int:
        return len(self.query_of)

    @property
    def units_per_query(self) -> np.ndarray:
        return np.bincount(self.query_of, minlength=len(self.queries)).astype(np.float64)

    @cached_property
    def _starts(self) -> np.ndarray | None:
        """Where each query's units start when the units are grouped by query in query order (else None)."""
        q = self.query_of
        if len(q) and np.all(np.diff(q) >= 0) and q[0] == 0 and q[-1] == len(self.queries) - 1 \
                and len(np.unique(q)) == len(self.queries):
            return np.flatnonzero(np.r_[True, np.diff(q) > 0])
        return None

    def per_query_sum(self, x: np.ndarray) -> np.ndarray:
        """Sums over each query's units along the last axis: ``(..., N)`` -> ``(..., Q)``."""
        x = np.asarray(x, dtype=np.float64)
        if self._starts is not None:
            return np.asarray(np.add.reduceat(x, self._starts, axis=-1), dtype=np.float64)
        nq = len(self.queries)
        flat = x.reshape(-1, x.shape[-1])
        idx = (self.query_of[None, :] + nq * np.arange(flat.shape[0])[:, None]).ravel()
        out = np.bincount(idx, weights=flat.ravel(), minlength=flat.shape[0] * nq)
        return out.reshape(*x.shape[:-1], nq)


@dataclass(frozen=True)
class Gains:
    """The gains of every pool unit (``(B, N)`` each): ``rel`` = 1[grade >= the relevance level] (binary
    measures), ``gain`` = the grade (nDCG's and DCG's gain), ``ge[:, j]`` = 1[grade >= ``thresholds[j]``] (the
    counts behind the ideal DCG; ``steps[j]`` is the gain added at that threshold), ``rel_count`` = ``rel`` as
    counted for the number of relevant passages of a query (AP, recall; None: ``rel``).

    Only the counts (``ge``, ``rel_count``) enter the normalizers of the ratio measures, so a prediction may be
    recalibrated there (:func:`autograde.ppi.calibration.recalibrated`) without touching the linear measures."""

    rel: np.ndarray
    gain: np.ndarray
    ge: np.ndarray
    thresholds: tuple[int, ...]
    steps: tuple[float, ...]
    rel_count: np.ndarray | None = None

    @property
    def counted(self) -> np.ndarray:
        return self.rel if self.rel_count is None else self.rel_count


def gains_from_distribution(probs: np.ndarray, levels: list[int], relevance_level: int) -> Gains:
    """Expected gains of a predicted distribution over the human grade ``levels`` (``probs``: N x len(levels));
    a point prediction is a distribution with all its mass on one level."""
    lv = np.asarray(levels, dtype=np.float64)
    p = np.asarray(probs, dtype=np.float64)
    thresholds = tuple(int(v) for v in levels if v > 0)
    steps = tuple(float(t - prev) for prev, t in zip((0, *thresholds[:-1]), thresholds, strict=True))
    ge = np.stack([p[:, lv >= t].sum(axis=1) for t in thresholds]) if thresholds else np.zeros((0, len(p)))
    return Gains(p[:, lv >= relevance_level].sum(axis=1)[None], (p @ lv)[None], ge[None], thresholds, steps)


def gains_from_grades(grades: np.ndarray, levels: list[int], relevance_level: int) -> Gains:
    """Gains of observed grades (NaN where a unit has no grade: its gains are NaN)."""
    g = np.asarray(grades, dtype=np.float64)
    nan = np.isnan(g)
    thresholds = tuple(int(v) for v in levels if v > 0)
    steps = tuple(float(t - prev) for prev, t in zip((0, *thresholds[:-1]), thresholds, strict=True))

    def ind(mask: np.ndarray) -> np.ndarray:
        return np.where(nan, np.nan, mask.astype(np.float64))

    ge = np.stack([ind(g >= t) for t in thresholds]) if thresholds else np.zeros((0, len(g)))
    return Gains(ind(g >= relevance_level)[None], g[None], ge[None], thresholds, steps)


@dataclass(frozen=True)
class Bounds:
    """Per query, what the sample proves about the counts: at least ``low`` units at or above a grade (sampled and
    seen there), at most ``high`` (the pool minus those seen below): ``rel`` and ``ge`` as in :class:`Gains`
    (``(B, Q)`` and ``(B, J, Q)``)."""

    rel_low: np.ndarray
    rel_high: np.ndarray
    ge_low: np.ndarray
    ge_high: np.ndarray


def sample_bounds(ranked: RankedPool, observed: Gains, sampled: np.ndarray,
                  needs: set[str] | frozenset[str] = frozenset({"counted", "ge"})) -> Bounds:
    """The :class:`Bounds` of a sample (``sampled``: ``(B, N)`` bool; ``observed``: gains of the sampled units);
    only the counts in ``needs`` (``counted``, ``ge``) are bounded, the others are empty."""
    size = ranked.units_per_query
    seg = ranked.per_query_sum
    s = np.broadcast_to(sampled, np.broadcast_shapes(sampled.shape, observed.rel.shape)).astype(np.float64)
    none = np.zeros((s.shape[0], 0))
    rel_low = rel_high = none
    ge_low = ge_high = none[:, None, :]
    if "counted" in needs:
        rel = np.nan_to_num(observed.rel) * s
        rel_low, rel_high = seg(rel), size - seg(s - rel)
    if "ge" in needs:
        ge = np.nan_to_num(observed.ge) * s[:, None, :]
        ge_low, ge_high = seg(ge), size - seg(s[:, None, :] - ge)
    return Bounds(rel_low, rel_high, ge_low, ge_high)


def measure_range(measure: EstimableMeasure, max_gain: float) -> tuple[float, float]:
    """The values a measure can take on any labels: [0, 1], or for DCG@k [0, the largest gain times the sum of the
    first k rank discounts] (``max_gain``: the largest grade).

    >>> from autograde.metrics.estimable import estimable_measure
    >>> measure_range(estimable_measure("ndcg_cut_10"), 3.0), round(measure_range(estimable_measure("dcg_cut_2"), 3.0)[1], 4)
    ((0.0, 1.0), 4.8928)
    """
    if measure.kind != "dcg":
        return 0.0, 1.0
    if measure.k is None:
        return 0.0, float("inf")
    return 0.0, float(max_gain * (1.0 / np.log2(np.arange(1, measure.k + 1) + 1.0)).sum())


def _discount(rank: np.ndarray) -> np.ndarray:
    return np.where(rank > 0, 1.0 / np.log2(np.maximum(rank, 1) + 1.0), 0.0)


def _ideal(c: np.ndarray, k: int | None) -> tuple[np.ndarray, np.ndarray]:
    """``H(c)``, the sum of the first ``min(c, k)`` rank discounts (linear between integers), and its slope."""
    top = int(np.ceil(np.nanmax(c))) + 2 if c.size and np.isfinite(c).any() else 2
    top = max(2, min(top, k + 1) if k is not None else top)
    d = 1.0 / np.log2(np.arange(1, top + 1) + 1.0)
    if k is not None:
        d[k:] = 0.0
    cum = np.concatenate([[0.0], np.cumsum(d)])
    cc = np.clip(c, 0.0, top - 1)
    fl = np.floor(cc).astype(np.int64)
    slope = d[np.minimum(fl, top - 1)]
    return cum[fl] + (cc - fl) * slope, np.where(c >= top - 1, 0.0, slope)


def _clip(est: np.ndarray, low: np.ndarray | None, high: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The estimate projected into [low, high] and whether it lies strictly inside (its slope counts)."""
    if low is None or high is None:
        c = np.maximum(est, 0.0)
        return c, est > 0
    c = np.clip(est, low, np.maximum(low, high))
    return c, (est > low) & (est < high)


def _recall_ap_numerator(kind: str, xg: np.ndarray, rank: np.ndarray, inside: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]:
    """recall's (relevant passages in the top k) or AP's numerator (``sum_r rel_r (1 + sum_{r'<r} rel_r') / r``) of
    the gathered labels ``xg`` ``(B, S, Q, L)``, and its derivative at each position."""
    if kind == "recall":
        return xg.sum(axis=-1), np.broadcast_to(inside.astype(np.float64), xg.shape)
    r = np.maximum(rank, 1).astype(np.float64)
    before = np.cumsum(xg, axis=-1) - xg
    num = (xg / r * (1.0 + before)).sum(axis=-1)
    after = np.cumsum((xg / r)[..., ::-1], axis=-1)[..., ::-1] - xg / r
    return num, ((1.0 + before) / r + after) * inside


class Linearized:
    """One measure evaluated on pseudo-labels: per-query values, and what its linearization needs.

    ``values[b, s, q]`` is the per-query estimate; the linearized residual of unit i for system s is
    ``(coef[b, s, q, l] * e_pos[b, i] + per_query[b, s, q] * e_query[b, i]) / n_s`` for i = ``pos[s, q, l]``
    (with ``e_pos``, ``e_query`` built from the units' residuals by :meth:`residuals`).
    """

    def __init__(self, measure: EstimableMeasure, ranked: RankedPool, pseudo: Gains, bounds: Bounds | None,
                 coherent: bool = False, reference: Gains | None = None,
                 count_scale: dict[str, np.ndarray] | None = None) -> None:
        self.measure, self.ranked = measure, ranked
        self.steps = pseudo.steps
        pos = np.where(ranked.pos >= 0, ranked.pos, ranked.n_units)
        rank = ranked.rank
        b = pseudo.rel.shape[0]
        kind, k = measure.kind, measure.k
        depth = pos.shape[-1] if k is None else min(pos.shape[-1], k)
        if kind in ("precision", "dcg", "recall") or (kind == "ndcg" and k is not None):
            pos, rank = pos[..., :depth], rank[..., :depth]
        inside = (ranked.pos[..., : pos.shape[-1]] >= 0) & (rank > 0) & ((rank <= k) if k is not None else True)
        self.pos = pos
        self.pos_type = "gain" if kind in ("dcg", "ndcg") else "rel"
        if coherent and kind in ("ndcg", "ap", "recall"):  # the numerator reads the normalizer's pseudo-labels
            self.pos_type = "ge_gain" if kind == "ndcg" else "counted"
        x = self.at_pos(pseudo)
        xg = np.concatenate([x, np.zeros((x.shape[0], 1))], axis=1)[:, pos] * inside  # (B, S, Q, L)
        self.gathered = xg if measure.linear else None  # the pseudo-labels where the system ranks them
        self.per_query = np.zeros((b, *ranked.evaluated.shape))
        self.query_weights: np.ndarray | None = None  # (B, J or 1, N) per-unit weights of the per-query term
        self.normalizer: np.ndarray | None = None  # (B, Q) a ratio measure's normalizer (ideal DCG, relevant count)
        if kind == "precision":
            cut = float(k or 1)  # P@k always has its cutoff
            self.values = xg.sum(axis=-1) / cut
            self.coef = np.broadcast_to(inside / cut, xg.shape)
        elif kind == "dcg":
            w = _discount(rank) * inside
            self.values = (xg * w).sum(axis=-1)
            self.coef = np.broadcast_to(w, xg.shape)
        elif kind == "rbp":
            p = float(measure.p or 0.0)
            w = np.where(inside, (1.0 - p) * p ** (np.maximum(rank, 1) - 1.0), 0.0)
            self.values = (xg * w).sum(axis=-1)
            self.coef = np.broadcast_to(w, xg.shape)
        elif kind in ("recall", "ap"):
            low = None if bounds is None else bounds.rel_low
            high = None if bounds is None else bounds.rel_high
            num, dnum = _recall_ap_numerator(kind, xg, rank, inside)
            if reference is None:
                big_r, ok = self._count(pseudo.counted, low, high)
                num_ref, shift = num, np.zeros_like(big_r)
            else:
                big_r, ok = self._count(reference.counted, low, high)
                num_ref = _recall_ap_numerator(kind, self._gathered(reference, pos, inside), rank, inside)[0]
                shift = np.where(ok, ranked.per_query_sum(pseudo.counted) - big_r, 0.0)
            rr = big_r[:, None, :]
            safe = np.where(rr > 0, rr, 1.0)
            self.values = np.where(rr > 0, num / safe - num_ref * shift[:, None, :] / safe**2, 0.0)
            self.coef = np.where(rr[..., None] > 0, dnum / safe[..., None], 0.0)
            self.per_query = np.where((rr > 0) & ok[:, None, :], -num_ref / safe**2, 0.0)
            self.query_weights = np.ones((b, 1, ranked.n_units)) if count_scale is None \
                else np.broadcast_to(count_scale["counted"], (b, len(ranked.queries)))[:, None, ranked.query_of]
            self.query_type = "counted"
            self.normalizer = big_r
        elif kind == "rr":
            r = np.maximum(rank, 1).astype(np.float64)
            keep = np.cumprod(1.0 - xg, axis=-1)
            before = np.concatenate([np.ones((*xg.shape[:-1], 1)), keep[..., :-1]], axis=-1)
            self.values = (xg / r * before * inside).sum(axis=-1)
            tail = np.zeros(xg.shape[:-1])
            dtail = np.zeros_like(xg)
            for j in range(xg.shape[-1] - 1, -1, -1):  # h_j = x_j / r_j + (1 - x_j) h_{j+1}
                dtail[..., j] = tail
                tail = np.where(inside[..., j], xg[..., j] / r[..., j] + (1.0 - xg[..., j]) * tail, tail)
            self.coef = before * (1.0 / r - dtail) * inside
        else:  # ndcg
            w = _discount(rank) * inside
            dcg = (xg * w).sum(axis=-1)
            dcg_ref = dcg if reference is None else (self._gathered(reference, pos, inside) * w).sum(axis=-1)
            lows = None if bounds is None else bounds.ge_low
            highs = None if bounds is None else bounds.ge_high
            counts = pseudo.ge if reference is None else reference.ge
            ideal = np.zeros((b, len(ranked.queries)))
            shift = np.zeros_like(ideal)  # the linearized normalizer minus the reference's
            weights = np.zeros((b, len(pseudo.thresholds), ranked.n_units))
            for j, step in enumerate(pseudo.steps):
                c, ok = self._count(np.broadcast_to(counts[:, j], pseudo.ge[:, j].shape),
                                    None if lows is None else lows[:, j], None if highs is None else highs[:, j])
                h, slope = _ideal(c, k)
                ideal += step * h
                if reference is not None:
                    shift += np.where(ok, step * slope * (ranked.per_query_sum(pseudo.ge[:, j]) - c), 0.0)
                scale = 1.0 if count_scale is None else count_scale["ge"][:, j]
                weights[:, j] = (step * slope * ok * scale)[:, ranked.query_of]
            big = ideal[:, None, :]
            safe = np.where(big > 0, big, 1.0)
            self.values = np.where(big > 0, dcg / safe - dcg_ref * shift[:, None, :] / safe**2, 0.0)
            self.coef = np.where(big[..., None] > 0, w / safe[..., None], 0.0)
            self.per_query = np.where(big > 0, -dcg_ref / safe**2, 0.0)
            self.query_weights = weights
            self.query_type = "ge"
            self.normalizer = ideal
        self.n = ranked.evaluated.sum(axis=1).astype(np.float64)  # queries in each system's mean

    def at_pos(self, g: Gains) -> np.ndarray:
        """The units' values the measure reads where a system ranks them: ``(B or 1, N)``. ``ge_gain`` is the gain
        rebuilt from the grade counts' indicators (``sum_j steps_j ge_j``, the grade for a point label, the expected
        grade for a distribution), so that a coherent nDCG reads the same pseudo-labels in its DCG and ideal DCG."""
        if self.pos_type == "ge_gain":
            return np.asarray(np.tensordot(np.asarray(self.steps, dtype=np.float64), g.ge, axes=([0], [1])),
                              dtype=np.float64)
        return np.asarray(getattr(g, self.pos_type), dtype=np.float64)

    def _count(self, units: np.ndarray, low: np.ndarray | None, high: np.ndarray | None
               ) -> tuple[np.ndarray, np.ndarray]:
        """A query's count (the sum of its units' values), projected by :func:`_clip`."""
        return _clip(self.ranked.per_query_sum(units), low, high)

    def _gathered(self, g: Gains, pos: np.ndarray, inside: np.ndarray) -> np.ndarray:
        """The values this measure reads of ``g`` where each system ranks the units: ``(B, S, Q, L)``."""
        x = self.at_pos(g)
        return np.asarray(np.concatenate([x, np.zeros((x.shape[0], 1))], axis=1)[:, pos] * inside, dtype=np.float64)

    @property
    def estimate(self) -> np.ndarray:
        """The mean over each system's queries: ``(B, S)``."""
        ev = self.ranked.evaluated
        return np.asarray((self.values * ev).sum(axis=-1) / np.maximum(self.n, 1.0), dtype=np.float64)

    def _query_residual(self, residual: Gains, b: int, n: int) -> np.ndarray | None:
        """The per-unit residual of the per-query term (``(B, N)``), None when the measure has none."""
        if self.query_weights is None:
            return None
        if self.query_type == "counted":
            return np.asarray(np.broadcast_to(residual.counted, (b, n)) * self.query_weights[:, 0])
        return np.asarray((np.broadcast_to(residual.ge, (b, *residual.ge.shape[1:])) * self.query_weights).sum(axis=1))

    def gather(self, x: np.ndarray) -> np.ndarray:
        """Per-unit values ``(B or 1, N)`` where each system ranks the units: ``(B, S, Q, L)`` (0 at padding)."""
        b, n = self.values.shape[0], self.ranked.n_units
        return np.concatenate([np.broadcast_to(x, (b, n)), np.zeros((b, 1))], axis=1)[:, self.pos]

    def pieces(self, residual: Gains) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The linearized residual of the units' ``residual`` in parts, not yet divided by the number of queries:
        ``a`` ``(B, S, Q, L)`` where the system ranks a unit, and the per-query term ``k[b, s, q] * t[b, i]`` of every
        unit i of query q (``k`` ``(B, S, Q)``, ``t`` ``(B, N)``; zeros for a measure without one)."""
        b, n = self.values.shape[0], self.ranked.n_units
        ev = self.ranked.evaluated
        a = self.coef * ev[None, :, :, None] * self.gather(self.at_pos(residual))
        t = self._query_residual(residual, b, n)
        if t is None:
            return a, np.zeros(self.values.shape), np.zeros((b, n))
        return a, self.per_query * ev[None], t

    def variance_terms(self, residual: Gains, factor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(sum_i factor_i u_i^2, sum_i (factor_i u_i^2)^2)`` per system (``(B, S)``) for the linearized residuals
        ``u`` of :meth:`residuals`, computed where the units sit in the rankings (no dense ``(B, S, N)`` array)."""
        ranked = self.ranked
        b = self.values.shape[0]
        n = ranked.n_units

        def gather(x: np.ndarray) -> np.ndarray:
            return np.concatenate([np.broadcast_to(x, (b, n)), np.zeros((b, 1))], axis=1)[:, self.pos]

        ev = ranked.evaluated
        c_pos = gather(factor)
        a = self.coef * ev[None, :, :, None] * gather(self.at_pos(residual))
        t = self._query_residual(residual, b, n)
        if t is None:
            w = c_pos * a * a  # each unit's term of the variance
            var = w.sum(axis=(-1, -2))
            sq = (w * w).sum(axis=(-1, -2))
        else:
            k = self.per_query * ev[None]
            kt = k[..., None] * gather(t)
            u = a + kt
            w_all = c_pos * u * u  # terms of the units where the system ranks them
            w_q = c_pos * kt * kt  # the same units' terms as counted in the per-query sums below
            ctt = factor * t * t
            ct2 = ranked.per_query_sum(ctt)
            c2t4 = ranked.per_query_sum(ctt * ctt)
            k2 = k * k
            var = (w_all - w_q).sum(axis=(-1, -2)) + (k2 * ct2[:, None, :]).sum(axis=-1)
            sq = (w_all * w_all - w_q * w_q).sum(axis=(-1, -2)) + (k2 * k2 * c2t4[:, None, :]).sum(axis=-1)
        scale = np.maximum(self.n, 1.0)[None, :]
        return np.asarray(var / scale**2, dtype=np.float64), np.asarray(sq / scale**4, dtype=np.float64)

    def residuals(self, residual: Gains) -> np.ndarray:
        """Linearized residuals ``(B, S, N)`` for the units' residuals (observed minus predicted gains, 0 where a
        unit is not sampled); the variance of the estimate is ``sum_i factor_i * residuals[..., i]**2``."""
        ranked = self.ranked
        b = self.values.shape[0]
        s, q, l_ = self.pos.shape
        n = ranked.n_units
        e_pos = self.at_pos(residual)
        e_pos = np.broadcast_to(e_pos, (b, n))
        out = np.zeros((b, s, n + 1))
        coef = self.coef * ranked.evaluated[None, :, :, None]
        idx = np.broadcast_to(self.pos.reshape(1, s, q * l_), (b, s, q * l_))
        np.put_along_axis(out, idx, np.broadcast_to(coef, (b, s, q, l_)).reshape(b, s, q * l_), axis=2)
        u = out[..., :n] * e_pos[:, None, :]
        t = self._query_residual(residual, b, n)
        if t is not None:
            pq = (self.per_query * ranked.evaluated)[:, :, ranked.query_of]
            u = u + pq * t[:, None, :]
        return np.asarray(u / np.maximum(self.n, 1.0)[None, :, None], dtype=np.float64)
