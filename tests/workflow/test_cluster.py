"""The cluster jobs of a run under a SLURM profile's grouping (``autograde plan``'s last line): Snakemake's own DAG
and grouping, checked against Snakemake's dry run through the profile; the profile's keys read strictly.

The count against a real cluster (the jobs a run really submits) is checked by tests/workflow/test_slurm.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.helpers import REPO, run_workflow

from autograde.cli import main
from autograde.core.errors import ConfigError
from autograde.workflow.cluster import cluster_jobs, parse_group_components, profile_grouping

PROFILE = REPO / "profiles" / "slurm"


def test_the_profile_gives_the_grouping_and_a_bad_entry_names_the_file(tmp_path: Path) -> None:
    assert profile_grouping(PROFILE) == ({"analysis": 10}, {})
    prof = tmp_path / "prof"
    prof.mkdir()
    (prof / "config.yaml").write_text("executor: slurm\ngroup-components: [analysis=3, other=1]\n"
                                      "groups: {merge_grades: merged}\n")
    assert profile_grouping(prof) == ({"analysis": 3, "other": 1}, {"merge_grades": "merged"})
    assert parse_group_components(["analysis=2"]) == {"analysis": 2}
    for bad in ("group-components: [analysis]", "group-components: {analysis: 0}", "group-components: 3"):
        (prof / "config.yaml").write_text(bad + "\n")
        with pytest.raises(ConfigError, match=re.escape(str(prof / "config.yaml")) + ": group-components"):
            profile_grouping(prof)


@pytest.mark.workflow
def test_the_cluster_jobs_are_snakemakes_group_jobs(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The analysis group has two unconnected parts (the retrieval metrics need no grades): one group job with the
    profile's group-components (10), two with 1, as Snakemake's dry run through the profile shows; ingest, pool
    and the grading shards are a job each, the local rule all none."""
    for parts, expected in ((None, 1), (1, 2)):
        c = cluster_jobs(mini, ".", group_components={"analysis": parts} if parts else None)
        n_analysis, n_parts, group_jobs = c.groups["analysis"]
        assert (n_parts, group_jobs) == (2, expected) and c.own == {"ingest": 1, "pool": 1, "grade": 2}, c
        assert c.local == {"all": 1} and c.snakemake_jobs == 4 + n_analysis + 1
        assert c.cluster_jobs == 4 + expected
        assert Path.cwd() == mini.parent  # the working directory is restored
        dry = run_workflow(mini.parent, "-n", "--workflow-profile", str(PROFILE),
                           *(["--group-components", f"analysis={parts}"] if parts else []),
                           config=mini, timeout=300, check=True)
        assert dry.stdout.count("Group job analysis") == expected, dry.stdout[-3000:]

    assert main(["plan", "--config", str(mini), "--group-components", "analysis=1"]) == 0
    out = capsys.readouterr().out
    assert (f"- cluster jobs under profiles/slurm: 6 for the {c.snakemake_jobs} Snakemake jobs to run (grade 2; ingest "
            f"1; pool 1; group analysis: {n_analysis} jobs in 2 unconnected parts, 2 group jobs (up to 1 part per "
            "job); on the submitting node: all 1)") in out, out
    assert main(["plan", "--config", str(mini), "--cluster-profile", "none"]) == 0
    assert "cluster jobs" not in capsys.readouterr().out
