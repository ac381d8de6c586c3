"""Contract of every registered feature record (:data:`autograde.workflow.features.FEATURES`): the same checks on
each, so a new feature is checked the day it is registered.

- its hooks take the bundled example's config and a config with its section off, and return what the hub expects
  (targets under the results folder; leaderboards whose files and per-query tables are under it; outputs as
  (what, path) pairs);
- its section, rules file and command group exist (a config field, a file under rules/, a module with
  ``register``), and its model stages name distinct rules;
- with its section off it adds no target and no leaderboard.
"""

from __future__ import annotations

import importlib

import pytest
from support.helpers import REPO

from autograde.config.experiment import load_config
from autograde.config.model import Config
from autograde.core.layout import Layout, Leaderboard
from autograde.workflow.features import FEATURES

EXAMPLE = REPO / "config" / "experiments" / "example.yaml"


@pytest.fixture(scope="module")
def example() -> Config:
    return load_config(EXAMPLE)


@pytest.fixture(scope="module")
def bare() -> Config:
    return Config.model_validate({"data": {"queries": "q.tsv", "runs": ["a.run"]}, "graders": [{"name": "g"}],
                                  "cover": {"enabled": False}, "reports": {"enabled": False}})


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: f.name)
def test_every_feature_declares_what_exists(feature) -> None:
    if feature.section is not None:
        assert feature.section in Config.model_fields, feature.section
    for rules in feature.rules:
        assert (REPO / "rules" / rules).is_file(), rules
    if feature.cli is not None:
        assert callable(importlib.import_module(feature.cli).register)
    assert len({s.rule for s in feature.model_stages}) == len(feature.model_stages)


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: f.name)
def test_every_feature_hook_answers_under_the_results_folder(feature, example: Config) -> None:
    root = example.results_dir
    assert all(str(t).startswith(root) for t in feature.targets_of(example))
    for lb in feature.leaderboards_of(example, Layout.of(root)):
        assert isinstance(lb, Leaderboard) and lb.path.startswith(root) and lb.per_query.startswith(root)
        assert lb.missing_queries in ("zero", "skip") and Leaderboard.from_dict(lb.as_dict()) == lb
    for what, path in feature.outputs_of(example):
        assert what and str(path).startswith(root)
    assert all(str(p).startswith(root) or not str(p).startswith("results") for p in feature.site_inputs_of(example))


@pytest.mark.parametrize("feature", [f for f in FEATURES if f.section is not None], ids=lambda f: f.name)
def test_a_feature_whose_section_is_off_adds_nothing(feature, bare: Config) -> None:
    section = getattr(bare, feature.section)  # the bare config leaves every feature off
    assert not section or not getattr(section, "enabled", True), feature.section
    assert feature.targets_of(bare) == [] and feature.leaderboards_of(bare, Layout()) == []
