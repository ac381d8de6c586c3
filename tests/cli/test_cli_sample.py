"""``autograde sample``: draw rounds of the experiment's own design under its results folder (the config's design is
an input, never written), answer them from a qrels file, estimate and print the leaderboards; a draw before the
workflow made the pool stops with the command to run first; an empty sample is an error, not certainty."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from support.human_sample import tiny_results

from autograde.cli import main


def test_draw_answer_estimate_under_the_results_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = tiny_results(tmp_path)
    cfg = str(t["config_path"])
    draw = Path(t["results"]) / "human_sample" / "draw"
    assert main(["sample", "draw", "--config", cfg, "--budget", "10", "--seed", "3"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["design_file"] == str(draw / "design.tsv") and record["worklist"] == str(draw / "worklist-1.tsv")
    work = pd.read_csv(record["worklist"], sep="\t", dtype=str)
    assert record["round"] == 1 and len(work) == record["drawn"] > 0 and "pi" not in work.columns
    assert not (t["root"] / "judging" / "design.tsv").exists()  # the config's design is an input: not written
    assert main(["sample", "answer", "--config", cfg, "--from", str(t["truth_qrels"])]) == 0
    assert json.loads(capsys.readouterr().out) == {"judgments": record["drawn"], "out": str(draw / "sample.qrels")}
    assert main(["sample", "draw", "--config", cfg, "--budget", "6", "--design", "stratified", "--seed", "3"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["round"] == 2 and second["pilot"] == record["drawn"]  # round 1's judgments are the pilot
    assert second["worklist"] == str(draw / "worklist-2.tsv")
    assert main(["sample", "answer", "--config", cfg, "--from", str(t["truth_qrels"])]) == 0
    capsys.readouterr()
    assert main(["sample", "estimate", "--config", cfg]) == 0
    out = capsys.readouterr().out
    judged = record["drawn"] + second["drawn"]
    assert out.startswith(f"estimates from {judged} judgments ({draw / 'sample.qrels'}; design {draw / 'design.tsv'})")
    # one leaderboard per prediction and measure: rank, group, system, estimate, interval, LLM-only, composite
    assert out.count("rank  group  system") == 6 and "95% interval" in out and "LLM-only" in out
    est = pd.read_csv(draw / "grader" / "estimates.tsv", sep="\t")
    assert len(est) == 4 * 6 and (est["low"] <= est["estimate"]).all() and (est["estimate"] <= est["high"]).all()
    top = est[est["measure"] == "ndcg_cut_5"].sort_values("rank").iloc[0]
    assert f"{top['system']}" in out and f"[{top['low']:.4f}, {top['high']:.4f}]" in out
    assert not (Path(t["results"]) / "human_sample" / "grader").exists()  # the workflow's estimates are not touched


def test_a_draw_before_the_pool_exists_names_the_command_to_run_first(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    t = tiny_results(tmp_path)
    shutil.rmtree(t["results"] / "pool")
    assert main(["sample", "draw", "--config", str(t["config_path"]), "--budget", "5"]) != 0
    err = capsys.readouterr().err
    assert "pool.parquet does not exist yet" in err and f"snakemake -c2 --config experiment={t['config_path']}" in err
    assert "Traceback" not in err


def test_an_empty_sample_is_an_error_not_certainty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No judgment at all (an empty file, or judgments only of a round not judged yet): no estimate from the
    predictions alone with zero-width intervals, an error that says what to do."""
    t = tiny_results(tmp_path)
    cfg = str(t["config_path"])
    assert main(["sample", "draw", "--config", cfg, "--budget", "8", "--seed", "1"]) == 0
    capsys.readouterr()
    empty = tmp_path / "empty.qrels"
    empty.write_text("")
    draw = Path(t["results"]) / "human_sample" / "draw"
    assert main(["sample", "estimate", "--config", cfg, "--qrels", str(empty), "--design-file",
                 str(draw / "design.tsv")]) != 0
    err = capsys.readouterr().err
    assert "the file holds no judgment" in err and "judge the worklist first" in err  # as validate says it


def test_estimate_without_a_draw_reads_the_configs_design(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a draw of its own, ``estimate`` reads ``human_sample.design`` and ``qrels`` (as the workflow does) and
    writes the workflow's tables."""
    from autograde.ppi.stages import run_answer, run_draw

    t = tiny_results(tmp_path)
    design = str(t["root"] / "judging" / "design.tsv")
    run_draw(t["config"], "simple_random", 10, 1, design, None)
    run_answer(t["config"], str(t["truth_qrels"]), str(t["root"] / "judging" / "sample.qrels"), design)
    assert main(["sample", "estimate", "--config", str(t["config_path"])]) == 0
    assert f"design {design})" in capsys.readouterr().out
    assert (Path(t["results"]) / "human_sample" / "grader" / "estimates.tsv").is_file()
    # what `autograde outputs` and the end of a run list: the files that exist
    from autograde.workflow.outputs import output_rows

    rows = {w: p for w, p in output_rows(t["config"]) if w.startswith("human-sample")}
    hs = Path(t["results"]) / "human_sample"
    assert rows == {"human-sample estimates (grader)": str(hs / "grader" / "estimates.tsv"),
                    "human-sample summary": str(hs / "summary.json")}
