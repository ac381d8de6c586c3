"""How many prompts a configured run will send, after the grade cache is taken into account (``autograde doctor``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from autograde.core.layout import Layout
from autograde.grading.registry import backend

if TYPE_CHECKING:
    import pandas as pd

    from autograde.config.model import Config
    from autograde.pipeline.ingest import Inputs

@dataclass(frozen=True)
class PromptEstimate:
    """Prompts one grader's run will send: ``pairs`` (pool passages x items) minus what the cache holds."""

    grader: str
    pairs: int
    cached: int | None
    """Pairs whose grade the cache holds; None when it could not be consulted (building the grader loads the model)."""
    to_send: int
    """Distinct prompts the model will see (the shard runner grades each distinct input once)."""
    note: str = ""


def pool_for_estimate(config: Config, inputs: Inputs | None,
                       config_path: str | Path | None) -> tuple[pd.DataFrame, str]:
    """results/pool/pool.parquet when it is newer than the inputs and the config, else the pool built in memory."""
    from autograde.core.paths import expand_globs
    from autograde.core.tables import read_table
    from autograde.pipeline.ingest import ingest
    from autograde.pipeline.pool import build_pool

    stored = Path(Layout.of(config.results_dir).pool)
    sources = [config.data.queries_file, *expand_globs(config.data.runs), *expand_globs(config.data.answers),
               *expand_globs(config.data.corpus), *([config.data.qrels] if config.data.qrels else [])]
    if config_path:
        sources.append(str(config_path))
    newest = max((Path(p).stat().st_mtime for p in sources if Path(p).exists()), default=0.0)
    if stored.exists() and stored.stat().st_mtime >= newest:
        return read_table(stored), f"pool from {stored}"
    inputs = inputs if inputs is not None else ingest(config)
    return build_pool(config, inputs.rankings, inputs.judgments, inputs.answer_passages), "pool built in memory"


def pool_and_queries(config: Config, inputs: Inputs | None,
                     config_path: str | Path | None) -> tuple[pd.DataFrame, dict[str, str], str]:
    """The pool (:func:`pool_for_estimate`), every query's text by id, and where the pool came from."""
    pool, source = pool_for_estimate(config, inputs, config_path)
    if inputs is not None:
        queries = dict(inputs.queries[["query_id", "query_text"]].itertuples(index=False))
    else:
        from autograde.core.errors import Problems
        from autograde.io.queries import read_queries

        probs = Problems()
        queries = read_queries(config.data.queries_file, probs)
        probs.raise_if_any()
    return pool, queries, source


def estimate_prompts(config: Config, inputs: Inputs | None = None,
                     config_path: str | Path | None = None) -> tuple[list[PromptEstimate], str]:
    """Per grader: (pool size per query x items per query) pairs, and how many the grade cache already holds.

    Cache keys are computed exactly as the shard runner does (``cache_key(grader.render(req), grader.identity())``)
    for backends whose grader is cheap to build; for hf/vllm (whose ``make_grader`` loads the model) only the
    total is reported.
    """
    from autograde.grading.cache import GradeCache, cache_key
    from autograde.grading.registry import make_grader
    from autograde.grading.shard import build_requests
    from autograde.pipeline.stages import items_for_grader

    pool, queries, source = pool_and_queries(config, inputs, config_path)
    out = []
    for g in config.graders:
        if g.bank in config.bank_generation and not Path(config.banks[g.bank]).exists():
            out.append(PromptEstimate(g.name, 0, None, 0, f"bank {g.bank!r} is not generated yet: its prompts are "
                                      "counted once it exists"))
            continue
        requests = build_requests(pool, queries, items_for_grader(config, g.name, queries))
        if backend(g.backend).local_model:  # building it loads model files; other backends load nothing heavy
            out.append(PromptEstimate(g.name, len(requests), None, len(requests),
                                      "cache not checked: building this grader loads the model"))
            continue
        try:
            grader = make_grader(g)
            try:
                identity = grader.identity()
                keys = [cache_key(grader.render(r), identity) for r in requests]
            finally:
                grader.close()
        except Exception as exc:  # an estimate must not hide the other checks
            out.append(PromptEstimate(g.name, len(requests), None, len(requests),
                                      f"cache not checked: {type(exc).__name__}: {exc}"))
            continue
        stored = GradeCache.open_readonly(config.grading.cache_dir, identity).load(set(keys))
        cached = sum(1 for k in keys if k in stored)
        out.append(PromptEstimate(g.name, len(requests), cached, len({k for k in keys if k not in stored})))
    return out, source
