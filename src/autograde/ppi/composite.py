"""The leaderboard's order: a composite of the prediction-powered estimate and the LLM-only value (the Fay-Herriot
area-level model of small-area estimation).

Each system is a small area. Its prediction-powered estimate ``E_s`` is direct and unbiased for the full-human value
``M_s`` but noisy (estimated variance ``psi_s``); its LLM-only value ``L_s`` has no sampling noise but a bias
``b_s = L_s - M_s``. The model: the biases vary across systems around a mean ``mu`` with variance ``A``. Its best
linear unbiased predictor, with ``A`` and ``mu`` estimated (Fay and Herriot 1979; Rao and Molina 2015, section 6.1):

    composite_s = gamma_s * E_s + (1 - gamma_s) * (L_s - mu),    gamma_s = A / (A + psi_s)

``mu`` is the mean of ``d_s = L_s - E_s`` weighted by ``1 / (A + psi_s)`` (with a fitted slope: the weighted
regression of ``E_s`` on ``L_s``). ``A`` maximizes the adjusted residual likelihood of Li and Lahiri (2010), the
residual (REML) likelihood of the model times ``A``:

    log A - 1/2 sum_s log(A + psi_s) - 1/2 log det(X' V^-1 X) - 1/2 sum_s (E_s - fit_s)^2 / (A + psi_s)

Fay and Herriot's moment equation and the plain likelihoods give ``A = 0`` whenever the systems' spread around the
regression is within their own noise, which happens in many samples of a few percent of the pool even where the
LLM's errors do differ between systems; ``A = 0`` sets every ``gamma_s`` to 0, and the leaderboard is then the LLM's
order, whatever the sample shows (on DL20, 5-20% samples: the fitted composite then ranked worse than the
human-only estimate with the weakest prompt). The adjustment keeps ``A`` strictly positive and is otherwise the REML
estimate to first order (Li and Lahiri 2010; Yoshimori and Lahiri 2014; Rao and Molina 2015, section 6.1.2), so
every system's direct estimate keeps a weight in the order. With at most ``p + 2`` systems (``p``: 1, or 2 with a
fitted slope) the adjusted likelihood has no maximum, and ``A`` is the moment estimate (Fay and Herriot's equation
``sum_s (E_s - fit_s)^2 / (A + psi_s) = S - p``; 0 where even ``A = 0`` leaves it below). When the biases differ a
lot, ``gamma`` nears 1 and the composite nears the unbiased estimate.

The model is checked against each system: under it ``(d_s - mu) / sqrt(A + psi_s)`` is standard normal, so a system
beyond the Bonferroni-corrected two-sided critical value (family-wise error :data:`OUTLIER_ALPHA` over the
leaderboard's systems) has a bias the model does not describe (a run tuned to please the judge: its LLM-only value
far above what the sample shows). Such a system keeps its direct estimate (``gamma_s = 1``), and the model is fitted
again on the others, until no further system is outside (a forward search; Rao and Molina 2015, section 6.3, on
outlying areas). Where the model holds, a system is set apart in fewer than 5% of leaderboards.

The composite is not design-unbiased (it borrows the LLM's order where the sample cannot check it, in proportion to
what the sample shows of the LLM's bias), so the intervals, the differences and the groups stay those of the
prediction-powered estimate; the composite only orders the leaderboard, where a smaller mean squared error per
system ranks better. A shift common to all systems changes no order.

>>> import numpy as np
>>> c = fay_herriot(np.array([0.5, 0.3, 0.1]), np.array([0.01, 0.01, 0.01]), np.array([0.5, 0.3, 0.1]))
>>> c.estimate.round(6).tolist(), float(c.spread)
([0.5, 0.3, 0.1], 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograde.core.errors import InvalidValueError
from autograde.core.stats import normal_quantile

BISECTIONS = 80
"""Halvings of the bracket of the moment estimate of ``A`` (from [0, the unweighted variance of ``d``]): far below any
float spacing."""

LIKELIHOOD_GRID = np.linspace(-8.0, 2.0, 51)
"""The powers of ten, times the leaderboard's scale (the larger of the unweighted residual variance and the mean
``psi``), at which the adjusted likelihood is evaluated first; its largest value there brackets the maximum, which
:data:`GOLDEN_STEPS` golden-section steps then narrow."""

RANK_TOLERANCE = 1e-10
"""Eigenvalues of ``X' V^-1 X`` below this share of its largest are left out of its determinant (a slope that equal
LLM-only values leave free)."""

GOLDEN_STEPS = 60
"""Golden-section steps within the bracket of two grid steps (0.4 in log10 ``A``): 0.618^60, about 3e-13 of it."""


OUTLIER_ALPHA = 0.05
"""Family-wise error rate of the model check over a leaderboard's systems (a system outside is fitted apart)."""

RELATIVE_FLOOR = 1e-12
"""The smallest ``A + psi`` a weight uses, relative to its leaderboard's largest."""


@dataclass(frozen=True)
class Composite:
    """The composite estimate per system (``(..., S)``), its weight ``gamma`` on the direct estimate (1 for a system
    set apart), the fitted spread ``A`` of the model's errors (``(...)``: one per leaderboard) and the model's
    synthetic value per system."""

    estimate: np.ndarray
    gamma: np.ndarray
    spread: np.ndarray
    synthetic: np.ndarray


def _weights(a: np.ndarray, psi: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``1 / (A + psi)`` of the systems the model describes (0 for a system set apart), each at most 1e12 times the
    smallest weight of its leaderboard (a system of zero variance when ``A = 0`` would otherwise weigh infinitely,
    and the fit could not be solved)."""
    v = a[..., None] + psi
    floor = np.maximum(RELATIVE_FLOOR * v.max(axis=-1, keepdims=True), np.finfo(np.float64).tiny)
    return np.where(keep, 1.0 / np.maximum(v, floor), 0.0)


def _fit(y: np.ndarray, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The weighted least-squares fit ``x @ beta`` of ``y`` (``(..., S)``; ``x``: ``(..., S, p)``)."""
    xtw = np.swapaxes(x, -1, -2) * w[..., None, :]
    beta = np.linalg.pinv(xtw @ x) @ (xtw @ y[..., None])  # pinv: equal LLM-only values leave the slope free
    return (x @ beta)[..., 0]


def _moment(y: np.ndarray, x: np.ndarray, psi: np.ndarray, a: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Fay and Herriot's moment function over the systems in ``keep`` minus their count less ``p`` (decreasing in
    ``A``)."""
    w = _weights(a, psi, keep)
    return (w * (y - _fit(y, x, w)) ** 2).sum(axis=-1) - (keep.sum(axis=-1) - x.shape[-1])


def _moment_spread(y: np.ndarray, x: np.ndarray, psi: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``A`` solving the moment equation over the systems in ``keep`` (0 where even ``A = 0`` leaves it below)."""
    n = keep.sum(axis=-1)
    p = x.shape[-1]
    unit = keep.astype(np.float64)
    hi = (unit * (y - _fit(y, x, unit)) ** 2).sum(axis=-1) / np.maximum(n - p, 1)
    lo = np.zeros(y.shape[:-1])
    positive = (n > p) & (_moment(y, x, psi, lo, keep) > 0)
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        up = _moment(y, x, psi, mid, keep) > 0
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    return np.where(positive, (lo + hi) / 2, 0.0)


def adjusted_likelihood(y: np.ndarray, x: np.ndarray, psi: np.ndarray, a: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The log of the adjusted residual likelihood at ``A = a`` (``(...)``, positive) over the systems in ``keep``,
    up to a constant: ``log a`` plus the model's REML log-likelihood (the module's formula)."""
    w = _weights(a, psi, keep)
    xtw = np.swapaxes(x, -1, -2) * w[..., None, :]
    eig = np.linalg.eigvalsh(xtw @ x)  # the pseudo-determinant: equal LLM-only values leave the slope free
    logdet = np.log(np.where(eig > RANK_TOLERANCE * eig[..., -1:], eig, 1.0)).sum(axis=-1)
    v = np.where(keep, a[..., None] + psi, 1.0)
    return (np.log(a) - 0.5 * np.log(v).sum(axis=-1) - 0.5 * logdet
            - 0.5 * (w * (y - _fit(y, x, w)) ** 2).sum(axis=-1))


def _spread(y: np.ndarray, x: np.ndarray, psi: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """``A`` maximizing the adjusted likelihood over the systems in ``keep`` (the moment estimate where they are at
    most ``p + 2``)."""
    n = keep.sum(axis=-1)
    p = x.shape[-1]
    unit = keep.astype(np.float64)
    residual = (unit * (y - _fit(y, x, unit)) ** 2).sum(axis=-1) / np.maximum(n - p, 1)
    typical = (unit * psi).sum(axis=-1) / np.maximum(n, 1)
    scale = np.log10(np.maximum(np.maximum(residual, typical), np.finfo(np.float64).tiny))
    values = np.stack([adjusted_likelihood(y, x, psi, 10.0 ** (scale + g), keep) for g in LIKELIHOOD_GRID])
    best = np.argmax(values, axis=0)
    lo = scale + LIKELIHOOD_GRID[np.maximum(best - 1, 0)]
    hi = scale + LIKELIHOOD_GRID[np.minimum(best + 1, len(LIKELIHOOD_GRID) - 1)]
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(GOLDEN_STEPS):
        left, right = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        up = adjusted_likelihood(y, x, psi, 10.0 ** left, keep) > adjusted_likelihood(y, x, psi, 10.0 ** right, keep)
        lo, hi = np.where(up, lo, left), np.where(up, right, hi)
    return np.where(n > p + 2, 10.0 ** ((lo + hi) / 2), _moment_spread(y, x, psi, keep))


SPREADS = {"adjusted": _spread, "moment": _moment_spread}
"""The estimators of ``A``: the adjusted likelihood (the workflow's) and Fay and Herriot's moment equation (kept for
the benchmark's comparison, ``benchmarks/human_sample.py --spread moment``)."""


def fay_herriot(direct: np.ndarray, variance: np.ndarray, synthetic: np.ndarray, slope: str = "fitted",
                spread: str = "adjusted") -> Composite:
    """The composite of the direct estimates (``(..., S)``, with their estimated variances) and the synthetic
    values (``(S,)`` or ``(..., S)``); several leaderboards at once along the leading axes. ``slope``: ``fitted``
    (the model ``M_s = beta_0 + beta_1 L_s + v_s``) or ``one`` (``beta_1 = 1``: only a mean bias); ``spread``: how
    ``A`` is estimated (:data:`SPREADS`). Systems the model does not describe (the module's model check) keep their
    direct estimate."""
    e = np.asarray(direct, dtype=np.float64)
    psi = np.broadcast_to(np.maximum(np.asarray(variance, dtype=np.float64), 0.0), e.shape)
    llm = np.broadcast_to(np.asarray(synthetic, dtype=np.float64), e.shape)
    if slope not in ("fitted", "one"):
        raise InvalidValueError(f"the composite's slope must be 'fitted' or 'one', got {slope!r}")
    if spread not in SPREADS:
        raise InvalidValueError(f"the composite's spread must be one of {', '.join(SPREADS)}, got {spread!r}")
    estimate_spread = SPREADS[spread]
    ones = np.ones(e.shape + (1,))
    x, y, offset = (np.concatenate([ones, llm[..., None]], axis=-1), e, 0.0) if slope == "fitted" else \
        (ones, e - llm, llm)
    critical = normal_quantile(1.0 - OUTLIER_ALPHA / max(e.shape[-1], 1))
    keep = np.ones(e.shape, dtype=bool)
    for _ in range(e.shape[-1] + 1):  # each pass sets apart at least one more system, or ends
        a = estimate_spread(y, x, psi, keep)
        fit = _fit(y, x, _weights(a, psi, keep))
        total = a[..., None] + psi
        z = np.abs(y - fit) / np.sqrt(np.where(total > 0, total, np.inf))
        outside = keep & (z > critical) & (keep.sum(axis=-1, keepdims=True) > x.shape[-1] + 1)
        if not outside.any():
            break
        keep &= ~outside
    synthetic_fit = fit + offset
    gamma = np.where(keep & (total > 0), a[..., None] / np.where(total > 0, total, 1.0), 1.0)
    return Composite(gamma * e + (1.0 - gamma) * synthetic_fit, gamma, a, synthetic_fit)
