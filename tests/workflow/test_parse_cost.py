"""Parsing the workflow loads no model or statistics library.

Snakemake parses the Snakefile on every call: a dry run, a no-op rerun, and (on SLURM) once more inside every
job. When rules/rubric.smk imported the training code, torch came with it and every call paid 2.5 s of CPU
(a dry run of the example: 5.4 s, now 2.0 s), and every rule script paid the same again through
``runtime.set_threads`` (the example: 223 s, now 143 s).
"""

from __future__ import annotations

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
