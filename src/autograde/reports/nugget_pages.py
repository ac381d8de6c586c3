"""The review site's nugget pages: per assessor, its leaderboards and one answer page per query.

An answer page has one row per run's answer to the query (its nugget scores and, on click, its text) and one column
per nugget of the query (importance in the header: V vital, O okay), each cell the nugget's label for that answer:
S support, P partial_support, N not_support (hover: the grade and the label distribution). Pages live at
``site/<assessor>/index.html`` and ``site/<assessor>/q/<query>.html``, like a grader's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from autograde.config.nuggets import NUGGET_VARIANT
from autograde.core.layout import Layout
from autograde.core.tables import read_table
from autograde.grading.nugget_labels import SHORT
from autograde.metrics.nuggets import ALL_QUERIES, MEASURES
from autograde.reports.render import render_page

Write = Callable[[Path, str, dict[str, Any]], None]


def _means(ev: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    m = ev[ev["query_id"] == ALL_QUERIES].pivot(index="run", columns="measure", values="value")
    cols = [c for c in names if c in m.columns]
    return m[cols].sort_values(cols[0], ascending=False, kind="mergesort").reset_index() if cols else m.reset_index()


def _answer_page(q: str, labels: pd.DataFrame, ev: pd.DataFrame, texts: dict[str, str], answers: dict[tuple, str],
                 names: list[str]) -> dict[str, Any]:
    items = list(dict.fromkeys(labels["item_id"]))
    imp = dict(zip(labels["item_id"], labels["importance"], strict=False))
    scores = ev[ev["query_id"] == q].pivot(index="run", columns="measure", values="value")
    rows = []
    for run, g in labels.groupby("run", sort=True):
        by_item = {r.item_id: r for r in g.itertuples(index=False)}
        cells: list[dict[str, str] | None] = []
        for i in items:
            r = by_item.get(i)
            if r is None:
                cells.append(None)
                continue
            probs = json.loads(r.grade_probs) if isinstance(r.grade_probs, str) and r.grade_probs else {}
            tip = f"{r.assignment}; grade {r.grade if not pd.isna(r.grade) else '–'}" + (
                "; " + ", ".join(f"{k} {v:.2f}" for k, v in probs.items()) if probs else "") + (
                f"; {r.status}" if r.status != "ok" else "")
            cells.append({"a": r.assignment, "s": SHORT[r.assignment], "tip": tip})
        rows.append({"run": run, "text": answers.get((run, q), ""), "cells": cells,
                     "scores": [scores.loc[run, n] if run in scores.index and n in scores.columns else None
                                for n in names]})
    return {"nuggets": [{"id": i, "t": texts.get(i, ""), "imp": imp[i], "s": SHORT[imp[i]]} for i in items],
            "rows": rows}


def build_nugget_pages(res: Path, out: Path, common: dict[str, Any], queries: dict[str, str], write: Write,
                       stats: dict[str, Any], slug: Callable[[str], str], assessors: Sequence[str]
                       ) -> list[dict[str, Any]]:
    """Write the pages of every assessor of ``assessors`` whose assignments exist (``write(path, text, stats)``;
    ``slug`` names a query's page); returns the index cards (name, href, per-run means)."""
    lay = Layout.of(res)
    names = [m.name for m in MEASURES]
    titles = {m.name: m.title for m in MEASURES}
    cards = []
    for a in assessors:
        if not Path(lay.nuggets(a, "assignments.parquet")).is_file():
            continue
        labels = read_table(lay.nuggets(a, "assignments.parquet"))
        ev_path = Path(lay.evaluation(a, NUGGET_VARIANT))
        ev = read_table(ev_path) if ev_path.is_file() else pd.DataFrame(columns=["run", "query_id", "measure", "value"])
        imp_path = Path(lay.nugget_table("importance.parquet"))
        texts = dict(read_table(imp_path, ["item_id", "text"]).itertuples(index=False)) if imp_path.is_file() else {}
        ans_path = Path(lay.nugget_table("answers.parquet"))
        answers = ({(r, q): t for r, q, t in read_table(ans_path, ["run", "query_id", "text"]).itertuples(index=False)}
                   if ans_path.is_file() else {})
        means = _means(ev, names)
        stats_path = Path(lay.nuggets(a, "stats.json"))
        summary = json.loads(stats_path.read_text()) if stats_path.is_file() else {}
        qids = sorted(set(labels["query_id"]))
        qrows = [{"id": q, "text": queries.get(q, ""), "href": f"q/{slug(q)}.html",
                  "answers": int(labels.loc[labels["query_id"] == q, "run"].nunique()),
                  "nuggets": int(labels.loc[labels["query_id"] == q, "item_id"].nunique())} for q in qids]
        card = {"name": a, "href": f"{a}/index.html", "means": means, "titles": titles, "summary": summary}
        cards.append(card)
        write(out / a / "index.html", render_page("nuggets.html", **common, root="../", a=card, queries=qrows), stats)
        for n, q in enumerate(qids):
            page = _answer_page(q, labels[labels["query_id"] == q], ev, texts, answers, names)
            write(out / a / "q" / f"{slug(q)}.html", render_page(
                "nugget_query.html", **common, root="../../", a=card, q=qrows[n], page=page, names=names,
                titles=titles, prev_q=qrows[n - 1]["href"].removeprefix("q/") if n else None,
                next_q=qrows[n + 1]["href"].removeprefix("q/") if n + 1 < len(qids) else None), stats)
    return cards
