"""Experiment configs are complete and independent: the workflow reads exactly one, and inherits nothing.

- The default experiment (no arguments) is the bundled example.
- ``--config experiment=PATH`` and ``--configfile PATH`` both run another experiment with nothing from the example
  (the example's significance baseline ``medium`` is not a system of the tiny dataset: inheriting it would fail
  the DAG build).
- The DL20-size synthetic experiment (59 runs x 54 queries) validates and plans from its own file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.helpers import REPO, SHARED, job_stats, run_workflow, shared_data

from autograde.config.experiment import resolve_workflow_config
from autograde.core.errors import ConfigError


def run_experiment(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The workflow with the experiment chosen on the command line (no --configfile), on one core."""
    return run_workflow(workdir, *args, configfile=False, cores=1, timeout=600)


def test_resolution_rules() -> None:
    example, source = resolve_workflow_config({})
    assert source.path == "config/experiments/example.yaml"
    assert example["metrics"]["significance"]["baseline"] == "medium"
    full = {"data": {"queries": "q.tsv"}, "experiment": "ignored.yaml"}
    raw, source = resolve_workflow_config(full)
    assert raw == {"data": {"queries": "q.tsv"}} and source.path == "the config given to snakemake"
    over, source = resolve_workflow_config({"grading": {"shards": 9}})
    assert over["grading"]["shards"] == 9 and over["data"] == example["data"]  # an override merges over the file
    assert source.from_command_line(("grading", "shards")) and not source.from_command_line(("data", "queries"))


@pytest.mark.workflow
def test_incomplete_configfile_is_refused(tmp_path: Path) -> None:
    """A --configfile is used as it is: one that is not a whole experiment is refused, naming what it lacks."""
    part = tmp_path / "part.yaml"
    part.write_text("grading: {shards: 2}\n")
    with pytest.raises(ConfigError, match=r"part\.yaml: not a complete experiment: it lacks data:, banks:, graders: "
                       r"\(it has: grading:\)"):
        resolve_workflow_config({"grading": {"shards": 2}}, [part], {})
    res = run_experiment(tmp_path, "-n", "--configfile", str(part))
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "not a complete experiment" in out and "Traceback" not in out


@pytest.mark.workflow
def test_command_line_overrides_are_attributed_to_the_command_line(mini: Path) -> None:
    """A bad --config value is reported as the command line's, not at a line of the experiment file."""
    res = run_experiment(mini.parent, "-n", "--config", f"experiment={mini}", "grading={shard: 8}")
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "Traceback" not in out
    assert "command line (snakemake --config): 1 problem(s)" in out
    assert "grading.shard: unknown key; did you mean 'shards'?" in out
    assert f"{mini}:" not in out.split("command line (snakemake --config)")[0].split("cannot start")[-1]
    # a problem in a --configfile names that file and its line
    mini.write_text(mini.read_text().replace("  shards: 2", "  shards: 0"))
    res = run_experiment(mini.parent, "-n", "--configfile", str(mini))
    line = next(i for i, t in enumerate(mini.read_text().splitlines(), 1) if "shards: 0" in t)
    assert f"{mini}:{line}: grading.shards:" in res.stdout + res.stderr


@pytest.mark.workflow
def test_another_experiment_inherits_nothing(mini: Path) -> None:
    wd = mini.parent
    for args in (("--config", f"experiment={mini}"), ("--configfile", str(mini))):
        dry = run_experiment(wd, "-n", *args)
        assert dry.returncode == 0, dry.stdout[-2000:] + dry.stderr[-2000:]
        planned = job_stats(dry)
        assert planned["grade"] == 2 and "minilm" not in dry.stdout  # the mini experiment's grader and shards only


@pytest.mark.workflow
def test_dl20_size_experiment_validates_and_plans(tmp_path: Path) -> None:
    dl20 = shared_data("dl20")
    tool = SHARED / "tools" / "synth_dl20_runs.py"
    synth = tmp_path / "work" / "dl20-synth"
    subprocess.run([sys.executable, str(tool), str(synth), "--depth-text", "10"], check=True, capture_output=True,
                   timeout=300)
    raw = yaml.safe_load((REPO / "config/experiments/dl20-synthetic.yaml").read_text())
    for key in ("queries", "qrels", "official_leaderboard"):
        raw["data"][key] = str(dl20 / Path(raw["data"][key]).name)
    raw["banks"] = {k: str(dl20 / Path(v).name) for k, v in raw["banks"].items()}
    cfg = tmp_path / "dl20.yaml"  # the repository's DL20 config with absolute data paths, nothing else changed
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    val = subprocess.run([sys.executable, "-m", "autograde.cli", "validate", "--config", str(cfg)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert val.returncode == 0, val.stderr[-3000:]
    assert '"queries": 54' in val.stdout and '"systems": 59' in val.stdout and '"bank_questions": 540' in val.stdout
    dry = run_experiment(tmp_path, "-n", "--config", f"experiment={cfg}")
    assert dry.returncode == 0, dry.stdout[-2000:] + dry.stderr[-2000:]
    assert job_stats(dry)["grade"] == 8  # the DL20 experiment's own shard count, not the example's 4
