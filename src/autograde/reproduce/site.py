"""The reproduction's page for the review site: ``results/reproduction/index.html`` from the index JSON.

Rendered with the review site's own templates (``reports/templates/reproduction.html`` on ``base.html``):
one static page, inline CSS, no network access.
"""

from __future__ import annotations

from typing import Any

from autograde.core.feature import SiteContext, SiteSection
from autograde.reproduce.compare import fmt_value

__all__ = ["reproduction_page", "reproduction_section"]

CSS = {"same": "same", "differs": "differs"}


def _difference(d: float | None, digits: int) -> str:
    if d is None:
        return ""
    return f"{d:+.{digits + 1}f}" if digits else f"{d:+.0f}"


def reproduction_page(index: dict[str, Any]) -> str:
    """The HTML page of an index document (:func:`autograde.reproduce.compare.index_json`)."""
    from autograde.reports.render import render_page

    tables = []
    for t in index["tables"]:
        rows = [{"row": c["row"], "column": c["column"], "paper": fmt_value(c["paper"], c["digits"]),
                 "ours": fmt_value(c["ours"], c["digits"], c["sd"], c["n"]),
                 "difference": _difference(c["difference"], c["digits"]), "outcome": c["outcome"],
                 "why": c["shown_why"], "css": CSS.get(c["outcome"], "other")} for c in t["cells"]]
        tables.append({**t, "rows": rows})
    summary = index["summary"]
    return render_page("reproduction.html", title="autograde: reproducing the papers", root="", plan=index["plan"],
                  summary=summary, tables=tables)


def reproduction_section(ctx: SiteContext) -> SiteSection | None:
    """The papers' tables (``make reproduce``), copied into the review site when they were built before it; the
    index page's section linking them (None when they were not built)."""
    from pathlib import Path

    from autograde.core.layout import Layout
    from autograde.reports.render import render_page

    page = Path(Layout.of(ctx.results).reproduction("index.html"))
    if not page.is_file():
        return None
    ctx.write(ctx.out / "reproduction.html", page.read_text(encoding="utf-8"), ctx.stats)
    return SiteSection("reproduction", "Reproducing the papers",
                       render_page("section_reproduction.html", root="", href="reproduction.html"))
