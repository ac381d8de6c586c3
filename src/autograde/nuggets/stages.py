"""The nugget stages as plain functions over files; the workflow's rules (``rules/nuggets.smk``) and the
``autograde nuggets`` commands both call these.

answers (whole texts) ─┐
nugget bank ── importance ──────────────┐
             └─ assign (sharded, cached) ─> score (per shard) ─> merge ─> leaderboards, correlation, site
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.errors import Problems
from autograde.core.ids import content_hash
from autograde.core.log import logger

if TYPE_CHECKING:
    import pandas as pd

    from autograde.config.model import Config
    from autograde.config.nuggets import AssessorConfig, NuggetsConfig
    from autograde.io.banks.model import Bank, BankItem


def section(config: Config) -> NuggetsConfig:
    from autograde.core.schema import required

    return required(config.nuggets, "nuggets", "add one, see docs/nuggets.md")


def assessor(config: Config, name: str) -> AssessorConfig:
    from autograde.core.errors import UnknownNameError

    for a in section(config).assessors:
        if a.name == name:
            return a
    raise UnknownNameError(f"no nugget assessor named {name!r}; configured: "
                           f"{', '.join(a.name for a in section(config).assessors)}")


def read_nugget_bank(config: Config, queries: dict[str, str] | None) -> Bank:
    """The nugget bank (problems named by file and line)."""
    from autograde.io.banks.read import read_bank_for_queries

    problems = Problems()
    bank = read_bank_for_queries(config.banks[section(config).bank], problems, queries, config.data.queries_file)
    problems.raise_if_any()
    return bank


def shard_of(queries: dict[str, str], scatteritem: str | None) -> list[str]:
    """The query ids of one shard (all of them without a shard), dealt over every query of the queries file."""
    from autograde.pipeline.shards import shard_queries

    return shard_queries(list(queries), scatteritem) if scatteritem else sorted(queries)


def assign_digest(config: Config, name: str, scatteritem: str, queries: dict[str, str],
                  items: dict[str, list[BankItem]]) -> str:
    """What one assignment shard depends on besides the answers: the assessor, its queries and their nuggets."""
    mine = shard_of(queries, scatteritem)
    a = assessor(config, name)
    return content_hash({"assessor": a.model_dump(mode="json"), "bank": section(config).bank,
                         "queries": {q: queries[q] for q in mine},
                         "items": {q: [(i.item_id, i.text) for i in items.get(q, [])] for q in mine}}, 24)


def score_digest(config: Config, name: str, scatteritem: str, queries: dict[str, str],
                 items: dict[str, list[BankItem]]) -> str:
    """What one score shard depends on besides its assignment grades: thresholds, importance sources, its nuggets."""
    n = section(config)
    mine = shard_of(queries, scatteritem)
    given = {q: [(i.item_id, (i.info or {}).get("importance")) for i in items.get(q, [])] for q in mine}
    return content_hash({"thresholds": list(assessor(config, name).label_thresholds), "given": given,
                         "importance": n.importance.model_dump(mode="json") if n.importance else None,
                         "missing": n.missing_importance}, 24)


def importance_digest(config: Config, scatteritem: str, queries: dict[str, str],
                      items: dict[str, list[BankItem]]) -> str:
    """What one importance shard depends on: its queries' nuggets, the importance they are given, the model."""
    n = section(config)
    mine = shard_of(queries, scatteritem)
    return content_hash({"items": {q: [(i.item_id, i.text, (i.info or {}).get("importance")) for i in items.get(q, [])]
                                   for q in mine},
                         "importance": n.importance.model_dump(mode="json") if n.importance else None,
                         "missing": n.missing_importance}, 24)


# -- stages ---------------------------------------------------------------------------------------------------------


def run_answers(config: Config, out_path: str | Path) -> pd.DataFrame:
    """The whole answers of ``data.answers`` (one row per run and query)."""
    from autograde.core.paths import expand_globs
    from autograde.core.tables import write_table
    from autograde.nuggets.assign import answers_table

    problems = Problems()
    answers = answers_table(expand_globs(config.data.answers), problems)
    problems.raise_if_any()
    write_table(out_path, answers, ["run", "query_id"])
    return answers


def _queries(path: str | Path) -> dict[str, str]:
    """The queries of the ingest table (``.parquet``) or of a queries file (TSV or JSON)."""
    if str(path).endswith(".parquet"):
        from autograde.core.tables import read_table

        return dict(read_table(path)[["query_id", "query_text"]].itertuples(index=False))
    from autograde.io.queries import read_queries

    return read_queries(path)


def run_importance(config: Config, queries_path: str | Path, out_path: str | Path, stats_path: str | Path,
                   shard: str = "", threads: int | None = None) -> dict:
    """The importance (bank, model or default) of every nugget (of one shard's queries), as a table, and stats."""
    from autograde.core.runtime import set_threads
    from autograde.core.tables import write_table
    from autograde.core.text import atomic_write_text
    from autograde.io.banks.model import Bank
    from autograde.nuggets.importance import importance_table

    set_threads(threads)
    queries = _queries(queries_path)
    bank = read_nugget_bank(config, queries)
    if shard:
        mine = set(shard_of(queries, shard))
        bank = Bank([i for i in bank.items if i.query_id in mine], bank.headers, bank.lines)
    table, stats = importance_table(config, bank, config.banks[section(config).bank], queries)
    write_table(out_path, table, ["query_id", "item_id"])
    stats = {"shard": shard, **stats}
    atomic_write_text(stats_path, json.dumps(stats, indent=2, sort_keys=True) + "\n")
    logger.info("nugget importance %s: %s", shard or "-",
                json.dumps({k: v for k, v in stats.items() if k != "model"}, sort_keys=True))
    return stats


def run_merge_importance(shard_tables: list[str], shard_stats: list[str], out_path: str | Path,
                         stats_path: str | Path) -> None:
    """Join the importance shards (one table for the merge and the site; summed stats with the shards kept)."""
    import pandas as pd

    from autograde.core.tables import read_table, write_table
    from autograde.core.text import atomic_write_text
    from autograde.pipeline.jobs import gather_shards

    write_table(out_path, pd.concat([read_table(p) for p in shard_tables], ignore_index=True), ["query_id", "item_id"])
    shards, total = gather_shards(shard_stats, ("nuggets", "from_bank", "from_model", "default", "n_vital", "n_okay"))
    atomic_write_text(stats_path, json.dumps({**total, "shards": shards}, indent=2, sort_keys=True) + "\n")


def run_assign_shard(config: Config, name: str, answers_path: str | Path, queries_path: str | Path,
                     grades_path: str | Path, stats_path: str | Path, failures_path: str | Path, shard: str = "",
                     threads: int | None = None, digest: str | None = None, grader_grades: str | Path | None = None,
                     rankings: str | Path | None = None) -> dict[str, Any]:
    """Assignment grades of one shard of queries: whole answers graded (cache first), or a grader's grades mapped."""
    from autograde.core.runtime import set_threads
    from autograde.core.tables import read_table
    from autograde.grading.shard import ShardOutcome, write_outcome
    from autograde.nuggets.assign import grade_whole_answers, mapped_grades
    from autograde.pipeline.stages import check_failures

    set_threads(threads)
    a = assessor(config, name)
    queries = _queries(queries_path)
    mine = set(shard_of(queries, shard or None))
    answers = read_table(answers_path)
    answers = answers[answers["query_id"].isin(mine)]
    items = {q: v for q, v in read_nugget_bank(config, queries).by_query().items() if q in mine}
    if a.mode == "mapped":
        if grader_grades is None or rankings is None:
            from autograde.core.errors import InvalidValueError

            raise InvalidValueError(f"assessor {name!r} maps grader {a.grader!r}: give its grades and the rankings "
                                    "(fix: --grader-grades results/grades/<grader>.parquet --rankings "
                                    "results/ingest/rankings.parquet)")
        grades = mapped_grades(read_table(grader_grades), read_table(rankings), answers, items)
        failed = int((grades["parse_status"] != "ok").sum())
        stats = {"grader": name, "pairs": len(grades), "mapped_from": a.grader, "cached": 0, "computed": 0,
                 "ok": len(grades) - failed, "unparseable": 0, "failed": failed}
        fails = [{"query_id": r.query_id, "passage_id": r.passage_id, "item_id": r.item_id, "grader": name,
                  "parse_status": r.parse_status, "error": r.error} for r in grades.itertuples() if r.parse_status != "ok"]
        outcome = ShardOutcome(grades, fails, stats)
        if failed:
            logger.warning("assessor %s shard %s: %d (answer, nugget) pair(s) have no grade of %s (scored "
                           "not_support)", name, shard or "-", failed, a.grader)
    else:
        outcome = grade_whole_answers(config, a, answers, queries, items)
        check_failures(outcome.stats, outcome.failures, config.grading.allow_failures, name, shard)
    if digest:
        outcome.stats["digest"] = digest
    write_outcome(outcome, grades_path, stats_path, failures_path, shard)
    logger.info("assessor %s shard %s: %s", name, shard or "-", json.dumps(outcome.stats, sort_keys=True))
    return outcome.stats


def run_score_shard(config: Config, name: str, grades_path: str | Path, answers_path: str | Path,
                    importance_path: str | Path, queries_path: str | Path, assignments_path: str | Path,
                    scores_path: str | Path, shard: str = "") -> pd.DataFrame:
    """Labels and per-answer nugget scores of one shard (no run means: the merge adds those)."""
    from autograde.core.tables import read_table, write_table
    from autograde.metrics.nuggets import ALL_QUERIES, answers_from_assignments, evaluation_table
    from autograde.nuggets.assign import label_assignments
    from autograde.nuggets.importance import require_importance

    a = assessor(config, name)
    importance = read_table(importance_path)
    grades = read_table(grades_path)
    answers = read_table(answers_path)
    mine = set(shard_of(_queries(queries_path), shard or None))
    answers = answers[answers["query_id"].isin(mine)]
    unscored = answers[~answers["query_id"].isin(set(importance["query_id"]))]
    if len(unscored):
        logger.warning("%d answer(s) to queries without nuggets are not scored: %s", len(unscored),
                       ", ".join(sorted(set(unscored["query_id"]))[:10]))
    answers = answers[answers["query_id"].isin(set(importance["query_id"]))]
    imp = importance[importance["query_id"].isin(mine)]
    items = {str(q): list(g["item_id"]) for q, g in imp.groupby("query_id", sort=True)}
    labels = label_assignments(grades, answers, items, require_importance(imp, set(imp["item_id"])),
                               a.label_thresholds)
    write_table(assignments_path, labels, ["run", "query_id", "item_id"])
    ev = evaluation_table(answers_from_assignments(labels))
    ev = ev[ev["query_id"] != ALL_QUERIES]
    write_table(scores_path, ev, ["run", "query_id", "measure"])
    return ev


def run_merge_nuggets(config: Config, name: str, shard_assignments: list[str], shard_scores: list[str],
                      shard_stats: list[str], shard_failures: list[str], answers_path: str | Path,
                      queries_path: str | Path, importance_path: str | Path, out: dict[str, str],
                      expected_digests: dict[str, str] | None = None) -> pd.DataFrame:
    """Join the shards of one assessor: the assignment table (parquet and the TREC RAG assignment JSONL), the
    evaluation table with each run's mean (query ``all``), stats and failures. ``out`` names the files
    (``assignments``, ``jsonl``, ``evaluation``, ``stats``, ``failures``)."""
    import pandas as pd

    from autograde.core.tables import read_table, write_table
    from autograde.core.text import atomic_write_text
    from autograde.metrics.nuggets import ALL_QUERIES, mean
    from autograde.nuggets.assign import label_counts
    from autograde.nuggets.interchange import AssignedAnswer, write_assignments
    from autograde.pipeline.jobs import gather_shards, join_failures

    shards, total = gather_shards(shard_stats, ("pairs", "cached", "computed", "ok", "unparseable", "failed",
                                                "input_tokens", "output_tokens"),
                                  expected_digests, f"assignment shard of assessor {name!r}",
                                  "nugget bank or assessor config", "rerun it: snakemake -R assign_nuggets (cached grades are reused), or delete it")
    labels = pd.concat([read_table(p) for p in shard_assignments], ignore_index=True)
    write_table(out["assignments"], labels, ["run", "query_id", "item_id"])
    per_answer = pd.concat([read_table(p) for p in shard_scores], ignore_index=True)
    means = [(run, ALL_QUERIES, m, mean(list(g["value"])))
             for (run, m), g in per_answer.sort_values("query_id", kind="mergesort").groupby(["run", "measure"])]
    ev = pd.concat([per_answer, pd.DataFrame(means, columns=per_answer.columns)], ignore_index=True)
    write_table(out["evaluation"], ev, ["run", "query_id", "measure"], metadata={"assessor": name})
    importance = read_table(importance_path)
    texts = dict(zip(importance["item_id"], importance["text"], strict=True))
    order = {i: k for k, i in enumerate(importance["item_id"])}
    answers = read_table(answers_path).set_index(["run", "query_id"])["text"].to_dict()
    queries = _queries(queries_path)
    records = []
    for (run, q), g in labels.groupby(["run", "query_id"], sort=True):
        g = g.sort_values("item_id", key=lambda s: s.map(order), kind="mergesort")
        records.append(AssignedAnswer(str(run), str(q), answers[(run, q)], query=queries.get(str(q), ""), nuggets=[
            (texts[i], imp, a) for i, imp, a in g[["item_id", "importance", "assignment"]].itertuples(index=False)]))
    write_assignments(out["jsonl"], records)
    stats = {"assessor": name, "grades": total, "labels": label_counts(labels), "answers": len(records),
             "runs": int(labels["run"].nunique()), "shards": shards}
    atomic_write_text(out["stats"], json.dumps(stats, indent=2, sort_keys=True) + "\n")
    atomic_write_text(out["failures"], join_failures(shard_failures))
    logger.info("assessor %s: %d answers of %d runs, labels %s", name, len(records), stats["runs"],
                json.dumps(stats["labels"], sort_keys=True))
    return ev


def run_nugget_leaderboards(config: Config, evaluation_path: str | Path, out_paths: list[str]) -> None:
    """One TSV per nugget score, best run first; with ``nuggets.baseline``, permutation-test p-values against it
    (settings of ``metrics.significance``)."""
    from autograde.core.errors import ConfigError
    from autograde.core.tables import read_table
    from autograde.pipeline.stages import run_leaderboards

    n = section(config)
    sig = config.metrics.significance.model_copy(update={"baseline": n.baseline}) if n.baseline else None
    runs = sorted(set(read_table(evaluation_path, ["run"])["run"]))
    if n.baseline and n.baseline not in runs:
        raise ConfigError(f"nuggets.baseline {n.baseline!r} is not a RAG run (fix: name one of {', '.join(runs)}, or "
                          "null for no p-values)")
    run_leaderboards(evaluation_path, list(n.measures), out_paths, sig)


def run_nuggets(config: Config, names: list[str] | None = None) -> dict[str, Any]:
    """Every nugget stage in this process (no Snakemake, one shard): answers, importance, then per assessor
    assignment, scores, merge and leaderboards, into the config's results folder. Returns each run's means."""
    from autograde.config.nuggets import NUGGET_VARIANT
    from autograde.core.errors import InputError, Problem
    from autograde.core.layout import Layout
    from autograde.metrics.nuggets import ALL_QUERIES

    n, lay, queries = section(config), Layout.of(config.results_dir), config.data.queries_file
    answers, importance = lay.nugget_table("answers.parquet"), lay.nugget_table("importance.parquet")
    run_answers(config, answers)
    run_importance(config, queries, importance, lay.nugget_table("importance.stats.json"))
    out: dict[str, Any] = {}
    for name in names or [a.name for a in n.assessors]:
        a, shard = assessor(config, name), "1-of-1"
        mapped: dict[str, str] = {}
        if a.mode == "mapped":
            mapped = {"grader_grades": lay.grades(str(a.grader)), "rankings": lay.ingest("rankings")}
            missing = [p for p in mapped.values() if not Path(p).is_file()]
            if missing:
                raise InputError([Problem(p, None, f"assessor {name!r} maps grader {a.grader!r}, whose grades or "
                                          "answer passages are not there yet", f"run the workflow up to them first: "
                                          f"snakemake {lay.grades(str(a.grader))}") for p in missing])
        f = {k: lay.nugget_shard(name, shard, k) for k in (".grades.parquet", ".stats.json", ".failures.jsonl",
                                                            ".assignments.parquet", ".scores.parquet")}
        run_assign_shard(config, name, answers, queries, f[".grades.parquet"], f[".stats.json"],
                         f[".failures.jsonl"], grader_grades=mapped.get("grader_grades"),
                         rankings=mapped.get("rankings"))
        run_score_shard(config, name, f[".grades.parquet"], answers, importance, queries, f[".assignments.parquet"],
                        f[".scores.parquet"])
        merged = {"assignments": lay.nuggets(name, "assignments.parquet"), "jsonl": lay.nuggets(name, "assignments.jsonl"),
                  "evaluation": lay.evaluation(name, NUGGET_VARIANT), "stats": lay.nuggets(name, "stats.json"),
                  "failures": lay.nuggets(name, "failures.jsonl")}
        ev = run_merge_nuggets(config, name, [f[".assignments.parquet"]], [f[".scores.parquet"]], [f[".stats.json"]],
                               [f[".failures.jsonl"]], answers, queries, importance, merged)
        run_nugget_leaderboards(config, merged["evaluation"], [lay.leaderboard(name, NUGGET_VARIANT, m) for m in n.measures])
        means = ev[ev["query_id"] == ALL_QUERIES]
        out[name] = {run: dict(zip(g["measure"], g["value"], strict=True)) for run, g in means.groupby("run")}
    return out
