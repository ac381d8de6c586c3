"""Assignment of nuggets to answers: support / partial_support / not_support per (answer, nugget).

The unit is a run's WHOLE answer to a query (the text the TREC RAG track assigns nuggets to), not the 400-word
passages the answers are split into for the pool. A whole-answer assessor grades each (distinct answer text,
nugget) pair through the grade cache, so two runs with the same answer are graded once and an edited nugget
regrades only its own pairs; a mapped assessor reuses an existing grader's grades of the answers' passages (max
over an answer's passages). Either way a grade becomes a label by two thresholds (:mod:`autograde.grading.nugget_labels`).

>>> import pandas as pd
>>> grades = pd.DataFrame({"query_id": ["q"], "passage_id": ["a1"], "item_id": ["q/1"], "grade": [4],
...                        "parse_status": ["ok"], "grade_probs": [None]})
>>> answers = pd.DataFrame({"run": ["r"], "query_id": ["q"], "answer_id": ["a1"], "text": ["..."]})
>>> t = label_assignments(grades, answers, {"q": ["q/1"]}, {"q/1": "vital"}, (3, 5))
>>> t[["run", "item_id", "importance", "assignment", "grade"]].to_dict("records")
[{'run': 'r', 'item_id': 'q/1', 'importance': 'vital', 'assignment': 'partial_support', 'grade': 4}]
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from autograde.core.errors import Problems
from autograde.core.ids import md5_text
from autograde.grading.nugget_labels import label_of_grade

if TYPE_CHECKING:
    from autograde.config.model import Config, GraderConfig
    from autograde.config.nuggets import AssessorConfig
    from autograde.grading.base import GradeRequest
    from autograde.grading.shard import ShardOutcome
    from autograde.io.banks.model import BankItem

ANSWER_COLUMNS = ["run", "query_id", "answer_id", "text"]
"""The whole answers: one row per (run, query); ``answer_id`` is the md5 of the stripped text."""
ASSIGNMENT_COLUMNS = ["run", "query_id", "answer_id", "item_id", "importance", "assignment", "grade", "grade_probs",
                      "status"]
"""One row per (run, query, nugget); ``status`` is the grade's parse status (not ``ok``: scored as not_support)."""
MAPPED_ERROR = "the mapped grader has no grade for any passage of this answer"


def answers_table(paths: Iterable[str | Path], problems: Problems) -> pd.DataFrame:
    """Every whole answer of the answer files (problems named by file and line)."""
    from autograde.io.answers import iter_answer_texts

    rows = [(run, qid, md5_text(text.strip()), text.strip())
            for p in paths for _, run, qid, text in iter_answer_texts(p, problems)]
    return pd.DataFrame(rows, columns=ANSWER_COLUMNS)


def assignment_requests(answers: pd.DataFrame, queries: dict[str, str],
                        items: dict[str, list[BankItem]]) -> list[GradeRequest]:
    """One request per (distinct answer text of a query, nugget of the query); the passage is the whole answer."""
    from autograde.grading.base import GradeRequest

    distinct = answers.drop_duplicates(["query_id", "answer_id"]).sort_values(["query_id", "answer_id"], kind="mergesort")
    return [GradeRequest(q, queries.get(q, ""), a, text, it.item_id, it.kind, it.text)
            for q, a, text in distinct[["query_id", "answer_id", "text"]].itertuples(index=False)
            for it in items.get(q, [])]


def whole_answer_grader(assessor: AssessorConfig, bank: str) -> GraderConfig:
    from autograde.config.model import GraderConfig

    return GraderConfig(**assessor.grader_fields(bank))


def grade_whole_answers(config: Config, assessor: AssessorConfig, answers: pd.DataFrame, queries: dict[str, str],
                        items: dict[str, list[BankItem]]) -> ShardOutcome:
    """Grade the (whole answer, nugget) pairs through the cache; only new pairs reach the model."""
    from autograde.grading.registry import make_grader
    from autograde.grading.shard import grade_requests

    assert config.nuggets is not None
    cfg = whole_answer_grader(assessor, config.nuggets.bank)
    grader = make_grader(cfg)
    try:
        return grade_requests(assignment_requests(answers, queries, items), grader, cfg, config.grading.cache_dir,
                              config.grading.batch_size)
    finally:
        grader.close()


def mapped_grades(grades: pd.DataFrame, rankings: pd.DataFrame, answers: pd.DataFrame,
                  items: dict[str, list[BankItem]]) -> pd.DataFrame:
    """An existing grader's grades per (answer, nugget): the max ok grade over the answer's passages (a RAG run's
    rows of the rankings table; ``failed`` where it graded none of them). Columns of a grades table (passage_id =
    the answer id)."""
    ok = grades[grades["parse_status"] == "ok"][["query_id", "passage_id", "item_id", "grade"]]
    parts = rankings[["run", "query_id", "passage_id"]].merge(answers[["run", "query_id", "answer_id"]],
                                                              on=["run", "query_id"])
    joined = parts.merge(ok, on=["query_id", "passage_id"])
    best = joined.groupby(["query_id", "answer_id", "item_id"], sort=True)["grade"].max().astype(int).to_dict()
    rows = []
    for q, a in answers[["query_id", "answer_id"]].drop_duplicates().itertuples(index=False):
        for it in items.get(q, []):
            g = best.get((q, a, it.item_id))
            rows.append((q, a, it.item_id, g, None, "ok" if g is not None else "failed",
                         None if g is not None else MAPPED_ERROR))
    out = pd.DataFrame(rows, columns=["query_id", "passage_id", "item_id", "grade", "grade_probs", "parse_status",
                                      "error"])
    out["grade"] = out["grade"].astype("Int64")
    return out


def label_assignments(grades: pd.DataFrame, answers: pd.DataFrame, items: dict[str, list[str]],
                      importance: dict[str, str], thresholds: tuple[int, int]) -> pd.DataFrame:
    """The assignment table (:data:`ASSIGNMENT_COLUMNS`): every (run, query, nugget of the query) with its label.

    ``items`` maps query -> nugget item ids (every nugget of the query is assigned, graded or not); a pair without
    an ok grade is ``not_support`` with its status kept (the stats count it).
    """
    by_key = {(q, a, i): (g, p, s) for q, a, i, g, p, s in
              grades[["query_id", "passage_id", "item_id", "grade", "grade_probs", "parse_status"]].itertuples(index=False)}
    rows = []
    for run, q, a in answers[["run", "query_id", "answer_id"]].itertuples(index=False):
        for i in items.get(q, []):
            g, probs, status = by_key.get((q, a, i), (None, None, "missing"))
            ok = status == "ok" and g is not None and not pd.isna(g)
            label = label_of_grade(int(g), thresholds) if ok else "not_support"
            rows.append((run, q, a, i, importance[i], label, int(g) if ok else None, probs, status))
    out = pd.DataFrame(rows, columns=ASSIGNMENT_COLUMNS)
    out["grade"] = out["grade"].astype("Int64")
    return out


def label_counts(assignments: pd.DataFrame) -> dict[str, Any]:
    """How many pairs got each label, and how many were scored not_support for lack of a grade."""
    return {"pairs": int(len(assignments)),
            **{k: int(v) for k, v in assignments["assignment"].value_counts().sort_index().items()},
            "without_grade": int((assignments["status"] != "ok").sum())}
