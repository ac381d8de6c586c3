"""Shared fixtures: the tiny dataset, the finished workflow runs that many tests read (each built ONCE per session,
whichever pytest-xdist worker needs it first, behind a file lock), torch thread limits, the skip summary, the test
order.

Shared code lives in ``tests/support/`` (paths and the one skip for missing ``../shared`` data in
``support/helpers.py``). A test that changes a shared run copies it first (``support.helpers.copy_run``).
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.helpers import MISSING_REFERENCE, SHARED_DATA, built_once, run_workflow
from support.mini import write_mini_dataset

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

@pytest.fixture(autouse=True)
def _no_slurm_cluster_outside_the_cluster_tier(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test but those marked ``cluster`` sees a machine without SLURM: `make test` runs the SLURM test's local
    cluster (a machine-wide slurm.conf) beside the other tests, and sinfo would otherwise find its partitions (doctor's
    gpu check, for one). An empty slurm.conf makes every SLURM command fail at once (a missing one makes them retry
    for a minute)."""
    if request.node.get_closest_marker("cluster") is not None:
        return
    conf = tmp_path_factory.getbasetemp() / "no-slurm.conf"
    if not conf.exists():
        conf.write_text("")
    monkeypatch.setenv("SLURM_CONF", str(conf))


@pytest.fixture
def messages() -> Iterator[io.StringIO]:
    """Everything the autograde logger writes during the test (INFO and up)."""
    from autograde.core.log import logger

    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield buf
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.fixture
def mini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tiny dataset in a temporary working directory (cwd), returning the config path."""
    cfg = write_mini_dataset(tmp_path)
    monkeypatch.chdir(tmp_path)
    return cfg


@pytest.fixture(scope="session")
def mini_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished workflow run of the tiny dataset (reports off; its grade cache inside): copy it before a change."""
    with built_once("mini-run", tmp_path_factory) as (wd, done):
        if not done:
            write_mini_dataset(wd)
            run_workflow(wd, check=True)
    return wd


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished workflow run of the bundled example with the reports and the review site: copy it before a
    change."""
    from support.example import write_example_experiment

    with built_once("example-run", tmp_path_factory) as (wd, done):
        if not done:
            write_example_experiment(wd)
            run_workflow(wd, check=True)
    return wd


@pytest.fixture(scope="session")
def nuggets_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of the tiny dataset with nugget scores: two RAG runs, the hand-made nugget bank
    (tests/support/nugget_data.py) and an embedded whole-answer assessor (cached like every grade, no server)."""
    import json

    import yaml
    from support.nugget_data import MORE_ANSWERS, NUGGETS, write_nugget_bank

    with built_once("nugget-run", tmp_path_factory) as (wd, done):
        if not done:
            cfg = write_mini_dataset(wd)
            (wd / "data" / "answers2.jsonl").write_text("".join(json.dumps(a) + "\n" for a in MORE_ANSWERS))
            write_nugget_bank(wd / "data" / "nuggets.jsonl", NUGGETS)
            raw = yaml.safe_load(cfg.read_text())
            raw["data"]["answers"] = ["data/answers.jsonl", "data/answers2.jsonl"]
            raw["banks"]["nuggets"] = "data/nuggets.jsonl"
            raw["graders"] = []
            raw["nuggets"] = {"bank": "nuggets", "assessors": [
                {"name": "sim-assign", "backend": "embedded", "prompt_class": "NuggetSelfRatedPrompt",
                 "thresholds": [3, 4]}]}
            cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
            run_workflow(wd, check=True)
    return wd


@pytest.fixture(scope="session")
def vllm_runs(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Results of ONE process in the vLLM environment that grades every request the vLLM tests check
    (support.models.vllm_session_job: two engine starts), built once per session."""
    import json

    from support.models import run_vllm_job, vllm_session_job

    with built_once("vllm-runs", tmp_path_factory) as (folder, done):
        if not done:
            run_vllm_job(vllm_session_job(), folder)
    return json.loads((folder / "out.json").read_text())  # type: ignore[no-any-return]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say how many tests were skipped because ``../shared`` reference data is absent (a fresh clone)."""
    skipped = terminalreporter.stats.get("skipped", [])
    missing = sum(1 for rep in skipped if MISSING_REFERENCE in str(rep.longrepr))
    if missing:
        terminalreporter.write_sep("-", f"{missing} test(s) skipped: reference data missing "
                                   f"({SHARED_DATA.parent} is not beside the checkout; make data downloads it)")


def _file_seconds() -> dict[str, float]:
    """Seconds per test file in the last full run (docs/test_durations.json, kept by benchmarks/measure_readme.py)."""
    import json

    from support.helpers import REPO

    path = REPO / "docs" / "test_durations.json"
    if not path.is_file():
        return {}
    out: dict[str, float] = {}
    for test, seconds in json.loads(path.read_text(encoding="utf-8")).items():
        file = test.split("::", 1)[0]
        out[file] = out.get(file, 0.0) + float(seconds)
    return out


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first (by the last full run's durations; files holding a test marked ``slow`` when a file
    has no record), stable otherwise: with ``make test``'s workers each taking whole files, the long ones start early
    and the short ones fill in at the end."""
    from support.helpers import REPO

    seconds = _file_seconds()
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}

    def key(item: pytest.Item) -> float:
        rel = item.path.relative_to(REPO).as_posix() if item.path.is_relative_to(REPO) else str(item.path)
        return -seconds.get(rel, 60.0 if item.path in slow_files else 0.0)

    items.sort(key=key)
