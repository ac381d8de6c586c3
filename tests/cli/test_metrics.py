"""``autograde metrics ...``: the command forms, byte-identical reruns (apart from the timestamp), clear errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.helpers import shared_data

from autograde.cli import main

CUTOFFS = (1, 5, 10, 20, 50, 100)
ALL_MEASURES = ["map", "mrr"] + [f"{m}@{k}" for k in CUTOFFS for m in ("ndcg", "P", "recall")]

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d5 0\nq3 0 d6 1\n"
RUN_A = "q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq2 Q0 d4 1 1.0 A\nq3 Q0 d6 1 1.0 A\n"
RUN_B = "q1 Q0 d2 1 3.0 B\nq1 Q0 d1 2 2.0 B\nq2 Q0 d5 1 1.0 B\nq2 Q0 d4 2 0.5 B\n"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN_A)
    (tmp_path / "b.run").write_text(RUN_B)
    return tmp_path


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The installed command line (``python -m autograde.cli``), as a user runs it."""
    return subprocess.run([sys.executable, "-m", "autograde.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def without_timestamp(path: Path) -> bytes:
    """File bytes with the one timestamp line removed."""
    data = path.read_bytes()
    stripped, n = re.subn(rb'\n    "timestamp": "[^"]*",', b"", data)
    assert n == 1, "exactly one timestamp field"
    return stripped


def test_retrieval_two_runs_json_and_markdown(files: Path) -> None:
    out, md = files / "eval.json", files / "eval.md"
    res = cli("metrics", "retrieval", "--qrels", files / "qrels.txt", "--run", files / "a.run", "--run",
              files / "b.run", "--out", out, "--md", md, "--quiet")
    assert res.returncode == 0, res.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["kind"] == "retrieval" and list(doc["results"]) == ["A", "B"]
    assert list(doc["results"]["A"]) == ALL_MEASURES
    # A: q1 rr 1, q2 rr 1, q3 rr 1; B: q1 rr 1/2, q2 rr 1/2, q3 missing -> 0 (trec_eval -c).
    assert doc["results"]["A"]["mrr"] == 1.0 and doc["results"]["B"]["mrr"] == pytest.approx(1 / 3)
    assert doc["queries"]["B"]["missing_from_run"] == 1 and doc["per_query"]["B"]["q3"]["mrr"] == 0.0
    assert out.read_text(encoding="utf-8").startswith('{\n    "timestamp": ')  # indent=4 like the reference
    table = md.read_text(encoding="utf-8")
    assert table.startswith("| measure | A | B |") and "| mrr | 1.0000 | 0.3333 |" in table
    out2 = files / "eval2.json"
    assert main(["metrics", "retrieval", "--qrels", str(files / "qrels.txt"), "--run", str(files / "a.run"),
                 "--run", str(files / "b.run"), "--out", str(out2), "--quiet"]) == 0
    assert without_timestamp(out) == without_timestamp(out2)


def test_retrieval_options(files: Path) -> None:
    out = files / "o.json"
    assert main(["metrics", "retrieval", "--qrels", str(files / "qrels.txt"), "--run", str(files / "b.run"),
                 "--out", str(out), "--cutoffs", "2", "--metrics", "mrr", "precision", "--missing-queries", "skip",
                 "--mrr-cutoff", "1", "--extra-measure", "Rprec", "--no-per-query", "--quiet"]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    # B over q1 and q2 only (skip): q1 ranks d2 (0), d1 (1); q2 ranks d5 (0), d4 (1) -> rr 1/2 each, nothing
    # relevant at rank 1, P@2 = 1/2 each; Rprec: q1 has 2 relevant, 1 in the top 2 -> 1/2; q2 top 1 is d5 -> 0.
    assert doc["results"]["B"] == {"mrr": 0.5, "mrr@1": 0.0, "P@2": 0.5, "Rprec": 0.25}
    assert "per_query" not in doc and doc["queries"]["B"]["averaged_over"] == 2
    assert main(["metrics", "retrieval", "--qrels", str(files / "qrels.txt"), "--run", str(files / "a.run"),
                 "--out", str(out), "--metrics", "mrr", "--relevance-level", "2", "--quiet"]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["results"]["A"]["mrr"] == 0.0 and doc["options"]["relevance_level"] == 2  # d3 (grade 2) not retrieved


def test_config_file_gives_defaults(files: Path) -> None:
    cfg = files / "config.yaml"
    cfg.write_text("data: {queries: x}\nmetrics:\n  retrieval:\n    cutoffs: [3]\n    metrics: [mrr]\n")
    out = files / "o.json"
    assert main(["metrics", "retrieval", "--qrels", str(files / "qrels.txt"), "--run", str(files / "a.run"),
                 "--out", str(out), "--config", str(cfg), "--quiet"]) == 0
    assert list(json.loads(out.read_text())["results"]["A"]) == ["mrr"]
    cfg.write_text("metrics:\n  retrieval:\n    cutofs: [3]\n")
    assert main(["metrics", "retrieval", "--qrels", str(files / "qrels.txt"), "--run", str(files / "a.run"),
                 "--out", str(out), "--config", str(cfg), "--quiet"]) == 2


def test_significance_same_seed_byte_identical(tmp_path: Path) -> None:
    ULTRARAG = shared_data("ultrarag")
    args = ["metrics", "significance", "--qrels", ULTRARAG / "qrels.txt", "--run-a", ULTRARAG / "run_a.txt",
            "--run-b", ULTRARAG / "run_b.txt", "--n-resamples", "3000"]
    outs = [tmp_path / "s1.json", tmp_path / "s2.json", tmp_path / "s3.json"]
    for out, seed in zip(outs, ("7", "7", "8"), strict=True):
        res = cli(*args, "--seed", seed, "--out", out, "--md", out.with_suffix(".md"))
        assert res.returncode == 0, res.stderr
    assert without_timestamp(outs[0]) == without_timestamp(outs[1])
    assert without_timestamp(outs[0]) != without_timestamp(outs[2])
    doc = json.loads(outs[0].read_text(encoding="utf-8"))
    assert list(doc["results"]) == ALL_MEASURES
    assert doc["run_a"]["name"] == "mysystem_A_better" and doc["options"]["significance"]["seed"] == 7
    for r in doc["results"].values():
        assert {"A_mean", "B_mean", "diff", "p_value", "significant"} <= set(r)
    assert doc["results"]["map"]["significant"] is True and doc["results"]["map"]["diff"] > 0
    assert "| map |" in outs[0].with_suffix(".md").read_text(encoding="utf-8")


def test_significance_many_runs_with_baseline(files: Path) -> None:
    (files / "c.run").write_text(RUN_A.replace(" A\n", " C\n"))
    out = files / "s.json"
    assert main(["metrics", "significance", "--qrels", str(files / "qrels.txt"), "--run", str(files / "a.run"),
                 "--run", str(files / "b.run"), "--run", str(files / "c.run"), "--baseline", "B", "--seed", "1",
                 "--n-resamples", "200", "--correction", "bh", "--t-test", "--bootstrap", "--cutoffs", "1",
                 "--out", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    rows = doc["comparisons"]
    assert {(r["system"], r["baseline"]) for r in rows} == {("A", "B"), ("C", "B")}
    assert len(rows) == 2 * 5 and {"p_adjusted", "t_p_value", "ci_low", "ci_high"} <= set(rows[0])
    assert doc["options"]["significance"]["correction"] == "bh"


def test_generation_command(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"golden_answers": ["Paris"], "pred_answer": "Paris."}) + "\n"
                    + json.dumps({"golden_answers": ["北京"], "pred_answer": "北京"}, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    out, out2 = tmp_path / "g.json", tmp_path / "g2.json"
    res = cli("metrics", "generation", "--data", data, "--out", out, "--md", tmp_path / "g.md")
    assert res.returncode == 0, res.stderr
    assert "| EM | 1.0000 |" in res.stdout
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["results"]["em"] == [1.0, 1.0] and doc["results"]["avg_rouge-1"] == 0.5
    assert main(["metrics", "generation", "--data", str(data), "--out", str(out2), "--rouge-tokenizer", "unicode",
                 "--quiet"]) == 0
    assert json.loads(out2.read_text(encoding="utf-8"))["results"]["avg_rouge-1"] == 1.0


@pytest.mark.parametrize(("name", "content", "where", "message"), [
    ("qrels", "q1 0 d1 1\nq1 0 d2 relevant\n", "bad.txt:2", "relevance grade 'relevant' is not an integer"),
    ("run", "q1 Q0 d1 1 2.0 A\nq1 Q0 d2 2 1.5 A\nq1 Q0 d1 3 1.0 A\n", "bad.txt:3", "duplicate document 'd1'"),
])
def test_bad_trec_inputs(files: Path, caplog: pytest.LogCaptureFixture, name: str, content: str, where: str,
                         message: str) -> None:
    bad = files / "bad.txt"
    bad.write_text(content)
    qrels = bad if name == "qrels" else files / "qrels.txt"
    run = bad if name == "run" else files / "a.run"
    out = files / "o.json"
    assert main(["metrics", "retrieval", "--qrels", str(qrels), "--run", str(run), "--out", str(out)]) == 2
    assert where in caplog.text and message in caplog.text
    assert not out.exists()
    res = cli("metrics", "significance", "--qrels", qrels, "--run-a", run, "--run-b", files / "b.run", "--out", out)
    assert res.returncode == 2 and where in res.stderr and message in res.stderr


def test_bad_generation_inputs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    out = tmp_path / "o.json"
    assert main(["metrics", "generation", "--data", str(empty), "--out", str(out)]) == 2
    assert "empty.jsonl: file holds no records" in caplog.text

    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"golden_answers": [a]}) + "\n" for a in ("x", "y", "z")))
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"pred_answer": a}) + "\n" for a in ("x", "y")))
    res = cli("metrics", "generation", "--data", gold, "--predictions", preds, "--out", out)
    assert res.returncode == 2
    assert "gold.jsonl:3: 3 gold records" in res.stderr and "2 predictions in" in res.stderr
    assert "preds.jsonl" in res.stderr and not out.exists()

    one_file = tmp_path / "mixed.jsonl"
    one_file.write_text(json.dumps({"golden_answers": ["x"], "pred_answer": "x"}) + "\n"
                        + json.dumps({"golden_answers": ["y"]}) + "\n")
    res = cli("metrics", "generation", "--data", one_file, "--out", out)
    assert res.returncode == 2 and "mixed.jsonl:2: no prediction: key 'pred_answer' missing" in res.stderr


def test_argument_errors(files: Path, caplog: pytest.LogCaptureFixture) -> None:
    out = str(files / "o.json")
    assert main(["metrics", "significance", "--qrels", str(files / "qrels.txt"), "--run-a", str(files / "a.run"),
                 "--out", out]) == 2
    assert "give both --run-a and --run-b" in caplog.text
    both = files / "both.run"
    both.write_text(RUN_A + RUN_B)
    assert main(["metrics", "significance", "--qrels", str(files / "qrels.txt"), "--run-a", str(both),
                 "--run-b", str(files / "b.run"), "--out", out]) == 2
    assert "holds 2 runs (A, B)" in caplog.text
    assert main(["metrics", "retrieval", "--qrels", str(files / "qrels.txt"), "--run", str(files / "a.run"),
                 "--cutoffs", "0", "--out", out]) == 2
    assert "cutoffs must be >= 1" in caplog.text


def test_significance_names_the_judged_queries_a_run_lacks(files: Path) -> None:
    """Run B has no ranking for q3 of the qrels: it scores 0 there (trec_eval -c), and the command says so, with
    the file; the 3 queries give 8 sign flips, so the p-value is exact."""
    out = files / "s.json"
    res = cli("metrics", "significance", "--qrels", files / "qrels.txt", "--run-a", files / "a.run",
              "--run-b", files / "b.run", "--out", out, "--quiet")
    assert res.returncode == 0, res.stderr
    assert f"run B ({files / 'b.run'}) lacks 1 of the 3 judged queries (q3): they score 0 on every measure" \
        in res.stderr and "--missing-queries skip" in res.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["results"]["mrr"]["p_method"] == "exact" and doc["results"]["mrr"]["n_queries"] == 3
