"""Bank import / export: DL20 round trips, every format, what is dropped and why, and the CLI commands."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from support.helpers import shared_data

from autograde.cli import main
from autograde.core.ids import item_id
from autograde.io.banks.convert import FormatError
from autograde.io.banks.formats import export_bank, import_bank
from autograde.io.banks.readers import detect_format

SUFFIX = {"workbench": ".jsonl.gz", "tsv": ".tsv", "nuggetizer": ".jsonl", "autojudge": ".jsonl", "tqa": ".json"}


@pytest.mark.parametrize("name", ["dl20-questions", "dl20-nuggets"])
def test_dl20_round_trips(name: str, tmp_path: Path) -> None:
    """Workbench in and out: the same bytes (decompressed); every other format: same items, ids and order."""
    src = shared_data("dl20", f"{name}.jsonl.gz")
    bank, report = import_bank(src)
    assert report.format == "workbench" and (report.queries, report.items, report.dropped) == (54, 540, [])
    ids = [i.item_id for i in bank.items]
    kind = bank.items[0].kind
    assert all(i.item_id == item_id(i.query_id, i.text) for i in bank.items)
    out = tmp_path / f"out{SUFFIX['workbench']}"
    assert export_bank(bank, out, "workbench").dropped == []
    assert gzip.open(out).read() == gzip.open(src).read()
    for fmt in ("tsv", "nuggetizer", "autojudge"):
        path = tmp_path / f"out-{fmt}{SUFFIX[fmt]}"
        assert export_bank(bank, path, fmt).items == 540
        again, rep = import_bank(path, kind=kind)
        assert rep.format == fmt == detect_format(path) and rep.dropped == []
        assert [i.item_id for i in again.items] == ids, fmt
        assert [i.text for i in again.items] == [i.text for i in bank.items]


def test_diff_of_questions_and_nuggets_lists_every_item(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    questions, nuggets = shared_data("dl20", "dl20-questions.jsonl.gz"), shared_data("dl20", "dl20-nuggets.jsonl.gz")
    assert main(["bank", "diff", str(questions), str(nuggets), "--query", "940547"]) == 0
    out = capsys.readouterr().out
    q, _ = import_bank(questions)
    n, _ = import_bank(nuggets)
    for it in [*q.by_query()["940547"], *n.by_query()["940547"]]:
        assert f"{it.item_id}  {it.text}" in out, it.text
    assert out.splitlines()[0] == "10 added, 10 removed, 0 changed, 0 unchanged items in 1 queries"
    assert main(["bank", "diff", str(questions), str(nuggets), "--query", "940547", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["queries"]["940547"]
    assert len(d["removed"]) == len(d["added"]) == 10


TQA = [{
    "globalID": "L_0001", "lessonName": "Plate tectonics",
    "questions": {
        "nonDiagramQuestions": {
            "NDQ_000001": {"beingAsked": {"processedText": "What moves the plates?"},
                           "answerChoices": {"a": {"processedText": "convection"}, "b": {"processedText": "wind"}},
                           "correctAnswer": {"processedText": "a"}},
            "NDQ_000002": {"beingAsked": {"processedText": "Which key is wrong?"},
                           "answerChoices": {"a": {"processedText": "x"}}, "correctAnswer": {"processedText": "z"}},
            "NDQ_000003": {"beingAsked": {"processedText": "   "},
                           "answerChoices": {"a": {"processedText": "x"}}, "correctAnswer": {"processedText": "a"}},
        },
        "diagramQuestions": {"DQ_000001": {"beingAsked": {"processedText": "What does the figure show?"}}},
    },
}]


def test_tqa_answer_keys(tmp_path: Path) -> None:
    src = tmp_path / "tqa.json"
    src.write_text(json.dumps(TQA), encoding="utf-8")
    bank, report = import_bank(src, query_prefix="tqa2:")
    assert report.format == "tqa" and [(i.query_id, i.text, i.gold_answers) for i in bank.items] == [
        ("tqa2:L_0001", "What moves the plates?", ("convection",))]
    assert report.reasons() == {"its answer key is not among its choices": 1, "empty text": 1,
                                "diagram question (needs its image)": 1}
    assert any("NDQ_000002" in d.where for d in report.dropped)
    out = tmp_path / "out.json"
    assert export_bank(bank, out, "tqa").dropped == []
    lesson = json.loads(out.read_text())[0]
    q = lesson["questions"]["nonDiagramQuestions"]["NDQ_000001"]  # the choices and key come back
    assert q["answerChoices"] == {"a": {"processedText": "convection"}, "b": {"processedText": "wind"}}
    assert q["correctAnswer"] == {"processedText": "a"} and lesson["lessonName"] == "Plate tectonics"
    again, _ = import_bank(out)
    assert [(i.item_id, i.gold_answers) for i in again.items] == [(i.item_id, i.gold_answers) for i in bank.items]
    # the workbench's converted TQA questions (JSONL) read too
    conv = tmp_path / "tqa-questions.jsonl"
    conv.write_text(json.dumps({"query_id": "L_0001", "query_text": "Plate tectonics", "qid": "NDQ_000001",
                                "question": "What moves the plates?", "choices": {"a": "convection"},
                                "correctKey": "a", "correct": "convection", "facet_id": None}) + "\n")
    b2, _ = import_bank(conv, query_prefix="tqa2:")
    assert [(i.item_id, i.gold_answers) for i in b2.items] == [(i.item_id, i.gold_answers) for i in bank.items]


def test_nuggetizer_and_autojudge(tmp_path: Path) -> None:
    rag = tmp_path / "nuggets.jsonl"
    rag.write_text(json.dumps({"query": "why is the sky blue", "qid": "2024-1", "nuggets": [
        {"text": "Rayleigh scattering", "importance": "vital", "assignment": "support"},
        {"text": "Shorter wavelengths scatter more", "importance": "okay"},
        {"text": "rayleigh scattering", "importance": "okay"}, {"text": ""}, 7]}) + "\n" + "{not json\n")
    bank, report = import_bank(rag)
    assert report.format == "nuggetizer" and [i.text for i in bank.items] == [
        "Rayleigh scattering", "Shorter wavelengths scatter more", "rayleigh scattering"]
    assert bank.items[0].info == {"importance": "vital"} and bank.items[0].kind == "nugget"
    assert report.reasons() == {"empty text": 1, "nugget is neither text nor an object": 1,
                                "not valid JSON: Expecting property name enclosed in double quotes (column 2)": 1}
    assert any(d.where == f"{rag}:2" for d in report.dropped)
    assert report.notes == {"nugget fields not kept: assignment": 1}
    out = tmp_path / "out.jsonl"
    export_bank(bank, out, "nuggetizer")
    assert json.loads(out.read_text())["nuggets"][0] == {"text": "Rayleigh scattering", "importance": "vital"}
    # nuggetizer writes importance "failed" when its LLM call failed: not an importance, so the nugget has none
    failed = tmp_path / "failed.jsonl"
    failed.write_text(json.dumps({"qid": "2024-1", "query": "q", "nuggets": [
        {"text": "Rayleigh scattering", "importance": "failed"}, {"text": "Blue light", "importance": "okay"}]}) + "\n")
    bank, report = import_bank(failed)
    assert [i.info for i in bank.items] == [None, {"importance": "okay"}]
    assert [n for n in report.notes if "importance 'failed'" in n and "set-importance" in n]

    aj = tmp_path / "autojudge.jsonl"
    aj.write_text(json.dumps({"query_id": "1053", "title_query": "Rising Demand for Avocado", "format_version": "v3",
                              "nugget_bank": {"What share of avocados comes from Mexico?": {
                                  "question": "What share of avocados comes from Mexico?", "query_id": "1053",
                                  "answers": {"about 90%": {"answer": "about 90%"}},
                                  "sub_nuggets": [{"question": "Since when?"}]}},
                              "claim_bank": {"Mexico exports most avocados.": {"claim": "Mexico exports most avocados.",
                                                                               "query_id": "1053"}}}) + "\n")
    bank, report = import_bank(aj)
    assert [(i.kind, i.text, i.gold_answers) for i in bank.items] == [
        ("question", "What share of avocados comes from Mexico?", ("about 90%",)),
        ("nugget", "Mexico exports most avocados.", ())]
    assert report.reasons() == {"sub-nuggets are not kept (banks are flat)": 1}
    out = tmp_path / "aj-out.jsonl"
    export_bank(bank, out, "autojudge")
    rec = json.loads(out.read_text())
    assert rec["nugget_bank"]["What share of avocados comes from Mexico?"]["answers"] == {"about 90%": {"answer": "about 90%"}}
    assert list(rec["claim_bank"]) == ["Mexico exports most avocados."] and rec["title_query"] == "Rising Demand for Avocado"
    # exporting to formats that cannot hold gold answers reports them
    rep = export_bank(bank, tmp_path / "x.tsv", "tsv")
    assert rep.reasons() == {"TSV holds query_id and text only": 1}
    rep = export_bank(bank, tmp_path / "x.json", "tqa")
    assert rep.reasons() == {"TQA holds questions only": 1} and rep.items == 1


def test_import_cli_reports_drops_and_filters_queries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tsv = tmp_path / "bank.tsv"
    tsv.write_text("q1\tWhen did rock begin?\nq1\twhen did rock begin?\nq1\tWhen did rock begin?\n"
                   "q9\tWho is unknown here?\nno tab on this line\n\nq2\t  \n", encoding="utf-8")
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\twhen did rock n roll begin\nq2\tocean tides\n", encoding="utf-8")
    out = tmp_path / "bank.jsonl"
    report = tmp_path / "report.json"
    assert main(["bank", "import", str(tsv), "--out", str(out), "--queries", str(queries), "--kind", "nugget",
                 "--report", str(report)]) == 0
    printed = capsys.readouterr().out
    assert f"{tsv} (tsv): kept 2 item(s) of 1 query(ies); dropped 5" in printed
    for reason, where in [("repeats the text of an earlier item of the query", f"{tsv}:3"),
                          (f"query not in {queries}", f"{tsv}:4"), ("expected 'query_id<TAB>text'", f"{tsv}:5"),
                          ("empty text", f"{tsv}:7"), ("no items left", f"{tsv}:7: query 'q2'")]:
        assert f"dropped 1: {reason}" in printed and where in printed, reason
    assert "queries without items: 1: q2" in printed
    assert json.loads(report.read_text())["dropped_by_reason"]["empty text"] == 1
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [i["nugget_text"] for i in lines[0]["items"]] == ["When did rock begin?", "when did rock begin?"]
    assert main(["bank", "export", str(out), "--to", "tsv", "--out", str(tmp_path / "back.tsv")]) == 0
    assert (tmp_path / "back.tsv").read_text() == "q1\tWhen did rock begin?\nq1\twhen did rock begin?\n"


def test_unknown_format_names_the_fix(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text('{"something": 1}\n')
    with pytest.raises(FormatError, match="name it with --from"):
        import_bank(p)
    assert main(["bank", "import", str(p), "--out", str(tmp_path / "o.jsonl")]) == 2
