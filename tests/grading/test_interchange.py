"""The workbench's graded jsonl.gz interchange format: export then import keeps every grade; parity fixes (b), (d)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from autograde.grading.interchange import export_workbench, import_summary, import_workbench


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

    pool2, grades2 = import_workbench(out)[:2]
    assert list(pool2["passage_id"]) == ["p1", "p2"]
    got = {(r.passage_id, r.item_id, r.grader.split(":")[1]): int(r.grade) for r in grades2.itertuples()}
    assert got == {("p1", "q1/a", "QuestionSelfRatedUnanswerablePromptWithChoices"): 5,
                   ("p1", "q1/b", "QuestionSelfRatedUnanswerablePromptWithChoices"): 0,
                   ("p2", "q1/a", "QuestionSelfRatedUnanswerablePromptWithChoices"): 3,
                   ("p1", "q1/query", "Sun"): 1, ("p2", "q1/query", "Sun"): 0}


def _workbench_cover(path: Path, min_rating: int, cutoff: int) -> dict[tuple[str, str], tuple[float, float]]:
    """The workbench's ``compute_exam_cover_scores`` (self-ratings, ``top_ranked_paragraphs``) on a graded file:
    (method, query) -> (cover, n-cover), re-implemented from its source for this test."""
    out = {}
    for line in gzip.open(path, "rt"):
        qid, paras = json.loads(line)

        def ids(ps: list[dict], min_r: int | None) -> set[str]:
            return {r.get("question_id") or r.get("nugget_id") for p in ps for g in (p.get("exam_grades") or [])
                    for r in g["self_ratings"] if min_r is None or r["self_rating"] >= min_r}

        total, total_correct = len(ids(paras, None)), len(ids(paras, min_rating))
        top: dict[str, list[dict]] = {}
        for p in paras:
            for r in p["paragraph_data"]["rankings"]:
                if r["rank"] <= cutoff:
                    top.setdefault(r["method"], []).append(p)
        for method, ps in top.items():
            n = len(ids(ps, min_rating))
            out[(method, qid)] = (n / total if total else 0.0, n / total_correct if total_correct else 0.0)
    return out


def test_export_writes_trec_order_rank_and_workbench_cover_agrees(tmp_path: Path) -> None:
    """Workbench parity (b): with ties and a scrambled rank column, the exported rank is the trec_eval order."""
    from autograde.pipeline.cover import cover_per_query

    pool = pd.DataFrame([("q1", p, f"text {p}") for p in ("p1", "p2", "p3")] + [("q2", "r1", "text r1")],
                        columns=["query_id", "passage_id", "text"])
    # q1 items a, b, c: p1 covers a, p2 covers b, p3 covers c (grade >= 4); q2's r1 covers nothing.
    rows = [("q1", "p1", "q1/a", 5), ("q1", "p1", "q1/b", 0), ("q1", "p1", "q1/c", 0),
            ("q1", "p2", "q1/a", 0), ("q1", "p2", "q1/b", 4), ("q1", "p2", "q1/c", 0),
            ("q1", "p3", "q1/a", 0), ("q1", "p3", "q1/b", 0), ("q1", "p3", "q1/c", 4),
            ("q2", "r1", "q2/x", 1)]
    grades = pd.DataFrame([(*r, "g", "", "QuestionSelfRatedUnanswerablePromptWithChoices", "flan") for r in rows],
                          columns=["query_id", "passage_id", "item_id", "grade", "grader", "answer", "prompt_class", "model"])
    grades["raw"] = ""
    # run R's file says p1 rank 1, p2 rank 2, p3 rank 3, but scores say p3 (2.0) first, then the tie p1/p2
    # (1.0) in doc id descending order: p3, p2, p1.
    rankings = pd.DataFrame([("R", "q1", "p1", 1, 1.0), ("R", "q1", "p2", 2, 1.0), ("R", "q1", "p3", 3, 2.0),
                             ("R", "q2", "r1", 1, 1.0)], columns=["run", "query_id", "passage_id", "rank", "score"])
    judgments = pd.DataFrame(columns=["query_id", "passage_id", "relevance"])
    out = tmp_path / "graded.jsonl.gz"
    export_workbench(out, pool, grades, rankings, judgments)
    ranks = {}
    for line in gzip.open(out, "rt"):
        _q, paras = json.loads(line)
        ranks.update({p["paragraph_id"]: p["paragraph_data"]["rankings"][0]["rank"] for p in paras})
    assert ranks == {"p3": 1, "p2": 2, "p1": 3, "r1": 1}
    wb = _workbench_cover(out, min_rating=4, cutoff=2)
    assert wb == {("R", "q1"): (2 / 3, 2 / 3), ("R", "q2"): (0.0, 0.0)}  # top-2 = p3, p2 -> b, c
    ours = cover_per_query(grades, rankings, threshold=4, depth=2).set_index(["run", "query_id"])
    assert {k: (ours.loc[k, "cover"], ours.loc[k, "ncover"]) for k in wb} == wb


def test_import_keeps_grade_sets_without_self_ratings(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Workbench parity (d): answer-extraction grade sets (no self_ratings) are imported as correctness + answers."""
    para = {
        "paragraph_id": "p1", "text": "Paris is the capital of France.", "paragraph_data": {"judgments": [], "rankings": []},
        "exam_grades": [
            {"correctAnswered": ["q1/a"], "wrongAnswered": ["q1/b"], "answers": [["q1/a", "Paris"], ["q1/b", "unanswerable"]],
             "llm": "flan", "prompt_info": {"prompt_class": "QuestionCompleteConciseUnanswerablePromptWithChoices"},
             "self_ratings": None},
            {"correctAnswered": ["q1/a"], "wrongAnswered": ["q1/b"], "answers": [],
             "llm": "flan", "prompt_info": {"prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices"},
             "self_ratings": [{"question_id": "q1/a", "self_rating": 5}, {"question_id": "q1/b", "self_rating": 0}]},
        ],
        "grades": None,
    }
    path = tmp_path / "wb.jsonl"
    path.write_text(json.dumps(["q1", [para]]) + "\n")
    with caplog.at_level("INFO", logger="autograde"):
        pool, grades = import_workbench(path)[:2]
    got = sorted((r.grader, r.item_id, int(r.grade), r.answer if isinstance(r.answer, str) else "",
                  json.loads(r.extra)["workbench_grade"])
                 for r in grades.itertuples())
    assert got == [
        ("flan:QuestionCompleteConciseUnanswerablePromptWithChoices", "q1/a", 1, "Paris", "correctness"),
        ("flan:QuestionCompleteConciseUnanswerablePromptWithChoices", "q1/b", 0, "unanswerable", "correctness"),
        ("flan:QuestionSelfRatedUnanswerablePromptWithChoices", "q1/a", 5, "", "self_rating"),
        ("flan:QuestionSelfRatedUnanswerablePromptWithChoices", "q1/b", 0, "", "self_rating"),
    ]
    assert (grades["parse_status"] == "ok").all()
    assert import_summary(grades) == {
        "flan:QuestionCompleteConciseUnanswerablePromptWithChoices": {"correctness": 2, "answers": 2, "no_grade": 0},
        "flan:QuestionSelfRatedUnanswerablePromptWithChoices": {"self_rating": 2, "answers": 0, "no_grade": 0}}
    assert "grader flan:QuestionCompleteConciseUnanswerablePromptWithChoices: correctness 2, answers 2" in caplog.text


def _grade_sets(path: Path) -> dict[str, list[tuple]]:
    """paragraph -> its grade sets, each as comparable fields (order-free)."""
    out: dict[str, list[tuple]] = {}
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            _q, paras = json.loads(line)
            for p in paras:
                sets = []
                for eg in p.get("exam_grades") or []:
                    sets.append(("exam", eg["llm"], json.dumps(eg["prompt_info"], sort_keys=True),
                                 tuple(eg["correctAnswered"]), tuple(eg["wrongAnswered"]),
                                 tuple(map(tuple, eg["answers"])), json.dumps(eg["self_ratings"], sort_keys=True)))
                for g in p.get("grades") or []:
                    sets.append(("direct", g["llm"], json.dumps(g["prompt_info"], sort_keys=True), g["correctAnswered"],
                                 g["answer"], g["self_ratings"]))
                out[p["paragraph_id"]] = sorted(sets)
    return out


def test_workbench_file_round_trips_to_the_same_grade_sets(tmp_path: Path) -> None:
    """Import -> export reproduces self-rated, answer-only and direct grade sets with the same shape and flags."""
    from support.helpers import TEST_DATA

    src = TEST_DATA / "workbench-graded.jsonl"
    pool, grades = import_workbench(src)[:2]
    assert "raw" not in grades  # imported grades have no raw model output: the export must not need it
    out = tmp_path / "again.jsonl.gz"
    empty_rankings = pd.DataFrame(columns=["run", "query_id", "passage_id", "rank", "score"])
    empty_judgments = pd.DataFrame(columns=["query_id", "passage_id", "relevance"])
    export_workbench(out, pool, grades, empty_rankings, empty_judgments)
    assert _grade_sets(out) == _grade_sets(src)
    kinds = {s[2] for sets in _grade_sets(out).values() for s in sets}
    assert any('"is_self_rated": false' in k for k in kinds) and any('"is_self_rated": true' in k for k in kinds)
    pool2, grades2 = import_workbench(out)[:2]  # and once more: a fixed point
    def canon(df: pd.DataFrame) -> pd.DataFrame:
        return df.sort_values(["passage_id", "grader", "item_id"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(canon(grades2), canon(grades))


SELF_RATED_INFO = {"prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices",
                   "prompt_style": "Can the question be answered based on the available context? choose one",
                   "is_self_rated": True}
EXTRACTION_INFO = {"prompt_class": "QuestionCompleteConciseUnanswerablePromptWithChoices",
                   "prompt_style": "Answer the question, or say unanswerable", "is_self_rated": False}


def _drop_none(obj: object) -> object:
    """What pydantic's ``.dict(exclude_none=True)`` leaves of a model dump: no None-valued field, at any depth."""
    if isinstance(obj, dict):
        return {k: _drop_none(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [_drop_none(v) for v in obj]
    return obj


def _grid_workbench_file(grid: Path, out: Path, exclude_none: bool) -> None:
    """The rock'n'roll grid as the workbench writes a graded file: one line ``[query_id, [FullParagraphData]]`` with
    the fields of its data model in their order (``exam_pp/data_model.py``), ``json.dumps`` defaults (non-ASCII
    escaped), a self-rated grade set (FLAN-T5-large's ratings; correct = rating > 0, as its ``check_answer``) and an
    answer-extraction set (its answers), judgments from the TREC qrels, and two rankings made from the grid: the
    grid's order and the rating sum (ties in trec_eval order: score desc, doc id desc). ``exclude_none``: the
    newer writer (``p.dict(exclude_none=True)``); else every field, nulls included."""
    rows = [json.loads(line) for line in grid.read_text(encoding="utf-8").splitlines()]
    qid = rows[0]["query_id"]
    by_p: dict[str, list[dict]] = {}
    for r in rows:
        by_p.setdefault(r["passage_id"], []).append(r)
    n = len(by_p)
    sums = {p: float(sum(r["flan_t5_large_rating"] for r in rs)) for p, rs in by_p.items()}
    by_sum = sorted(sorted(by_p, reverse=True), key=lambda p: -sums[p])
    paras = []
    for pos, (pid, rs) in enumerate(by_p.items()):
        ratings = [(r["question_id"], r["flan_t5_large_rating"]) for r in rs]
        answers = [(r["question_id"], r["flan_t5_large_answer"]) for r in rs]
        extracted_ok = [q for q, a in answers if a.strip() and a.strip().lower() != "unanswerable"]
        common = {"llm_response_errors": None, "llm": "google/flan-t5-large", "llm_options": {}}
        self_rated = {"correctAnswered": [q for q, r in ratings if r > 0], "wrongAnswered": [q for q, r in ratings if r <= 0],
                      "answers": [[q, str(r)] for q, r in ratings], **common,
                      "exam_ratio": (1.0 * sum(r > 0 for _, r in ratings)) / (1.0 * len(ratings)),
                      "prompt_info": SELF_RATED_INFO,
                      "self_ratings": [{"question_id": q, "nugget_id": None, "self_rating": r} for q, r in ratings],
                      "prompt_type": "question", "relevance_label": max(r for _, r in ratings)}
        extraction = {"correctAnswered": extracted_ok, "wrongAnswered": [q for q, _ in answers if q not in extracted_ok],
                      "answers": [list(a) for a in answers], **common,
                      "exam_ratio": (1.0 * len(extracted_ok)) / (1.0 * len(answers)), "prompt_info": EXTRACTION_INFO,
                      "self_ratings": None, "prompt_type": "question", "relevance_label": None}
        judgment = rs[0]["judgment"]
        paras.append({
            "paragraph_id": pid, "text": rs[0]["passage_text"], "paragraph": None,
            "paragraph_data": {
                "judgments": [] if judgment is None else [{"paragraphId": pid, "query": qid, "relevance": judgment,
                                                           "titleQuery": qid}],
                "rankings": [{"method": "rating-sum", "paragraphId": pid, "queryId": qid, "rank": by_sum.index(pid) + 1,
                              "score": sums[pid]},
                             {"method": "grid-order", "paragraphId": pid, "queryId": qid, "rank": pos + 1,
                              "score": float(n - pos)}]},
            "exam_grades": [self_rated, extraction], "grades": None})
    record = [qid, _drop_none(paras) if exclude_none else paras]
    with gzip.open(out, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


@pytest.mark.parametrize("grid_file", ["grid.jsonl", "grid-full.jsonl"])
@pytest.mark.parametrize("exclude_none", [False, True], ids=["every-field", "exclude-none"])
def test_rock_n_roll_grid_round_trips_byte_for_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     grid_file: str, exclude_none: bool) -> None:
    """import-workbench then export-workbench gives the same file after decompression: every field (prompt_type,
    relevance_label, a null paragraph, fields a writer leaves out), the order of records, grade sets and items,
    and the escaping of non-ASCII."""
    from support.helpers import shared_data

    from autograde.cli import main

    src = tmp_path / "graded.jsonl.gz"
    _grid_workbench_file(shared_data("dl20-rocknroll-grid", grid_file), src, exclude_none)
    imported, again = tmp_path / "imported", tmp_path / "again.jsonl.gz"
    assert main(["import-workbench", "--input", str(src), "--out-dir", str(imported)]) == 0
    capsys.readouterr()
    assert main(["export-workbench", "--pool", str(imported / "pool.parquet"), "--grades",
                 str(imported / "grades.parquet"), "--ingest", str(imported), "--out", str(again)]) == 0
    said = json.loads(capsys.readouterr().out)
    n = 20 if grid_file == "grid.jsonl" else 310
    assert said == {"out": str(again), "records": 1, "paragraphs": n, "grade_sets": 2 * n, "grades": 20 * n}
    original, copy = gzip.decompress(src.read_bytes()), gzip.decompress(again.read_bytes())
    assert original.isascii() and (grid_file == "grid.jsonl" or b"\\u2019" in original)  # non-ASCII escaped
    assert copy == original


def test_bad_workbench_input_is_a_message_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from support.helpers import TEST_DATA

    from autograde.cli import main

    good = (TEST_DATA / "workbench-graded.jsonl").read_text().splitlines()[0]
    bad_para = {"paragraph_id": "p9", "text": "t", "paragraph_data": {"judgments": [], "rankings": []},
                "exam_grades": [{"llm": "m", "self_ratings": [{"question_id": "q2/a", "self_rating": "high"}]}]}
    path = tmp_path / "graded.jsonl"
    bad_answers = {**bad_para, "exam_grades": [{"llm": "m", "answers": [[1, 2]], "self_ratings": None}]}
    path.write_text(good + "\n" + json.dumps(["q2", [bad_para]]) + "\n" + "[\"q3\", 5]\n"
                    + json.dumps(["q4", [bad_answers]]) + "\n")
    assert main(["import-workbench", "--input", str(path), "--out-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: paragraph 0 (p9) of query 'q2' exam_grades[0].self_ratings has" in err
    assert f"{path}:3: expected [query_id, [paragraphs...]]" in err and "Traceback" not in err
    assert f"{path}:4: paragraph 0 (p9) of query 'q4' exam_grades[0].answers is not a list of [item id, answer" in err
    assert main(["export-workbench", "--pool", str(path), "--grades", str(path), "--ingest", str(tmp_path),
                 "--out", str(tmp_path / "x.jsonl")]) == 2
    assert f"{tmp_path}/rankings.parquet: rankings table not found (fix: give --ingest" in capsys.readouterr().err


def test_export_refuses_a_table_that_is_not_one_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from support.helpers import TEST_DATA

    from autograde.cli import main

    imported = tmp_path / "imported"
    assert main(["import-workbench", "--input", str(TEST_DATA / "workbench-graded.jsonl"), "--out-dir", str(imported)]) == 0
    capsys.readouterr()
    args = ["export-workbench", "--pool", str(imported / "pool.parquet"), "--ingest", str(imported), "--out",
            str(tmp_path / "x.jsonl")]
    assert main([*args, "--grades", str(imported / "judgments.parquet")]) == 2  # a table, but not grades
    err = capsys.readouterr().err
    assert f"{imported}/judgments.parquet: the grades table has no column item_id, grader, grade" in err
    assert main([*args, "--grades", str(TEST_DATA / "workbench-graded.jsonl")]) == 2  # not a table at all
    assert "workbench-graded.jsonl: not a parquet table" in capsys.readouterr().err
