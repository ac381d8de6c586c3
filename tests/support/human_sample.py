"""A tiny results folder for the human-sample tests (tests/ppi, the judging page's browser test): a pool of 3
queries x 8 passages, 4 systems, the human grades of every pooled passage (the truth), a grader's qrels (a noisy
copy), and an experiment config naming them. No workflow runs: the tables are written as the workflow writes them."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

QUERIES = {"q1": "how do bees make honey", "q2": "what causes ocean tides", "q3": "how to bake bread"}
SYSTEMS = ["alpha", "beta", "gamma", "delta"]


def tiny_truth(seed: int = 0) -> dict[tuple[str, str], int]:
    rng = np.random.default_rng(seed)
    return {(q, f"{q}-d{i}"): int(rng.choice([0, 0, 1, 2, 3])) for q in QUERIES for i in range(8)}


def tiny_results(tmp_path: Path) -> dict[str, Any]:
    """``{root, config, truth, keys}``: a results folder with pool, rankings, queries and a grader's qrels, and the
    experiment config (``human_sample:`` with a design and a sample file under ``root/judging``)."""
    from autograde.config.experiment import load_config
    from autograde.core.tables import write_table
    from autograde.io.trec import write_qrels

    truth = tiny_truth()
    res = tmp_path / "results"
    rng = np.random.default_rng(1)
    pool = pd.DataFrame({"query_id": [q for q, _ in truth], "passage_id": [d for _, d in truth],
                         "text": [f"passage {d} about {QUERIES[q]}" for q, d in truth], "judged": True,
                         "n_systems": 1})
    write_table(res / "pool" / "pool.parquet", pool, None)
    rows = []
    for k, s in enumerate(SYSTEMS):
        for q in QUERIES:
            docs = [d for qq, d in truth if qq == q] + [f"{q}-x{j}" for j in range(3)]  # 3 passages outside the pool
            quality = 1.0 - k / len(SYSTEMS)
            scores = {d: truth.get((q, d), 0) * quality + rng.random() * 2 for d in docs}
            for r, d in enumerate(sorted(docs, key=lambda x: -scores[x])):
                rows.append((s, q, d, r + 1, float(scores[d]), "run"))
    rankings = pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "rank", "score", "source"])
    write_table(res / "ingest" / "rankings.parquet", rankings, None)
    write_table(res / "ingest" / "queries.parquet",
                pd.DataFrame({"query_id": list(QUERIES), "query_text": list(QUERIES.values())}), None)
    noisy = {}
    for (q, d), y in truth.items():
        label = 5 if y >= 2 else 2
        if rng.random() < 0.25:
            label = 5 - label + 2
        noisy.setdefault(q, {})[d] = label
    write_qrels(res / "qrels" / "grader" / "max-4.qrels", noisy)
    (tmp_path / "queries.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    (tmp_path / "judging").mkdir()
    cfg = tmp_path / "config.yaml"
    cfg.write_text(textwrap.dedent(f"""\
        data:
          queries: {tmp_path / 'queries.tsv'}
        graders:
          - name: grader
            bank: direct
            prompt_class: Thomas
        qrels:
          modes: [max]
          thresholds: [4]
        evaluation:
          measures: [P_5, ndcg_cut_5, map, recip_rank]
        human_sample:
          qrels: {tmp_path / 'judging' / 'sample.qrels'}
          design: {tmp_path / 'judging' / 'design.tsv'}
          measures: [P_5, dcg_cut_5, rbp_0.5, ndcg_cut_5, map, recip_rank]
        results_dir: {res}
        """))
    full: dict[str, dict[str, int]] = {}
    for (q, d), y in truth.items():
        full.setdefault(q, {})[d] = y
    write_qrels(tmp_path / "truth.qrels", full)
    keys = sorted(truth, key=lambda k: (k[0], k[1]))
    return {"root": tmp_path, "config": load_config(str(cfg)), "config_path": cfg, "truth": truth, "keys": keys,
            "results": res, "truth_qrels": tmp_path / "truth.qrels"}
