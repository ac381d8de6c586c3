"""The `autograde nuggets` commands: nugget scores of RAG answers (TREC RAG 2024), with or without the workflow.

Examples::

    autograde nuggets run --config config/experiments/example.yaml          # every nugget stage, in this process
    autograde nuggets score --assignments final_assignments.jsonl --out metrics.jsonl   # rescore a track file
    autograde nuggets compare ours.jsonl theirs.jsonl                       # our scores vs the reference scorer's
    autograde nuggets importance --config my.yaml                           # vital / okay per nugget only

``score`` reads the TREC RAG assignment JSONL (what the reference assigner writes; the workflow writes
``results/nuggets/<assessor>/assignments.jsonl`` in the same format) and writes the reference scorer's output
(one line per answer, then the mean under ``qid: all``); ``compare`` reads two such outputs.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from autograde.cli.common import add_command, add_config_option, add_shard_options, add_threads_option, load_experiment


def cmd_run(args: argparse.Namespace) -> int:
    from autograde.nuggets.stages import run_nuggets

    means = run_nuggets(load_experiment(args), args.assessor or None)
    print(json.dumps(means, indent=2, sort_keys=True))
    return 0


def cmd_importance(args: argparse.Namespace) -> int:
    from autograde.core.layout import Layout
    from autograde.nuggets.importance import importance_model
    from autograde.nuggets.stages import run_importance
    from autograde.pipeline.jobs import require_gpu

    config = load_experiment(args)
    require_gpu(importance_model(config), "nugget importance")
    lay = Layout.of(config.results_dir)
    out = args.out or lay.nugget_table("importance.parquet")
    stats = run_importance(config, args.queries or config.data.queries_file, out,
                           args.stats or out.removesuffix(".parquet") + ".stats.json", shard=args.shard,
                           threads=args.threads)
    print(json.dumps({k: v for k, v in stats.items() if k != "model"}, sort_keys=True))
    return 0


def cmd_assign(args: argparse.Namespace) -> int:
    """One assignment shard (the workflow's assign_nuggets jobs of vllm assessors run this in the vLLM environment)."""
    from autograde.nuggets.stages import assessor, run_assign_shard
    from autograde.nuggets.workflow import assessor_grader
    from autograde.pipeline.jobs import require_gpu

    config = load_experiment(args)
    require_gpu(assessor_grader(config, assessor(config, args.assessor)), f"assessor {args.assessor}")
    stats = run_assign_shard(config, args.assessor, args.answers, args.queries, args.out, args.stats,
                             args.failures, shard=args.shard, threads=args.threads, digest=args.digest,
                             grader_grades=args.grader_grades, rankings=args.rankings)
    print(json.dumps(stats, sort_keys=True))
    return 0


def _nuggets_of_bank(path: str | None, queries: str | None) -> tuple[dict[str, set[str]] | None, set[str] | None]:
    qs = None
    if queries:
        from autograde.io.queries import read_queries

        qs = set(read_queries(queries))
    if not path:
        return None, qs
    from autograde.core.errors import Problems
    from autograde.io.banks.read import read_bank

    problems = Problems()
    bank = read_bank(path, problems)
    problems.raise_if_any()
    return {q: {i.item_id for i in items} for q, items in bank.by_query().items()}, qs


def cmd_score(args: argparse.Namespace) -> int:
    from autograde.cli.common import write_text_outputs
    from autograde.core.log import logger
    from autograde.metrics.nuggets import ALL_QUERIES, MEASURES, evaluation_table
    from autograde.nuggets.interchange import read_assignments, reading_notes, reference_lines

    nuggets, queries = _nuggets_of_bank(args.bank, args.queries)
    answers = read_assignments(args.assignments, nuggets=nuggets, queries=queries)
    for note in reading_notes(answers):
        logger.warning("%s: %s", args.assignments, note)
    if args.run:
        answers = [a for a in answers if a.run == args.run]
    if args.out:
        write_text_outputs(args.out, "".join(reference_lines(answers, weighted=args.weighted)), quiet=True)
    table = evaluation_table([(a.run, a.query_id, a.labels()) for a in answers])
    means = table[table["query_id"] == ALL_QUERIES].pivot(index="run", columns="measure", values="value")
    means = means[[m.name for m in MEASURES]]
    sys.stdout.write(means.to_csv(sep="\t", float_format="%.4f"))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from autograde.nuggets.interchange import compare_scores, read_reference_scores

    cmp = compare_scores(read_reference_scores(args.ours), read_reference_scores(args.theirs), args.tolerance)
    print(json.dumps(cmp, indent=2, sort_keys=True))
    return 0 if cmp["agree"] else 1


def register(subparsers: Any) -> None:
    """Add ``nuggets`` with its subcommands to the ``autograde`` CLI."""
    p = subparsers.add_parser("nuggets", help="nugget scores of RAG answers: run, importance, assign, score, compare",
                              description="Nugget scores of RAG answers as the TREC RAG track computes them "
                              "(importance, assignment, All / Vital / Weighted), with or without the workflow.")
    sub = p.add_subparsers(dest="nuggets_command", required=True)

    r = add_command(sub, "run", "every nugget stage of the experiment in this process (no Snakemake)")
    add_config_option(r)
    r.add_argument("--assessor", action="append", help="only this assessor (repeatable; default: every one)")
    r.set_defaults(func=cmd_run)

    i = add_command(sub, "importance", "vital / okay per nugget: the bank's, else the importance model's")
    add_config_option(i)
    i.add_argument("--out", help="the importance table (default: <results_dir>/nuggets/importance.parquet)")
    i.add_argument("--stats", help="the stats JSON (default: beside --out, .stats.json)")
    i.add_argument("--queries", help="queries table written by ingest, or a queries file (default: data.queries)")
    add_shard_options(i, made=None)
    add_threads_option(i)
    i.set_defaults(func=cmd_importance)

    a = add_command(sub, "assign", "one assignment shard of one assessor (workflow jobs)")
    add_config_option(a)
    a.add_argument("--assessor", required=True, help="the assessor's name under nuggets.assessors")
    a.add_argument("--answers", required=True, help="the whole-answers table (results/nuggets/answers.parquet)")
    a.add_argument("--queries", required=True, help="queries table written by ingest, or the queries file")
    a.add_argument("--out", required=True, help="output assignment grades parquet")
    a.add_argument("--stats", required=True, help="output stats JSON")
    a.add_argument("--failures", required=True, help="output failures JSONL")
    add_shard_options(a)
    a.add_argument("--grader-grades", help="mapped assessors: the mapped grader's merged grades parquet")
    a.add_argument("--rankings", help="mapped assessors: results/ingest/rankings.parquet (the answers' passages)")
    add_threads_option(a)
    a.set_defaults(func=cmd_assign)

    s = add_command(sub, "score", "rescore a TREC RAG assignment JSONL file; write the reference scorer's output")
    s.add_argument("--assignments", required=True, help="assignment JSONL ({qid, run_id, answer_text, nuggets: "
                   "[{text, importance, assignment}]} per line)")
    s.add_argument("--bank", help="nugget bank: a nugget not in it for its query is an error")
    s.add_argument("--queries", help="queries file: a query not in it is an error")
    s.add_argument("--run", help="only the answers of this run (the reference scorer scores one run per file)")
    s.add_argument("--out", help="write the reference scorer's output here (one line per answer, then qid 'all')")
    s.add_argument("--weighted", action="store_true",
                   help="also write weighted_score and strict_weighted_score (the reference scorer has neither)")
    s.set_defaults(func=cmd_score)

    c = add_command(sub, "compare", "compare two outputs in the reference scorer's format, line by line",
                    "Compare two outputs in the reference scorer's format, line by line. Exit status 0 when every "
                    "value both files have agrees within --tolerance; 1 when one does not, or when an answer line is "
                    "in one file only. Measures only one file has (such as the weighted scores of 'score --weighted', "
                    "which the reference scorer does not write) are listed, not compared; one-sided answers are "
                    "counted and the first few shown.")
    c.add_argument("ours", help="our scores (autograde nuggets score --out)")
    c.add_argument("theirs", help="the reference scorer's output (nuggetizer's scripts/calculate_metrics.py)")
    c.add_argument("--tolerance", type=float, default=1e-12,
                   help="largest absolute difference accepted between two shared values (exit status 1 above it; "
                   "default %(default)s)")
    c.set_defaults(func=cmd_compare)
