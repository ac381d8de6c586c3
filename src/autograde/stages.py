"""The workflow's stages as plain functions over files; Snakemake scripts and the CLI both call these."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from autograde.config import Config
from autograde.errors import Problems
from autograde.grading.registry import make_grader
from autograde.grading.shard import build_requests, direct_items, grade_requests, write_outcome
from autograde.ids import content_hash, shard_assignment
from autograde.ingest import ingest, read_banks, read_official_leaderboard, write_inputs
from autograde.io.bank import BankItem
from autograde.io.queries import read_queries
from autograde.io.text import atomic_write_text
from autograde.io.trec import read_qrels, write_qrels
from autograde.leaderboard import evaluate_systems, leaderboard, rank_correlation, runs_from_rankings
from autograde.log import logger
from autograde.metrics.config import SignificanceConfig
from autograde.pool import build_pool, write_pool, write_pool_shards
from autograde.qrels import relevance_level, rubric_qrels
from autograde.tables import read_table, write_table


def parse_scatteritem(item: str) -> tuple[int, int]:
    """Snakemake's ``"2-of-4"`` -> (index 1, 4 shards)."""
    i, _of, n = item.partition("-of-")
    return int(i) - 1, int(n)


def items_for_grader(config: Config, grader_name: str, queries: dict[str, str]) -> dict[str, list[BankItem]]:
    """The items a grader grades, per query (its bank, or the query itself for direct prompts)."""
    g = config.grader(grader_name)
    if g.bank == "direct":
        return direct_items(queries)
    probs = Problems()
    bank = read_banks(config.model_copy(update={"banks": {g.bank: config.banks[g.bank]}}), probs, queries)[g.bank]
    probs.raise_if_any()
    return bank.by_query()


def shard_digest(config: Config, grader_name: str, scatteritem: str, queries: dict[str, str],
                 items: dict[str, list[BankItem]]) -> str:
    """Hash of everything a grading shard depends on except the pool: its queries' items and the grader.

    Used as a Snakemake ``params`` value, so an edit of one query's items reruns exactly its shard.
    """
    idx, n = parse_scatteritem(scatteritem)
    assign = shard_assignment(list(queries), n)
    mine = sorted(q for q, s in assign.items() if s == idx)
    payload = {
        "grader": config.grader(grader_name).model_dump(),
        "queries": {q: queries[q] for q in mine},
        "items": {q: [(i.item_id, i.kind, i.text, list(i.gold_answers)) for i in items.get(q, [])] for q in mine},
    }
    return content_hash(payload, 24)


def run_ingest(config: Config, out_dir: str | Path) -> None:
    write_inputs(ingest(config), out_dir)


def run_pool(config: Config, ingest_dir: str | Path, pool_path: str | Path, shard_paths: list[str]) -> None:
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
    """Grade one pool shard with one grader; returns the shard's stats."""
    if threads:
        os.environ["AUTOGRADE_THREADS"] = str(threads)
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
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
    if digest:
        outcome.stats["digest"] = digest  # what the shard was graded for (checked by run_merge)
    write_outcome(outcome, grades_path, stats_path, failures_path, shard)
    logger.info("grader %s shard %s: %s", grader_name, shard or "-", json.dumps(outcome.stats, sort_keys=True))
    return outcome.stats


def check_shard_digests(shard_stats: list[str], expected: dict[str, str]) -> None:
    """Refuse shards graded for an older bank or grader config (a job that failed or was cancelled after an
    edit leaves its old output behind without Snakemake metadata, so Snakemake would not rerun it)."""
    probs = Problems()
    for path in shard_stats:
        st = json.loads(Path(path).read_text())
        want = expected.get(st.get("shard", ""))
        if want is not None and st.get("digest") != want:
            grades = str(path).replace(".stats.json", ".parquet")
            probs.add(grades, None, "graded for an older test bank or grader config",
                      f"regrade it: snakemake -R grade (cached pairs are reused), or delete {grades}")
    probs.raise_if_any()


def run_merge(shard_grades: list[str], shard_stats: list[str], shard_failures: list[str],
              grades_path: str | Path, stats_path: str | Path, failures_path: str | Path,
              expected_digests: dict[str, str] | None = None) -> None:
    """Concatenate shard outputs (grades sorted, stats summed with the per-shard list kept)."""
    if expected_digests:
        check_shard_digests(shard_stats, expected_digests)
    frames = [read_table(p) for p in shard_grades]
    grades = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    write_table(grades_path, grades, ["query_id", "passage_id", "item_id"])
    shards = [json.loads(Path(p).read_text()) for p in shard_stats]
    total = {k: sum(s.get(k) or 0 for s in shards) for k in ("pairs", "cached", "computed", "ok", "unparseable", "failed", "legacy_fallback")}
    atomic_write_text(stats_path, json.dumps({**total, "shards": shards}, indent=2, sort_keys=True) + "\n")
    atomic_write_text(failures_path, "".join(Path(p).read_text(encoding="utf-8") for p in shard_failures))


def run_qrels(grades_path: str | Path, mode: str, threshold: int, out_path: str | Path) -> None:
    grades = read_table(grades_path, ["query_id", "passage_id", "grade"])
    write_qrels(out_path, rubric_qrels(grades, mode, threshold))  # type: ignore[arg-type]


def run_evaluate(config: Config, qrels_path: str | Path, rankings_path: str | Path, level: int,
                 out_path: str | Path) -> None:
    qrels = read_qrels(qrels_path)
    runs = runs_from_rankings(read_table(rankings_path))
    ev = evaluate_systems(qrels, runs, list(config.evaluation.measures), level, config.evaluation.missing_queries)
    write_table(out_path, ev, ["run", "query_id", "measure"], metadata={"relevance_level": level})


def qrels_level(name: str) -> int:
    """Relevance level of a qrels variant name like ``max-4`` or ``count-3``."""
    mode, _, tau = name.partition("-")
    return relevance_level(mode, int(tau))  # type: ignore[arg-type]


def run_leaderboards(evaluation_path: str | Path, measures: list[str], out_paths: list[str],
                     significance: SignificanceConfig | None = None) -> None:
    """One TSV per measure; with a significance baseline, also p-values of each system vs the baseline."""
    ev = read_table(evaluation_path)
    for measure, path in zip(measures, out_paths, strict=True):
        lb = leaderboard(ev, measure)
        if significance is not None and significance.baseline:
            lb = add_significance(lb, ev, measure, significance)
        lb["rank"] = lb["rank"].map(lambda r: f"{r:g}")  # 1, 2.5 (average rank of ties)
        atomic_write_text(path, lb.to_csv(sep="\t", index=False, float_format="%.4f"))


def add_significance(lb: pd.DataFrame, ev: pd.DataFrame, measure: str, sig: SignificanceConfig) -> pd.DataFrame:
    """Columns p_value, p_adjusted, significant: paired permutation test of each system vs the baseline."""
    from autograde.metrics.significance import compare_to_baseline

    per_q = ev[(ev["measure"] == measure) & (ev["query_id"] != "all")]
    table: dict[str, dict[str, float]] = {}
    for run, q, v in per_q[["run", "query_id", "value"]].itertuples(index=False):
        table.setdefault(run, {})[q] = float(v)
    if sig.baseline not in table:
        raise KeyError(f"metrics.significance.baseline {sig.baseline!r} is not a system; have: {', '.join(sorted(table))}")
    cmp = compare_to_baseline(table, sig.baseline, seed=sig.seed, n_resamples=sig.n_resamples, alpha=sig.alpha,
                              correction=sig.correction, p_value_variant=sig.p_value_variant)
    cols = cmp.set_index("system")[["p_value", "p_adjusted", "significant"]]
    out = lb.join(cols, on="run")
    out["baseline"] = sig.baseline
    return out


def run_retrieval_metrics(config: Config, qrels_path: str | Path, rankings_path: str | Path,
                          json_path: str | Path, md_path: str | Path) -> None:
    """Evaluation-server retrieval metrics of every system under the human qrels (JSON + Markdown)."""
    from autograde.metrics.report import result_document, write_json
    from autograde.metrics.retrieval import evaluate_retrieval, retrieval_markdown

    runs = runs_from_rankings(read_table(rankings_path))
    body = evaluate_retrieval(read_qrels(qrels_path), runs, config.metrics.retrieval, qrels_source=str(qrels_path))
    write_json(json_path, result_document("retrieval", body))
    atomic_write_text(md_path, retrieval_markdown(body))


def run_generation_metrics(config: Config, data_path: str | Path, json_path: str | Path, md_path: str | Path) -> None:
    """Generation metrics (EM, Acc, StringEM, CoverEM, F1, ROUGE) of predictions vs reference answers."""
    from autograde.metrics.generation import evaluate_generation, generation_markdown, read_generation_data
    from autograde.metrics.report import result_document, write_json

    g = config.metrics.generation
    data = read_generation_data(data_path, g.gold_key, g.pred_key)
    body = evaluate_generation(data.golds, data.preds, g, where=data.where)
    write_json(json_path, result_document("generation", body))
    atomic_write_text(md_path, generation_markdown(body))


def run_cover(config: Config, grades_path: str | Path, rankings_path: str | Path, threshold: int,
              per_query_path: str | Path, cover_path: str | Path, ncover_path: str | Path) -> None:
    """Rubric-Cover per query (parquet) and the cover / n-cover leaderboards (TSV)."""
    from autograde.cover import cover_leaderboard, cover_per_query

    grades = read_table(grades_path, ["query_id", "passage_id", "item_id", "grade"])
    per_q = cover_per_query(grades, read_table(rankings_path), threshold, config.cover.depth,
                            config.cover.missing_queries)
    write_table(per_query_path, per_q, ["run", "query_id"], metadata={"threshold": threshold})
    for measure, path in (("cover", cover_path), ("ncover", ncover_path)):
        lb = cover_leaderboard(per_q, measure)  # type: ignore[arg-type]
        lb["rank"] = lb["rank"].map(lambda r: f"{r:g}")
        atomic_write_text(path, lb.to_csv(sep="\t", index=False, float_format="%.4f"))


def run_correlation(config: Config, leaderboard_paths: list[str], out_path: str | Path) -> None:
    """One row per leaderboard: grader, qrels variant, measure, Spearman, Kendall."""
    probs = Problems()
    official = read_official_leaderboard(config.data.official_leaderboard, probs) if config.data.official_leaderboard else {}
    probs.raise_if_any()
    rows = []
    results = Path(config.results_dir) / "leaderboards"
    for p in leaderboard_paths:
        rel = Path(p).relative_to(results) if Path(p).is_relative_to(results) else Path(p)
        parts = rel.with_suffix("").parts
        grader, variant, measure = (parts[0], "-", parts[1]) if len(parts) == 2 else (parts[0], parts[1], parts[-1])
        lb = pd.read_csv(p, sep="\t", dtype={"run": str})
        corr = rank_correlation(lb, official)
        rows.append({"grader": grader, "qrels": variant, "measure": measure, **corr})
    df = pd.DataFrame(rows, columns=["grader", "qrels", "measure", "n_systems", *config.correlation.methods])
    atomic_write_text(out_path, df.to_csv(sep="\t", index=False, float_format="%.4f"))


def validate_all(config: Config) -> dict[str, int]:
    """Check every input (queries, runs, answers, qrels, banks) and return counts."""
    inputs = ingest(config)
    probs = Problems()
    queries = read_queries(config.data.queries, probs)
    banks = read_banks(config, probs, queries)
    probs.raise_if_any()
    return {"queries": len(inputs.queries), "systems": int(inputs.rankings["run"].nunique()),
            "ranked_passages": len(inputs.rankings), "judgments": len(inputs.judgments),
            **{f"bank_{k}": len(b.items) for k, b in banks.items()}}
