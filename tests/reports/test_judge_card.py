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


def test_cards_from_audit_files(tmp_path: Path) -> None:
    res = tmp_path / "results"
    lay = Layout.of(res)
    judged = {("q1", f"d{i}"): i % 4 for i in range(12)} | {("q2", f"d{i}"): (i + 1) % 4 for i in range(12)}
    labels = {k: min(5, v + 1) for k, v in judged.items()}
    tables = label_tables([("g1", "max-3", labels, 3)], judged, 2)
    (res / "audit" / "meta").mkdir(parents=True)
    write_meta(tables, {k: lay.audit(v) for k, v in META_FILES.items()}, [5], "t")
    summary = pd.DataFrame([("stuffing", 10, 0.5, 0.2, 0.8, 6, 3, 0.5, 0.2, 0.8, 0.4)], columns=SHIFT_COLUMNS)
    Path(lay.audit_grader("g2", "x")).parent.mkdir(parents=True)
    summary.to_csv(lay.audit_grader("g2", "summary.tsv"), sep="\t", index=False)
    pages: dict[str, str] = {}

    def write(path: Path, text: str, stats: dict[str, Any]) -> None:
        pages[str(path.relative_to(tmp_path / "site"))] = text

    common = {"title": "t", "methods": [], "official": {}, "relevant_level": 2, "method_names": {}}
    cards = build_judge_cards(res, tmp_path / "site", common, ["g1", "g2", "g3"], write, {})
    assert [c["name"] for c in cards] == ["g1", "g2"]  # g3 has no audit files: no card
    assert set(pages) == {"judges/g1.html", "judges/g2.html", "judges/index.html"}
    assert pages["judges/g1.html"].count("<svg") == 2  # confusion heat map, per-topic kappa
    assert pages["judges/g2.html"].count("<svg") == 2 and "Not audited" not in pages["judges/g2.html"]
