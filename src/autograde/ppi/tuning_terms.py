"""The variance terms PPI++ power tuning and the variance floor need, from the linearizations of
:mod:`autograde.ppi.measures`: the variance of a weighted combination of two linearizations (human-only and
prediction-powered) without a dense array, the residual of the systems' mean (for the summed variance of all
pairwise differences), and the variance one unit's error of one gain step adds (the floor).
"""

from __future__ import annotations

import numpy as np

from autograde.ppi.measures import Gains, Linearized


def combined_terms(first: tuple[Linearized, Gains], second: tuple[Linearized, Gains], w1: np.ndarray,
                   w2: np.ndarray, factor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`Linearized.variance_terms` of the combination ``w1 * u1 + w2 * u2`` of two linearizations of the same
    measure on the same rankings (``w1``, ``w2``: ``(B, S)``, one weight per system): ``(sum_i factor_i u_i^2,
    sum_i (factor_i u_i^2)^2)`` per system. Each unit appears once in a system's ranking of its query; a unit the
    system does not rank carries only the per-query terms ``(w1 k1 t1 + w2 k2 t2)``."""
    lin1, lin2 = first[0], second[0]
    ranked = lin1.ranked
    a1, k1, t1 = lin1.pieces(first[1])
    a2, k2, t2 = lin2.pieces(second[1])
    x1, x2 = w1[:, :, None] * k1, w2[:, :, None] * k2  # (B, S, Q)
    c_pos = lin1.gather(factor)
    q_pos = x1[..., None] * lin1.gather(t1) + x2[..., None] * lin1.gather(t2)
    u = w1[:, :, None, None] * a1 + w2[:, :, None, None] * a2 + q_pos
    w_all, w_q = c_pos * u * u, c_pos * q_pos * q_pos
    var = (w_all - w_q).sum(axis=(-1, -2))
    sq = (w_all * w_all - w_q * w_q).sum(axis=(-1, -2))
    seg = ranked.per_query_sum
    b = a1.shape[0]
    t1b, t2b = np.broadcast_to(t1, (b, ranked.n_units)), np.broadcast_to(t2, (b, ranked.n_units))
    c = np.broadcast_to(factor, t1b.shape)
    var = var + (x1 * x1 * seg(c * t1b * t1b)[:, None, :] + 2.0 * x1 * x2 * seg(c * t1b * t2b)[:, None, :]
                 + x2 * x2 * seg(c * t2b * t2b)[:, None, :]).sum(axis=-1)
    binom = (1.0, 4.0, 6.0, 4.0, 1.0)
    for j in range(5):  # sum_i c_i^2 (x1 t1_i + x2 t2_i)^4, expanded
        sq = sq + (binom[j] * x1**j * x2 ** (4 - j) * seg(c * c * t1b**j * t2b ** (4 - j))[:, None, :]).sum(axis=-1)
    scale = np.maximum(lin1.n, 1.0)[None, :]
    return np.asarray(var / scale**2, dtype=np.float64), np.asarray(sq / scale**4, dtype=np.float64)


def system_mean(lin: Linearized, residual: Gains) -> np.ndarray:
    """The mean over the systems of every unit's linearized residual (``(B, N)``): the residual of the systems'
    average, whose variance is subtracted from the systems' summed variance to give the summed variance of their
    differences (``sum_{s<t} var(u_s - u_t) = S * sum_s var(u_s - mean)``)."""
    a, k, t = lin.pieces(residual)
    ranked = lin.ranked
    b, n, s = a.shape[0], ranked.n_units, a.shape[1]
    scale = 1.0 / np.maximum(lin.n, 1.0)
    flat = (a * scale[None, :, None, None]).reshape(b, -1)
    idx = np.broadcast_to(lin.pos.reshape(1, -1), flat.shape) + (n + 1) * np.arange(b)[:, None]
    out = np.bincount(idx.ravel(), weights=flat.ravel(), minlength=b * (n + 1)).reshape(b, n + 1)[:, :n]
    kq = (k * scale[None, :, None]).sum(axis=1)  # (B, Q)
    return np.asarray((out + kq[:, ranked.query_of] * np.broadcast_to(t, (b, n))) / s, dtype=np.float64)


def one_error_variance(lin: Linearized, pi: np.ndarray) -> np.ndarray:
    """The variance one unit off by one step of its gain (one grade for a graded gain, 1 for a binary one) would add,
    at an average unit the system's measure reads directly (its top ranks), expanded by that unit's design weight
    ``(1 - pi) / pi^2``: ``(B, S)``. 0 where every such unit is certain (pi = 1). A ratio measure's slope is taken
    at a normalizer of at least one gain step (the ideal DCG, the number of relevant passages): a query with one unit
    in error has at least that relevant passage, even where the estimate's normalizer is near zero."""
    p = np.asarray(pi, dtype=np.float64)
    c_all = np.where(p > 0, (1.0 - p) / np.where(p > 0, p, 1.0) ** 2, 0.0)
    top = float(_step(lin))
    coef = lin.coef * lin.ranked.evaluated[None, :, :, None]
    reads = coef != 0
    if lin.normalizer is not None:  # with one unit in error the query has a relevant one: a normalizer >= one step
        norm = lin.normalizer[:, None, :, None]
        coef = coef * np.divide(norm, np.maximum(norm, top), out=np.ones_like(norm), where=norm > 0)
    terms = lin.gather(c_all) * (coef * top) ** 2
    count = reads.sum(axis=(-1, -2))
    mean = np.divide(terms.sum(axis=(-1, -2)), count, out=np.zeros(count.shape), where=count > 0)
    return np.asarray(mean / np.maximum(lin.n, 1.0)[None, :] ** 2, dtype=np.float64)


def _step(lin: Linearized) -> float:
    """The smallest error of a unit's gain: 1 for a binary gain, the smallest grade step for a graded one."""
    return 1.0 if lin.pos_type in ("rel", "counted") else float(min(lin.steps, default=1.0))
