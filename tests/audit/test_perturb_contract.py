"""Contract of every registered perturbation of the robustness audit: the registry holds exactly the names the
config accepts, and each perturbation turns a pair into copies that name it, differ from the passage, and are
deterministic."""

from __future__ import annotations

import pytest

from autograde.audit.perturb import PERTURB, perturb
from autograde.config.audit import PERTURBATIONS, AuditConfig

PAIR = ("q1", "how do vaccines train the immune system?", "Vaccines expose the body to an antigen. Cells remember it.")


def test_the_registry_has_every_configurable_perturbation() -> None:
    assert tuple(PERTURB) == PERTURBATIONS
    assert AuditConfig().robustness.perturbations == list(PERTURBATIONS)  # the default audits every one


@pytest.mark.parametrize("name", PERTURBATIONS)
def test_every_perturbation_makes_named_different_deterministic_copies(name: str) -> None:
    q, query, passage = PAIR
    copies = perturb(name, q, query, passage, repeats=2, donor="A passage about bridges.")
    assert copies and all(c.perturbation == name and c.variant.startswith(name) for c in copies)
    assert len({c.variant for c in copies}) == len(copies)
    assert all(c.text.strip() and c.text != passage for c in copies)
    assert copies == perturb(name, q, query, passage, repeats=2, donor="A passage about bridges.")
