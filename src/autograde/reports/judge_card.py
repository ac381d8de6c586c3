"""The review site's judge cards: one page per grader with its meta-evaluation and robustness audit at a glance.

A card shows, section by section, the numbers first and then their plots: the label agreement of every qrels
variant (kappas, Krippendorff's alpha), then the label x judgment confusion matrix as a heat map (variants with the
same labels, such as ``max-3`` and ``max-4``, share one matrix: it is drawn once, for all of them) and the per-topic
kappa as a distribution (one dot per topic over a box of the 10/25/50/75/90% quantiles); the leaderboard agreement
(Kendall, tau-ap, Spearman, top-k Kendall with intervals; a dash where a statistic is undefined), then the per-topic
Kendall tau; the robustness audit, then the mean grade shift and the lifted share of each perturbation as bars with
their intervals. Axes carry round ticks (:func:`axis_ticks`). The overview lists every variant of every judge,
the best-agreeing one (binary kappa) marked. Pages: ``site/judges/index.html`` and ``site/judges/<grader>.html``;
the plots are inline SVG (no plotting library, identical bytes for identical inputs). Everything is read from
``results/audit/`` (the audit rules' and commands' outputs); a grader without audit files gets no card.

>>> svg = bars_svg(["stuffing", "query"], [0.5, 1.5], [0.3, 1.1], [0.7, 1.9], "mean grade shift")
>>> svg.startswith("<svg") and svg.count("<rect") == 4  # background, frame, two bars
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autograde.core.layout import Layout
from autograde.reports.nugget_pages import Write
from autograde.reports.plots import nice_ticks
from autograde.reports.render import render_page

W, H = 460, 300
L, R, T, B = 60, 20, 36, 48


def _svg(body: list[str], title: str, width: int = W, height: int = H) -> str:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} '
            f'{height}" font-family="sans-serif" font-size="11"><title>{escape(title)}</title>'
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>'
            f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="13" font-weight="bold">{escape(title)}</text>')
    return head + "".join(body) + "</svg>"


def axis_ticks(lo: float, hi: float) -> list[float]:
    """Round ticks (:func:`autograde.reports.plots.nice_ticks`) extended by a step on either side until they cover
    [lo, hi]: the ends of a bar chart's axis.

    >>> axis_ticks(-0.38, 1.1)
    [-0.5, 0.0, 0.5, 1.0, 1.5]
    >>> axis_ticks(0.0, 0.3)
    [0.0, 0.1, 0.2, 0.3]
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo < 1e-9:
        lo, hi = (lo - 1.0, hi + 1.0) if math.isfinite(lo) and math.isfinite(hi) else (0.0, 1.0)
    ticks = nice_ticks(lo, hi, 4) or [lo]
    step = ticks[1] - ticks[0] if len(ticks) > 1 else hi - lo
    while ticks[0] > lo + step * 1e-9:
        ticks.insert(0, round(ticks[0] - step, 10))
    while ticks[-1] < hi - step * 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return [t + 0.0 for t in ticks]


def _tick(t: float) -> str:
    return f"{t:g}"


def heatmap_svg(counts: np.ndarray, rows: Sequence[Any], cols: Sequence[Any], title: str, xlabel: str = "judgment",
                ylabel: str = "label") -> str:
    """A heat map of counts (rows x cols), darker = more, each cell labelled with its count."""
    n_r, n_c = max(len(rows), 1), max(len(cols), 1)
    cw, ch = min(60.0, (W - L - R) / n_c), min(36.0, (H - T - B) / n_r)
    peak = float(counts.max()) if counts.size else 0.0
    body = []
    for i, r in enumerate(rows):
        y = T + i * ch
        body.append(f'<text x="{L - 6}" y="{y + ch / 2 + 4:.1f}" text-anchor="end">{escape(str(r))}</text>')
        for j, _ in enumerate(cols):
            v = float(counts[i, j])
            shade = 0.0 if peak <= 0 else math.sqrt(v / peak)
            fill = f"rgb({int(255 - 224 * shade)},{int(255 - 144 * shade)},{int(255 - 77 * shade)})"
            ink = "#ffffff" if shade > 0.6 else "#222222"
            x = L + j * cw
            body.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{cw:.1f}" height="{ch:.1f}" fill="{fill}" '
                        f'stroke="#ffffff"><title>label {escape(str(r))}, judgment {escape(str(cols[j]))}: {int(v)}'
                        f'</title></rect><text x="{x + cw / 2:.1f}" y="{y + ch / 2 + 4:.1f}" text-anchor="middle" '
                        f'fill="{ink}">{int(v)}</text>')
    for j, c in enumerate(cols):
        body.append(f'<text x="{L + j * cw + cw / 2:.1f}" y="{T + n_r * ch + 14:.1f}" text-anchor="middle">'
                    f'{escape(str(c))}</text>')
    body.append(f'<text x="{L + n_c * cw / 2:.1f}" y="{T + n_r * ch + 32:.1f}" text-anchor="middle">{xlabel}</text>')
    body.append(f'<text transform="translate(14 {T + n_r * ch / 2:.1f}) rotate(-90)" text-anchor="middle">{ylabel}'
                '</text>')
    return _svg(body, title)


def distribution_svg(values: Sequence[float], title: str, lo: float = -1.0, hi: float = 1.0,
                     labels: Sequence[str] = ()) -> str:
    """One dot per value (hover: its label) over a box of the 10/25/50/75/90% quantiles, on the axis [lo, hi]."""
    x = np.asarray(values, dtype=float)
    keep = np.isfinite(x)
    names = [labels[i] if i < len(labels) else "" for i in range(len(x))]
    pw = W - L - R
    mid = T + (H - T - B) / 2

    def sx(v: float) -> float:
        return L + (min(max(v, lo), hi) - lo) / (hi - lo) * pw

    body = [f'<line x1="{L}" y1="{mid + 40}" x2="{L + pw}" y2="{mid + 40}" stroke="#888"/>']
    for t in nice_ticks(lo, hi):
        body.append(f'<line x1="{sx(t):.1f}" y1="{mid + 40}" x2="{sx(t):.1f}" y2="{mid + 44}" stroke="#888"/>'
                    f'<text x="{sx(t):.1f}" y="{mid + 56}" text-anchor="middle">{_tick(t)}</text>')
    if keep.any():
        q10, q25, q50, q75, q90 = np.quantile(x[keep], [0.1, 0.25, 0.5, 0.75, 0.9])
        body.append(f'<line x1="{sx(q10):.1f}" y1="{mid}" x2="{sx(q90):.1f}" y2="{mid}" stroke="#1f6fb2"/>'
                    f'<rect x="{sx(q25):.1f}" y="{mid - 12}" width="{max(sx(q75) - sx(q25), 1):.1f}" height="24" '
                    f'fill="#dbe9f6" stroke="#1f6fb2"><title>25-75%: {q25:.3f} to {q75:.3f}</title></rect>'
                    f'<line x1="{sx(q50):.1f}" y1="{mid - 12}" x2="{sx(q50):.1f}" y2="{mid + 12}" stroke="#1f6fb2" '
                    f'stroke-width="2"><title>median {q50:.3f}</title></line>')
        for k, (v, name) in enumerate((float(v), n) for v, n, ok in zip(x, names, keep, strict=True) if ok):
            dy = ((k * 7) % 21) - 10
            body.append(f'<circle cx="{sx(v):.1f}" cy="{mid + dy + 25:.1f}" r="3" fill="#b2401f" fill-opacity="0.7">'
                        f'<title>{escape(name)} {v:.3f}</title></circle>')
        body.append(f'<text x="{W / 2}" y="{H - 8}" text-anchor="middle" fill="#444">{int(keep.sum())} topics, '
                    f'median {q50:.3f}; {int((~keep).sum())} undefined</text>')
    else:
        body.append(f'<text x="{W / 2}" y="{mid}" text-anchor="middle" fill="#888">no topic has a value</text>')
    return _svg(body, title)


def bars_svg(names: Sequence[str], values: Sequence[float], lows: Sequence[float], highs: Sequence[float],
             title: str) -> str:
    """Horizontal bars from 0 with interval whiskers (NaN bars left out)."""
    vals = [v for v in (*values, *lows, *highs, 0.0) if v == v]
    ticks = axis_ticks(min(vals), max(vals))
    lo, hi = ticks[0], ticks[-1]
    left, pw = 110, W - 110 - R
    bh = min(28.0, (H - T - B) / max(len(names), 1))

    def sx(v: float) -> float:
        return left + (v - lo) / (hi - lo) * pw

    body = [f'<rect x="{left}" y="{T}" width="{pw}" height="{bh * len(names):.1f}" fill="none" stroke="#ccc"/>',
            f'<line x1="{sx(0):.1f}" y1="{T}" x2="{sx(0):.1f}" y2="{T + bh * len(names):.1f}" stroke="#888"/>']
    for i, (n, v, a, b) in enumerate(zip(names, values, lows, highs, strict=True)):
        y = T + i * bh
        body.append(f'<text x="{left - 6}" y="{y + bh / 2 + 4:.1f}" text-anchor="end">{escape(n)}</text>')
        if v != v:
            continue
        x0, x1 = sorted((sx(0), sx(v)))
        body.append(f'<rect x="{x0:.1f}" y="{y + 4:.1f}" width="{max(x1 - x0, 1):.1f}" height="{bh - 8:.1f}" '
                    f'fill="{"#1f6fb2" if v >= 0 else "#b2401f"}" fill-opacity="0.75"><title>{escape(n)}: {v:.3f}'
                    f'{f" [{a:.3f}, {b:.3f}]" if a == a and b == b else ""}</title></rect>')
        if a == a and b == b:
            body.append(f'<line x1="{sx(a):.1f}" y1="{y + bh / 2:.1f}" x2="{sx(b):.1f}" y2="{y + bh / 2:.1f}" '
                        'stroke="#222" stroke-width="1.5"/>')
    for t in ticks:
        body.append(f'<text x="{sx(t):.1f}" y="{T + bh * len(names) + 14:.1f}" text-anchor="middle">{_tick(t)}</text>')
    return _svg(body, title, height=int(T + bh * len(names) + B))


def _read(path: str) -> pd.DataFrame:
    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        return pd.DataFrame()
    try:
        return pd.read_csv(p, sep="\t", dtype={"query_id": str, "grader": str, "variant": str})
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [] if df.empty else df.astype(object).where(df.notna(), None).to_dict("records")


def _confusion_plots(g: str, variants: Sequence[str], confusion: pd.DataFrame) -> list[dict[str, str]]:
    """One heat map per distinct label x judgment matrix of ``g``'s variants (variants with the same labels, such as
    the max-mode variants, which differ only in their threshold, share one), captioned with every variant it is."""
    shown: dict[bytes, list[str]] = {}
    tables: dict[bytes, pd.DataFrame] = {}
    for v in variants:
        c = confusion[(confusion["grader"] == g) & (confusion["variant"] == v)] if len(confusion) else confusion
        if not len(c):
            continue
        wide = c.pivot_table(index="label", columns="judgment", values="count", aggfunc="sum", fill_value=0)
        key = repr((list(wide.index), list(wide.columns), wide.to_numpy().tolist())).encode()
        shown.setdefault(key, []).append(v)
        tables.setdefault(key, wide)
    plots = []
    for key, names in shown.items():
        wide = tables[key]
        which = ", ".join(names)
        plots.append({"caption": f"confusion {which}" + (" (same labels)" if len(names) > 1 else ""),
                      "svg": heatmap_svg(wide.to_numpy(), list(wide.index), list(wide.columns),
                                         f"{g} {which}: label x judgment")})
    return plots


def best_variant(labels: pd.DataFrame) -> str | None:
    """The variant with the highest binary kappa (the first of equals; None without a defined kappa)."""
    if not len(labels) or "kappa" not in labels:
        return None
    k = labels["kappa"].astype(float)
    return None if k.isna().all() else str(labels.loc[k.idxmax(), "variant"])


def _card(g: str, labels: pd.DataFrame, systems: pd.DataFrame, topics: pd.DataFrame, confusion: pd.DataFrame,
          summary: pd.DataFrame, leaderboard: pd.DataFrame) -> dict[str, Any]:
    mine = labels[labels["grader"] == g] if len(labels) else labels
    variants = list(mine["variant"]) if len(mine) else []
    label_plots = _confusion_plots(g, variants, confusion)
    for v in variants:
        t = topics[(topics["grader"] == g) & (topics["variant"] == v) & (topics["measure"] == "-")]
        if len(t):
            label_plots.append({"caption": f"per-topic κ {v}", "svg": distribution_svg(
                t["kappa"].astype(float).tolist(), f"{g} {v}: binary κ per topic", labels=list(t["query_id"]))})
    system_plots: list[dict[str, str]] = []
    mys = systems[systems["grader"] == g] if len(systems) else systems
    if len(mys):
        first = mys.iloc[0]
        t = topics[(topics["grader"] == g) & (topics["variant"] == first["variant"])
                   & (topics["measure"] == first["measure"])]
        if len(t):
            system_plots.append({"caption": "per-topic τ", "svg": distribution_svg(
                t["tau"].astype(float).tolist(), f"{g} {first['variant']} {first['measure']}: Kendall τ per topic",
                labels=list(t["query_id"]))})
    robustness_plots: list[dict[str, str]] = []
    if len(summary):
        names = list(summary["perturbation"])
        robustness_plots.append({"caption": "mean grade shift", "svg": bars_svg(
            names, summary["mean_shift"].astype(float).tolist(), summary["mean_shift_low"].astype(float).tolist(),
            summary["mean_shift_high"].astype(float).tolist(), f"{g}: mean grade shift per perturbation")})
        robustness_plots.append({"caption": "lifted share", "svg": bars_svg(
            names, summary["lifted_share"].astype(float).tolist(), summary["lifted_share_low"].astype(float).tolist(),
            summary["lifted_share_high"].astype(float).tolist(), f"{g}: non-relevant lifted to relevant")})
    return {"name": g, "href": f"{g}.html", "labels": _records(mine), "systems": _records(mys),
            "summary": _records(summary), "leaderboard": _records(leaderboard), "best": best_variant(mine),
            "label_plots": label_plots, "system_plots": system_plots, "robustness_plots": robustness_plots,
            "top_k": sorted({c.split("@")[1] for c in systems.columns if c.startswith("kendall@")
                             and not c.endswith(("_low", "_high"))}, key=int) if len(systems) else []}


def build_judge_cards(res: Path, out: Path, common: dict[str, Any], graders: Sequence[str], write: Write,
                      stats: dict[str, Any]) -> list[dict[str, Any]]:
    """Write a judge card per grader with audit files (``write(path, text, stats)``); returns the index entries."""
    lay = Layout.of(res)
    labels, systems = _read(lay.audit("meta/labels.tsv")), _read(lay.audit("meta/systems.tsv"))
    topics, confusion = _read(lay.audit("meta/per-topic.tsv")), _read(lay.audit("meta/confusion.tsv"))
    cards = []
    for g in graders:
        summary = _read(lay.audit_grader(g, "summary.tsv"))
        leaderboard = _read(lay.audit_grader(g, "leaderboard.tsv"))
        in_meta = len(labels) and (labels["grader"] == g).any()
        if not in_meta and summary.empty:
            continue
        card = _card(g, labels, systems, topics, confusion, summary, leaderboard)
        cards.append(card)
        write(out / "judges" / card["href"], render_page("judge.html", **common, root="../", card=card), stats)
    if cards:
        write(out / "judges" / "index.html", render_page("judges.html", **common, root="../", cards=cards), stats)
    return cards
