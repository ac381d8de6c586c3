"""The static review site: ``index.html``, one page per grader, one page per (grader, query).

Everything is read from the results folder (the workflow's layout) and rendered with Jinja2 templates;
CSS and JavaScript are inline, plots are the SVG files of the correlation report, nothing is fetched from
the network. A query page shows the grid (passages x items, colored by grade; hover a cell or click a row
for the passage text, the extracted answer and the raw response), the verify-grading lists (per item,
built from the page's data when opened), the spurious entries and missing-in-bank rows of the query.
Large queries stay usable: the page holds each text once (in a JSON block) and shows at most
``site_max_passages`` passages (highest labels first).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from autograde.config.reports import GRADER_REPORT_FILES, ReportsConfig
from autograde.core.feature import SiteContext, SiteSection
from autograde.core.layout import HUMAN, Layout, Leaderboard
from autograde.core.log import logger
from autograde.core.querycache import QueryCache
from autograde.core.tables import read_table
from autograde.pipeline.perquery import query_digests
from autograde.reports.linkcheck import broken_links, page_links
from autograde.reports.render import render_page, templates_digest
from autograde.reports.site_files import update_folder

if TYPE_CHECKING:
    from autograde.config.model import Config

SiteHook = Callable[[SiteContext], SiteSection | None]
"""A feature's site hook (:attr:`autograde.core.feature.Feature.site`)."""


def slug(name: str) -> str:
    """A file-name-safe form of a query id (a short hash is added when characters had to be replaced)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "_"
    return safe if safe == name else f"{safe}-{hashlib.md5(name.encode()).hexdigest()[:6]}"


def _cut(text: Any, n: int) -> str:
    s = "" if text is None or (isinstance(text, float) and text != text) else str(text)
    return s if len(s) <= n else s[: n - 1] + "…"


def _read_tsv(path: Path) -> pd.DataFrame:
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame()
    return pd.read_csv(path, sep="\t", dtype={"query_id": str, "run": str, "passage_id": str, "name": str})


def _opt_table(path: Path) -> pd.DataFrame:
    return read_table(path) if path.exists() else pd.DataFrame()


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [] if df is None or df.empty else df.astype(object).where(df.notna(), None).to_dict("records")


@dataclass
class GraderData:
    """One grader's tables for the site."""

    name: str
    grades: pd.DataFrame
    items: pd.DataFrame
    labels: pd.DataFrame
    spurious: pd.DataFrame
    missing: pd.DataFrame
    impact: pd.DataFrame
    agreement: pd.DataFrame
    agreement_graded: pd.DataFrame
    agreement_per_query: pd.DataFrame
    summary: dict[str, Any]
    leaderboards: dict[str, pd.DataFrame] = field(default_factory=dict)
    """variant -> wide table (run, then one score column per measure)."""


def _leaderboards(boards: Sequence[Leaderboard], grader: str) -> dict[str, pd.DataFrame]:
    """variant -> wide leaderboard (run + measure columns) of one grader, from the one list of leaderboards (a
    leaderboard of a grader or measure no longer configured is not shown, even where its file remains)."""
    out: dict[str, pd.DataFrame] = {}
    variants: dict[str, list[Leaderboard]] = {}
    for lb in boards:
        if lb.grader == grader:
            variants.setdefault(lb.qrels, []).append(lb)
    for variant, lbs in variants.items():
        wide = None
        for lb in lbs:
            table = _read_tsv(Path(lb.path))
            if table.empty or "score" not in table:
                continue
            col = table.set_index("run")["score"].rename(lb.measure)
            wide = col.to_frame() if wide is None else wide.join(col, how="outer")
        if wide is not None:
            first = wide.columns[0]
            out[variant] = wide.sort_values(first, ascending=False, kind="mergesort").reset_index()
    return out


def load_grader(results: Path, grader: str, boards: Sequence[Leaderboard] = ()) -> GraderData:
    lay = Layout.of(results)
    f = {k: Path(lay.report(grader, v)) for k, v in GRADER_REPORT_FILES.items()}
    grades = read_table(lay.grades(grader))
    summary = json.loads(f["summary"].read_text()) if f["summary"].exists() else {}
    return GraderData(
        name=grader, grades=grades, items=_opt_table(f["bank_items"]), labels=_opt_table(f["passages"]),
        spurious=_read_tsv(f["spurious"]), missing=_read_tsv(f["missing"]), impact=_read_tsv(f["impact"]),
        agreement=_read_tsv(f["agreement"]), agreement_graded=_read_tsv(f["agreement_graded"]),
        agreement_per_query=_read_tsv(f["agreement_per_query"]), summary=summary,
        leaderboards=_leaderboards(boards, grader))


def discover_graders(results: Path) -> list[str]:
    """Graders with a grades table and a reports folder."""
    lay = Layout.of(results)
    d = Path(lay.reports(""))
    return sorted(p.name for p in d.iterdir() if p.is_dir() and p.name != "plots"
                  and Path(lay.grades(p.name)).exists()) if d.is_dir() else []


def _official(results: Path, official_path: str | Path | None) -> dict[str, float]:
    if not official_path:
        return {}
    try:
        return {str(k): float(v) for k, v in json.loads(Path(official_path).read_text(encoding="utf-8")).items()}
    except (OSError, ValueError, AttributeError):
        logger.warning("site: cannot read the official leaderboard %s", official_path)
        return {}


def _interval(row: dict[str, Any], m: str) -> dict[str, Any]:
    return {"v": row.get(m), "lo": row.get(f"{m}_low"), "hi": row.get(f"{m}_high")}


def _correlation_rows(corr: pd.DataFrame, methods: list[str]) -> list[dict[str, Any]]:
    rows = []
    for r in _records(corr):
        rows.append({**r, "stats": {m: _interval(r, m) for m in methods}, "plot_href": r.get("plot")})
    return rows


def _agreement_rows(summary: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for r in _records(summary):
        name = str(r["name"])
        grader, _, variant = name.partition(" ")
        out.append({**r, "grader": grader, "variant": variant, "anchor": f"agreement-{variant}",
                    "rows": [(r["label_bin_high"], r["tp"], r["fp"]), (r["label_bin_low"], r["fn"], r["tn"])]})
    return out


def _query_page_data(g: GraderData, q: str, pool_text: dict[tuple[str, str], str],
                     pool_systems: dict[tuple[str, str], int], cfg: ReportsConfig, thresholds: list[int]
                     ) -> dict[str, Any]:
    """Everything one query page shows (grid rows are limited to ``site_max_passages``)."""
    items = g.items[g.items["query_id"] == q].sort_values("item_id", kind="mergesort")
    item_ids = list(items["item_id"])
    graded_items = sorted(set(g.grades.loc[g.grades["query_id"] == q, "item_id"]) - set(item_ids))
    item_ids += graded_items  # items graded but no longer in the bank
    texts = dict(zip(items["item_id"], items["text"], strict=True))
    labels = g.labels[g.labels["query_id"] == q].copy()
    cnt = [f"count_ge_{t}" for t in thresholds if f"count_ge_{t}" in labels]
    labels["_m"] = labels["max_grade"].astype("float").fillna(-1)
    labels["_c"] = labels[cnt[0]].astype("float").fillna(-1) if cnt else 0
    labels["_j"] = labels["judgment"].astype("float").fillna(-99)
    labels = labels.sort_values(["_m", "_c", "_j", "passage_id"], ascending=[False, False, False, True], kind="mergesort")
    total = len(labels)
    labels = labels.head(cfg.site_max_passages)
    gq = g.grades[g.grades["query_id"] == q]
    cell: dict[tuple[str, str], dict[str, Any]] = {}
    for r in gq.itertuples(index=False):
        grade = r.grade
        cell[(r.passage_id, r.item_id)] = {
            "g": None if pd.isna(grade) else int(grade),
            "a": _cut(getattr(r, "answer", None), cfg.site_text_chars),
            "r": _cut(getattr(r, "raw", None), cfg.site_text_chars),
            "s": str(getattr(r, "parse_status", "ok") or ""),
        }
    passages, rows = [], []
    for idx, lab in enumerate(labels.itertuples(index=False)):
        p = lab.passage_id
        j = None if pd.isna(lab.judgment) else int(lab.judgment)
        m = None if pd.isna(lab.max_grade) else int(lab.max_grade)
        counts = [None if pd.isna(getattr(lab, c)) else int(getattr(lab, c)) for c in cnt]
        cells = [cell.get((p, it)) for it in item_ids]
        passages.append({"id": p, "t": _cut(pool_text.get((q, p), ""), cfg.site_text_chars), "j": j, "m": m,
                         "n": pool_systems.get((q, p), 0),
                         "c": [[c["g"], c["a"], "" if c["r"] == c["a"] else c["r"], c["s"]] if c else None
                               for c in cells]})
        rows.append({"idx": idx, "id": p, "j": j, "m": m, "counts": counts, "n": pool_systems.get((q, p), 0),
                     "cells": [(c["g"] if c else None, (c["s"] if c else "missing")) for c in cells]})
    items_data = [{"id": it, "t": texts.get(it, "(not in the bank any more)")} for it in item_ids]
    return {"rows": rows, "total": total, "item_list": items_data, "count_cols": [c.removeprefix("count_ge_") for c in cnt],
            "data": {"items": items_data, "passages": passages}}


def build_site(results: str | Path, out: str | Path, cfg: ReportsConfig | None = None,
               graders: Sequence[str] | None = None, official_path: str | Path | None = None,
               relevant_level: int = 2, title: str = "autograde review",
               cache_dir: str | Path | None = None, leaderboards: Sequence[Leaderboard] = (),
               config: Config | None = None, sections: Sequence[SiteHook] = ()) -> dict[str, Any]:
    """Build the site from a results folder into ``out``; returns page/byte counts and how many query pages were
    rendered (``query_pages``: the others are read from the per-query cache of ``cache_dir``, where every input of
    the page is unchanged).

    The site is built beside ``out`` and checked first; then only the files whose bytes changed are written into
    ``out`` (and the files no longer made are removed), so an unchanged page keeps its file. Raises
    ``RuntimeError`` listing the broken links if the link check finds any (``out`` is then left as it was).
    """
    from autograde.core.querycache import describe

    t0 = time.perf_counter()
    cfg = cfg or ReportsConfig()
    res = Path(results)
    graders = list(graders) if graders is not None else discover_graders(res)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    cache = QueryCache(cache_dir, "site", f"{SITE_VERSION}/{templates_digest()}")
    try:
        parsed: dict[str, tuple[list[str], list[str]]] = {}
        site = SiteRun(res, tmp, cfg, graders, official_path, relevant_level, title, cache, parsed, list(leaderboards),
                       config, list(sections))
        stats = _build(site)
        problems = broken_links(tmp, parsed)
        if problems:
            raise RuntimeError("the site has broken links:\n  " + "\n  ".join(problems[:50]))
        stats["written"] = update_folder(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    stats["query_pages"] = dict(cache.stats)
    stats["seconds"] = round(time.perf_counter() - t0, 2)
    logger.info("site: %d pages, %.1f MB in %s, %d files written; query pages: %s (%.1f s)", stats["pages"],
                stats["bytes"] / 1e6, out, stats["written"], describe(cache.stats), stats["seconds"])
    return stats


SITE_VERSION = 1
"""Bumped when what a query page shows changes in code (a changed template is noticed by itself)."""


def _write(path: Path, text: str, stats: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    stats["pages"] += 1
    stats["bytes"] += len(text.encode("utf-8"))


@dataclass
class SiteRun:
    """One build of the site: where from and to, the settings, the leaderboards to show and the features' hooks."""

    res: Path
    out: Path
    cfg: ReportsConfig
    graders: list[str]
    official_path: str | Path | None
    relevant_level: int
    title: str
    cache: QueryCache
    parsed: dict[str, tuple[list[str], list[str]]]
    boards: list[Leaderboard]
    config: Config | None
    hooks: list[SiteHook]


def _build(run: SiteRun) -> dict[str, Any]:
    res, out, cfg, graders = run.res, run.out, run.cfg, run.graders
    stats: dict[str, Any] = {"pages": 0, "bytes": 0}
    lay = Layout.of(res)
    queries_df = _opt_table(Path(lay.ingest("queries")))
    queries = dict(zip(queries_df["query_id"], queries_df["query_text"], strict=True)) if len(queries_df) else {}
    judgments = _opt_table(Path(lay.ingest("judgments")))
    pool = _opt_table(Path(lay.pool))
    pool_text = {(q, p): t for q, p, t in pool[["query_id", "passage_id", "text"]].itertuples(index=False)} if len(pool) else {}
    pool_systems = ({(q, p): int(n) for q, p, n in pool[["query_id", "passage_id", "n_systems"]].itertuples(index=False)}
                    if "n_systems" in pool else {})
    official = _official(res, run.official_path)
    corr = _read_tsv(Path(lay.reports("correlation.tsv")))
    if len(corr):  # the rows of the leaderboards the experiment makes now
        shown = {(lb.grader, lb.qrels, lb.measure) for lb in run.boards}
        corr = corr[[(g, str(v), m) in shown for g, v, m in corr[["grader", "qrels", "measure"]].itertuples(index=False)]]
    methods = [m for m in ("spearman", "kendall", "tau_ap") if m in corr]
    plots = Path(lay.reports("plots"))
    if plots.is_dir():
        shutil.copytree(plots, out / "plots")
        stats["bytes"] += sum(p.stat().st_size for p in (out / "plots").rglob("*") if p.is_file())
    data = [load_grader(res, g, run.boards) for g in graders]
    thresholds = sorted({int(t) for g in data for t in g.summary.get("thresholds", [])}) or [4]
    human = _leaderboards(run.boards, HUMAN)
    common = {"title": run.title, "methods": methods, "official": official, "relevant_level": run.relevant_level,
              "method_names": {"spearman": "Spearman ρ", "kendall": "Kendall τ-b", "tau_ap": "τ-ap"}}
    agreement = [a for g in data for a in _agreement_rows(g.agreement)]
    grader_cards = [{"name": g.name, "summary": g.summary, "href": f"{g.name}/index.html"} for g in data]
    sections = []
    if run.config is not None:
        ctx = SiteContext(run.config, res, out, common, _write, stats, slug, list(graders), queries)
        sections = [s for hook in run.hooks if (s := hook(ctx)) is not None]
    _write(out / "index.html", render_page(
        "index.html", **common, root="", graders=grader_cards, sections=sections,
        correlation=_correlation_rows(corr, methods),
        agreement=agreement, human=human, n_queries=len(queries), n_pool=len(pool), n_judged=len(judgments),
        n_systems=len(next(iter(human.values()))) if human else None), stats)
    pool_digests = query_digests(pool[[c for c in ("query_id", "passage_id", "text", "n_systems") if c in pool]]) \
        if len(pool) else {}
    for g in data:
        _grader_pages(out, g, queries, pool_text, pool_systems, cfg, thresholds, common,
                      _correlation_rows(corr[corr["grader"] == g.name], methods) if len(corr) else [], stats,
                      PageInputs(run.cache, pool_digests, run.parsed))
    return stats


def _grader_pages(out: Path, g: GraderData, queries: dict[str, str], pool_text: dict[tuple[str, str], str],
                  pool_systems: dict[tuple[str, str], int], cfg: ReportsConfig, thresholds: list[int],
                  common: dict[str, Any], corr: list[dict[str, Any]], stats: dict[str, Any], inputs: PageInputs
                  ) -> None:
    qids = sorted(set(g.grades["query_id"]), key=lambda q: (not q.isdigit(), int(q) if q.isdigit() else 0, q))
    first_variant = g.agreement["name"].iloc[0] if len(g.agreement) else None
    perq = g.agreement_per_query
    perq_first = perq[perq["name"] == first_variant].set_index("query_id") if len(perq) and first_variant else None
    qrows = []
    for q in qids:
        lab = g.labels[g.labels["query_id"] == q]
        rel = lab["judgment"].notna() & (lab["judgment"] >= common["relevant_level"])
        qrows.append({
            "id": q, "text": queries.get(q, ""), "href": f"q/{slug(q)}.html", "passages": len(lab),
            "judged": int(lab["judgment"].notna().sum()), "relevant": int(rel.sum()),
            "n_items": int((g.items["query_id"] == q).sum()) if len(g.items) else 0,
            "kappa": perq_first.loc[q, "kappa"] if perq_first is not None and q in perq_first.index else None,
            "missing": int((g.missing["query_id"] == q).sum()) if len(g.missing) else 0,
            "spurious": int((g.spurious["query_id"] == q).sum()) if len(g.spurious) else 0,
        })
    texts = dict(zip(g.items["item_id"], g.items["text"], strict=True)) if len(g.items) else {}
    hrefs = {q["id"]: q["href"] for q in qrows}
    impact = g.impact.copy()
    if len(impact):
        changed = (impact["kendall"] < 1.0) | (impact["max_rank_shift"] > 0) | impact["kendall"].isna()
        impact = impact[changed].sort_values(["kendall", "max_rank_shift"], ascending=[True, False],
                                             kind="mergesort").head(50)
        impact["item_text"] = impact["item_id"].map(texts)
    spurious = g.spurious.sort_values(["threshold", "count"], ascending=[True, False], kind="mergesort").head(100) \
        if len(g.spurious) else g.spurious
    graded: dict[str, list[dict[str, Any]]] = {}
    for r in _records(g.agreement_graded):
        graded.setdefault(str(r["name"]).partition(" ")[2], []).append(r)
    graded_tables = {v: _pivot(rows) for v, rows in graded.items()}
    _write(out / g.name / "index.html", render_page(
        "grader.html", **common, root="../", g=g, queries=qrows, correlation=corr, agreement=_agreement_rows(g.agreement),
        graded=graded_tables, impact=_records(impact), spurious=_records(spurious), missing=_records(g.missing.head(200)),
        missing_total=len(g.missing), hrefs=hrefs, leaderboards=g.leaderboards), stats)
    pages = _query_pages(g, qids, qrows, queries, pool_text, pool_systems, cfg, thresholds, common, perq, texts, inputs)
    for q in qids:
        rel = f"{g.name}/q/{slug(q)}.html"
        _write(out / rel, pages[q]["html"], stats)
        inputs.parsed[rel] = (pages[q]["links"], pages[q]["ids"])


@dataclass(frozen=True)
class PageInputs:
    """What the query pages of every grader share: the per-query cache of pages, the pool's per-query digests, and
    the (links, ids) of every page rendered or read back (the link check does not parse them again)."""

    cache: QueryCache
    pool: dict[str, str]
    parsed: dict[str, tuple[list[str], list[str]]]


GRADE_PAGE_COLUMNS = ("passage_id", "item_id", "grade", "answer", "raw", "parse_status")
"""The grade columns a query page shows."""


def _query_pages(g: GraderData, qids: list[str], qrows: list[dict[str, Any]], queries: dict[str, str],
                 pool_text: dict[tuple[str, str], str], pool_systems: dict[tuple[str, str], int], cfg: ReportsConfig,
                 thresholds: list[int], common: dict[str, Any], perq: pd.DataFrame, texts: dict[str, str],
                 inputs: PageInputs) -> dict[str, dict[str, Any]]:
    """Every query page of a grader: ``{html, links, ids}`` per query, rendered only where one of the page's inputs
    changed (its grades, items, labels and pool passages, its rows of the reports, its neighbours, the settings, the
    templates), else read from the per-query cache."""
    grades = query_digests(g.grades[["query_id", *(c for c in GRADE_PAGE_COLUMNS if c in g.grades)]])
    items = query_digests(g.items[["query_id", "item_id", "text"]]) if len(g.items) else {}
    labels = query_digests(g.labels) if len(g.labels) else {}
    context: dict[str, dict[str, Any]] = {}
    for n, q in enumerate(qids):
        prev_q = qrows[n - 1]["href"].removeprefix("q/") if n > 0 else None
        next_q = qrows[n + 1]["href"].removeprefix("q/") if n + 1 < len(qids) else None
        missing = _records(g.missing[g.missing["query_id"] == q]) if len(g.missing) else []
        context[q] = {
            "q": qrows[n], "prev_q": prev_q, "next_q": next_q, "per_query": _records(perq[perq["query_id"] == q])
            if len(perq) else [], "spurious": _records(g.spurious[g.spurious["query_id"] == q]) if len(g.spurious)
            else [], "missing": missing, "texts": {m["best_item_id"]: texts[m["best_item_id"]] for m in missing
                                                    if m.get("best_item_id") in texts}}
    keys = {q: inputs.cache.key({
        "grader": g.name, "grades": grades.get(q), "items": items.get(q), "labels": labels.get(q),
        "pool": inputs.pool.get(q), "context": context[q], "common": common, "thresholds": thresholds,
        "limits": [cfg.site_max_passages, cfg.site_text_chars]}) for q in qids}

    def render(todo: list[str]) -> dict[str, dict[str, Any]]:
        out = {}
        for q in todo:
            page = _query_page_data(g, q, pool_text, pool_systems, cfg, thresholds)
            html = render_page("query.html", **common, root="../../", g=g, page=page, max_shown=cfg.site_max_passages,
                               **context[q])
            links, ids = page_links(html)
            out[q] = {"html": html, "links": links, "ids": ids}
        return out

    return inputs.cache.values(keys, render)


def _pivot(rows: list[dict[str, Any]]) -> dict[str, Any]:
    labels = sorted({int(r["label"]) for r in rows})
    judgments = sorted({int(r["judgment"]) for r in rows})
    counts = {(int(r["label"]), int(r["judgment"])): int(r["count"]) for r in rows}
    return {"labels": labels, "judgments": judgments,
            "cells": [[counts.get((lab, j), 0) for j in judgments] for lab in labels],
            "row_totals": [sum(counts.get((lab, j), 0) for j in judgments) for lab in labels],
            "col_totals": [sum(counts.get((lab, j), 0) for lab in labels) for j in judgments]}
