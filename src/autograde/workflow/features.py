"""The ONE list of the workflow's features: every hub loops over it and none names a feature.

A feature is its package, its config section, its rules file and one line here (its record:
:class:`autograde.core.feature.Feature`). The order is the order of the leaderboards every consumer lists (the
graders', the calibrated labels', the human qrels', the nugget scores'), of the Snakefile's includes, of
``autograde --help`` and of the site's index page.

>>> [f.name for f in FEATURES][:3]
['grading', 'banks', 'reports']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.audit.feature import FEATURE as AUDIT
from autograde.banks.feature import FEATURE as BANKS
from autograde.calibrated.feature import FEATURE as CALIBRATED
from autograde.nuggets.feature import FEATURE as NUGGETS
from autograde.pipeline.feature import GRADING, HUMAN_QRELS
from autograde.ppi.feature import FEATURE as HUMAN_SAMPLE
from autograde.refdata.feature import FEATURE as REFDATA
from autograde.reports.feature import FEATURE as REPORTS
from autograde.reproduce.feature import FEATURE as REPRODUCE
from autograde.rubric.feature import FEATURE as RUBRIC

if TYPE_CHECKING:
    from autograde.core.feature import Feature, ModelStage

FEATURES: tuple[Feature, ...] = (GRADING, BANKS, REPORTS, RUBRIC, CALIBRATED, HUMAN_QRELS, REPRODUCE, NUGGETS, AUDIT,
                                 HUMAN_SAMPLE, REFDATA)
"""Every feature, registered once."""


def model_stages() -> list[ModelStage]:
    """Every stage whose jobs run a model (``autograde plan`` plans each; each names its rule)."""
    return [s for f in FEATURES for s in f.model_stages]


def rule_files() -> list[str]:
    """The rules files the Snakefile includes, in order."""
    return [r for f in FEATURES for r in f.rules]
