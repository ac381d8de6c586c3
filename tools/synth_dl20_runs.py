"""Make a DL20-size synthetic experiment from the DL20 reference data (for scale tests and benchmarks).

    python tools/synth_dl20_runs.py OUT_DIR [--depth-text 5] [--docs 1000] [--seed 0] [--data ../shared/data/dl20]

``make dl20-synth`` runs it for config/experiments/dl20-synthetic.yaml; ``make data`` downloads the DL20 files it
reads (--data: the dl20/ folder of the reference data, default ../shared/data/dl20 beside the checkout).

Writes OUT_DIR/runs/<run>.run (one run per name in the official DL20 leaderboard, 1,000 docs for each of the
54 judged queries; better-ranked runs put judged-relevant docs higher), OUT_DIR/corpus.jsonl (random text
for every doc in any run's top --depth-text), OUT_DIR/queries.tsv and OUT_DIR/questions.jsonl (the first
generated question per query). The texts are random words: use it for speed and scale, not for quality.
"""
import argparse
import collections
import gzip
import json
import random
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "dl20"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--depth-text", type=int, default=5)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the dl20/ folder of the reference data")
    a = ap.parse_args()
    data = a.data
    missing = [n for n in ("dl20-queries.json", "qrels.dl20-passage.txt", "official_dl20_leaderboard.json",
                           "dl20-questions.jsonl.gz") if not (data / n).is_file()]
    if missing:
        raise SystemExit(f"{data}: missing {', '.join(missing)} (fix: make data downloads them; docs/data.md)")
    rng = random.Random(a.seed)
    out = Path(a.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    queries = json.loads((data / "dl20-queries.json").read_text())
    qrels: dict[str, dict[str, int]] = collections.defaultdict(dict)
    for line in (data / "qrels.dl20-passage.txt").read_text().splitlines():
        q, _, d, r = line.split()
        qrels[q][d] = int(r)
    qids = sorted(qrels)
    board = json.loads((data / "official_dl20_leaderboard.json").read_text())
    runs = sorted(board, key=lambda r: board[r])
    words = "the of and to in a is that for it as was with be by on not this are or from at which".split()
    words += [f"w{i}" for i in range(3000)]
    texted = set()
    for i, run in enumerate(runs):
        quality = 1 - i / len(runs)
        with open(out / "runs" / f"{run}.run", "w") as f:
            for q in qids:
                scored = [(qrels[q][d] * quality * 2 + rng.random() * 3, d) for d in qrels[q]]
                scored += [(rng.random() * 3, f"u{q}_{rng.randrange(5000)}") for _ in range(a.docs - len(qrels[q]))]
                seen: set[str] = set()
                rank = 0
                for score, d in sorted(scored, reverse=True):
                    if d in seen:
                        continue
                    seen.add(d)
                    rank += 1
                    if rank > a.docs:
                        break
                    f.write(f"{q} Q0 {d} {rank} {score:.6f} {run}\n")
                    if rank <= a.depth_text:
                        texted.add(d)
    with open(out / "corpus.jsonl", "w") as f:
        for d in sorted(texted):
            f.write(json.dumps({"doc_id": d, "text": " ".join(rng.choice(words) for _ in range(60))}) + "\n")
    (out / "queries.tsv").write_text("".join(f"{q}\t{queries[q]}\n" for q in qids))
    with gzip.open(data / "dl20-questions.jsonl.gz", "rt") as fi, open(out / "questions.jsonl", "w") as fo:
        for line in fi:
            d = json.loads(line)
            if d["query_id"] in qrels:
                d["items"] = d["items"][:1]
                fo.write(json.dumps(d) + "\n")
    print(f"{len(runs)} runs x {len(qids)} queries x {a.docs} docs; {len(texted)} texts -> {out}")


if __name__ == "__main__":
    main()
