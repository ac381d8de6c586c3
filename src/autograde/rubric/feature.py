"""The LLM-RUBRIC feature (``rubric:``): the judge-personalized calibration network. Its record of hooks.

>>> from autograde.config.model import Config
>>> FEATURE.targets_of(Config.model_validate({"data": {"queries": "q.tsv"}}))
[]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.core.feature import Feature
from autograde.core.layout import Layout

if TYPE_CHECKING:
    from autograde.config.model import Config


def _targets(config: Config) -> list[str]:
    from autograde.rubric.workflow import rubric_targets

    return rubric_targets(config)


def _input_files(config: Config) -> list[str]:
    from autograde.rubric.workflow import rubric_inputs, rubric_section

    cfg = rubric_section(config)
    return [] if cfg is None else sorted(set(rubric_inputs(cfg, with_test=True).values()) | set(cfg.predict))


def _outputs(config: Config) -> list[tuple[str, str]]:
    from autograde.rubric.workflow import rubric_section

    if rubric_section(config) is None:
        return []
    return [("LLM-RUBRIC evaluation", Layout.of(config.results_dir).rubric("evaluation.md"))]


FEATURE = Feature("rubric", section="rubric", rules=("rubric.smk",), cli="autograde.cli.rubric", targets=_targets,
                  input_files=_input_files, outputs=_outputs)
"""LLM-RUBRIC's calibration network (docs/rubric.md)."""
