"""The examples in the reports modules' docstrings run and give what they say."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["autograde.config.reports", "autograde.reports.verify", "autograde.reports.agreement",
                                    "autograde.reports.correlation", "autograde.reports.linkcheck", "autograde.pipeline.cover"])
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
