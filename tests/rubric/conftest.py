"""One torch thread for every rubric test (other jobs share the cores; the networks here are tiny), and the tiny
rubric (tests/support/rubric_data.py)."""

from __future__ import annotations

import pytest
import torch
from support.rubric_data import TINY_RUBRIC

from autograde.rubric.definition import Rubric

torch.set_num_threads(1)


@pytest.fixture
def tiny_rubric() -> Rubric:
    return Rubric.model_validate(TINY_RUBRIC)
