"""The audit: section: defaults, unknown perturbations and repeated values as errors, graders checked against the
experiment, and the targets the workflow builds from it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from autograde.config.audit import AuditConfig, RobustnessConfig, audit_targets
from autograde.config.model import Config

BASE = {"data": {"queries": "q.tsv", "runs": ["a.run"], "qrels": "qrels.txt"}, "graders": [{"name": "sim", "bank": "direct"}]}


def test_defaults_and_bad_values() -> None:
    cfg = AuditConfig()
    assert cfg.meta_evaluation and cfg.top_k == [5, 10] and cfg.robustness.graders == []
    with pytest.raises(ValidationError, match="stuffing"):
        RobustnessConfig.model_validate({"perturbations": ["shouting"]})
    with pytest.raises(ValidationError, match="must not repeat"):
        RobustnessConfig.model_validate({"perturbations": ["query", "query"]})
    with pytest.raises(ValidationError, match="distinct"):
        AuditConfig.model_validate({"top_k": [5, 5]})


def test_graders_are_checked_and_targets_follow_the_section() -> None:
    off = Config.model_validate(BASE)
    assert off.audit is None and audit_targets(off) == []
    on = Config.model_validate({**BASE, "audit": {"robustness": {"graders": ["sim", "ghost"]}}})
    assert [p for p, _ in on.cross_problems()] == [("audit", "robustness", "graders", 1)]
    targets = audit_targets(on)
    assert "results/audit/meta/labels.tsv" in targets and "results/audit/robustness/sim/summary.tsv" in targets
    no_qrels = Config.model_validate({**BASE, "data": {"queries": "q.tsv"}, "audit": {}})
    assert audit_targets(no_qrels) == []
