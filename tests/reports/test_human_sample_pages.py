"""The review site's human-sample pages from a tiny results folder: one forest plot per prediction and measure with
every system's estimate, interval, LLM-only value and human-only interval, and the judging page's data."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
from support.human_sample import SYSTEMS, tiny_results

from autograde.core.layout import Layout
from autograde.ppi.stages import run_answer, run_draw, run_estimates, run_judging_data
from autograde.ppi.workflow import estimate_outputs
from autograde.reports.human_sample_pages import build_human_sample_pages


def _write(path: Path, text: str, stats: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    stats["pages"] = stats.get("pages", 0) + 1


def test_forest_plots_and_the_judging_page(tmp_path: Path) -> None:
    t = tiny_results(tmp_path)
    cfg, lay = t["config"], Layout.of(t["results"])
    design = str(t["root"] / "judging" / "design.tsv")
    run_draw(cfg, "simple_random", 10, 1, design, None)
    run_answer(cfg, str(t["truth_qrels"]), cfg.human_sample.qrels)
    run_draw(cfg, "active", 6, 2, design, None)  # a second round, not judged yet: the judging page lists it
    summary = run_estimates(cfg, lay.pool, lay.ingest("rankings"), estimate_outputs(cfg))
    run_judging_data(cfg, design, lay.pool, lay.ingest("queries"), lay.human_sample("judging.json"))
    stats: dict[str, Any] = {}
    links = build_human_sample_pages(t["results"], tmp_path / "site", {"title": "tiny"}, _write, stats)
    assert (links["estimates"], links["judging"], stats["pages"]) == ("human_sample/index.html",
                                                                      "judging/index.html", 2)
    html = (tmp_path / "site" / links["estimates"]).read_text(encoding="utf-8")
    measures = summary["measures"]
    assert summary["sample"]["pending"] == [2]
    assert html.count('<svg class="forest"') == len(measures) * len(summary["predictions"])
    assert html.count("<circle ") == len(measures) * len(SYSTEMS)  # one estimate per system and measure
    assert html.count("<path d=") == len(measures) * len(SYSTEMS)  # its LLM-only value
    est = pd.read_csv(lay.human_sample("grader/estimates.tsv"), sep="\t")
    top = est[est["measure"] == "P_5"].sort_values("rank").iloc[0]
    assert f"{top['system']}: {top['estimate']:.4f} [{top['low']:.4f}, {top['high']:.4f}]" in html
    # the default order is the composite with a fitted slope: the page says so and shows it per system
    assert summary["order"] == "composite-fitted" and "ordered by the composite" in html
    assert f"composite {top['composite']:.4f}" in html
    assert top["composite"] == est[est["measure"] == "P_5"]["composite"].max()
    # RR's order from a sample is unreliable, and MAP's estimate biased low (docs/human_sample.md): the summary and
    # their sections say so
    assert {"recip_rank", "map"} <= set(measures) and sorted(summary["cautions"]) == ["map", "recip_rank"]
    assert html.count('<p class="warn">Caution: RR') == len(summary["predictions"])
    assert html.count('<p class="warn">Caution: AP') == len(summary["predictions"])
    data = json.loads(Path(lay.human_sample("judging.json")).read_text(encoding="utf-8"))
    page = (tmp_path / "site" / links["judging"]).read_text(encoding="utf-8")
    assert links["to_judge"] == len(data["items"]) > 0 and all(it["round"] == 2 for it in data["items"])
    assert len(data["known"]) == summary["sample"]["judged"]
    assert re.search(r'<script type="application/json" id="judging-data">', page)
    # blind: nothing that predicts the answer is shown or carried (no inclusion probability, no grader's label)
    assert all(set(it) == {"q", "d", "round", "query", "text"} for it in data["items"])
    assert "probability" not in page and '"pi"' not in page
    assert set(data) == {"key", "levels", "items", "known", "rounds", "design"}
