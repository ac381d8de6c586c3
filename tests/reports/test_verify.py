"""Phase 3 analyses: passage labels, verify lists, missing in test bank, spurious entries (hand-made + seed 000 §6)."""

from __future__ import annotations

import json

import pandas as pd
from support.helpers import shared_data

from autograde.reports.verify import missing_in_bank, passage_label_table, spurious_entries, verify_lists

# query q: items i1, i2, i3. Passages: a (judged 2), b (judged 0), c (judged 0), d (unjudged), e (judged 3,
# every grade failed). Grades: a = 5, 2, 0; b = 4, 4, 1; c = 0, 4, 0; d = 3, 3, 3; e = failed x 3.
GRADES = pd.DataFrame(
    [("q", "a", "i1", 5, "Elvis"), ("q", "a", "i2", 2, ""), ("q", "a", "i3", 0, ""),
     ("q", "b", "i1", 4, "rhythm and blues"), ("q", "b", "i2", 4, "x"), ("q", "b", "i3", 1, ""),
     ("q", "c", "i1", 0, ""), ("q", "c", "i2", 4, "1950s"), ("q", "c", "i3", 0, ""),
     ("q", "d", "i1", 3, ""), ("q", "d", "i2", 3, ""), ("q", "d", "i3", 3, ""),
     ("q", "e", "i1", None, ""), ("q", "e", "i2", None, ""), ("q", "e", "i3", None, "")],
    columns=["query_id", "passage_id", "item_id", "grade", "answer"]).astype({"grade": "Int64"})
GRADES["parse_status"] = GRADES["grade"].notna().map({True: "ok", False: "unparseable"})
JUDGMENTS = pd.DataFrame([("q", "a", 2), ("q", "b", 0), ("q", "c", 0), ("q", "e", 3)],
                         columns=["query_id", "passage_id", "relevance"])
ITEMS = pd.DataFrame([("q", "i1", "Who?"), ("q", "i2", "When?"), ("q", "i3", "Where?")],
                     columns=["query_id", "item_id", "text"])


def test_passage_labels_are_the_grid_rows() -> None:
    lab = passage_label_table(GRADES, JUDGMENTS, [4, 3]).set_index("passage_id")
    assert list(lab.columns) == ["query_id", "judgment", "max_grade", "n_items", "n_failed", "count_ge_3", "count_ge_4"]
    got = {p: (r.judgment, r.max_grade, r.count_ge_3, r.count_ge_4, r.n_items, r.n_failed) for p, r in lab.iterrows()}
    na = pd.NA
    assert got == {"a": (2, 5, 1, 1, 3, 0), "b": (0, 4, 2, 2, 3, 0), "c": (0, 4, 1, 1, 3, 0), "d": (na, 3, 3, 0, 3, 0),
                   "e": (3, na, na, na, 0, 3)}


def test_verify_lists_sorted_by_grade_then_judgment() -> None:
    v = verify_lists(GRADES, JUDGMENTS, ITEMS)
    i1 = v[v["item_id"] == "i1"]
    assert list(i1["passage_id"]) == ["a", "b", "d", "c", "e"]  # 5, 4, 3, 0, no grade last
    assert list(i1["answer"])[:2] == ["Elvis", "rhythm and blues"] and set(i1["item_text"]) == {"Who?"}
    i2 = v[v["item_id"] == "i2"]
    assert list(i2["passage_id"]) == ["b", "c", "d", "a", "e"]  # b and c both 4, both judged 0: by passage id
    assert list(v.columns) == ["query_id", "item_id", "item_text", "passage_id", "grade", "answer", "judgment",
                               "parse_status"]


def test_missing_in_bank_per_threshold() -> None:
    lab = passage_label_table(GRADES, JUDGMENTS, [4, 5])
    m = missing_in_bank(lab, GRADES, [4, 5], relevant_level=2)
    # tau 4: a reaches 5 -> not missing; e (judged 3) has no usable grade -> listed. tau 5: same (a has 5).
    assert m[["threshold", "passage_id", "judgment", "best_item_id"]].astype(object).where(m.notna(), None
                                                                                        ).values.tolist() == [
        [4, "e", 3, None], [5, "e", 3, None]]
    m1 = missing_in_bank(lab, GRADES, [4], relevant_level=0)  # every judged passage counts as relevant
    assert list(m1["passage_id"]) == ["e"]  # b and c reach 4; d is unjudged


def test_spurious_entries_count_passages_judged_exactly_zero() -> None:
    s = spurious_entries(GRADES, JUDGMENTS, [4], nonrelevant=[0], relevant_level=2, items=ITEMS)
    assert s[["item_id", "item_text", "count", "judged", "share", "rank", "relevant_hits", "relevant_judged"]
             ].values.tolist() == [["i2", "When?", 2, 2, 1.0, 1, 0, 1], ["i1", "Who?", 1, 2, 0.5, 2, 1, 1]]
    assert spurious_entries(GRADES, JUDGMENTS, [4], min_count=2)["item_id"].tolist() == ["i2"]
    assert spurious_entries(GRADES, JUDGMENTS, [5]).empty  # nothing judged 0 reaches 5


def _grid_full() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rows = [json.loads(line) for line in shared_data("dl20-rocknroll-grid", "grid-full.jsonl").open(encoding="utf-8")]
    df = pd.DataFrame(rows)
    grades = df.rename(columns={"question_id": "item_id", "flan_t5_large_rating": "grade",
                                "flan_t5_large_answer": "answer"})[["query_id", "passage_id", "item_id", "grade", "answer"]]
    judged = df[df["judgment"].notna()][["query_id", "passage_id", "judgment"]].drop_duplicates()
    judgments = judged.rename(columns={"judgment": "relevance"}).astype({"relevance": "int64"})
    items = df[["query_id", "question_id", "question_text"]].drop_duplicates().rename(
        columns={"question_id": "item_id", "question_text": "text"})
    return grades, judgments, items


def test_seed000_section6_spurious_questions_reproduced_exactly() -> None:
    """Seed 000 §6 (Phase 3) prints the three worst questions of query 940547 with their frequencies."""
    grades, judgments, items = _grid_full()
    assert len(judgments) == 234 and int((judgments["relevance"] == 0).sum()) == 133
    s = spurious_entries(grades, judgments, [4], nonrelevant=[0], items=items)
    assert [(int(r.count), r.item_text) for r in s.head(3).itertuples()] == [
        (116, "Did rock n roll start as a distinct genre or did it evolve from existing music styles?"),
        (102, "Is there a general consensus among music historians regarding the exact start of rock n roll?"),
        (60, "Were there any notable recordings or songs that played a significant role in popularizing rock n roll?"),
    ]
    assert list(s["rank"].head(3)) == [1, 2, 3]
    # "judged non-relevant" read as <= 1 would give other numbers: the paper counts judgment 0 only
    assert spurious_entries(grades, judgments, [4], nonrelevant=[0, 1])["count"].head(3).tolist() == [181, 164, 94]


def test_seed000_section6_no_relevant_passage_missing_at_tau_4() -> None:
    """"To detect when the test bank is missing important entries ... Such passages do not exist for this query."""
    grades, judgments, _items = _grid_full()
    labels = passage_label_table(grades, judgments, [4, 5])
    missing = missing_in_bank(labels, grades, [4, 5], relevant_level=2)
    assert int((missing["threshold"] == 4).sum()) == 0
    assert int((missing["threshold"] == 5).sum()) == 22  # at tau 5 the bank misses 22 of the 36 relevant passages


def test_grid_full_labels_match_the_data_readme_and_notes() -> None:
    grades, judgments, _items = _grid_full()
    labels = passage_label_table(grades, judgments, [4])
    assert len(labels) == 310 and int(labels["judgment"].notna().sum()) == 234
    judged_high = labels["judgment"].notna() & (labels["max_grade"] >= 4)
    assert int(judged_high.sum()) == 219  # NOTES: "219 of 234 passages get >= 4 on some question"
    assert int(labels["count_ge_4"].sum()) == 945 + 126  # README: ratings 4: 945, 5: 126


def test_seed000_section6_verify_grading_examples_are_listed() -> None:
    """§6 "verify the grading" shows, for the pioneers question: (5) Elvis Presley–the King of Rock and Roll,
    (0) rhythm and blues, (0) the 1930s. The verify list of that question holds these answers with these grades."""
    grades, judgments, items = _grid_full()
    v = verify_lists(grades, judgments, items)
    q = v[v["item_text"] == "Which musicians or bands are considered pioneers of rock n roll?"]
    assert len(q) == 310 and list(q["grade"]) == sorted(q["grade"], reverse=True)
    pairs = set(zip(q["grade"].astype(int), q["answer"], strict=True))
    assert {(5, "Elvis Presley–the King of Rock and Roll"), (0, "rhythm and blues"), (0, "the 1930s")} <= pairs
