"""Shared fixtures: a tiny inline dataset (every judgment commented), torch thread limits, the skip summary.

Paths and the skip helper for ``../shared`` reference data live in ``helpers.py``.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.helpers import MISSING_REFERENCE, SHARED_DATA
from support.mini import write_mini_dataset

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

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


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say how many tests were skipped because ``../shared`` reference data is absent (a fresh clone)."""
    skipped = terminalreporter.stats.get("skipped", [])
    missing = sum(1 for rep in skipped if MISSING_REFERENCE in str(rep.longrepr))
    if missing:
        terminalreporter.write_sep("-", f"{missing} test(s) skipped: reference data missing "
                                   f"({SHARED_DATA.parent} is not beside the checkout; CI has it)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files holding a test marked ``slow`` run first (stable order otherwise): with ``make test``'s workers each
    taking whole files, the long ones start early and the short ones fill in at the end."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
