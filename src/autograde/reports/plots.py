"""Scatter plots as standalone SVG (rendered from a template; no plotting library needed, identical bytes
for identical inputs)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from autograde.reports.render import render_page

WIDTH, HEIGHT = 520, 400
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 40, 52


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    v = start
    while v <= hi + step * 1e-9:
        if v >= lo - step * 1e-9:
            ticks.append(round(v, 10))
        v += step
    return ticks


def _span(values: Sequence[float]) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.06
    return lo - pad, hi + pad


def scatter_svg(points: Sequence[Point], title: str, xlabel: str, ylabel: str, invert_x: bool = False,
                subtitle: str = "") -> str:
    """An SVG scatter plot with axes, ticks and a label per point (point names also as hover titles)."""
    pts = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y)]
    pw, ph = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    if pts:
        x0, x1 = _span([p.x for p in pts])
        y0, y1 = _span([p.y for p in pts])
    else:
        x0, x1, y0, y1 = 0.0, 1.0, 0.0, 1.0

    def sx(x: float) -> float:
        f = (x - x0) / (x1 - x0)
        return round(LEFT + (1 - f if invert_x else f) * pw, 2)

    def sy(y: float) -> float:
        return round(TOP + (1 - (y - y0) / (y1 - y0)) * ph, 2)

    xt = [(sx(t), f"{t:g}") for t in nice_ticks(x0, x1)]
    yt = [(sy(t), f"{t:g}") for t in nice_ticks(y0, y1)]
    dots = [{"x": sx(p.x), "y": sy(p.y), "label": p.label, "vx": f"{p.x:.4g}", "vy": f"{p.y:.4g}",
             "right": sx(p.x) > LEFT + 0.75 * pw} for p in pts]
    return render_page("scatter.svg", width=WIDTH, height=HEIGHT, left=LEFT, top=TOP, pw=pw, ph=ph, title=title,
                  subtitle=subtitle, xlabel=xlabel, ylabel=ylabel, xticks=xt, yticks=yt, dots=dots,
                  show_labels=len(dots) <= 30, empty=not dots)
