"""The reproduction of the papers' tables (``make reproduce``; its plan is ``config/reproduce/reproduce.yaml``, not a
section of the experiment). Its record of hooks.

>>> FEATURE.rules, FEATURE.cli
(('reproduce.smk',), 'autograde.cli.reproduce')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.core.feature import Feature
from autograde.core.layout import Layout
from autograde.reproduce.site import reproduction_section

if TYPE_CHECKING:
    from autograde.config.model import Config


def _outputs(config: Config) -> list[tuple[str, str]]:
    return [("the papers' tables next to the published values", Layout.of(config.results_dir).reproduction("index.md"))]


FEATURE = Feature("reproduce", rules=("reproduce.smk",), cli="autograde.cli.reproduce", site=reproduction_section,
                  outputs=_outputs)
"""The papers' tables next to what this version computes (docs/reproduce.md)."""
