"""Reports of the TREC RAG-family tracks (tests/data/autojudge: a RAG 24/25 run set with citations as positions in
``references``, RAGTIME runs with doc-id score maps and doc-id lists, a DRAGUN run with doc-id lists) through
autograde's answer readers: runs, topics, text, passages and citations; every problem with its file, line and fix;
each file read and written back byte for byte (compact JSON, as the track's tools write), any other JSON layout to
the same values; the topics (requests) files as queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.helpers import TEST_DATA

from autograde.core.errors import InputError, Problems
from autograde.core.ids import passage_id_for_text
from autograde.io.answers import answer_citations, read_answers
from autograde.io.queries import read_queries, read_requests
from autograde.io.reports import cited_doc_ids, iter_reports, report_json, write_reports

FIXTURES = TEST_DATA / "autojudge"
REPORT_FILES = sorted(FIXTURES.glob("*/runs/*.jsonl"))


def test_the_fixtures_cover_every_citation_form() -> None:
    forms = {f for p in REPORT_FILES for r in iter_reports(p, Problems()) for f in r.forms}
    assert forms == {"rag24", "ragtime", "neuclir"}
    assert len(REPORT_FILES) == 7


@pytest.mark.parametrize("path", REPORT_FILES, ids=lambda p: f"{p.parent.parent.name}-{p.stem}")
def test_every_report_file_reads_and_writes_back_byte_for_byte(path: Path, tmp_path: Path) -> None:
    probs = Problems()
    reports = list(iter_reports(path, probs))
    assert not probs and reports and {r.run for r in reports} == {path.stem}
    out = tmp_path / "again.jsonl"
    write_reports(out, [r.record for r in reports])
    assert out.read_bytes() == path.read_bytes()


def test_another_json_layout_reads_to_the_same_values_and_writes_the_track_layout(tmp_path: Path) -> None:
    src = FIXTURES / "ragtime" / "runs" / "alpha.jsonl"
    pretty = tmp_path / "pretty.jsonl"
    pretty.write_text("".join(json.dumps(json.loads(line), indent=None, ensure_ascii=True) + "\n\n"
                              for line in src.read_text(encoding="utf-8").splitlines()))
    reports = list(iter_reports(pretty, Problems()))
    assert [r.record for r in reports] == [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()]
    assert "".join(report_json(r.record) + "\n" for r in reports) == src.read_text(encoding="utf-8")


def test_runs_topics_and_citations_of_each_form() -> None:
    rag24 = {(r.run, r.query_id): r for r in iter_reports(FIXTURES / "rag24" / "runs" / "terse.jsonl", Problems())}
    assert set(rag24) == {("terse", "101"), ("terse", "102"), ("terse", "103")}  # narrative_id given as a number
    r = rag24[("terse", "102")]
    assert r.forms == ("rag24",) and cited_doc_ids(r.sentences[0], r.references) == r.references
    alpha = list(iter_reports(FIXTURES / "ragtime" / "runs" / "alpha.jsonl", Problems()))
    assert alpha[0].sentences_key == "responses" and alpha[0].forms == ("ragtime",)
    first = alpha[0].sentences[0]  # {U0: 0.92, U2: 0.41}: by descending score
    assert cited_doc_ids(first, alpha[0].references) == list(first["citations"])
    assert cited_doc_ids(alpha[1].sentences[1], alpha[1].references) == []  # "citations": null
    gamma = list(iter_reports(FIXTURES / "neuclir" / "runs" / "gamma.jsonl", Problems()))
    assert gamma[0].forms == ("neuclir",) and gamma[0].references is None


def test_reports_become_answer_passages() -> None:
    passages = read_answers(FIXTURES / "rag24" / "runs" / "good.jsonl")
    q101 = [p for p in passages if p.query_id == "101"]
    assert len(q101) == 2 and [p.rank for p in q101] == [1, 2]  # the sentence ending in a blank line ends a paragraph
    assert q101[0].text.startswith("Bees collect") and q101[0].text.endswith("break its sugars down.")
    assert all(p.passage_id == passage_id_for_text(p.text) for p in passages)
    ragtime = read_answers(FIXTURES / "ragtime" / "runs" / "alpha.jsonl")
    assert {p.run for p in ragtime} == {"alpha"} and len(ragtime) == 2


def test_cited_doc_ids_of_every_form() -> None:
    for path in REPORT_FILES:
        probs = Problems()
        cited = answer_citations(path, probs)
        assert not probs and cited, path
    cited = answer_citations(FIXTURES / "ragtime" / "runs" / "beta.jsonl", Problems())
    assert cited == {"a9b8c7d6-e5f4-4a3b-9c2d-1e0f2a3b4c5d_12": 1, "3f2a9c1e-8b7d-4e6f-a1b2-c3d4e5f60718_0": 1,
                     "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e_7": 2}


BAD = [
    ({"metadata": "x", "answer": []}, "'metadata' must be an object"),
    ({"metadata": {"team_id": "t", "topic_id": "1"}, "answer": [{"text": "a"}]}, "metadata.run_id must be"),
    ({"metadata": {"run_id": "r", "topic_id": "1", "narrative_id": "2"}, "answer": [{"text": "a"}]},
     "the topic ids disagree: topic_id='1', narrative_id='2'"),
    ({"metadata": {"run_id": "r"}, "answer": [{"text": "a"}]}, "the report names no topic"),
    ({"metadata": {"run_id": "r", "topic_id": "1"}, "answer": [{"citations": [0]}]}, "answer[0] is not an object"),
    ({"metadata": {"run_id": "r", "topic_id": "1"}, "answer": [{"text": "a"}], "responses": [{"text": "b"}]},
     "both 'answer' and 'responses'"),
    ({"metadata": {"run_id": "r", "topic_id": "1"}, "references": [1], "answer": [{"text": "a"}]},
     "'references' must be a list of doc ids"),
    ({"metadata": {"run_id": "r", "topic_id": "1"}, "answer": []}, "empty answer of run 'r'"),
]


def test_every_problem_names_file_line_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(rec) + "\n" for rec, _ in BAD) + "not json\n")
    with pytest.raises(InputError) as err:
        read_answers(path)
    problems = err.value.problems
    for line, (_, message) in enumerate(BAD, start=1):
        hit = [p for p in problems if p.line == line]
        assert hit and message in hit[0].message and hit[0].fix, (line, [str(p) for p in problems])
    assert any(p.line == len(BAD) + 1 and "not valid JSON" in p.message for p in problems)


def test_malformed_citations_are_problems_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "cites.jsonl"
    recs = [{"metadata": {"run_id": "r", "topic_id": "1"}, "references": ["d0"],
             "answer": [{"text": "a", "citations": [0, 3]}]},
            {"metadata": {"run_id": "r", "topic_id": "2"}, "responses": [{"text": "a", "citations": [0, "d1"]}]},
            {"metadata": {"run_id": "r", "topic_id": "3"}, "responses": [{"text": "a", "citations": {"d": "high"}}]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    probs = Problems()
    assert answer_citations(path, probs) == {"d0": 1}
    assert [(p.line, p.message.split(" of ")[0]) for p in probs.items] == [
        (1, "citation 3"), (2, "'citations'"), (3, "'citations'")]
    assert all(p.fix for p in probs.items)


def test_topics_files_are_queries() -> None:
    assert read_queries(FIXTURES / "rag24" / "topics.jsonl") == {
        "101": "how do bees make honey", "102": "what causes ocean tides", "103": "how to bake sourdough bread"}
    assert read_requests(FIXTURES / "ragtime" / "topics.jsonl")["201"]["limit"] == 600


def test_bad_topics_lines_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "topics.jsonl"
    path.write_text('{"request_id": "1", "title": "a"}\n{"request_id": "1", "title": "b"}\n{"title": "c"}\n'
                    '{"request_id": "x y", "title": "d"}\n{"request_id": "2", "topic_id": "3", "title": "e"}\n'
                    '{"request_id": "4", "title": " "}\n')
    with pytest.raises(InputError) as err:
        read_queries(path)
    assert [p.line for p in err.value.problems] == [2, 3, 4, 5, 6]
