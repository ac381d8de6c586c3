"""The review site's human-sample pages: the leaderboards with intervals (a forest plot per prediction and measure:
each system's prediction-powered estimate and interval, its LLM-only value and human-only interval beside it, the
groups the data cannot separate) and the judging page (the design's passages not judged yet, one at a time, graded
by keyboard, kept in the browser, exported as TREC qrels).

Both read the results folder only (``results/human_sample/``: the estimates rule's tables and ``judging.json``);
pages live at ``site/human_sample/index.html`` and ``site/judging/index.html``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from autograde.core.layout import Layout
from autograde.reports.nugget_pages import Write
from autograde.reports.render import render_page

ROW = 22
"""Height of one system's row in a forest plot (pixels)."""


def forest(table: pd.DataFrame, width: int = 560) -> dict[str, Any]:
    """The geometry of one forest plot: per system (best first) its y, the x of the estimate, the interval, the
    LLM-only value and the human-only interval; the axis ticks; the groups' bands."""
    cols = ["low", "high", "human_low", "human_high", "llm_only", "estimate"]
    vals = table[cols].to_numpy(dtype=float)
    finite = vals[pd.notna(vals) & (abs(vals) < float("inf"))]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.04
    lo, hi = lo - pad, hi + pad
    left, right = 150, width - 12

    def x(v: Any) -> float | None:
        f = float(v)
        return None if f != f or abs(f) == float("inf") else round(left + (f - lo) / (hi - lo) * (right - left), 1)

    rows, bands = [], []
    for i, r in enumerate(table.itertuples(index=False)):
        y = 14 + i * ROW
        rows.append({"y": y, "system": r.system, "group": int(r.group), "est": x(r.estimate), "lo": x(r.low),
                     "hi": x(r.high), "llm": x(r.llm_only), "hlo": x(r.human_low), "hhi": x(r.human_high),
                     "tip": f"{r.system}: {r.estimate:.4f} [{r.low:.4f}, {r.high:.4f}]; LLM-only {r.llm_only:.4f}; "
                            f"human-only {r.human_only:.4f} [{r.human_low:.4f}, {r.human_high:.4f}]; "
                            f"composite {r.composite:.4f}; group {r.group}"})
        if i == 0 or int(r.group) != rows[i - 1]["group"]:
            bands.append({"y": y - ROW / 2, "h": 0.0, "group": int(r.group)})
        bands[-1]["h"] += ROW
    step = _nice_step((hi - lo) / 5)
    start = step * int(lo / step)
    ticks = [t for t in (start + k * step for k in range(12)) if lo <= t <= hi]
    return {"width": width, "height": 28 + len(rows) * ROW, "left": left, "right": right, "rows": rows,
            "bands": bands, "ticks": [{"x": x(t), "label": f"{t:.3g}"} for t in ticks]}


def _nice_step(raw: float) -> float:
    if raw <= 0:
        return 1.0
    mag = 10 ** int(f"{raw:e}".split("e")[1])
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype={"system": str, "other": str}) if path.is_file() else pd.DataFrame()


def build_human_sample_pages(res: Path, out: Path, common: dict[str, Any], write: Write,
                             stats: dict[str, Any]) -> dict[str, Any]:
    """Write the estimates page and the judging page when their data exist; returns the index's links
    (``estimates``, ``judging``: hrefs or None) and the summary."""
    lay = Layout.of(res)
    links: dict[str, Any] = {"estimates": None, "judging": None, "summary": None}
    summary_path = Path(lay.human_sample("summary.json"))
    if summary_path.is_file():
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        sections = []
        for name, info in summary.get("predictions", {}).items():
            est = _read(Path(lay.human_sample(f"{name}/estimates.tsv")))
            if len(est) and "composite" not in est.columns:  # written before the composite order existed
                est = est.assign(composite=float("nan"))
            diff = _read(Path(lay.human_sample(f"{name}/differences.tsv")))
            measures = []
            for m in summary.get("measures", []):
                t = est[est["measure"] == m] if len(est) else est
                if not len(t):
                    continue
                d = diff[diff["measure"] == m] if len(diff) else diff
                measures.append({"name": m, "plot": forest(t), "rows": t.to_dict("records"),
                                 "caution": summary.get("cautions", {}).get(m),
                                 "estimator": str(t["estimator"].iloc[0]),
                                 "pairs": len(d), "separated": int(d["separated"].sum()) if len(d) else 0,
                                 "open_pairs": d[~d["separated"].astype(bool)].to_dict("records") if len(d) else []})
            sections.append({"name": name, "info": info, "measures": measures})
        write(out / "human_sample" / "index.html", render_page(
            "human_sample.html", **common, root="../", summary=summary, sections=sections), stats)
        links["estimates"] = "human_sample/index.html"
        links["summary"] = summary
    judging_path = Path(lay.human_sample("judging.json"))
    if judging_path.is_file():
        data = json.loads(judging_path.read_text(encoding="utf-8"))
        write(out / "judging" / "index.html", render_page("judging.html", **common, root="../", data=data), stats)
        links["judging"] = "judging/index.html"
        links["to_judge"] = len(data.get("items", []))
    return links
