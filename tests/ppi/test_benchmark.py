"""The human-sample simulation runs on any collection: a tiny judged fixture (tests/data/human_sample), synthetic runs
for its qrels made by tools/synth_runs.py, and a prediction from a grader's qrels; it writes its tables, headline,
tails and the gamed run's ranks, and every estimate and interval lies in its measure's range."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from support.helpers import REPO

DATA = REPO / "tests" / "data" / "human_sample"


def test_the_simulation_runs_on_a_tiny_collection_with_synthetic_runs(tmp_path: Path,
                                                                        bench: ModuleType) -> None:
    runs = tmp_path / "runs"
    out = subprocess.run([sys.executable, str(REPO / "tools" / "synth_runs.py"), str(DATA / "qrels.txt"), str(runs),
                          "--runs", "6", "--docs", "40"], capture_output=True, text=True, check=True)
    assert "6 runs x 6 queries" in out.stdout and len(list(runs.glob("*.run"))) == 6
    measurements = tmp_path / "measurements.json"
    measurements.write_text(json.dumps({"kept": 1}))
    bench.main(["--qrels", str(DATA / "qrels.txt"), "--runs", str(runs), "--prediction",
                   f"llm=qrels:{DATA / 'llm.qrels'}:1", "--reps", "8", "--chunk", "4", "--jobs", "1",
                   "--budgets", "0.2,0.5", "--gamed-budgets", "0.5", "--measures", "P_10,ndcg_cut_10",
                   "--extra-reps", "0", "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work"),
                   "--measurements", str(measurements)])
    data = json.loads((tmp_path / "out" / "human_sample_simulation.json").read_text())
    rows, meta = data["rows"], data["meta"]
    assert meta["collection"] == "qrels.txt" and meta["systems"] == 6 and meta["predictions"] == ["llm"]
    plain = [r for r in rows if not r.get("gamed")]
    assert {(r["measure"], r["design"], r["budget"]) for r in plain} == {
        (m, d, b) for m in ("P_10", "ndcg_cut_10") for d in ("simple_random", "stratified", "active")
        for b in (0.2, 0.5)}
    assert all(r["outside_range"] == 0.0 and r["max_abs_error"] <= 1.0 for r in rows)
    assert all(0.0 <= r["share_off_0.5"] <= r["share_off_0.1"] <= 1.0 for r in rows)
    gamed = [r for r in rows if r.get("gamed")]
    assert len(gamed) == 2 * 3 and all(r["gamed_human_rank"] > r["gamed_llm_rank"] for r in gamed)
    assert all(0.0 <= r["gamed_composite_within"] <= 1.0 for r in gamed)
    headline = (tmp_path / "out" / "human_sample_headline.md").read_text()
    assert "| ndcg_cut_10 | 20% |" in headline and "The gamed run" in headline
    kept = json.loads(measurements.read_text())
    assert kept["kept"] == 1 and kept["human_sample"]["tail_budget"] == 0.1
    assert kept["human_sample"]["gamed"]["ndcg_cut_10"]["0.5"]["human_rank"]
