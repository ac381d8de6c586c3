"""The workbench's graded jsonl.gz interchange format: export then import keeps every grade."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd

from autograde.io.interchange import export_workbench, import_workbench


def test_export_import_round_trip(tmp_path: Path) -> None:
    pool = pd.DataFrame([("q1", "p1", "text one"), ("q1", "p2", "text two")], columns=["query_id", "passage_id", "text"])
    grades = pd.DataFrame(
        [("q1", "p1", "q1/a", "g", 5, "ans", "QuestionSelfRatedUnanswerablePromptWithChoices", "flan"),
         ("q1", "p1", "q1/b", "g", 0, "", "QuestionSelfRatedUnanswerablePromptWithChoices", "flan"),
         ("q1", "p2", "q1/a", "g", 3, "x", "QuestionSelfRatedUnanswerablePromptWithChoices", "flan"),
         ("q1", "p1", "q1/query", "d", 1, "yes", "Sun", "flan"),
         ("q1", "p2", "q1/query", "d", 0, "no", "Sun", "flan")],
        columns=["query_id", "passage_id", "item_id", "grader", "grade", "answer", "prompt_class", "model"])
    grades["raw"] = grades["answer"]
    rankings = pd.DataFrame([("sysA", "q1", "p1", 1, 2.0)], columns=["run", "query_id", "passage_id", "rank", "score"])
    judgments = pd.DataFrame([("q1", "p1", 2)], columns=["query_id", "passage_id", "relevance"])
    out = tmp_path / "graded.jsonl.gz"
    export_workbench(out, pool, grades, rankings, judgments)
    qid, paras = json.loads(gzip.open(out, "rt").readline())
    assert qid == "q1" and [p["paragraph_id"] for p in paras] == ["p1", "p2"]
    p1 = paras[0]
    assert p1["paragraph_data"]["judgments"][0]["relevance"] == 2
    assert p1["paragraph_data"]["rankings"][0]["method"] == "sysA"
    eg = p1["exam_grades"][0]
    assert eg["correctAnswered"] == ["q1/a"] and eg["wrongAnswered"] == ["q1/b"]
    assert {r["question_id"]: r["self_rating"] for r in eg["self_ratings"]} == {"q1/a": 5, "q1/b": 0}
    assert p1["grades"][0]["correctAnswered"] is True and p1["grades"][0]["prompt_info"]["prompt_class"] == "Sun"

    pool2, grades2 = import_workbench(out)
    assert list(pool2["passage_id"]) == ["p1", "p2"]
    got = {(r.passage_id, r.item_id, r.grader.split(":")[1]): int(r.grade) for r in grades2.itertuples()}
    assert got == {("p1", "q1/a", "QuestionSelfRatedUnanswerablePromptWithChoices"): 5,
                   ("p1", "q1/b", "QuestionSelfRatedUnanswerablePromptWithChoices"): 0,
                   ("p2", "q1/a", "QuestionSelfRatedUnanswerablePromptWithChoices"): 3,
                   ("p1", "q1/query", "Sun"): 1, ("p2", "q1/query", "Sun"): 0}
