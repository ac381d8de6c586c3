"""A real Snakemake run of the bundled example builds the reports and the site, and `autograde report` / `site` by
hand give the same files. (A bank edit rebuilds them from the merged grades: tests/workflow/test_edit_reruns.py.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from support.helpers import run_workflow

from autograde.config.reports import GRADER_REPORT_FILES

GRADERS = ("minilm-questions",)


@pytest.mark.workflow
@pytest.mark.slow
def test_workflow_builds_reports_and_site(example_run: Path) -> None:
    r = example_run / "results"
    for g in GRADERS:
        for name in GRADER_REPORT_FILES.values():
            assert (r / "reports" / g / name).exists(), (g, name)
        summary = json.loads((r / "reports" / g / "summary.json").read_text())
        assert summary["variants"] == ["max-4", "count-4"] and summary["relevant_level"] == 2
        assert summary["agreement"]["max-4"]["judged"] == 201 and summary["agreement"]["max-4"]["covered"] == 201
    corr = pd.read_csv(r / "reports" / "correlation.tsv", sep="\t")
    # the grader: 2 qrels variants x 2 measures + cover/ncover at tau 4; plus the human qrels' 2 measures
    assert len(corr) == (2 * 2 + 2) + 2
    for m in ("spearman", "kendall", "tau_ap"):
        assert {m, f"{m}_low", f"{m}_high"} <= set(corr.columns)
        assert (corr[f"{m}_low"] <= corr[m] + 1e-9).all() or corr[f"{m}_low"].isna().any()
    assert all((r / "reports" / p).exists() for p in corr["plot"])
    assert (r / "site" / "index.html").exists()
    assert sorted(p.name for p in (r / "site" / "minilm-questions" / "q").glob("*.html")) == [
        f"q10{i}.html" for i in range(1, 9)]
    assert "Nothing to be done" in (lambda p: p.stdout + p.stderr)(run_workflow(example_run, "-n"))


def _rows(path: Path) -> list[tuple[str, str, str]]:
    df = pd.read_csv(path, sep="\t", dtype=str)
    return list(zip(df["grader"], df["qrels"], df["measure"], strict=True))


@pytest.mark.workflow
@pytest.mark.slow
def test_report_and_site_by_hand_equal_the_workflows(example_run: Path, tmp_path: Path) -> None:
    """One leaderboard list: the correlation report has results/correlation.tsv's rows, in its order; `autograde
    report` and `autograde site` run by hand ($AUTOGRADE_EXPERIMENT naming the experiment) write the same files."""
    import os
    import sys

    r = example_run / "results"
    assert _rows(r / "reports" / "correlation.tsv") == _rows(r / "correlation.tsv")
    wd = tmp_path / "wd"
    shutil.copytree(example_run, wd, symlinks=True)
    shutil.rmtree(wd / "results" / "site")
    (wd / "results" / "reports" / "correlation.tsv").unlink()
    env = {**os.environ, "AUTOGRADE_EXPERIMENT": str(wd / "config.yaml"), "OMP_NUM_THREADS": "1"}
    for cmd in (["report"], ["site"]):
        done = subprocess.run([sys.executable, "-m", "autograde.cli", *cmd], cwd=wd, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    by_hand = wd / "results"
    assert (by_hand / "reports" / "correlation.tsv").read_bytes() == (r / "reports" / "correlation.tsv").read_bytes()
    def files(site: Path) -> list[Path]:  # Snakemake marks a directory output with a timestamp file of its own
        return sorted(p.relative_to(site) for p in site.rglob("*") if p.is_file() and p.name != ".snakemake_timestamp")

    made = files(by_hand / "site")
    assert made == files(r / "site")
    differ = [p for p in made if (by_hand / "site" / p).read_bytes() != (r / "site" / p).read_bytes()]
    assert not differ, differ
