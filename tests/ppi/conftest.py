"""Fixtures of the human-sample tests: the tiny results folder of :mod:`support.human_sample`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.human_sample import tiny_results


@pytest.fixture
def tiny(tmp_path: Path) -> dict[str, Any]:
    """``{root, config, truth, keys, results, truth_qrels}``: see :func:`support.human_sample.tiny_results`."""
    return tiny_results(tmp_path)
