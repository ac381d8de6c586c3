"""The reference data (``make data``, ``autograde data``): a command group only. Its record of hooks.

>>> FEATURE.cli
'autograde.cli.data'
"""

from __future__ import annotations

from autograde.core.feature import Feature

FEATURE = Feature("refdata", cli="autograde.cli.data")
"""Every public file the DL20 experiment, the calibration examples and the tests read (docs/data.md)."""
