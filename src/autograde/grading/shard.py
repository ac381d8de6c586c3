"""Grade one shard: flatten (passage x item) pairs, ask the cache, grade only the misses.

The cache is written after every batch, so a killed job loses at most the batch in flight and a
rerun makes zero model calls for pairs graded before the kill. The output table is sorted and has
no timestamps: an interrupted-then-resumed run writes the same bytes as an uninterrupted one.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from autograde.config import GraderConfig
from autograde.grading.base import Grader, GradeRequest, GradeResult
from autograde.grading.cache import GradeCache, cache_key, identity_hash, result_from_record
from autograde.ids import canonical_json
from autograde.io.bank import BankItem
from autograde.io.text import atomic_write_text
from autograde.log import logger, progress
from autograde.tables import write_table

GRADE_COLUMNS = [
    "query_id", "passage_id", "item_id", "grader", "grade", "expected_grade", "grade_probs", "label_mass",
    "answer", "raw", "parse_status", "error", "cache_key", "grader_id", "backend", "prompt_class", "model",
    "scoring", "prompt_order", "extra",
]
DIRECT_SUFFIX = "query"


def direct_items(queries: dict[str, str]) -> dict[str, list[BankItem]]:
    """Direct-grading prompts grade the passage against the query itself: one pseudo-item per query."""
    return {q: [BankItem(f"{q}/{DIRECT_SUFFIX}", q, "query", t)] for q, t in queries.items()}


def build_requests(pool: pd.DataFrame, queries: dict[str, str],
                   items_by_query: dict[str, list[BankItem]]) -> list[GradeRequest]:
    """Every (passage, item) pair of the shard, in (query, passage, item) order."""
    out: list[GradeRequest] = []
    for q, p, text in pool[["query_id", "passage_id", "text"]].itertuples(index=False):
        for it in items_by_query.get(q, []):
            out.append(GradeRequest(q, queries.get(q, ""), p, text, it.item_id, it.kind, it.text, it.gold_answers))
    return out


@dataclass
class ShardOutcome:
    grades: pd.DataFrame
    failures: list[dict[str, Any]]
    stats: dict[str, Any] = field(default_factory=dict)


def _row(req: GradeRequest, res: GradeResult, key: str, cfg: GraderConfig, gid: str) -> dict[str, Any]:
    return {
        "query_id": req.query_id, "passage_id": req.passage_id, "item_id": req.item_id, "grader": cfg.name,
        "grade": res.grade if res.parse_status == "ok" else None,
        "expected_grade": res.expected_grade,
        "grade_probs": canonical_json(res.grade_probs) if res.grade_probs is not None else None,
        "label_mass": res.label_mass, "answer": res.answer, "raw": res.raw, "parse_status": res.parse_status,
        "error": res.error, "cache_key": key, "grader_id": gid, "backend": cfg.backend,
        "prompt_class": cfg.prompt_class or "", "model": cfg.model or "", "scoring": cfg.scoring,
        "prompt_order": cfg.prompt_order,
        "extra": canonical_json(res.extra) if res.extra else None,
    }


def grade_requests(requests: list[GradeRequest], grader: Grader, cfg: GraderConfig, cache_dir: str | Path,
                   batch_size: int = 64) -> ShardOutcome:
    """Grade ``requests`` through the cache; only cache misses reach ``grader``."""
    t0 = time.perf_counter()
    identity = grader.identity()
    gid = identity_hash(identity)
    cache = GradeCache(cache_dir, identity)
    rendered = [grader.render(r) for r in requests]
    keys = [cache_key(x, identity) for x in rendered]
    stored = cache.load(set(keys))
    results: dict[str, GradeResult] = {k: result_from_record(stored[k]) for k in keys if k in stored}
    misses = sorted({k: i for i, k in enumerate(keys) if k not in results}.values(), key=lambda i: len(rendered[i]))
    n_cached = sum(1 for k in keys if k in stored)
    batches = [misses[i: i + batch_size] for i in range(0, len(misses), batch_size)]
    logger.info("grader %s: %d pairs, %d from cache, %d to grade in %d batch(es)",
                cfg.name, len(keys), n_cached, len(misses), len(batches))
    t_model = time.perf_counter()
    try:
        for batch in progress(batches, total=len(batches), desc=f"grading {cfg.name}"):
            out = grader.grade_batch([requests[i] for i in batch])
            if len(out) != len(batch):
                raise RuntimeError(f"grader {cfg.name} returned {len(out)} results for {len(batch)} requests")
            for i, res in zip(batch, out, strict=True):
                results[keys[i]] = res
            cache.append([(keys[i], res) for i, res in zip(batch, out, strict=True)])
    finally:
        cache.close()
    model_s = time.perf_counter() - t_model
    rows = [_row(r, results[k], k, cfg, gid) for r, k in zip(requests, keys, strict=True)]
    grades = pd.DataFrame(rows, columns=GRADE_COLUMNS)
    grades["grade"] = grades["grade"].astype("Int64")
    failures = [
        {"query_id": r["query_id"], "passage_id": r["passage_id"], "item_id": r["item_id"], "grader": cfg.name,
         "parse_status": r["parse_status"], "error": r["error"], "raw": r["raw"]}
        for r in rows if r["parse_status"] != "ok"
    ]
    status = Counter(r["parse_status"] for r in rows)
    legacy = sum(1 for k in keys if results[k].extra.get("legacy_fallback"))
    # cached: pairs answered from the cache; computed: distinct model inputs sent to the grader this run
    stats = {
        "grader": cfg.name, "grader_id": gid, "pairs": len(rows), "unique_inputs": len(set(keys)),
        "cached": n_cached, "computed": len(misses), "ok": status.get("ok", 0),
        "unparseable": status.get("unparseable", 0), "failed": status.get("failed", 0),
        "legacy_fallback": legacy,
        "model_seconds": round(model_s, 3), "total_seconds": round(time.perf_counter() - t0, 3),
        "prompts_per_s": round(len(misses) / model_s, 2) if misses and model_s > 0 else None,
    }
    return ShardOutcome(grades, failures, stats)


def write_outcome(outcome: ShardOutcome, grades_path: str | Path, stats_path: str | Path,
                  failures_path: str | Path, shard: str = "") -> None:
    """Grades parquet (sorted), stats JSON and failures JSONL, each written atomically."""
    write_table(grades_path, outcome.grades, ["query_id", "passage_id", "item_id"],
                metadata={"grader": outcome.stats.get("grader"), "grader_id": outcome.stats.get("grader_id")})
    # cached: pairs answered from the cache; computed: distinct model inputs sent to the grader this run
    stats = {"shard": shard, **outcome.stats}
    atomic_write_text(stats_path, json.dumps(stats, indent=2, sort_keys=True) + "\n")
    atomic_write_text(failures_path, "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in outcome.failures))
    if outcome.failures:
        logger.warning("grader %s shard %s: %d pair(s) got no grade (listed in %s)",
                       outcome.stats.get("grader"), shard, len(outcome.failures), failures_path)
