"""``snakemake reproduce`` (what ``make reproduce`` runs): builds the tables and the index, reruns nothing the
second time, reruns exactly one table when its settings change, and leaves the experiment's targets alone."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.helpers import REPO, run_workflow, shared_data

PAPERS = REPO / "config" / "reproduce" / "papers"


@pytest.mark.workflow
@pytest.mark.slow
def test_reproduce_target_builds_the_index_and_is_a_no_op_the_second_time(mini: Path) -> None:
    grid = shared_data("dl20-rocknroll-grid", "grid-full.jsonl")
    folder = shared_data("trec_eval")
    wd = mini.parent
    plan = wd / "plan.yaml"
    tables = {"workbench_spurious": {"grid": str(grid)}, "workbench_agreement": None, "llm_rubric_synthetic": None,
              "llm_rubric_real": {"llm": "absent/real.tsv", "human": "absent/human.tsv"},
              "calibrated_qrels_dl20": None, "trec_eval_parity": {"folder": str(folder)},
              "evaluation_server_parity": None}
    papers = [str(PAPERS / p) for p in ("dietz-sigir2024.yaml", "trec-eval.yaml", "llm-rubric-acl2024.yaml")]
    plan.write_text(yaml.safe_dump({"papers": papers, "tables": tables}), encoding="utf-8")

    dry = run_workflow(wd, "-n", config=mini, env={"AUTOGRADE_REPRODUCE": str(plan)}, timeout=600)  # the experiment's default target has no reproduction job
    assert dry.returncode == 0 and "reproduce_table" not in dry.stdout
    run = run_workflow(wd, "reproduce", config=mini, env={"AUTOGRADE_REPRODUCE": str(plan)}, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    index = (wd / "results/reproduction/index.md").read_text(encoding="utf-8")
    assert "| [Section 6](#workbench-spurious) | ok | 4 | 0 |" in index
    assert "**input missing: " in index and "| [Table 4 (bottom)](#workbench-table4) | not reproducible" in index
    assert (wd / "results/reproduction/index.html").is_file()
    # the run ends by saying where its results are (as `autograde outputs` does), the reproduction included
    assert "the papers' tables next to the published values  results/reproduction/index.md" in run.stderr
    # a table that could not be built says why on every row, not only in its state line
    rows = [line for line in index.splitlines() if line.startswith("| ") and "| not built |" in line]
    assert rows and all(not line.rstrip().endswith("|  |") for line in rows), rows[:3]
    again = run_workflow(wd, "reproduce", "-n", config=mini, env={"AUTOGRADE_REPRODUCE": str(plan)}, timeout=600)
    assert "Nothing to be done" in again.stdout + again.stderr

    # a setting of one table changes: that table and the index rerun, nothing else
    tables["workbench_spurious"]["top"] = 2  # type: ignore[index]
    plan.write_text(yaml.safe_dump({"papers": papers, "tables": tables}), encoding="utf-8")
    changed = run_workflow(wd, "reproduce", "-n", config=mini, env={"AUTOGRADE_REPRODUCE": str(plan)}, timeout=600)
    out = changed.stdout
    assert "reproduce_table" in out and "table=workbench_spurious" in out and "table=trec_eval_parity" not in out
