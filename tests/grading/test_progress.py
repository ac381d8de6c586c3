"""Progress in a grading job's log: a job longer than ``$AUTOGRADE_PROGRESS_INTERVAL`` writes progress lines
(done / total, rate, time left), a shorter one writes none beyond its start and end lines.

The job is the real one (``autograde grade`` with the embedded grader on the tiny dataset) in its own process, its
stderr a file as in a Snakemake or SLURM job log (not a terminal, so no bar is drawn).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.mini import write_mini_dataset

from autograde.config.experiment import load_config
from autograde.pipeline.stages import run_ingest, run_pool

PROGRESS = re.compile(r"grading sim: (\d+)/(\d+) prompts \((\d+\.\d)%\), [\d.]+ prompts/s, \S+ left")


def _pool(root: Path) -> Path:
    cfg = write_mini_dataset(root)
    data = yaml.safe_load(cfg.read_text())
    data["grading"]["batch_size"] = 2  # many batches: a progress line may follow each
    cfg.write_text(yaml.safe_dump(data))
    os.chdir(root)
    config = load_config(cfg)
    run_ingest(config, "results/ingest")
    run_pool(config, "results/ingest", "results/pool/pool.parquet", [])
    return cfg


def _grade_job(root: Path, interval: str, cache: str) -> str:
    """Run one grading job with its stderr in a log file; returns the log."""
    cfg = yaml.safe_load((root / "config.yaml").read_text())
    cfg["grading"]["cache_dir"] = cache  # a fresh cache: every pair is graded
    (root / f"config-{cache}.yaml").write_text(yaml.safe_dump(cfg))
    log = root / f"grade-{cache}.log"
    env = {**os.environ, "AUTOGRADE_PROGRESS_INTERVAL": interval, "AUTOGRADE_THREADS": "1"}
    with open(log, "w") as err:
        run = subprocess.run([sys.executable, "-m", "autograde.cli", "grade", "--config", f"config-{cache}.yaml",
                              "--grader", "sim", "--pool", "results/pool/pool.parquet", "--out", f"{cache}.parquet"],
                             cwd=root, stdout=subprocess.DEVNULL, stderr=err, env=env, timeout=300)
    text = log.read_text()
    assert run.returncode == 0, text[-3000:]
    return text


@pytest.mark.model
def test_a_long_grading_job_logs_progress_and_a_short_one_does_not(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _pool(tmp_path)

    long_log = _grade_job(tmp_path, "0.001", "cache-long")  # every batch takes longer than a millisecond
    lines = [m for m in PROGRESS.finditer(long_log)]
    assert len(lines) >= 3, long_log
    start = re.search(r"grader sim: (\d+) pairs, 0 from cache, (\d+) to grade", long_log)
    assert start, long_log
    total = int(start.group(2))
    assert {int(m.group(2)) for m in lines} == {total}
    done = [int(m.group(1)) for m in lines]
    assert done == sorted(done) and done[-1] <= total and len(set(done)) == len(done)
    assert re.search(rf"grading sim: {total}/{total} prompts in \S+ \([\d.]+ prompts/s\)", long_log), long_log

    short_log = _grade_job(tmp_path, "60", "cache-short")  # the job ends well within a minute
    assert not PROGRESS.search(short_log) and "prompts/s" not in short_log, short_log
    assert re.search(r"grader sim: \d+ pairs, 0 from cache, \d+ to grade", short_log)  # its start line
    assert re.search(r"grader sim shard -: \{", short_log)  # and its end line (the stats)
