"""Fixtures of the human-sample tests: the tiny results folder of :mod:`support.human_sample`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.helpers import REPO
from support.human_sample import tiny_results


@pytest.fixture
def tiny(tmp_path: Path) -> dict[str, Any]:
    """``{root, config, truth, keys, results, truth_qrels}``: see :func:`support.human_sample.tiny_results`."""
    return tiny_results(tmp_path)


@pytest.fixture
def bench() -> ModuleType:
    """benchmarks/human_sample.py as a module (registered, so that its dataclasses find their module)."""
    spec = importlib.util.spec_from_file_location("human_sample_bench", REPO / "benchmarks" / "human_sample.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
