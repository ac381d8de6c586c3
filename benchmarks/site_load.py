"""How fast a review site's pages load in a real browser (headless Chromium over the DevTools protocol): the index
and the largest per-query page, each opened ``--repeat`` times in a fresh tab from the local files, timed from the
navigation to the end of the load event (``performance.timing``), plus the page's size and its console errors.

    .venv/bin/python benchmarks/site_load.py results/rag-scale/site            # any built site
    .venv/bin/python benchmarks/site_load.py results/rag-scale/site --write    # also docs/measurements.json: site_load

The index must load in under 2 s (the goal of the RAG24-size experiment, docs/scale.md); per-query pages are separate
files, loaded only when opened.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.devtools import DevTools, open_devtools  # noqa: E402

GOAL_SECONDS = 2.0


def load_seconds(dt: DevTools, page: Path) -> tuple[float, list[str]]:
    """One load of ``page``: seconds from navigation start to the end of the load event, and the console errors."""
    errors = dt.open(page.as_uri())
    ms = dt.evaluate("performance.timing.loadEventEnd - performance.timing.navigationStart")
    return float(ms) / 1000.0, errors


def measure(site: Path, repeat: int) -> dict[str, object]:
    """The index and the largest per-query page, each loaded ``repeat`` times (median and worst)."""
    pages = {"index": site / "index.html"}
    queries = sorted(site.rglob("q/*.html"), key=lambda p: p.stat().st_size)
    if queries:
        pages["largest query page"] = queries[-1]
    out: dict[str, object] = {"site": str(site), "files": sum(1 for p in site.rglob("*") if p.is_file()),
                              "bytes": sum(p.stat().st_size for p in site.rglob("*") if p.is_file())}
    with open_devtools() as dt:
        for name, page in pages.items():
            times, errors = [], []
            for _ in range(repeat):
                t, e = load_seconds(dt, page)
                times.append(t)
                errors += e
            out[name] = {"page": str(page.relative_to(site)), "bytes": page.stat().st_size,
                         "median_seconds": round(statistics.median(times), 3), "max_seconds": round(max(times), 3),
                         "console_errors": sorted(set(errors))}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("site", help="a review site folder (results/<experiment>/site)")
    ap.add_argument("--repeat", type=int, default=5, help="loads per page")
    ap.add_argument("--write", action="store_true", help="record the numbers in docs/measurements.json (site_load)")
    args = ap.parse_args()
    site = Path(args.site)
    if not (site / "index.html").is_file():
        ap.error(f"{site}/index.html does not exist (build the site first: snakemake -c2 ...)")
    res = measure(site, args.repeat)
    print(f"site {site}: {res['files']} files, {int(res['bytes']) / 1e6:.1f} MB")  # type: ignore[call-overload]
    print("| page | size | median load | worst load | console errors |\n|---|---|---|---|---|")
    for name in ("index", "largest query page"):
        r = res.get(name)
        if isinstance(r, dict):
            print(f"| {name} ({r['page']}) | {r['bytes'] / 1e3:.0f} KB | {r['median_seconds']:.3f} s | "
                  f"{r['max_seconds']:.3f} s | {len(r['console_errors'])} |")
    index = res["index"]
    assert isinstance(index, dict)
    ok = index["max_seconds"] < GOAL_SECONDS and not index["console_errors"]
    print(f"goal: the index loads in < {GOAL_SECONDS:g} s without console errors: {'met' if ok else 'NOT met'}")
    if args.write:
        path = REPO / "docs" / "measurements.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["site_load"] = res | {"date": date.today().isoformat(), "goal_seconds": GOAL_SECONDS, "goal_met": ok}
        path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
