"""The TREC RAG 2024-size synthetic experiment: its generator (tools/synth_rag_runs.py) on a tiny size, and its
configs (config/experiments/rag-scale.yaml and the scaled-down rag-scale-small.yaml), which validate and plan.

The full size is measured by benchmarks/rag_scale.py (docs/scale.md); here the generator's files are checked one by
one: runs of the asked depth, an overlap between runs, RAG answers whose citations point into their references,
text for every pooled passage, judgments of the pool, the bank's ids as the bank readers compute them.
"""

from __future__ import annotations

import collections
import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.helpers import REPO, job_stats, run_workflow

from autograde.core.ids import item_id

TOOL = REPO / "tools" / "synth_rag_runs.py"
TINY = ["--queries", "4", "--runs", "6", "--depth", "30", "--answer-runs", "2", "--candidates", "300",
        "--families", "3", "--questions", "5"]


def generate(out: Path, *args: str) -> dict:
    subprocess.run([sys.executable, str(TOOL), str(out), *args], check=True, capture_output=True, timeout=300)
    return json.loads((out / "manifest.json").read_text())


def test_the_generator_writes_a_consistent_experiment(tmp_path: Path) -> None:
    out = tmp_path / "rag"
    m = generate(out, *TINY)
    queries = [ln.split("\t")[0] for ln in (out / "queries.tsv").read_text().splitlines()]
    assert len(queries) == 4 and all(q.startswith("2024-") for q in queries)
    runs = sorted((out / "runs").glob("*.run"))
    assert len(runs) == 6 and m["ranked_passages"] == 4 * 6 * 30
    top20: dict[str, set[str]] = collections.defaultdict(set)
    per_run: list[dict[str, list[str]]] = []
    for path in runs:
        ranked: dict[str, list[str]] = collections.defaultdict(list)
        last: dict[str, float] = {}
        for line in path.read_text().splitlines():
            q, q0, doc, rank, score, tag = line.split()
            assert q0 == "Q0" and tag == path.stem and int(rank) == len(ranked[q]) + 1
            assert float(score) < last.get(q, float("inf"))  # trec_eval orders by score: no ties to reorder the top
            ranked[q].append(doc)
            last[q] = float(score)
        assert set(ranked) == set(queries) and all(len(set(d)) == 30 for d in ranked.values())
        per_run.append(ranked)
        for q, docs in ranked.items():
            top20[q].update(docs[:20])
    pooled = sum(len(d) for d in top20.values())
    assert pooled == m["pooled_passages"] < 6 * 4 * 20  # runs overlap: fewer distinct passages than ranked ones
    names = [p.stem for p in runs]
    family = [per_run[names.index(n)][queries[0]][:20] for n in ("bm25-00", "bm25-01")]  # runs of one family
    assert len(set(family[0]) & set(family[1])) > 0
    corpus = {json.loads(ln)["docid"]: json.loads(ln)["segment"] for ln in gzip.open(out / "corpus.jsonl.gz", "rt")}
    assert all(d in corpus for docs in top20.values() for d in docs) and len(corpus) == m["texts"] == pooled
    qrels = [ln.split() for ln in (out / "qrels.txt").read_text().splitlines()]
    assert {(q, d) for q, _, d, _ in qrels} == {(q, d) for q, docs in top20.items() for d in docs}
    assert {int(r) for *_, r in qrels} <= {0, 1, 2, 3}
    answers = sorted((out / "answers").glob("*.jsonl"))
    assert len(answers) == 2 == m["answer_runs"]
    for path in answers:
        recs = [json.loads(ln) for ln in path.read_text().splitlines()]
        assert [r["topic_id"] for r in recs] == queries and all(r["run_id"] == path.stem for r in recs)
        for r in recs:
            base = per_run[names.index(r["run_id"].removesuffix("-rag"))][r["topic_id"]]
            assert r["references"] == base[:20]
            assert all(0 <= c < 20 for seg in r["answer"] for c in seg["citations"]) and len(r["answer"]) >= 3
            assert "\n\n" in "".join(seg["text"] for seg in r["answer"])  # two paragraphs: two answer passages
    bank = [json.loads(ln) for ln in (out / "questions.jsonl").read_text().splitlines()]
    assert [b["query_id"] for b in bank] == queries
    for b in bank:
        assert len(b["items"]) == 5
        assert all(it["question_id"] == item_id(b["query_id"], it["question_text"]) for it in b["items"])
    board = json.loads((out / "official_leaderboard.json").read_text())
    assert set(board) == {p.stem for p in runs} | {p.stem for p in answers}
    assert sorted(board.values()) == list(range(1, 9))


def test_the_generator_is_deterministic(tmp_path: Path) -> None:
    def digest(folder: Path) -> dict[str, str]:
        return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"}

    generate(tmp_path / "a", *TINY)
    generate(tmp_path / "b", *TINY)
    assert digest(tmp_path / "a") == digest(tmp_path / "b")
    generate(tmp_path / "a", *TINY[:2], "--runs", "2", *TINY[4:])  # fewer runs in the same folder: the others are removed
    assert len(list((tmp_path / "a" / "runs").glob("*.run"))) == 2


def test_the_scaled_down_config_is_the_full_one_scaled_down() -> None:
    full = yaml.safe_load((REPO / "config/experiments/rag-scale.yaml").read_text())
    small = yaml.safe_load((REPO / "config/experiments/rag-scale-small.yaml").read_text())
    assert json.dumps(full["data"]).replace("rag-synth/", "rag-synth-small/") == json.dumps(small["data"])
    assert small["banks"] == {k: v.replace("rag-synth/", "rag-synth-small/") for k, v in full["banks"].items()}
    assert small["results_dir"] == full["results_dir"] + "-small"
    assert small["grading"] == {**full["grading"], "shards": 4}
    rest = {k for k in full if k not in ("data", "banks", "results_dir", "grading")}
    assert rest == {k for k in small if k not in ("data", "banks", "results_dir", "grading")}
    assert all(full[k] == small[k] for k in rest)


@pytest.mark.workflow
def test_the_scaled_down_experiment_validates_and_plans(tmp_path: Path) -> None:
    """The repository's scaled-down config, unchanged, on a tiny copy of its data made by the generator."""
    m = generate(tmp_path / "work" / "rag-synth-small", *TINY)
    cfg = REPO / "config" / "experiments" / "rag-scale-small.yaml"
    val = subprocess.run([sys.executable, "-m", "autograde.cli", "validate", "--config", str(cfg)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert val.returncode == 0, val.stderr[-3000:]
    out = json.loads(val.stdout)
    assert out["queries"] == 4 and out["systems"] == 8 and out["bank_questions"] == 20
    assert out["pool_passages"] == m["pooled_passages"] + 2 * 4 * 2  # and two passages of every answer
    dry = run_workflow(tmp_path, "-n", "--config", f"experiment={cfg}", configfile=False, cores=1, timeout=600)
    assert dry.returncode == 0, dry.stdout[-2000:] + dry.stderr[-2000:]
    assert job_stats(dry)["grade"] == 4
