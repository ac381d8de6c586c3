"""The embedded grader on real data: DL20 query 940547, 310 passages x 10 questions (grid-full.jsonl).

Graded through the normal grading code (requests -> cache -> grader -> grades table -> qrels), the
passage label (max grade over the 10 questions) must correlate with the TREC judgments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import spearmanr
from support.helpers import shared_data

from autograde.config.model import GraderConfig
from autograde.grading.base import GradeRequest
from autograde.grading.registry import make_grader
from autograde.grading.shard import grade_requests
from autograde.pipeline.qrels import rubric_qrels


def grid_requests() -> tuple[list[GradeRequest], dict[str, int]]:
    rows = [json.loads(line) for line in shared_data("dl20-rocknroll-grid", "grid-full.jsonl").open(encoding="utf-8")]
    reqs = [GradeRequest(r["query_id"], r["query_text"], r["passage_id"], r["passage_text"], r["question_id"],
                         "question", r["question_text"]) for r in rows]
    judged = {r["passage_id"]: r["judgment"] for r in rows if r["judgment"] is not None}
    return reqs, judged


@pytest.mark.model
def test_embedded_grader_tracks_trec_judgments(tmp_path: Path) -> None:
    reqs, judged = grid_requests()
    assert len(reqs) == 3100 and len(judged) == 234
    cfg = GraderConfig(name="minilm", backend="embedded", prompt_class="QuestionSelfRatedUnanswerablePromptWithChoices")
    grader = make_grader(cfg)
    out = grade_requests(reqs, grader, cfg, tmp_path / "cache", batch_size=256)
    # 5 passages repeat another's text: identical inputs are graded once (same cache key)
    assert out.stats["pairs"] == 3100 and out.stats["unique_inputs"] == 3050
    assert out.stats["computed"] == 3050 and out.stats["ok"] == 3100 and not out.failures
    qrels = rubric_qrels(out.grades, "max", 4)["940547"]
    labels = pd.Series({p: qrels[p] for p in judged})
    rho = spearmanr(labels.to_numpy(), [judged[p] for p in labels.index]).statistic
    assert rho >= 0.45, rho
    # a second pass is served entirely from the cache and gives the same grades
    again = grade_requests(reqs, grader, cfg, tmp_path / "cache", batch_size=256)
    assert again.stats["cached"] == 3100 and again.stats["computed"] == 0
    pd.testing.assert_frame_equal(again.grades, out.grades)
