"""The progress view of a workflow run (``make example``): one line per finished job, the full log in a file, and
on failure the failing job's block and the end of its log file. Run on a real, tiny Snakemake workflow."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autograde.workflow.progress import run

pytestmark = pytest.mark.workflow  # real (tiny) Snakemake runs

SNAKEFILE = '''
rule all:
    input:
        expand("out/{name}.txt", name=["a", "b", "c"]),


rule make:
    output:
        "out/{name}.txt",
    log:
        "logs/{name}.log",
    shell:
        "echo {wildcards.name} > {output}; echo made {wildcards.name} > {log}"
'''


def _snakemake(wd: Path) -> list[str]:
    return [sys.executable, "-m", "snakemake", "-c1", "--directory", str(wd), "--snakefile", str(wd / "Snakefile")]


def test_one_line_per_job_and_the_full_log_in_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    rc = run(_snakemake(tmp_path), tmp_path / "full.log")
    out = capsys.readouterr().out.splitlines()
    jobs = [line for line in out if line.startswith("[")]
    assert rc == 0 and len(jobs) == 3 and all("make  name=" in line for line in jobs), out
    assert [line.split("/")[0].strip("[ ") for line in jobs] == ["1", "2", "3"]
    assert out[-1].startswith("done in") and len(out) == 5  # the command, 3 jobs, the end
    assert "Finished jobid" in (tmp_path / "full.log").read_text()
    again = run(_snakemake(tmp_path), tmp_path / "full.log")
    assert again == 0 and "nothing to be done" in capsys.readouterr().out


def test_a_failing_job_shows_its_block_and_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Snakefile").write_text(SNAKEFILE.replace("echo made {wildcards.name} > {log}",
                                                          "echo broken input {wildcards.name} > {log}; exit 3"))
    rc = run(_snakemake(tmp_path), tmp_path / "full.log")
    err = capsys.readouterr().err
    assert rc != 0 and "Error in rule make:" in err and "broken input" in err and "full.log" in err
