"""The workflow stages of Phase 1 (rules ``generate_bank`` and ``merge_bank``), their digests and resources.

Generation is sharded by query like grading (:mod:`autograde.pipeline.shards`): shard ``i-of-n`` generates the items of
its queries and writes a workbench-format shard bank, a failures file and stats; ``merge_bank`` joins the shards
into ``<results_dir>/banks/<name>.jsonl.gz`` (queries in the order of the queries file).

Why no Snakemake checkpoint: the workflow reads banks when it builds its DAG (grading shard digests), and a
generated bank does not exist yet then. A generated bank is a function of what it is generated from (the
generation settings, the prompt and the query texts; answers come from the cache on a rerun), so a grading
shard of a generated bank is keyed by those (:func:`graded_generated_digest`), its bank file is a normal (not
``ancient``) input, and no bank is read at parse time. Human edits go to a copy outside ``results/``
(``autograde bank init-edit``, ``grade_with: edited``), which is read at parse time like any hand-made bank, so an
edit reruns exactly the grading shard of the edited query.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.errors import AutogradeError, Problems
from autograde.core.ids import content_hash
from autograde.core.log import logger

if TYPE_CHECKING:
    from autograde.config.banks import BankGenerationConfig
    from autograde.config.model import Config
    from autograde.io.banks.model import Bank


class BankGenerationError(AutogradeError, RuntimeError):
    """A generated bank cannot be written as configured (too many queries without valid items)."""


def bank_config(config: Config, name: str) -> BankGenerationConfig:
    """The ``bank_generation.<name>`` entry; unknown names list the configured ones."""
    gen = config.bank_generation
    if name not in gen:
        raise AutogradeError(f"no generated bank named {name!r}; bank_generation: has "
                             f"{', '.join(sorted(gen)) or 'none'} (fix: name one of them)")
    return gen[name]


def _prompt_digest(name: str, cfg: BankGenerationConfig) -> str | None:
    """The generation prompt's digest (custom prompt files included); None when it cannot be resolved."""
    from autograde.banks.generate import resolve_generation_prompt

    try:
        return resolve_generation_prompt(name, cfg).digest()
    except AutogradeError:
        return None


def generation_payload(name: str, cfg: BankGenerationConfig) -> dict[str, Any]:
    """What the items of a generated bank depend on, besides the query texts."""
    from autograde.banks.generate import GENERATOR_CODE_VERSION

    return {"bank": name, "settings": cfg.generation_settings(), "prompt_digest": _prompt_digest(name, cfg),
            "generator_code": GENERATOR_CODE_VERSION}


def generation_shard_digest(config: Config, name: str, scatteritem: str, queries: dict[str, str]) -> str:
    """Digest of one generation shard: the generation settings and prompt, and its queries' texts."""
    from autograde.pipeline.shards import shard_queries

    mine = shard_queries(list(queries), scatteritem)
    payload = {**generation_payload(name, bank_config(config, name)), "queries": {q: queries[q] for q in mine}}
    return content_hash(payload, 24)


def graded_generated_digest(config: Config, grader: str, scatteritem: str, queries: dict[str, str]) -> str:
    """Digest of a grading shard whose bank is generated: the grader, and what its queries' items come from."""
    from autograde.pipeline.shards import shard_queries

    g = config.grader(grader)
    mine = shard_queries(list(queries), scatteritem)
    payload = {"grader": g.model_dump(), "generated_bank": generation_payload(g.bank, bank_config(config, g.bank)),
               "queries": {q: queries[q] for q in mine}}
    return content_hash(payload, 24)


def generated_bank_targets(config: Config) -> list[str]:
    """Generated banks the default target makes (those graded as generated; an edited one's draft is on demand)."""
    from autograde.config.banks import generated_bank_path

    return [generated_bank_path(config.results_dir, n) for n, g in config.bank_generation.items()
            if g.grade_with == "generated"]


def run_generate_shard(config: Config, name: str, scatteritem: str, bank_path: str | Path,
                       failures_path: str | Path, stats_path: str | Path, threads: int | None = None,
                       digest: str | None = None) -> dict[str, Any]:
    """Generate the items of one shard's queries (rule ``generate_bank``); returns the shard's stats.

    Raises :class:`~autograde.core.errors.EndpointError` (after caching every answer received) when the endpoint gave
    no answer for some queries: the job fails and a rerun asks again for exactly those.
    """
    from autograde.banks.generate import make_generator, query_prompts, results_to_bank
    from autograde.core.errors import EndpointError
    from autograde.core.runtime import set_threads
    from autograde.core.text import atomic_write_text
    from autograde.io.banks.model import write_bank
    from autograde.io.queries import read_queries
    from autograde.pipeline.shards import shard_queries

    cfg = bank_config(config, name)
    set_threads(threads)
    queries = read_queries(config.data.queries_file)
    mine = set(shard_queries(list(queries), scatteritem))
    shard = {q: t for q, t in queries.items() if q in mine}
    if not shard:  # more shards than queries: nothing to generate, no model to load
        for path in (bank_path, failures_path):
            atomic_write_text(path, "")
        stats = {"shard": scatteritem, "bank": name, "queries": 0, "ok": 0, "failed": 0, "items": 0,
                 "model_calls": 0, "cached": 0, "repairs": 0, **({"digest": digest} if digest else {})}
        atomic_write_text(stats_path, json.dumps(stats, indent=2, sort_keys=True) + "\n")
        return stats
    generator = make_generator(name, cfg, config.grading.cache_dir)
    try:
        results, stats = generator.run(query_prompts(shard, cfg.subtopic_separator))
    finally:
        generator.close()
    transient = [r for r in results if r.transient]
    if transient:
        cause = transient[0].failure
        raise EndpointError(f"bank {name!r} shard {scatteritem}: {len(transient)} of {len(results)} queries got no "
                            f"answer from the model ({', '.join(r.query_id for r in transient[:5])}); first cause: "
                            f"{cause} (fix: check the endpoint or model, then rerun the same command: answers already "
                            "received are cached and only these queries are asked again)")
    bank = results_to_bank(results, generator.kind, generator.provenance(), cfg.test_collection)
    write_bank(bank_path, bank, cfg.test_collection)
    failures = [r.failure_record(name) for r in results if not r.ok]
    atomic_write_text(failures_path, "".join(json.dumps(f, ensure_ascii=False) + "\n" for f in failures))
    stats = {"shard": scatteritem, **stats, **({"digest": digest} if digest else {})}
    atomic_write_text(stats_path, json.dumps(stats, indent=2, sort_keys=True) + "\n")
    for f in failures:
        logger.warning("bank %s: query %s has no items: %s", name, f["query_id"], f["error"])
    logger.info("bank %s shard %s: %s", name, scatteritem, json.dumps(stats, sort_keys=True))
    return stats


def _join_shard_banks(shard_banks: list[str], order: dict[str, int]) -> Bank:
    """The shards' banks as one, queries in the queries file's order (item order within a query kept)."""
    from autograde.io.banks.model import Bank
    from autograde.io.banks.read import read_bank

    problems = Problems()
    parts = [read_bank(p, problems) for p in shard_banks if Path(p).stat().st_size]
    problems.raise_if_any()
    bank = Bank()
    for part in parts:
        bank.headers.update(part.headers)
        bank.items.extend(part.items)
    bank.items.sort(key=lambda it: order.get(it.query_id, len(order)))  # stable
    bank.headers = {q: bank.headers[q] for q in sorted(bank.headers, key=lambda q: order.get(q, len(order)))}
    return bank


SHARD_COUNTERS = ("queries", "ok", "failed", "failed_transient", "items", "model_calls", "cached", "repairs")
"""The counters of a generation shard's stats that the merge sums."""


def run_merge_bank(config: Config, name: str, shard_banks: list[str], shard_failures: list[str],
                   shard_stats: list[str], bank_path: str | Path, failures_path: str | Path, stats_path: str | Path,
                   expected_digests: dict[str, str] | None = None) -> dict[str, Any]:
    """Join the shards of generated bank ``name`` (rule ``merge_bank``); returns the bank's stats.

    Refuses shards generated for an older config, and raises :class:`BankGenerationError` when no query got
    items or more than ``allow_failures`` of the queries have none (each failure named with its file and line).
    """
    from autograde.core.text import atomic_write_text
    from autograde.io.banks.model import write_bank
    from autograde.io.queries import read_queries
    from autograde.pipeline.jobs import gather_shards

    cfg = bank_config(config, name)
    shards, counters = gather_shards(shard_stats, SHARD_COUNTERS, expected_digests, f"shard of bank {name!r}",
                                     "generation config",
                                     "regenerate it: snakemake -R generate_bank (cached answers are reused)")
    order = {q: i for i, q in enumerate(read_queries(config.data.queries_file))}
    bank = _join_shard_banks(shard_banks, order)
    failures: list[tuple[str, int, dict[str, Any]]] = []
    for p in shard_failures:
        for n, line in enumerate(Path(p).read_text(encoding="utf-8").splitlines(), start=1):
            if line.strip():
                failures.append((p, n, json.loads(line)))
    def query_rank(failure: tuple[str, int, dict[str, Any]]) -> int:  # the queries file's order, unknown ids last
        qid = failure[2].get("query_id")
        return len(order) if qid is None else order.get(qid, len(order))

    failures.sort(key=query_rank)
    n_queries = sum(int(s.get("queries") or 0) for s in shards)
    n_failed = len(failures)
    fix = (f"raise bank_generation.{name}.repair_attempts or decoding.max_new_tokens, change the prompt or model, "
           f"or accept them (bank_generation.{name}.allow_failures) and write their items by hand in the edited copy "
           "(autograde bank init-edit)")
    listing = "; ".join(f"{p}:{n}: query {f['query_id']}: {f['error']}" for p, n, f in failures[:10])
    if not bank.items:
        raise BankGenerationError(f"bank {name!r}: no query got valid items ({n_failed} of {n_queries} failed): "
                                  f"{listing} (fix: {fix})")
    if n_failed > cfg.allow_failures * n_queries:
        raise BankGenerationError(f"bank {name!r}: {n_failed} of {n_queries} queries have no valid items (more than "
                                  f"allow_failures = {cfg.allow_failures:g}): {listing} (fix: {fix})")
    for p, n, f in failures:
        logger.warning("%s:%d: bank %s: query %s has no items (allowed by allow_failures = %g): %s", p, n, name,
                       f["query_id"], cfg.allow_failures, f["error"])
    write_bank(bank_path, bank, cfg.test_collection)
    atomic_write_text(failures_path, "".join(json.dumps(f, ensure_ascii=False) + "\n" for _, _, f in failures))
    total: dict[str, Any] = dict(counters)
    total["model_seconds"] = round(sum(float(s.get("model_seconds") or 0) for s in shards), 3)
    stats = {"bank": name, **total, "shards": shards}
    atomic_write_text(stats_path, json.dumps(stats, indent=2, sort_keys=True) + "\n")
    logger.info("bank %s: %d items for %d of %d queries (%d model calls, %d answers from the cache, %d repairs)",
                name, total["items"], total["ok"], total["queries"], total["model_calls"], total["cached"],
                total["repairs"])
    return stats


def run_generate_bank(config: Config, name: str, out_dir: str | Path | None = None) -> dict[str, Any]:
    """Generate a whole bank in this process (``autograde bank generate``): one shard, then the merge.

    Writes ``<results_dir>/banks/<name>.jsonl.gz`` (or under ``out_dir``) with its failures and stats, exactly as
    the workflow does (same cache, same bytes).
    """
    from autograde.config.banks import generated_bank_path

    bank_path = Path(generated_bank_path(str(out_dir) if out_dir else config.results_dir, name))
    shard_dir = bank_path.parent / name / "shards"
    shard_dir.mkdir(parents=True, exist_ok=True)
    base = shard_dir / "1-of-1"
    sb, sf, ss = (f"{base}.jsonl", f"{base}.failures.jsonl", f"{base}.stats.json")
    run_generate_shard(config, name, "1-of-1", sb, sf, ss)
    stem = str(bank_path).removesuffix(".jsonl.gz")
    return run_merge_bank(config, name, [sb], [sf], [ss], bank_path, f"{stem}.failures.jsonl", f"{stem}.stats.json")
