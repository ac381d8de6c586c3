"""Judge cards: the SVG plots (heat map, distribution, bars) and the pages written from audit files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autograde.audit.robustness import SHIFT_COLUMNS
from autograde.audit.stages import label_tables, write_meta
from autograde.config.audit import META_FILES
from autograde.core.layout import Layout
from autograde.reports.judge_card import bars_svg, build_judge_cards, distribution_svg, heatmap_svg


def test_plots_are_deterministic_svg() -> None:
    heat = heatmap_svg(np.array([[5, 1], [2, 9]]), [0, 1], [0, 1], "confusion")
    assert heat == heatmap_svg(np.array([[5, 1], [2, 9]]), [0, 1], [0, 1], "confusion")
    assert heat.count("<rect") == 5 and ">9</text>" in heat
    dist = distribution_svg([0.1, 0.5, float("nan"), 0.9], "kappa per topic", labels=["a", "b", "c", "d"])
    assert dist.count("<circle") == 3 and "1 undefined" in dist
    assert "no topic has a value" in distribution_svg([], "empty")
    bars = bars_svg(["stuffing", "injection"], [0.5, -0.2], [0.3, float("nan")], [0.7, float("nan")], "shift")
    assert bars.count("<line") == 2  # the zero line and one whisker (no interval for the second bar)


def _cards(tmp_path: Path, sources: list[tuple[str, str, dict[tuple[str, str], int], int]],
           judged: dict[tuple[str, str], int], summaries: dict[str, pd.DataFrame], graders: list[str]
           ) -> tuple[list[dict[str, Any]], dict[str, str], Any]:
    """Audit files of these label sources and robustness summaries, and the judge cards built from them: (cards,
    the pages written by path under site/, the label tables)."""
    res = tmp_path / "results"
    lay = Layout.of(res)
    tables = label_tables(sources, judged, 2)
    (res / "audit" / "meta").mkdir(parents=True)
    write_meta(tables, {k: lay.audit(v) for k, v in META_FILES.items()}, [5], "t")
    for grader, summary in summaries.items():
        Path(lay.audit_grader(grader, "x")).parent.mkdir(parents=True)
        summary.to_csv(lay.audit_grader(grader, "summary.tsv"), sep="\t", index=False)
    pages: dict[str, str] = {}

    def write(path: Path, text: str, stats: dict[str, Any]) -> None:
        pages[str(path.relative_to(tmp_path / "site"))] = text

    common = {"title": "t", "methods": [], "official": {}, "relevant_level": 2, "method_names": {}}
    return build_judge_cards(res, tmp_path / "site", common, graders, write, {}), pages, tables


def test_cards_from_audit_files(tmp_path: Path) -> None:
    judged = {("q1", f"d{i}"): i % 4 for i in range(12)} | {("q2", f"d{i}"): (i + 1) % 4 for i in range(12)}
    labels = {k: min(5, v + 1) for k, v in judged.items()}
    summary = pd.DataFrame([("stuffing", 10, 0.5, 0.2, 0.8, 6, 3, 0.5, 0.2, 0.8, 0.4)], columns=SHIFT_COLUMNS)
    cards, pages, _ = _cards(tmp_path, [("g1", "max-3", labels, 3)], judged, {"g2": summary}, ["g1", "g2", "g3"])
    assert [c["name"] for c in cards] == ["g1", "g2"]  # g3 has no audit files: no card
    assert set(pages) == {"judges/g1.html", "judges/g2.html", "judges/index.html"}
    assert pages["judges/g1.html"].count("<svg") == 2  # confusion heat map, per-topic kappa
    assert pages["judges/g2.html"].count("<svg") == 2 and "Not audited" not in pages["judges/g2.html"]


def test_cards_show_every_variant_numbers_before_plots_and_each_confusion_once(tmp_path: Path) -> None:
    """Two max-mode variants share their labels (only the threshold differs): one confusion heat map for both; a
    count variant has its own. The overview lists all three variants, the best-agreeing marked (not only the
    first); the label table comes before the first plot; the bars' axis carries round ticks."""
    import re

    judged = {(f"q{q}", f"d{i}"): (i + q) % 4 for q in range(3) for i in range(16)}
    max_labels = {k: min(5, v + 2) if k[1] != "d0" else 0 for k, v in judged.items()}  # grade 3..5 <-> judgment
    count_labels = {k: int(v >= 2) * 2 for k, v in judged.items()}  # 0/2 items answered: agrees best at >= 1
    summary = pd.DataFrame([("stuffing", 10, -0.38, -0.5, -0.2, 6, 3, 0.5, 0.2, 1.1, 0.4),
                            ("query", 10, 1.1, 0.9, 1.3, 6, 1, 0.2, 0.0, 0.4, 0.4)], columns=SHIFT_COLUMNS)
    (card,), pages, tables = _cards(tmp_path, [("g1", "max-3", max_labels, 3), ("g1", "max-4", max_labels, 4),
                                               ("g1", "count-1", count_labels, 1)], judged, {"g1": summary}, ["g1"])
    kappas = dict(zip(tables.labels["variant"], tables.labels["kappa"], strict=True))
    assert card["best"] == max(kappas, key=lambda v: kappas[v]) == "count-1"
    page, index = pages["judges/g1.html"], pages["judges/index.html"]
    captions = [p["caption"] for p in card["label_plots"]]
    assert captions[:2] == ["confusion max-3, max-4 (same labels)", "confusion count-1"]
    assert page.count("label x judgment</title>") == 2  # two distinct matrices, drawn once each
    for v in ("max-3", "max-4", "count-1"):  # every variant in the overview, with its own kappa
        assert re.search(rf">{v}( <span class=\"muted\">\(best κ\)</span>)?</td><td class=\"num\">{kappas[v]:.3f}<",
                         index), v
    assert index.count("(best κ)") == 2  # the legend and the count-1 row
    assert page.index('id="labels"') < page.index("<svg") and page.index("κ binary") < page.index("<svg")
    assert page.index('id="robustness"') < page.index("mean grade shift per perturbation")
    bars = card["robustness_plots"][0]["svg"]
    ticks = re.findall(r'text-anchor="middle">(-?[\d.]+)</text>', bars)
    assert ticks == ["-0.5", "0", "0.5", "1", "1.5"], ticks
