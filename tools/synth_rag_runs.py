"""Make a TREC RAG 2024-size synthetic experiment (for scale tests and benchmarks): nothing is downloaded.

    python tools/synth_rag_runs.py OUT_DIR                          # 300 queries x 100 runs of depth 100 (RAG24 size)
    python tools/synth_rag_runs.py OUT_DIR --queries 30 --runs 10   # the scaled-down copy (tests, SLURM)

``make rag-synth`` and ``make rag-synth-small`` run it for config/experiments/rag-scale.yaml and
rag-scale-small.yaml (docs/scale.md). Writes, under OUT_DIR:

- ``queries.tsv``: the queries (ids in TREC RAG 2024's ``2024-NNNNNN`` form);
- ``runs/<run>.run``: one TREC run file per system, ``--depth`` passages for every query;
- ``answers/<run>-rag.jsonl``: RAG answers in the TREC RAG 2024 format (``references`` = the run's top 20,
  ``answer`` = segments with ``citations`` into them) for ``--answer-runs`` of the runs, spread over their quality;
- ``corpus.jsonl.gz``: the text of every passage in any run's top ``--depth-text`` (default: the pool depth);
- ``questions.jsonl``: a bank of ``--questions`` generated questions per query (workbench format);
- ``qrels.txt``: graded judgments (0-3) of every passage in any run's top ``--pool-depth`` (as UMBRELA judged);
- ``official_leaderboard.json``: the systems ranked by their true quality (1 = best);
- ``manifest.json``: the arguments and the counts (pooled passages, texts, ranked passages).

How the runs are made. Every query has ``--candidates`` passages, each with a prominence (how easily any system
finds it) and a relevance grade that grows with it. Systems come in ``--families`` (a first-stage retriever and its
rerankers): a system's score of a passage is its prominence, plus the relevance times the system's quality, plus
noise shared by its family and noise of its own; it returns its top ``--depth``. So runs of one family overlap much,
runs of different families less, and good runs put relevant passages higher; the defaults give about 140 distinct
passages per query in the depth-20 pool of 100 runs (two runs share half their top 20 on average), about half of
them relevant. Texts are pseudo-words: a passage mixes words of its
query's topic (more of them when it is relevant) with common words, so the embedded grader's grades follow the
relevance a little. Use it for scale and speed, not for quality.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
from pathlib import Path

import numpy as np

FAMILIES = ("bm25", "splade", "colbert", "monot5", "rankzephyr", "bge", "e5", "gte", "hybrid", "rrf", "dense",
            "listwise")
"""Names of the system families (a system is ``<family>-<nn>``)."""
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
COMMON = 4000
"""Common words shared by every passage; each query has its own topic words besides."""
RELEVANCE_NOISE = 1.8
"""How loosely a passage's relevance follows its prominence (about half of the depth-20 pool is relevant)."""


def words(rng: np.random.Generator, n: int, syllables: int) -> list[str]:
    """``n`` distinct pseudo-words of ``syllables`` syllables (pronounceable, so a tokenizer sees word pieces)."""
    out: dict[str, None] = {}
    while len(out) < n:
        picks = rng.integers(0, len(SYLLABLES), size=(n, syllables))
        for row in picks:
            out.setdefault("".join(SYLLABLES[i] for i in row), None)
            if len(out) == n:
                break
    return list(out)


def md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


class Synth:
    """The latent world of one experiment and the files made from it."""

    def __init__(self, a: argparse.Namespace) -> None:
        self.a = a
        self.rng = np.random.default_rng(a.seed)
        self.common = np.array(words(self.rng, COMMON, 2))
        self.topic_vocab = np.array(words(self.rng, 20 * a.queries, 3))
        self.qids = [f"2024-{100001 + 37 * i}" for i in range(a.queries)]
        n_fam = min(a.families, a.runs)
        self.family = np.arange(a.runs) % n_fam
        # quality of each system: spread evenly, shuffled so that families mix good and bad systems
        self.quality = self.rng.permutation(np.linspace(0.8, 0.1, a.runs))
        self.runs = [f"{FAMILIES[f % len(FAMILIES)]}{'' if f < len(FAMILIES) else f // len(FAMILIES)}-{i // n_fam:02d}"
                     for i, f in enumerate(self.family)]
        step = max(1, a.runs // max(1, a.answer_runs)) if a.answer_runs else 0
        self.answer_runs = list(range(0, a.runs, step))[:a.answer_runs] if step else []

    def doc_ids(self, qi: int) -> list[str]:
        """The candidate passage ids of query ``qi`` (the MS MARCO v2.1 segment id form)."""
        base = 1_000_000 + qi * self.a.candidates
        return [f"msmarco_v2.1_doc_{(base + j) % 59:02d}_{(base + j) * 7919 % 10**9}#{j % 9}_{(base + j) * 131 % 10**7}"
                for j in range(self.a.candidates)]

    def query(self, qi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(top passages [runs, depth], their scores, relevance of every candidate)`` of one query."""
        a, rng = self.a, self.rng
        c = a.candidates
        prominence = rng.standard_normal(c)
        latent = (prominence + rng.normal(0, RELEVANCE_NOISE, c)) / np.hypot(1, RELEVANCE_NOISE)
        relevance = np.digitize(latent, [1.25, 1.75, 2.25])  # about 6%, 3%, 1% of the candidates: grades 1, 2, 3
        fam_noise = rng.normal(0, a.family_noise, (self.family.max() + 1, c))
        scores = (prominence[None, :] + self.quality[:, None] * relevance[None, :]
                  + fam_noise[self.family] + rng.normal(0, a.run_noise, (a.runs, c)))
        top = np.argpartition(-scores, a.depth - 1, axis=1)[:, :a.depth]
        order = np.argsort(-np.take_along_axis(scores, top, 1), axis=1, kind="stable")
        top = np.take_along_axis(top, order, 1)
        # scores in units of 1e-4, strictly decreasing: trec_eval orders by score (ties by doc id), not by rank
        steps = np.arange(a.depth)
        ticks = np.minimum.accumulate(np.round(np.take_along_axis(scores, top, 1) * 1e4) + steps, axis=1) - steps
        return top, ticks / 1e4, relevance

    def text(self, qi: int, relevance: int, topic: np.ndarray) -> str:
        n = int(self.rng.integers(self.a.words * 3 // 4, self.a.words * 5 // 4 + 1))
        topical = self.rng.random(n) < 0.08 + 0.12 * relevance
        w = np.where(topical, topic[self.rng.integers(0, len(topic), n)], self.common[self.rng.integers(0, COMMON, n)])
        return " ".join(w.tolist()).capitalize() + "."

    def write(self, out: Path) -> dict:
        a = self.a
        for d, pattern in (("runs", "*.run"), ("answers", "*.jsonl")):
            (out / d).mkdir(parents=True, exist_ok=True)
            for old in (out / d).glob(pattern):  # the systems of an earlier call with other arguments
                old.unlink()
        run_files = [open(out / "runs" / f"{r}.run", "w", encoding="utf-8") for r in self.runs]
        answer_files = {i: open(out / "answers" / f"{self.runs[i]}-rag.jsonl", "w", encoding="utf-8")
                        for i in self.answer_runs}
        n_text = n_pool = n_answers = 0
        try:
            with open(out / "corpus.jsonl.gz", "wb") as raw, \
                    io.TextIOWrapper(gzip.GzipFile("", "wb", 6, raw, mtime=0), encoding="utf-8") as corpus, \
                    open(out / "queries.tsv", "w", encoding="utf-8") as queries, \
                    open(out / "questions.jsonl", "w", encoding="utf-8") as bank, \
                    open(out / "qrels.txt", "w", encoding="utf-8") as qrels:
                for qi, qid in enumerate(self.qids):
                    topic = self.topic_vocab[qi * 20:(qi + 1) * 20]
                    queries.write(f"{qid}\t{self.query_text(topic)}\n")
                    bank.write(json.dumps(self.bank_record(qid, topic)) + "\n")
                    top, scores, relevance = self.query(qi)
                    ids = self.doc_ids(qi)
                    for r, f in enumerate(run_files):
                        f.write("".join(f"{qid} Q0 {ids[j]} {k + 1} {s:.4f} {self.runs[r]}\n"
                                        for k, (j, s) in enumerate(zip(top[r].tolist(), scores[r].tolist(),
                                                                       strict=True))))
                    pooled = np.unique(top[:, :a.pool_depth])
                    n_pool += len(pooled)
                    qrels.write("".join(f"{qid} 0 {ids[j]} {relevance[j]}\n" for j in pooled.tolist()))
                    texts: dict[int, str] = {}
                    for j in np.unique(top[:, :a.depth_text]).tolist():
                        texts[j] = self.text(qi, int(relevance[j]), topic)
                        corpus.write(json.dumps({"docid": ids[j], "segment": texts[j]}) + "\n")
                    n_text += len(texts)
                    for r, f in answer_files.items():
                        f.write(json.dumps(self.answer(qid, self.runs[r] + "-rag", top[r], ids, texts)) + "\n")
                        n_answers += 1
        finally:
            for f in [*run_files, *answer_files.values()]:
                f.close()
        board = self.official()
        (out / "official_leaderboard.json").write_text(json.dumps(board, indent=1) + "\n", encoding="utf-8")
        manifest = {"arguments": vars(a) | {"out": str(a.out)}, "queries": a.queries, "runs": a.runs,
                    "answer_runs": len(self.answer_runs), "answers": n_answers, "ranked_passages": a.queries * a.runs
                    * a.depth, "pooled_passages": n_pool, "texts": n_text, "questions": a.queries * a.questions}
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        return manifest

    def query_text(self, topic: np.ndarray) -> str:
        picks = self.rng.choice(len(topic), size=int(self.rng.integers(4, 8)), replace=False)
        return "how do " + " ".join(topic[picks].tolist()) + " relate"

    def bank_record(self, qid: str, topic: np.ndarray) -> dict:
        items, seen = [], set()
        while len(items) < self.a.questions:
            t = topic[self.rng.choice(len(topic), size=3, replace=False)].tolist()
            c = self.common[self.rng.integers(0, COMMON, 2)].tolist()
            text = f"What {c[0]} {t[0]} {t[1]} {c[1]} {t[2]}?"
            if text not in seen:
                seen.add(text)
                items.append({"query_id": qid, "question_id": f"{qid}/{md5(text)}", "question_text": text})
        return {"query_id": qid, "test_collection": "rag-synthetic", "query_text": "",
                "info": {"description": "synthetic questions (tools/synth_rag_runs.py)"}, "items": items}

    def answer(self, qid: str, run: str, top: np.ndarray, ids: list[str], texts: dict[int, str]) -> dict:
        """A TREC RAG 2024 answer: segments of words of the passages they cite, two paragraphs."""
        refs = top[:20].tolist()
        segments = []
        n = int(self.rng.integers(3, 6))
        for s in range(n):
            cited = sorted(set(self.rng.integers(0, min(8, len(refs)), size=int(self.rng.integers(1, 3))).tolist()))
            pool = " ".join(texts[refs[c]] for c in cited if refs[c] in texts).rstrip(".").lower().split()
            start = int(self.rng.integers(0, max(1, len(pool) - 20)))
            sentence = " ".join(pool[start:start + int(self.rng.integers(12, 25))]).capitalize() + "."
            segments.append({"text": sentence + ("\n\n" if s == n // 2 else " "), "citations": cited})
        return {"run_id": run, "topic_id": qid, "topic": "", "references": [ids[j] for j in refs],
                "response_length": sum(len(s["text"].split()) for s in segments), "answer": segments}

    def official(self) -> dict[str, int]:
        """Every system (runs and answer runs) ranked by its quality, 1 = best."""
        quality = {r: float(q) for r, q in zip(self.runs, self.quality, strict=True)}
        quality |= {f"{self.runs[i]}-rag": float(self.quality[i]) + 0.05 for i in self.answer_runs}
        ranked = sorted(quality, key=lambda r: (-quality[r], r))
        return {r: k + 1 for k, r in enumerate(ranked)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--depth", type=int, default=100, help="passages per query in every run")
    ap.add_argument("--pool-depth", type=int, default=20, help="the judged depth (qrels) and the pool of the config")
    ap.add_argument("--depth-text", type=int, default=None, help="texts for every run's top N (default: --pool-depth)")
    ap.add_argument("--questions", type=int, default=10, help="questions per query in the bank")
    ap.add_argument("--answer-runs", type=int, default=20, help="runs that also give RAG answers")
    ap.add_argument("--candidates", type=int, default=1500, help="passages any system may retrieve, per query")
    ap.add_argument("--families", type=int, default=12, help="system families (runs of a family overlap most)")
    ap.add_argument("--family-noise", type=float, default=0.5)
    ap.add_argument("--run-noise", type=float, default=0.3)
    ap.add_argument("--words", type=int, default=40, help="mean words per passage")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    a.depth_text = a.pool_depth if a.depth_text is None else a.depth_text
    if not 1 <= a.pool_depth <= a.depth or not 1 <= a.depth_text <= a.depth or a.depth > a.candidates:
        ap.error("need 1 <= --pool-depth, --depth-text <= --depth <= --candidates")
    if a.answer_runs > a.runs or a.answer_runs and a.depth_text < 8:
        ap.error("--answer-runs must be at most --runs, and answers cite the top 8: --depth-text >= 8")
    return a


def main(argv: list[str] | None = None) -> None:
    a = parse_args(argv)
    m = Synth(a).write(a.out)
    print(f"{m['runs']} runs ({m['answer_runs']} with answers) x {m['queries']} queries x {a.depth} passages; "
          f"{m['pooled_passages']} pooled at depth {a.pool_depth} ({m['pooled_passages'] / m['queries']:.0f} per "
          f"query), {m['texts']} texts, {m['questions']} questions -> {a.out}")


if __name__ == "__main__":
    main()
