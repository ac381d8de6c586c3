"""The workflow's stages as plain functions over files; Snakemake scripts and the CLI both call these.

Imports are lazy (inside the functions): a rule job imports only what its stage needs, so a small analysis
job starts in well under a second.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.errors import EndpointError, InputError, Problem, Problems, UnparseableAnswersError
from autograde.core.log import logger
from autograde.core.stats import format_p

if TYPE_CHECKING:
    import pandas as pd

    from autograde.config.model import Config
    from autograde.io.banks.model import BankItem
    from autograde.metrics.config import SignificanceConfig


def items_for_grader(config: Config, grader_name: str, queries: dict[str, str]) -> dict[str, list[BankItem]]:
    """The items a grader grades, per query (its bank, or the query itself for direct prompts)."""
    from autograde.grading.shard import direct_items
    from autograde.io.banks.read import read_bank_for_queries

    g = config.grader(grader_name)
    if g.bank == "direct":
        return direct_items(queries)
    problems = Problems()
    bank = read_bank_for_queries(config.banks[g.bank], problems, queries, config.data.queries_file)
    problems.raise_if_any()
    return bank.by_query()


def grader_digest(config: Config, grader_name: str, scatteritem: str, queries: dict[str, str],
                  items: dict[str, list[BankItem]]) -> str:
    """The shard digest of one grader's shard (see :func:`autograde.pipeline.shards.shard_digest`)."""
    from autograde.pipeline.shards import shard_digest

    return shard_digest(config.grader(grader_name).model_dump(), scatteritem, queries, items)


def run_ingest(config: Config, out_dir: str | Path) -> None:
    from autograde.pipeline.ingest import ingest, write_inputs

    write_inputs(ingest(config), out_dir)


def run_pool(config: Config, ingest_dir: str | Path, pool_path: str | Path, shard_paths: list[str]) -> None:
    from autograde.core.tables import read_table
    from autograde.pipeline.pool import build_pool, write_pool, write_pool_shards

    d = Path(ingest_dir)
    pool = build_pool(config, read_table(d / "rankings.parquet"), read_table(d / "judgments.parquet"),
                      read_table(d / "answer_passages.parquet"))
    write_pool(pool, pool_path)
    if shard_paths:
        queries = read_table(d / "queries.parquet")
        write_pool_shards(pool, list(queries["query_id"]), shard_paths)


def run_grade(config: Config, grader_name: str, pool_path: str | Path, queries_path: str | Path,
              grades_path: str | Path, stats_path: str | Path, failures_path: str | Path, shard: str = "",
              threads: int | None = None, digest: str | None = None) -> dict:
    """Grade one pool shard with one grader; returns the shard's stats.

    Raises :class:`EndpointError` (after every good grade is in the cache) when every pair failed, or when more
    than ``grading.allow_failures`` of the pairs failed transiently: the job fails, its outputs are not written,
    and a plain rerun retries exactly the failed pairs.
    """
    from autograde.core.runtime import set_threads
    from autograde.core.tables import read_table
    from autograde.grading.registry import make_grader
    from autograde.grading.shard import build_requests, grade_requests, write_outcome

    set_threads(threads)
    queries = dict(read_table(queries_path)[["query_id", "query_text"]].itertuples(index=False))
    pool = read_table(pool_path)
    items = items_for_grader(config, grader_name, queries)
    requests = build_requests(pool, queries, items)
    cfg = config.grader(grader_name)
    grader = make_grader(cfg)
    try:
        outcome = grade_requests(requests, grader, cfg, config.grading.cache_dir, config.grading.batch_size)
    finally:
        grader.close()
    check_failures(outcome.stats, outcome.failures, config.grading.allow_failures, grader_name, shard)
    if digest:
        outcome.stats["digest"] = digest  # what the shard was graded for (checked by run_merge)
    write_outcome(outcome, grades_path, stats_path, failures_path, shard)
    logger.info("grader %s shard %s: %s", grader_name, shard or "-", json.dumps(outcome.stats, sort_keys=True))
    return outcome.stats


def check_failures(stats: dict[str, Any], failures: list[dict[str, Any]], allowed: float, grader: str,
                   shard: str) -> None:
    """Stop a grading job whose pairs failed (no answer at all), or whose answers were all unparseable (no
    grade at all: every later stage would have nothing), naming the cause and the fix."""
    pairs, n_failed = int(stats.get("pairs") or 0), int(stats.get("failed") or 0)
    n_unparseable = int(stats.get("unparseable") or 0)
    if pairs and n_unparseable and not int(stats.get("ok") or 0) and n_unparseable + n_failed == pairs:
        raw = next((str(f.get("raw") or "") for f in failures if f.get("parse_status") == "unparseable"), "")
        why = next((str(f.get("error") or "") for f in failures if f.get("parse_status") == "unparseable"), "")
        raise UnparseableAnswersError(
            f"grader {grader!r}{f' shard {shard}' if shard else ''}: none of the {pairs} answers could be turned into "
            f"a grade (e.g. {raw[:80]!r}: {why}); the model does not answer in the form the prompt asks for (fix: use "
            "scoring: logits, which reads label-token probabilities and never fails to parse, where the endpoint "
            "gives logprobs; or set options.tolerant_parse: true; or use a model that follows the prompt; the "
            "answers are in the grade cache and in the job log)")
    if not pairs or not n_failed:
        return
    errors: dict[str, int] = {}
    for f in failures:
        if f.get("parse_status") == "failed":
            errors[str(f.get("error"))] = errors.get(str(f.get("error")), 0) + 1
    cause = max(errors, key=errors.__getitem__) if errors else "unknown"
    where = f"grader {grader!r}" + (f" shard {shard}" if shard else "")
    fix = ("check the endpoint / model named in the cause, then rerun the same command: the grades already made "
           "are cached and only the failed pairs are sent again")
    if n_failed == pairs:
        raise EndpointError(f"{where}: every pair ({pairs}) failed; most common cause ({errors.get(cause, 0)}x): "
                            f"{cause} (fix: {fix})")
    if n_failed > allowed * pairs:
        raise EndpointError(
            f"{where}: {n_failed} of {pairs} pairs failed (more than grading.allow_failures = {allowed:g}); most "
            f"common cause ({errors.get(cause, 0)}x): {cause} (fix: {fix}; or raise grading.allow_failures to "
            "accept them as missing grades)")
    logger.warning("%s: %d of %d pairs failed and are missing (allowed by grading.allow_failures = %g); "
                   "retry them later with: snakemake -R grade", where, n_failed, pairs, allowed)


GRADE_COUNTERS = ("pairs", "cached", "computed", "ok", "unparseable", "failed", "legacy_fallback", "input_tokens",
                  "output_tokens")
"""The counters of a grading shard's stats that the merge sums."""


def run_merge(shard_grades: list[str], shard_stats: list[str], shard_failures: list[str],
              grades_path: str | Path, stats_path: str | Path, failures_path: str | Path,
              expected_digests: dict[str, str] | None = None) -> None:
    """Concatenate shard outputs (grades sorted, stats summed with the per-shard list kept); refuses a shard
    graded for an older bank or grader config."""
    import pandas as pd

    from autograde.core.tables import read_table, write_table
    from autograde.core.text import atomic_write_text
    from autograde.pipeline.jobs import gather_shards, join_failures

    shards, total = gather_shards(shard_stats, GRADE_COUNTERS, expected_digests, "grading shard",
                                  "test bank or grader config",
                                  "regrade it: snakemake -R grade (cached pairs are reused), or delete it")
    frames = [read_table(p) for p in shard_grades]
    grades = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    write_table(grades_path, grades, ["query_id", "passage_id", "item_id"])
    atomic_write_text(stats_path, json.dumps({**total, "shards": shards}, indent=2, sort_keys=True) + "\n")
    atomic_write_text(failures_path, join_failures(shard_failures))


def run_qrels(grades_path: str | Path, mode: str, threshold: int, out_path: str | Path) -> None:
    from autograde.core.tables import read_table
    from autograde.io.trec import write_qrels
    from autograde.pipeline.qrels import rubric_qrels

    grades = read_table(grades_path, ["query_id", "passage_id", "grade"])
    write_qrels(out_path, rubric_qrels(grades, mode, threshold))  # type: ignore[arg-type]


def run_evaluate(config: Config, qrels_path: str | Path, rankings_path: str | Path, level: int,
                 out_path: str | Path, stats_path: str | Path | None = None) -> dict[str, Any]:
    """trec_eval measures of every system on every query (and each system's ``all``); only the queries whose judgments
    or rankings changed are computed, the others read from the per-query cache. Returns (and writes to
    ``stats_path``) how many queries were computed and how many read back."""
    from autograde.core.querycache import describe
    from autograde.core.tables import write_table
    from autograde.core.text import atomic_write_text
    from autograde.io.trec import read_qrels
    from autograde.pipeline.leaderboard import evaluate_cached

    ev, counts = evaluate_cached(read_qrels(qrels_path), rankings_path, list(config.evaluation.measures), level,
                                 config.evaluation.missing_queries, config.grading.cache_dir)
    write_table(out_path, ev, ["run", "query_id", "measure"], metadata={"relevance_level": level})
    stats = {**counts, "runs": int(ev["run"].nunique()) if len(ev) else 0, "rows": len(ev)}
    if stats_path:
        atomic_write_text(stats_path, json.dumps(stats, indent=2, sort_keys=True) + "\n")
    logger.info("evaluate %s: %s", out_path, describe(counts))
    return stats


def run_leaderboards(evaluation_path: str | Path, measures: list[str], out_paths: list[str],
                     significance: SignificanceConfig | None = None) -> None:
    """One TSV per measure; with a significance baseline, also p-values of each system vs the baseline."""
    from autograde.core.tables import read_table
    from autograde.core.text import atomic_write_text
    from autograde.pipeline.leaderboard import leaderboard

    ev = read_table(evaluation_path)
    for measure, path in zip(measures, out_paths, strict=True):
        lb = leaderboard(ev, measure)
        if significance is not None and significance.baseline:
            lb = add_significance(lb, ev, measure, significance)
        lb["rank"] = lb["rank"].map(lambda r: f"{r:g}")  # 1, 2.5 (average rank of ties)
        for col in P_COLUMNS.intersection(lb.columns):  # p-values keep significant digits (0.0078125, 1e-05)
            lb[col] = lb[col].map(format_p)
        atomic_write_text(path, lb.to_csv(sep="\t", index=False, float_format="%.4f"))


P_COLUMNS = frozenset({"p_value", "p_adjusted"})
"""Leaderboard columns written with significant digits (:func:`autograde.core.stats.format_p`), not 4 decimals."""


def add_significance(lb: pd.DataFrame, ev: pd.DataFrame, measure: str, sig: SignificanceConfig) -> pd.DataFrame:
    """Columns p_value, p_adjusted, significant, p_method (exact or monte-carlo): paired permutation test of each
    system vs the baseline."""
    from autograde.metrics.significance import compare_to_baseline

    per_q = ev[(ev["measure"] == measure) & (ev["query_id"] != "all")]
    table: dict[str, dict[str, float]] = {}
    for run, q, v in per_q[["run", "query_id", "value"]].itertuples(index=False):
        table.setdefault(run, {})[q] = float(v)
    if sig.baseline not in table:
        raise InputError([Problem("config", None, f"metrics.significance.baseline {sig.baseline!r} is not a system; "
                                  f"have: {', '.join(sorted(table))}", "name one of them, or null for no p-values")])
    cmp = compare_to_baseline(table, sig.baseline, seed=sig.seed, n_resamples=sig.n_resamples, alpha=sig.alpha,
                              correction=sig.correction, p_value_variant=sig.p_value_variant)
    cols = cmp.set_index("system")[["p_value", "p_adjusted", "significant", "p_method"]]
    out = lb.join(cols, on="run")
    out["baseline"] = sig.baseline
    return out


def run_retrieval_metrics(config: Config, qrels_path: str | Path, rankings_path: str | Path,
                          json_path: str | Path, md_path: str | Path) -> None:
    """Evaluation-server retrieval metrics of every system under the human qrels (JSON + Markdown)."""
    from autograde.core.tables import read_table
    from autograde.core.text import atomic_write_text
    from autograde.io.trec import read_qrels
    from autograde.metrics.report import result_document, write_server_json
    from autograde.metrics.retrieval import evaluate_retrieval, retrieval_markdown
    from autograde.pipeline.leaderboard import runs_from_rankings

    runs = runs_from_rankings(read_table(rankings_path))
    body = evaluate_retrieval(read_qrels(qrels_path), runs, config.metrics.retrieval, qrels_source=str(qrels_path))
    write_server_json(json_path, result_document("retrieval", body))
    atomic_write_text(md_path, retrieval_markdown(body))


def run_generation_metrics(config: Config, data_path: str | Path, json_path: str | Path, md_path: str | Path) -> None:
    """Generation metrics (EM, Acc, StringEM, CoverEM, F1, ROUGE) of predictions vs reference answers."""
    from autograde.core.text import atomic_write_text
    from autograde.metrics.generation import evaluate_generation, generation_markdown, read_generation_data
    from autograde.metrics.report import result_document, write_server_json

    g = config.metrics.generation
    data = read_generation_data(data_path, g.gold_key, g.pred_key)
    body = evaluate_generation(data.golds, data.preds, g, where=data.where)
    write_server_json(json_path, result_document("generation", body))
    atomic_write_text(md_path, generation_markdown(body))


def run_cover(config: Config, grades_path: str | Path, rankings_path: str | Path, threshold: int,
              per_query_path: str | Path, cover_path: str | Path, ncover_path: str | Path,
              stats_path: str | Path | None = None) -> dict[str, Any]:
    """Rubric-Cover per query (parquet) and the cover / n-cover leaderboards (TSV); only the queries whose grades or
    rankings changed are computed (the others read from the per-query cache). Returns (and writes to ``stats_path``)
    how many queries were computed and how many read back."""
    from autograde.core.querycache import describe
    from autograde.core.tables import read_table, write_table
    from autograde.core.text import atomic_write_text
    from autograde.pipeline.cover import cover_cached, cover_leaderboard

    grades = read_table(grades_path, ["query_id", "passage_id", "item_id", "grade"])
    per_q, counts = cover_cached(grades, rankings_path, threshold, config.cover.depth, config.cover.missing_queries,
                                 config.grading.cache_dir)
    write_table(per_query_path, per_q, ["run", "query_id"], metadata={"threshold": threshold})
    for measure, path in (("cover", cover_path), ("ncover", ncover_path)):
        lb = cover_leaderboard(per_q, measure)  # type: ignore[arg-type]
        lb["rank"] = lb["rank"].map(lambda r: f"{r:g}")
        atomic_write_text(path, lb.to_csv(sep="\t", index=False, float_format="%.4f"))
    stats = {**counts, "rows": len(per_q)}
    if stats_path:
        atomic_write_text(stats_path, json.dumps(stats, indent=2, sort_keys=True) + "\n")
    logger.info("cover %s: %s", per_query_path, describe(counts))
    return stats


def run_correlation(config: Config, leaderboards: list[dict[str, str]], out_path: str | Path) -> None:
    """One row per leaderboard (``{grader, qrels, measure, path}``): Spearman and Kendall against the official one."""
    import pandas as pd

    from autograde.core.text import atomic_write_text
    from autograde.pipeline.ingest import read_official_leaderboard
    from autograde.pipeline.leaderboard import rank_correlation

    problems = Problems()
    official = read_official_leaderboard(config.data.official_leaderboard, problems) if config.data.official_leaderboard else {}
    problems.raise_if_any()
    rows = []
    for entry in leaderboards:
        lb = pd.read_csv(entry["path"], sep="\t", dtype={"run": str})
        rows.append({"grader": entry["grader"], "qrels": entry["qrels"], "measure": entry["measure"],
                     **rank_correlation(lb, official)})
    df = pd.DataFrame(rows, columns=["grader", "qrels", "measure", "n_systems", *config.correlation.methods])
    atomic_write_text(out_path, df.to_csv(sep="\t", index=False, float_format="%.4f"))
