"""Input readers and their errors: every problem names the file, the line and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from autograde.config.experiment import load_config
from autograde.core.errors import ConfigError, InputError
from autograde.core.ids import md5_text
from autograde.io.answers import read_answers, split_answer
from autograde.io.banks.model import write_bank
from autograde.io.banks.read import read_bank
from autograde.io.corpus import read_corpus
from autograde.io.queries import read_queries
from autograde.io.trec import read_qrels, read_run, trec_order, write_run
from autograde.pipeline.ingest import ingest


def test_run_any_whitespace_and_trec_order(tmp_path: Path) -> None:
    p = tmp_path / "a.run"
    p.write_text("q1 Q0 d1 1 1.0 sysA\nq1\tQ0\td2  2\t1.0 sysA\nq1 Q0 d3 3 3 sysA\n")
    run = read_run(p).runs["sysA"]["q1"]
    assert run == {"d1": 1.0, "d2": 1.0, "d3": 3.0}
    # trec_eval: score descending, then doc id descending
    assert trec_order(run) == ["d3", "d2", "d1"]


def test_write_run_round_trip(tmp_path: Path) -> None:
    run = {"q1": {"a": 1.5, "b": 2.5, "c": 2.5}}
    write_run(tmp_path / "out.run", run, "mine")
    lines = (tmp_path / "out.run").read_text().splitlines()
    assert [ln.split()[2] for ln in lines] == ["c", "b", "a"] and lines[0].split()[3] == "1"
    assert read_run(tmp_path / "out.run").runs == {"mine": run}


def test_run_errors_name_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.run"
    p.write_text("q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2 1.0\nq1 Q0 d1 3 0.5 s\nq1 Q0 d4 x 0.1 s\n")
    with pytest.raises(InputError) as err:
        read_run(p)
    msg = str(err.value)
    assert f"{p}:2: run line has 5 columns, expected 6" in msg
    assert f"{p}:3: duplicate document 'd1' for query 'q1' in run 's'" in msg
    assert f"{p}:4: rank 'x' is not an integer" in msg
    assert "fix:" in msg


def test_qrels_non_numeric_grade_and_duplicates(tmp_path: Path) -> None:
    p = tmp_path / "q.txt"
    p.write_text("q1 0 d1 1\nq1 0 d2 high\nq1 0 d1 0\nq1 0 d3 2.0\n")
    with pytest.raises(InputError) as err:
        read_qrels(p)
    assert f"{p}:2: relevance grade 'high' is not an integer" in str(err.value)
    assert f"{p}:3: duplicate judgment" in str(err.value)
    p.write_text("q1 0 d1 1\nq1 0 d3 2.0\n")
    assert read_qrels(p) == {"q1": {"d1": 1, "d3": 2}}


def test_queries_json_and_tsv(tmp_path: Path) -> None:
    (tmp_path / "q.json").write_text(json.dumps({"1": "a b", "2": "c"}))
    assert read_queries(tmp_path / "q.json") == {"1": "a b", "2": "c"}
    (tmp_path / "q.tsv").write_text("1\ta b\n1\tdup\n2\n")
    with pytest.raises(InputError) as err:
        read_queries(tmp_path / "q.tsv")
    assert ":2: duplicate query id '1'" in str(err.value) and ":3: expected 'query_id<TAB>query text'" in str(err.value)


def test_corpus_formats_and_bad_utf8(tmp_path: Path) -> None:
    (tmp_path / "c.jsonl").write_text('{"docid": "a", "contents": "x"}\n{"id": "b", "text": "café"}\n')
    (tmp_path / "c.tsv").write_text("c\tthird\n")
    assert read_corpus([tmp_path / "c.jsonl", tmp_path / "c.tsv"]) == {"a": "x", "b": "café", "c": "third"}
    (tmp_path / "bad.tsv").write_bytes(b"d\tok\ne\t\xff\xfe bad\n")
    with pytest.raises(InputError, match=r"bad.tsv:2: not valid UTF-8"):
        read_corpus([tmp_path / "bad.tsv"])


def test_split_answer_paragraphs_and_sentences() -> None:
    long = " ".join(f"Sentence number {i} has five words." for i in range(100))  # 600 words
    parts = split_answer("Intro.\n\n" + long, max_words=400)
    assert parts[0] == "Intro."
    assert all(len(p.split()) <= 400 for p in parts) and len(parts) == 3
    assert " ".join(parts[1:]) == long  # split only at sentence boundaries, nothing lost


def test_answers_rag24_and_plain(tmp_path: Path) -> None:
    p = tmp_path / "a.jsonl"
    rag = {"run_id": "r", "topic_id": "q1", "answer": [{"text": "One.", "citations": [0]}, {"text": "Two.\n\n"},
                                                      {"text": "Three.", "citations": []}]}
    p.write_text(json.dumps(rag) + "\n" + json.dumps({"query_id": "q2", "run": "r", "text": "Only."}) + "\n")
    ps = read_answers(p)
    assert [(a.query_id, a.rank, a.text) for a in ps] == [("q1", 1, "One. Two."), ("q1", 2, "Three."), ("q2", 1, "Only.")]
    assert ps[0].passage_id == md5_text("One. Two.")


def test_bank_invalid_json_line_and_round_trip(tmp_path: Path) -> None:
    p = tmp_path / "b.jsonl"
    p.write_text('{"query_id": "q1", "items": [{"question_text": "What?"}]}\n{"query_id": "q2", "items": [\n')
    with pytest.raises(InputError, match=r"b.jsonl:2: not valid JSON"):
        read_bank(p)
    p.write_text('{"query_id": "q1", "items": [{"question_text": "What?", "gold_answers": ["x"]}]}\n')
    bank = read_bank(p)
    write_bank(tmp_path / "out.jsonl.gz", bank)
    again = read_bank(tmp_path / "out.jsonl.gz")
    assert again.items == bank.items and again.items[0].gold_answers == ("x",)


def test_unknown_run_query_id_fails_before_grading(mini: Path) -> None:
    with open("data/runs/good.run", "a") as fh:
        fh.write("q9 Q0 d1a 1 1.0 good\n")
    with pytest.raises(InputError) as err:
        ingest(load_config(mini))
    assert "data/runs/good.run:13: query id 'q9' is not in data/queries.tsv" in str(err.value)


def test_config_unknown_key_lists_valid_keys(mini: Path) -> None:
    raw = yaml.safe_load(mini.read_text())
    raw["pool"] = {"dept": 10}
    raw["graders"][0]["backnd"] = "hf"
    mini.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError) as err:
        load_config(mini)
    msg = str(err.value)
    assert "2 problem(s)" in msg
    assert "pool.dept: unknown key; did you mean 'depth'? valid keys here: depth, include_judged, missing_text" in msg
    assert "graders.0.backnd: unknown key; did you mean 'backend'?" in msg


def test_config_bad_values_all_reported(mini: Path) -> None:
    raw = yaml.safe_load(mini.read_text())
    raw["graders"][0]["backend"] = "gpt9"
    raw["qrels"]["modes"] = ["median"]
    mini.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError) as err:
        load_config(mini)
    assert "unknown backend 'gpt9'; valid backends: embedded, hf, openai, vllm" in str(err.value)
    assert "qrels.modes.0" in str(err.value)
