"""A reproduction plan with only the tables a test names (the others switched off), outputs under tmp_path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autograde.reproduce.config import ReproduceConfig, Tables

PAPERS = Path(__file__).resolve().parents[2] / "config" / "reproduce" / "papers"
"""The paper YAML files of the repository."""


def make_plan(tmp_path: Path, papers: list[str] | None = None, **tables: Any) -> ReproduceConfig:
    """``tables``: plan table name -> its settings mapping ({} for the defaults); every other table is null."""
    raw = {name: None for name in Tables.model_fields}
    raw.update(tables)
    return ReproduceConfig.model_validate({"results_dir": str(tmp_path / "results"),
                                           "papers": [str(PAPERS / p) for p in (papers or [])], "tables": raw})


@pytest.fixture
def plan_factory(tmp_path: Path) -> Callable[..., ReproduceConfig]:
    def factory(papers: list[str] | None = None, **tables: Any) -> ReproduceConfig:
        return make_plan(tmp_path, papers, **tables)

    return factory
