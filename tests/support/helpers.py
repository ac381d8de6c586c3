"""Test helpers shared by every test module: repository paths and the ONE skip for missing reference data.

Reference data (``../shared/data`` and ``../shared/seeds`` beside the checkout) is present on CI and absent
in a new user's fresh clone. Tests that need it call :func:`shared_data` / :func:`shared_seed`, which skip with
one reason string (counted in the summary line by ``conftest.py``); nothing reads it at import time.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
SHARED_DATA = SHARED / "data"
SHARED_SEEDS = SHARED / "seeds"
TEST_DATA = REPO / "tests" / "data"
MISSING_REFERENCE = "reference data missing"
"""Prefix of every skip reason for absent ``../shared`` (conftest counts skips by it)."""


def _skip_missing(path: Path) -> None:
    pytest.skip(f"{MISSING_REFERENCE}: {path} is not present (CI has ../shared beside the checkout)")


def shared_data(*parts: str) -> Path:
    """A path under ``../shared/data``; skips the calling test (saying why) where it is absent."""
    p = SHARED_DATA.joinpath(*parts)
    if not p.exists():
        _skip_missing(p)
    return p


def shared_seed(name: str) -> Path:
    """A seed document under ``../shared/seeds``; skips the calling test where it is absent."""
    p = SHARED_SEEDS / name
    if not p.exists():
        _skip_missing(p)
    return p


def has_shared_data(*parts: str) -> bool:
    """Whether ``../shared/data/<parts>`` exists (for ``pytest.mark.skipif`` / parametrization)."""
    return SHARED_DATA.joinpath(*parts).exists()


def workflow_command(workdir: Path, *args: str, config: Path | None = None, configfile: bool = True,
                     cores: int = 2) -> list[str]:
    """The command line of :func:`run_workflow` (for a test that starts it with Popen to kill it midway)."""
    cfg = ["--configfile", str(config if config is not None else workdir / "config.yaml")] if configfile else []
    return [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(workdir), *cfg,
            f"-c{cores}", *args]


def workflow_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of :func:`run_workflow`: this one, one torch thread per job, plus ``env``."""
    return {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}


def run_workflow(workdir: Path, *args: str, config: Path | None = None, configfile: bool = True,
                 env: dict[str, str] | None = None, cores: int = 2, timeout: int = 900,
                 check: bool = False) -> subprocess.CompletedProcess[str]:
    """THE way tests run the repository's workflow: Snakemake on ``workdir`` with ``config`` (default
    ``workdir/config.yaml``; ``configfile=False``: none, the experiment comes from ``--config experiment=`` or the
    environment) as the complete experiment, one torch thread per job, ``cores`` cores. ``check``: a failed run
    fails the test, showing the end of Snakemake's output."""
    run = subprocess.run(workflow_command(workdir, *args, config=config, configfile=configfile, cores=cores),
                         capture_output=True, text=True, env=workflow_env(env), timeout=timeout)
    if check:
        assert run.returncode == 0, output(run)[-4000:]
    return run


def output(run: subprocess.CompletedProcess[str]) -> str:
    """Everything a run printed (Snakemake writes its progress to stderr)."""
    return run.stdout + run.stderr


def job_stats(run: subprocess.CompletedProcess[str] | str) -> dict[str, int]:
    """THE parser of Snakemake's "Job stats" table (of a dry or real run): rule -> jobs (``total`` left out); {} when
    there is nothing to be done."""
    text = output(run) if not isinstance(run, str) else run
    if "Job stats:" not in text:
        return {}
    table = text.split("Job stats:")[-1].split("Reasons:")[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.M)
            if m.group(1) not in ("total", "job", "count")}


def copy_run(src: Path, dst: Path) -> Path:
    """A copy of a finished run's working directory that Snakemake treats as the same run (mtimes, its metadata
    and the grade cache kept); returns ``dst``."""
    shutil.copytree(src, dst, symlinks=True)
    return dst


@contextmanager
def built_once(name: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, bool]]:
    """A folder shared by every pytest-xdist worker of this session, under a file lock: yields (folder, whether it
    is already built). The caller builds it when it is not, then writes ``.built`` into it (pytest-xdist's
    documented recipe for session fixtures built once)."""
    from filelock import FileLock

    # under pytest-xdist each worker's base folder lies in the session's one: share that; without xdist the base
    # folder is the session's own (its parent is shared by every session of every checkout on this machine)
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / name
    with FileLock(str(root / f"{name}.lock")):
        done = (folder / ".built").exists()
        if not done and folder.exists():
            shutil.rmtree(folder)  # a build that failed half-way
        folder.mkdir(parents=True, exist_ok=True)
        yield folder, done
        (folder / ".built").write_text("ok\n")
