"""The DL20 cross-validation two acceptance tests read (test_relevance.py checks its kappa and share bands,
test_transfer.py that fit + apply in fresh processes reproduce its held-out labels): computed once per session."""

from __future__ import annotations

import glob
import json
from typing import Any

import pytest
from support.helpers import built_once, shared_data

DL20_CV_SETTINGS: dict[str, Any] = {"folds": 5, "seed": 0, "estimators": ["logistic", "ordinal_logistic"],
                                    "logistic_c": [0.1, 1.0]}
"""The regressions only (the networks' fold-by-fold numbers are the benchmark's, benchmarks/rubric_transfer.py)."""


def dl20_sources() -> list[str]:
    """The eight released prompt-class qrels of DL20."""
    return sorted(glob.glob(str(shared_data("dl20", "autograded-qrels") / "*.qrel")))


@pytest.fixture(scope="session")
def dl20_cv(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``run_cross_validate`` on DL20 with :data:`DL20_CV_SETTINGS`: {"config", "report", "qrels", "markdown"} (the
    last two are the written files)."""
    from autograde.calibrated.stages import run_cross_validate
    from autograde.config.rubric import CalibratedQrelsConfig

    cfg = CalibratedQrelsConfig.model_validate({"sources": dl20_sources(),
                                                "judgments": str(shared_data("dl20", "qrels.dl20-passage.txt")),
                                                **DL20_CV_SETTINGS})
    with built_once("dl20-calibrated-cv", tmp_path_factory) as (folder, done):
        if not done:
            run_cross_validate(cfg, folder / "calibrated.qrels", folder / "report.json", folder / "r.md")
    return {"config": cfg, "report": json.loads((folder / "report.json").read_text()),
            "qrels": folder / "calibrated.qrels", "markdown": folder / "r.md"}
