"""The site in a real headless Chromium: every page loads without console errors or exceptions, the grid of the
example's largest query renders and reacts (tooltip, row details, verify list, sorting, filter), screenshots."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from support.devtools import FLAGS, DevTools, open_devtools

from autograde.reports.site import slug


@pytest.fixture
def devtools(chromium: str, tmp_path: Path) -> Any:
    pytest.importorskip("websocket", reason="websocket-client is not installed (pip install websocket-client)")
    with open_devtools(chromium, tmp_path) as dt:
        yield dt


@pytest.mark.workflow
@pytest.mark.slow
def test_every_page_loads_without_console_errors(example_run: Path, devtools: DevTools) -> None:
    site = example_run / "results" / "site"
    pages = sorted(site.rglob("*.html"))
    assert len(pages) == 1 + 1 + 8  # index, grader page, 8 query pages
    problems = {p.relative_to(site).as_posix(): devtools.open(p.as_uri()) for p in pages}
    assert {k: v for k, v in problems.items() if v} == {}
    # the plots (lazy images on the grader page) load and decode as SVG images
    devtools.open((site / "minilm-questions" / "index.html").as_uri())
    loaded = devtools.evaluate("""Promise.all(Array.from(document.querySelectorAll('.plots img')).map(i => {
        i.loading = 'eager'; return i.decode().then(() => i.naturalWidth); }))""")
    assert len(loaded) == 6 and all(w > 0 for w in loaded)


@pytest.mark.workflow
@pytest.mark.slow
def test_largest_query_grid_renders_and_reacts(example_run: Path, devtools: DevTools, chromium: str,
                                               tmp_path: Path) -> None:
    results = example_run / "results"
    pool = pd.read_parquet(results / "pool" / "pool.parquet")
    sizes = pool.groupby("query_id").size().sort_index()
    q, n = str(sizes.idxmax()), int(sizes.max())
    items = pd.read_parquet(results / "reports" / "minilm-questions" / "items.parquet")
    n_items = int((items["query_id"] == q).sum())
    labels = pd.read_parquet(results / "reports" / "minilm-questions" / "passages.parquet")
    judged_rel = int(((labels["query_id"] == q) & (labels["judgment"] >= 2)).sum())
    page = results / "site" / "minilm-questions" / "q" / f"{slug(q)}.html"
    assert devtools.open(page.as_uri()) == []
    ev = devtools.evaluate
    assert ev("document.querySelectorAll('#grid tbody tr').length") == n
    assert ev("document.querySelectorAll('#grid thead th.it').length") == n_items
    assert ev("document.querySelectorAll('#grid tbody tr:first-child td.c').length") == n_items
    assert ev("getComputedStyle(document.querySelector('#grid')).display") == "table"
    assert ev("document.querySelector('#grid').getBoundingClientRect().height") > 20 * n
    # hover a grade cell: the tooltip shows the item and the passage
    tip = ev("""(() => { const td = document.querySelector('#grid tbody tr td.c');
        td.dispatchEvent(new MouseEvent('mouseover', {bubbles: true, clientX: 50, clientY: 50}));
        const t = document.getElementById('tip'); return [t.hidden, t.textContent]; })()""")
    assert tip[0] is False and "grade:" in tip[1] and "passage" in tip[1]
    # click a row: its details (full passage text) open below it; click again: closed
    ev("document.querySelector('#grid tbody tr td.pid').click()")
    assert ev("document.querySelectorAll('#grid tr.detail').length") == 1
    assert len(ev("document.querySelector('#grid tr.detail').textContent")) > 100
    ev("document.querySelector('#grid tbody tr td.pid').click()")
    assert ev("document.querySelectorAll('#grid tr.detail').length") == 0
    # open the first verify-grading list: built from the page data, one row per passage
    ev("document.querySelector('details.verify').open = true")
    ev("new Promise(r => setTimeout(r, 100))")
    assert ev("document.querySelectorAll('details.verify .vbody tbody tr').length") == n
    # sort by the judgment column (descending first), then filter to the judged-relevant passages
    ev("document.querySelectorAll('#grid thead th')[2].click()")
    js = ev("Array.from(document.querySelectorAll('#grid tbody tr')).map(r => r.getAttribute('data-j'))")
    as_num = [int(j) if j else -99 for j in js]
    assert as_num == sorted(as_num, reverse=True)
    ev("const f = document.getElementById('filter'); f.value = 'rel'; f.dispatchEvent(new Event('change'))")
    assert ev("document.getElementById('shown').textContent") == f"{judged_rel} of {n} rows"
    assert ev("Array.from(document.querySelectorAll('#grid tbody tr')).filter(r => !r.hidden).length") == judged_rel
    assert devtools.open(page.as_uri()) == []  # still no errors after a reload

    # screenshots with Chromium's own --screenshot (the largest query's grid, and the index)
    for name, target, size in (("grid.png", page, "1400,1100"), ("index.png", results / "site" / "index.html", "1400,1400")):
        out = tmp_path / name
        shot = subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp_path / 'shot-profile'}", f"--window-size={size}",
                               f"--screenshot={out}", "--hide-scrollbars", target.as_uri()],
                              capture_output=True, text=True, timeout=120)
        assert shot.returncode == 0 and out.exists(), shot.stderr[-1000:]
        data = out.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_real_query_with_hundreds_of_passages_in_the_browser(grid_full_site: Path, devtools: DevTools) -> None:
    """DL20 query 940547 (310 passages x 10 questions): the page loads cleanly and the grid stays interactive."""
    site = grid_full_site / "site"
    for p in sorted(site.rglob("*.html")):
        assert devtools.open(p.as_uri()) == [], p
    assert devtools.open((site / "flan" / "q" / "940547.html").as_uri()) == []
    ev = devtools.evaluate
    assert ev("document.querySelectorAll('#grid tbody tr').length") == 310
    assert ev("document.querySelectorAll('#grid tbody td.c.g5').length") == 126  # FLAN ratings of 5 (data README)
    ev("document.querySelector('details.verify').open = true")
    ev("new Promise(r => setTimeout(r, 200))")
    assert ev("document.querySelectorAll('details.verify .vbody tbody tr').length") == 310
    ev("const f = document.getElementById('filter'); f.value = 'dis'; f.dispatchEvent(new Event('change'))")
    shown = ev("document.getElementById('shown').textContent")
    assert shown.endswith(" of 310 rows") and int(shown.split()[0]) > 0


def _press(dt: DevTools, key: str) -> None:
    """One real key press (keyDown with its text, then keyUp), as a person's keyboard sends it."""
    codes = {"ArrowLeft": 37, "ArrowRight": 39, "Backspace": 8}
    code = codes.get(key, ord(key.upper()) if len(key) == 1 else 0)
    text = {"text": key} if len(key) == 1 else {}
    dt.call("Input.dispatchKeyEvent", type="keyDown", key=key, windowsVirtualKeyCode=code, **text)
    dt.call("Input.dispatchKeyEvent", type="keyUp", key=key, windowsVirtualKeyCode=code)


def _export(dt: DevTools, folder: Path) -> Path:
    """Click the page's export button; the downloaded file (Chromium saves it under ``folder``)."""
    out = folder / "sample.qrels"
    out.unlink(missing_ok=True)
    dt.evaluate("document.getElementById('export').click()")
    for _ in range(100):
        if out.is_file() and out.stat().st_size > 0:
            return out
        time.sleep(0.1)
    raise AssertionError(f"no file downloaded into {folder}: {sorted(p.name for p in folder.iterdir())}")


def test_judging_page_by_keyboard_survives_a_reload_and_exports_qrels_that_round_trip(devtools: DevTools,
                                                                                      tmp_path: Path) -> None:
    """Judge 5 passages by keys, reload, judge 2 more, export: the file holds exactly those 7 grades and reads as
    the sample; judging the rest and exporting again gives the qrels the estimates read."""
    from support.human_sample import tiny_results

    from autograde.core.layout import Layout
    from autograde.ppi.sample import read_judgments
    from autograde.ppi.stages import run_draw, run_estimates, run_judging_data
    from autograde.ppi.workflow import estimate_outputs
    from autograde.reports.human_sample_pages import build_human_sample_pages

    t = tiny_results(tmp_path)
    cfg, res, design = t["config"], t["results"], t["root"] / "judging" / "design.tsv"
    record = run_draw(cfg, "simple_random", 12, 5, str(design), None)
    n = record["drawn"]
    assert n >= 9, n
    lay = Layout.of(res)
    run_judging_data(cfg, str(design), lay.pool, lay.ingest("queries"), lay.human_sample("judging.json"))
    site = tmp_path / "site"

    def write(path: Path, text: str, stats: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    links = build_human_sample_pages(res, site, {"title": "tiny"}, write, {})
    page = site / links["judging"]
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    devtools.call("Page.setDownloadBehavior", behavior="allow", downloadPath=str(downloads))
    assert devtools.open(page.as_uri()) == []
    ev = devtools.evaluate
    items = ev("JSON.parse(document.getElementById('judging-data').textContent).items")
    assert len(items) == n and ev("document.getElementById('progress').textContent") == f"0 of {n} judged"
    pressed: dict[tuple[str, str], int] = {}

    def grade(key: str) -> None:
        pos = ev("window.autogradeJudging.state().pos")
        pressed[(items[pos]["q"], items[pos]["d"])] = int(key)
        _press(devtools, key)

    for key in "2031":
        grade(key)
    _press(devtools, "ArrowLeft")  # back to the 4th passage: regrade it
    grade("3")
    assert len(pressed) == 4
    grade("1")
    assert ev("document.getElementById('progress').textContent") == f"5 of {n} judged"
    assert devtools.open(page.as_uri()) == []  # reload: the grades and the position stay
    assert ev("document.getElementById('progress').textContent") == f"5 of {n} judged"
    assert ev("window.autogradeJudging.state().pos") == 5
    _press(devtools, "s")  # skip the 6th, judge the 7th and 8th
    grade("0")
    grade("2")
    assert ev("document.getElementById('progress').textContent") == f"7 of {n} judged"
    exported = _export(devtools, downloads)
    grades, _ = read_judgments(exported, t["keys"], [0, 1, 2, 3])
    got = {t["keys"][i]: int(grades[i]) for i in np.flatnonzero(~np.isnan(grades))}
    assert got == pressed and len(got) == 7
    # judge the rest (back to the skipped one first), export again: the estimates read the file
    _press(devtools, "ArrowLeft")
    _press(devtools, "ArrowLeft")
    _press(devtools, "ArrowLeft")
    while ev("window.autogradeJudging.state().pos") < n:
        grade("1")
    assert ev("document.getElementById('done').hidden") is False
    exported = _export(devtools, downloads)
    summary = run_estimates(cfg, lay.pool, lay.ingest("rankings"), estimate_outputs(cfg), qrels=str(exported),
                            design=str(design))
    assert summary["sample"]["judged"] == n and summary["sample"]["rounds"] == 1
