"""Calibration of predicted probabilities: smooth ECE (Błasiok & Nakkiran 2023) and reliability diagrams.

>>> import numpy as np
>>> f = np.linspace(0.05, 0.95, 200); y = (np.arange(200) % 10 < f * 10).astype(float)
>>> round(smooth_ece(f, y), 2) <= 0.05
True

Smooth ECE of predictions ``f`` in [0, 1] with outcomes ``y`` in {0, 1}: the residuals ``y - f`` are
kernel-smoothed over the prediction axis with a Gaussian kernel reflected at 0 and 1, and the smoothed
residual's absolute value is averaged under the smoothed density of predictions. The bandwidth is the
fixed point sigma = smECE_sigma (found by bisection), as in the authors' ``relplot`` package, whose
default (reflected Gaussian kernel, no logit scaling) this follows; relplot rounds predictions to a grid
and convolves, here the kernel is evaluated exactly, so values agree to about 1e-3.

The diagram is written as SVG text directly (no plotting dependency, identical bytes for identical input).
"""

from __future__ import annotations

import math
from typing import Literal, overload

import numpy as np

__all__ = ["binned_ece", "reliability_svg", "smooth_ece", "smooth_ece_sigma", "smoothed_curve"]

_SQRT_2PI = math.sqrt(2.0 * math.pi)
_CHUNK = 2_000_000  # grid points x predictions per block (bounds memory)


def _kernel_sums(f: np.ndarray, weights: np.ndarray, t: np.ndarray, sigma: float) -> np.ndarray:
    """sum_i K(t, f_i) w_i for every t, K the Gaussian reflected at 0 and 1 (images f + 2k and -f + 2k)."""
    out = np.zeros(len(t))
    step = max(1, _CHUNK // max(len(t), 1))
    for start in range(0, len(f), step):
        fc, wc = f[start:start + step], weights[start:start + step]
        k = np.zeros((len(t), len(fc)))
        for shift in (-2.0, 0.0, 2.0):
            for image in (fc + shift, -fc + shift):
                d = (t[:, None] - image[None, :]) / sigma
                k += np.exp(-0.5 * d * d)
        out += k @ wc / (_SQRT_2PI * sigma)
    return out


def _grid(sigma: float) -> np.ndarray:
    return np.linspace(0.0, 1.0, max(200, int(round(10.0 / sigma))))


def smooth_ece_sigma(f: np.ndarray, y: np.ndarray, sigma: float) -> float:
    """smECE at a fixed bandwidth ``sigma``."""
    f, y = np.asarray(f, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(f) == 0:
        return float("nan")
    t = _grid(sigma)
    num = _kernel_sums(f, y - f, t, sigma)
    den = _kernel_sums(f, np.ones_like(f), t, sigma)
    return float(np.abs(num).sum() / den.sum())


@overload
def smooth_ece(f: np.ndarray, y: np.ndarray, eps: float = ..., return_sigma: Literal[False] = ...) -> float: ...


@overload
def smooth_ece(f: np.ndarray, y: np.ndarray, eps: float = ..., *, return_sigma: Literal[True]) -> tuple[float, float]:
    ...


def smooth_ece(f: np.ndarray, y: np.ndarray, eps: float = 0.001, return_sigma: bool = False
               ) -> float | tuple[float, float]:
    """smECE with the bandwidth chosen as the fixed point sigma = smECE_sigma (bisection, 10 steps)."""
    f = np.clip(np.asarray(f, dtype=np.float64), 0.0, 1.0)
    y = np.asarray(y, dtype=np.float64)
    if len(f) == 0:
        return (float("nan"), float("nan")) if return_sigma else float("nan")

    def small_enough(sigma: float) -> bool:
        return sigma < eps or sigma < smooth_ece_sigma(f, y, sigma)

    if small_enough(1.0):
        sigma = 1.0
    else:
        hi, lo = 1.0, 0.0  # hi: sigma >= smECE(sigma); lo: sigma < smECE(sigma)
        for _ in range(10):
            mid = (hi + lo) / 2.0
            if small_enough(mid):
                lo = mid
            else:
                hi = mid
        sigma = hi
    value = smooth_ece_sigma(f, y, sigma)
    return (value, sigma) if return_sigma else value


def binned_ece(f: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    """Classic ECE with equal-width bins: sum over bins of |mean(y) - mean(f)| weighted by bin share."""
    f, y = np.asarray(f, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(f) == 0:
        return float("nan")
    idx = np.clip((f * bins).astype(int), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            total += m.mean() * abs(y[m].mean() - f[m].mean())
    return float(total)


def smoothed_curve(f: np.ndarray, y: np.ndarray, sigma: float, points: int = 101
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(t, E[y | f ~ t], density of f at t) by the same reflected-Gaussian smoothing."""
    f, y = np.asarray(f, dtype=np.float64), np.asarray(y, dtype=np.float64)
    t = np.linspace(0.0, 1.0, points)
    den = _kernel_sums(f, np.ones_like(f), t, sigma)
    num = _kernel_sums(f, y, t, sigma)
    return t, num / np.clip(den, 1e-12, None), den / max(len(f), 1)


def _panel(f: np.ndarray, y: np.ndarray, title: str, x0: float, size: float, ticks: int) -> list[str]:
    """SVG elements of one reliability panel at horizontal offset x0."""
    pad, top = 40.0, 30.0
    w = size - 2 * pad

    def px(v: float) -> float:
        return x0 + pad + v * w

    def py(v: float) -> float:
        return top + (1.0 - v) * w

    value, sigma = smooth_ece(f, y, return_sigma=True)
    t, curve, dens = smoothed_curve(f, y, sigma)
    out = [f'<rect x="{px(0):.1f}" y="{py(1):.1f}" width="{w:.1f}" height="{w:.1f}" fill="none" stroke="#888"/>',
           f'<line x1="{px(0):.1f}" y1="{py(0):.1f}" x2="{px(1):.1f}" y2="{py(1):.1f}" stroke="#aaa" '
           'stroke-dasharray="4 3"/>',
           f'<text x="{px(0.5):.1f}" y="{top - 10:.1f}" text-anchor="middle" font-size="13">{title}</text>',
           f'<text x="{px(0.03):.1f}" y="{py(0.92):.1f}" font-size="12">smECE = {value:.3f}</text>',
           f'<text x="{px(0.5):.1f}" y="{py(0) + 30:.1f}" text-anchor="middle" font-size="11">predicted '
           'probability</text>']
    for v in (0.0, 0.5, 1.0):
        out.append(f'<text x="{px(v):.1f}" y="{py(0) + 14:.1f}" text-anchor="middle" font-size="10">{v:g}</text>')
        out.append(f'<text x="{px(0) - 5:.1f}" y="{py(v) + 4:.1f}" text-anchor="end" font-size="10">{v:g}</text>')
    peak = float(dens.max()) or 1.0
    for i in range(len(t) - 1):
        if min(dens[i], dens[i + 1]) < 0.01 * peak:  # no predictions here: the smoothed frequency means nothing
            continue
        width = 0.5 + 4.5 * float(dens[i] + dens[i + 1]) / (2 * peak)
        out.append(f'<line x1="{px(t[i]):.1f}" y1="{py(min(max(curve[i], 0), 1)):.1f}" x2="{px(t[i + 1]):.1f}" '
                   f'y2="{py(min(max(curve[i + 1], 0), 1)):.1f}" stroke="#c0392b" stroke-width="{width:.2f}" '
                   'stroke-linecap="round"/>')
    step = max(1, len(f) // ticks)
    for fi, yi in zip(f[::step], y[::step], strict=True):
        y_tick = py(0) - 2 if yi > 0.5 else py(0) + 2
        out.append(f'<line x1="{px(fi):.1f}" y1="{y_tick - 3:.1f}" x2="{px(fi):.1f}" y2="{y_tick + 3:.1f}" '
                   f'stroke="{"#2c3e50" if yi > 0.5 else "#95a5a6"}" stroke-width="0.6"/>')
    return out


def reliability_svg(panels: list[tuple[str, np.ndarray, np.ndarray]], size: float = 260.0, ticks: int = 100) -> str:
    """An SVG with one reliability diagram per (title, predictions, outcomes): the smoothed observed
    frequency (red, thicker where predictions are dense, left out where there are none) against the
    diagonal, ticks for a sample of examples (dark above the axis: the outcome happened), and the panel's
    smooth ECE."""
    width, height = size * len(panels), size + 20
    body: list[str] = []
    for i, (title, f, y) in enumerate(panels):
        body += _panel(np.asarray(f, dtype=np.float64), np.asarray(y, dtype=np.float64), title, i * size, size,
                       ticks)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif">\n'
            + "\n".join(body) + "\n</svg>\n")
