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
from typing import TYPE_CHECKING, Any

import pandas as pd

from autograde.core.ids import canonical_json
from autograde.core.log import logger, progress_bar
from autograde.core.tables import write_table
from autograde.core.text import atomic_write_text
from autograde.grading.base import Grader, GradeRequest, GradeResult
from autograde.grading.cache import GradeCache, cache_key, identity_hash, result_from_record
from autograde.io.banks.model import BankItem

if TYPE_CHECKING:
    from autograde.config.model import GraderConfig

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


@dataclass
class _MissGrading:
    """The cache misses of one shard, graded batch by batch while other jobs may share the cache.

    Before each batch the job claims its keys in the cache (another job sharing the cache may be computing some
    of them: those are deferred and picked up from the cache when that job has stored them; see
    :mod:`autograde.grading.cache`). The cache is appended after every batch.
    """

    grader: Grader
    cache: GradeCache
    requests: list[GradeRequest]
    keys: list[str]
    results: dict[str, GradeResult]
    batch_size: int
    poll_s: float
    computed: int = 0
    from_others: int = 0

    def take_fresh(self, wanted: set[str]) -> None:
        """Results other jobs sharing the cache stored meanwhile (refresh reads each new line once)."""
        for k, rec in self.cache.refresh(wanted).items():
            if k not in self.results:
                self.results[k] = result_from_record(rec)
                self.from_others += 1

    def run(self, misses: list[int], desc: str) -> None:
        keys, results = self.keys, self.results
        wanted = {keys[i] for i in misses}
        bar = progress_bar(len(misses), desc, "prompts")
        try:
            pending: list[int] = list(misses)
            waiting: list[int] = []  # claimed by another job sharing the cache
            while pending or waiting:
                self.take_fresh(wanted)
                pending = [i for i in pending if keys[i] not in results]
                waiting = [i for i in waiting if keys[i] not in results]
                if not pending:
                    if not waiting:
                        break
                    pending, waiting = self._reclaim(waiting)  # their claimant may have died
                    if not pending:
                        time.sleep(self.poll_s)
                        continue
                head, pending = pending[: self.batch_size], pending[self.batch_size:]
                granted = set(self.cache.claim([keys[i] for i in head]))
                waiting += [i for i in head if keys[i] not in granted]
                # a claim is released only after its results are stored: read them now, then grade the rest
                self.take_fresh(wanted)
                self.cache.release({k for k in granted if k in results})
                batch = [i for i in head if keys[i] in granted and keys[i] not in results]
                if batch:
                    self._grade(batch)
                    bar.update(len(batch))
        finally:
            bar.close()

    def _reclaim(self, waiting: list[int]) -> tuple[list[int], list[int]]:
        granted = set(self.cache.claim([self.keys[i] for i in waiting]))
        return [i for i in waiting if self.keys[i] in granted], [i for i in waiting if self.keys[i] not in granted]

    def _grade(self, batch: list[int]) -> None:
        out = self.grader.grade_batch([self.requests[i] for i in batch])
        if len(out) != len(batch):
            raise RuntimeError(f"the grader returned {len(out)} results for {len(batch)} requests")
        for i, res in zip(batch, out, strict=True):
            self.results[self.keys[i]] = res
        self.cache.append([(self.keys[i], res) for i, res in zip(batch, out, strict=True)])
        self.cache.release([self.keys[i] for i in batch])
        self.computed += len(batch)


def grade_requests(requests: list[GradeRequest], grader: Grader, cfg: GraderConfig, cache_dir: str | Path,
                   batch_size: int = 64, poll_s: float = 2.0) -> ShardOutcome:
    """Grade ``requests`` through the cache; only cache misses reach ``grader``, in batches sorted by length."""
    t0 = time.perf_counter()
    identity = grader.identity()
    gid = identity_hash(identity)
    cache = GradeCache(cache_dir, identity)
    if hasattr(grader, "use_cache"):  # a grader that keeps intermediate results of its own (the encoder's vectors)
        grader.use_cache(cache_dir)
    rendered = [grader.render(r) for r in requests]
    keys = [cache_key(x, identity) for x in rendered]
    stored = cache.load(set(keys))
    results: dict[str, GradeResult] = {k: result_from_record(stored[k]) for k in keys if k in stored}
    misses = sorted({k: i for i, k in enumerate(keys) if k not in results}.values(), key=lambda i: len(rendered[i]))
    n_cached = sum(1 for k in keys if k in stored)
    logger.info("grader %s: %d pairs, %d from cache, %d to grade in batches of %d",
                cfg.name, len(keys), n_cached, len(misses), batch_size)
    t_model = time.perf_counter()
    work = _MissGrading(grader, cache, requests, keys, results, batch_size, poll_s)
    used = grader.usage() if hasattr(grader, "usage") else None
    try:
        work.run(misses, f"grading {cfg.name}")
    finally:
        cache.close()
    if work.from_others:
        logger.info("grader %s: %d pair(s) were graded meanwhile by another job sharing the cache", cfg.name,
                    work.from_others)
    model_s = time.perf_counter() - t_model
    outcome = _outcome(requests, keys, results, cfg, gid)
    # cached: pairs answered from the cache; computed: distinct model inputs sent to the grader this run
    outcome.stats.update({
        "cached": n_cached + work.from_others, "computed": work.computed, "model_seconds": round(model_s, 3),
        "total_seconds": round(time.perf_counter() - t0, 3),
        "prompts_per_s": round(work.computed / model_s, 2) if work.computed and model_s > 0 else None,
    })
    if used is not None:  # the tokens the model really processed for the computed prompts
        now = grader.usage()
        outcome.stats.update({k: now[k] - used[k] for k in ("input_tokens", "output_tokens")})
    return outcome


def _outcome(requests: list[GradeRequest], keys: list[str], results: dict[str, GradeResult], cfg: GraderConfig,
             gid: str) -> ShardOutcome:
    """The shard's grades table, failures and counts."""
    rows = [_row(r, results[k], k, cfg, gid) for r, k in zip(requests, keys, strict=True)]
    grades = pd.DataFrame(rows, columns=GRADE_COLUMNS)
    grades["grade"] = grades["grade"].astype("Int64")
    failures = [
        {"query_id": r["query_id"], "passage_id": r["passage_id"], "item_id": r["item_id"], "grader": cfg.name,
         "parse_status": r["parse_status"], "error": r["error"], "raw": r["raw"]}
        for r in rows if r["parse_status"] != "ok"
    ]
    status = Counter(r["parse_status"] for r in rows)
    stats = {
        "grader": cfg.name, "grader_id": gid, "pairs": len(rows), "unique_inputs": len(set(keys)),
        "ok": status.get("ok", 0), "unparseable": status.get("unparseable", 0), "failed": status.get("failed", 0),
        "legacy_fallback": sum(1 for k in keys if results[k].extra.get("legacy_fallback")),
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
