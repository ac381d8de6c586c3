"""Parsing the workflow loads no model or statistics library, and a rule job loads none it does not use.

Snakemake parses the Snakefile on every call: a dry run, a no-op rerun, and (on SLURM) once more inside every
job. When rules/rubric.smk imported the training code, torch came with it and every call paid 2.5 s of CPU
(a dry run of the example: 5.4 s, now 2.0 s), and every rule script paid the same again through
``runtime.set_threads`` (the example: 223 s, now 143 s).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support.helpers import REPO

HEAVY = ("torch", "scipy", "sklearn", "transformers", "sentence_transformers", "vllm")

DRY_RUN = f"""
import sys
from snakemake.cli import main
try:
    main(["-s", {str(REPO / "Snakefile")!r}, "-d", {str(REPO)!r}, "-n", "--nolock", "--quiet", "all",
          "--config", "experiment=config/experiments/example.yaml"])
except SystemExit as exc:
    assert not exc.code, f"the dry run failed: {{exc.code}}"
print("LOADED:" + ",".join(m for m in {HEAVY!r} if m in sys.modules))
"""


@pytest.mark.workflow
def test_dry_run_of_the_example_loads_no_heavy_library() -> None:
    res = subprocess.run([sys.executable, "-c", DRY_RUN], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    loaded = next(line for line in res.stdout.splitlines() if line.startswith("LOADED:")).removeprefix("LOADED:")
    assert loaded == "", f"parsing the Snakefile imported {loaded}: import them inside the stage functions"


JOB_START = """
import json, sys
from autograde.config.model import GraderConfig
from autograde.grading.base import GradeRequest
from autograde.grading.embedded import EmbeddedGrader, Options
from autograde.pipeline.stages import run_leaderboards

run_dir, out = sys.argv[1], sys.argv[2]
run_leaderboards(f"{run_dir}/results/eval/sim/max-3.parquet", ["ndcg_cut_10"], [out])
grader = EmbeddedGrader(GraderConfig(name="sim", backend="embedded"), Options())
grades = grader.grade_batch([GradeRequest("q", "q", "p", "Tides follow the moon.", "i", "question", "What pulls tides?")])
from autograde.core.stats import correlation
from autograde.core.tables import read_table
table = read_table(f"{run_dir}/results/eval/sim/max-3.parquet")
correlation("kendall", [1, 2, 3], [1, 3, 2]), correlation("spearman", [1, 2, 3], [1, 3, 2])
print("LOADED:" + ",".join(m for m in ("scipy.stats", "sklearn", "transformers", "sentence_transformers",
                                       "pyarrow.dataset") if m in sys.modules))
"""


@pytest.mark.workflow
def test_rule_jobs_load_no_library_they_do_not_use(mini_run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A rule job is a fresh process, so every import is paid by every job: ranking a leaderboard needs no
    scipy.stats (about a second of CPU; ranks are core.stats.average_ranks, correlations core.stats.correlation), a
    parquet read needs no pyarrow.dataset (about 0.3 s; core.tables.read_table), and the embedded grader's encoder is
    plain torch (autograde.grading.minilm), not transformers' model classes (about 3 s of CPU per grading job)."""
    out = tmp_path / "ndcg_cut_10.tsv"
    res = subprocess.run([sys.executable, "-c", JOB_START, str(mini_run), str(out)], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert res.returncode == 0, res.stderr[-3000:]
    assert {line.split("\t")[1] for line in out.read_text().splitlines()[1:]} == {"good", "gen", "bad"}
    loaded = next(line for line in res.stdout.splitlines() if line.startswith("LOADED:")).removeprefix("LOADED:")
    assert loaded == "", f"a rule job imported {loaded}: import it only where it is needed, or do without it"
