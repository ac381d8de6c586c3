"""Checks of the ``audit:`` section against the experiment's inputs, before any job (``autograde validate`` and the
workflow's DAG build): ``audit.robustness.system``, the system whose passages the robustness audit perturbs, is a
system of the experiment (a typo would otherwise surface only after every grader's grading, in the audit job).
The section's references to graders are checked with the config (:func:`autograde.config.audit.check_audit_config`).
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from autograde.core.errors import Problems

if TYPE_CHECKING:
    from autograde.config.experiment import ConfigSource
    from autograde.config.model import Config
    from autograde.pipeline.ingest import Inputs

__all__ = ["check_audit"]


def check_audit(config: Config, inputs: Inputs, src: ConfigSource, problems: Problems) -> None:
    """``audit.robustness.system`` names one of the runs (nothing to check without it or without runs)."""
    audit = config.audit
    system = audit.robustness.system if audit is not None else None
    if system is None or inputs.rankings.empty:
        return
    systems = sorted(set(inputs.rankings["run"].astype(str)))
    if system in systems:
        return
    close = difflib.get_close_matches(system, systems, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    problems.add(*src.locate(("audit", "robustness", "system")), f"audit.robustness.system {system!r} is not a "
                 f"system of the experiment (systems: {', '.join(systems[:10])}{' ...' if len(systems) > 10 else ''})",
                 f"{hint}name one of the runs' tags, or null for the system the grader ranks last")
