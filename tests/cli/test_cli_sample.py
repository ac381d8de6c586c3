"""``autograde sample``: draw a round (design file and worklist), answer it from a qrels file, estimate: the files the
workflow's rule writes; a missing section or design file is a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from support.human_sample import tiny_results

from autograde.cli import main


def test_draw_answer_estimate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = tiny_results(tmp_path)
    cfg = str(t["config_path"])
    assert main(["sample", "draw", "--config", cfg, "--budget", "10", "--seed", "3"]) == 0
    record = json.loads(capsys.readouterr().out)
    work = pd.read_csv(record["worklist"], sep="\t", dtype=str)
    assert record["round"] == 1 and len(work) == record["drawn"] > 0
    assert main(["sample", "answer", "--config", cfg, "--from", str(t["truth_qrels"])]) == 0
    assert json.loads(capsys.readouterr().out)["judgments"] == record["drawn"]
    assert main(["sample", "estimate", "--config", cfg]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sample"]["judged"] == record["drawn"] and out["sample"]["rounds"] == 1
    est = pd.read_csv(out["outputs"]["grader.estimates"], sep="\t")
    assert len(est) == 4 * 6 and (est["low"] <= est["high"]).all()


def test_a_draw_without_a_design_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = tiny_results(tmp_path)
    raw = t["config_path"].read_text().replace(f"  design: {t['root'] / 'judging' / 'design.tsv'}\n", "")
    cfg = tmp_path / "nodesign.yaml"
    cfg.write_text(raw)
    assert main(["sample", "draw", "--config", str(cfg), "--budget", "5"]) != 0
    assert "no design file" in capsys.readouterr().err
