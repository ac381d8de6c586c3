"""The static site from the example run: no broken local links, no network assets, the grid and its data,
deterministic output, the passage limit; the link checker itself."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from autograde.config.reports import ReportsConfig
from autograde.reports.linkcheck import broken_links
from autograde.reports.site import build_site, slug

NETWORK = re.compile(r"""(?:\b(?:src|href|action|poster)\s*=\s*["']?\s*(?:https?:)?//)|url\(\s*["']?\s*(?:https?:)?//|@import""",
                     re.I)


class _Grid(HTMLParser):
    """Counts grid body rows and item header cells of a query page."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = self.items = 0
        self._in_grid = self._in_body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and a.get("id") == "grid":
            self._in_grid = True
        elif self._in_grid and tag == "tbody":
            self._in_body = True
        elif self._in_body and tag == "tr":
            self.rows += 1
        elif self._in_grid and tag == "th" and "it" in (a.get("class") or "").split():
            self.items += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_grid = self._in_body = False


def _largest_query(results: Path) -> tuple[str, int]:
    pool = pd.read_parquet(results / "pool" / "pool.parquet")
    sizes = pool.groupby("query_id").size().sort_index()
    return str(sizes.idxmax()), int(sizes.max())


@pytest.mark.workflow
@pytest.mark.slow
def test_site_links_assets_and_grid(example_run: Path) -> None:
    site = example_run / "results" / "site"
    assert broken_links(site) == []
    for f in site.rglob("*"):
        if f.suffix in (".html", ".svg"):
            text = f.read_text(encoding="utf-8")
            assert not NETWORK.search(text), f"{f} refers to a network asset"
            assert "built-in method" not in text and "bound method" not in text, f"{f} renders a Python method"
    q, n = _largest_query(example_run / "results")
    items = pd.read_parquet(example_run / "results" / "reports" / "minilm-questions" / "items.parquet")
    page = (site / "minilm-questions" / "q" / f"{slug(q)}.html").read_text(encoding="utf-8")
    grid = _Grid()
    grid.feed(page)
    assert (grid.rows, grid.items) == (n, int((items["query_id"] == q).sum()))
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1))
    assert len(data["passages"]) == n and all(len(p["c"]) == grid.items for p in data["passages"])
    index = (site / "index.html").read_text(encoding="utf-8")
    assert index.count('href="plots/') == 8  # one scatter plot per leaderboard with a correlation
    assert "Cohen's κ" in index and "minilm-questions count-4" in index
    # what a reader sees: ranks as ranks, which measure orders a leaderboard, nugget numbers apart from labels,
    # only items that change a leaderboard, plots large enough to read
    assert re.search(r'<td class="num">1</td>', index) and not re.search(r'<td class="num">\d+\.0</td>', index)
    assert "ordered by " in index
    grader = (site / "minilm-questions" / "index.html").read_text(encoding="utf-8")
    impact = grader.split('id="impact"')[1]
    assert '<td class="num">1.000</td><td class="num">0.0</td>' not in impact  # no padding with unchanged items
    assert 'width="520"' in grader


@pytest.mark.workflow
@pytest.mark.slow
def test_site_is_deterministic_and_respects_the_passage_limit(example_run: Path, tmp_path: Path) -> None:
    results = example_run / "results"
    official = example_run / "data" / "official_leaderboard.json"
    graders = ["minilm-questions"]
    build_site(results, tmp_path / "a", ReportsConfig(), graders, official)
    build_site(results, tmp_path / "b", ReportsConfig(), graders, official)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    stats = build_site(results, tmp_path / "c", ReportsConfig(site_max_passages=5), graders, official)
    assert stats["pages"] == 1 + 1 + 8  # index, grader page, one page per query
    q, n = _largest_query(results)
    grid = _Grid()
    grid.feed((tmp_path / "c" / "minilm-questions" / "q" / f"{slug(q)}.html").read_text(encoding="utf-8"))
    assert grid.rows == 5 and n > 5


def test_link_checker_finds_missing_files_and_anchors(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "index.html").write_text('<a href="sub/p.html#grid">ok</a> <a href="sub/p.html#nope">bad anchor</a>'
                                         '<img src="plots/x.svg"><a href="https://example.org/">external</a>'
                                         '<a href="#here">self</a><h2 id="here">here</h2><a href="../up.html">out</a>')
    (tmp_path / "sub" / "p.html").write_text('<table id="grid"></table><a href="../index.html#here">back</a>')
    assert broken_links(tmp_path) == [
        'index.html: ../up.html (outside the site)',
        'index.html: plots/x.svg (no such file)',
        'index.html: sub/p.html#nope (no id "nope" in sub/p.html)',
    ]


def test_slug_keeps_safe_ids_and_disambiguates_others() -> None:
    assert slug("940547") == "940547" and slug("q-1.a_b") == "q-1.a_b"
    assert slug("a/b") != slug("a_b") and slug("a/b").startswith("a_b-") and slug("..x").startswith("x-")


def test_real_query_with_hundreds_of_passages(grid_full_site: Path) -> None:
    """DL20 query 940547's real grid: 310 passages x 10 questions on one page, each text held once."""
    page = grid_full_site / "site" / "flan" / "q" / "940547.html"
    text = page.read_text(encoding="utf-8")
    grid = _Grid()
    grid.feed(text)
    assert (grid.rows, grid.items) == (310, 10)
    assert len(text.encode()) < 1_000_000  # 310 passage texts and 3,100 answers, without duplication
    block = re.search(r'<script type="application/json" id="data">(.*?)</script>', text, re.S)
    data = json.loads(block.group(1))
    markup = text[: block.start()] + text[block.end():]
    windows = [m.group(0) for p in data["passages"] for m in [re.search(r"[A-Za-z ,]{60}", p["t"])] if m]
    assert len(windows) > 250 and not any(w in markup for w in windows)  # texts only in the data block
    grader_page = (grid_full_site / "site" / "flan" / "index.html").read_text(encoding="utf-8")
    assert "Did rock n roll start as a distinct genre or did it evolve from existing music styles?" in grader_page
    assert broken_links(grid_full_site / "site") == []
