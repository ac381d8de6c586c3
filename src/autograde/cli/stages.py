"""The workflow's stages as commands: ``validate``, ``ingest``, ``pool``, ``grade``, ``qrels``, ``evaluate``,
``leaderboard``, ``correlate``. Each runs the same stage function as its Snakemake rule.

Examples::

    autograde validate --config config/experiments/example.yaml
    autograde ingest --out results/ingest
    autograde pool --ingest results/ingest --out results/pool/pool.parquet
    autograde grade --grader minilm-questions --pool results/pool/pool.parquet --out grades.parquet
    autograde qrels --grades grades.parquet --mode max --threshold 4 --out max-4.qrels
    autograde evaluate --qrels max-4.qrels --rankings results/ingest/rankings.parquet --level 4 --out eval.parquet
    autograde leaderboard --evaluation eval.parquet --measure ndcg_cut_10 --out lb.tsv
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from autograde.cli.common import (
    DEFAULT_LAYOUT,
    add_config_option,
    add_shard_options,
    add_threads_option,
    experiment_file,
    load_experiment,
)


def cmd_validate(args: argparse.Namespace) -> int:
    """Check the config and everything a run will read (the workflow runs the same checks before any job)."""
    from autograde.workflow.checks import check_experiment

    report = check_experiment(load_experiment(args, resolve=False), experiment_file(args))
    dataset = {"dataset": report.dataset} if report.dataset else {}
    print(json.dumps({"ok": True, **report.counts, **dataset}, indent=2))
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    """Read and check the inputs; write the normalized tables."""
    from autograde.pipeline.stages import run_ingest

    run_ingest(load_experiment(args), args.out)
    return 0


def cmd_pool(args: argparse.Namespace) -> int:
    """Build the pool (judged passages + top-k of every system), and its shards."""
    from autograde.pipeline.stages import run_pool

    shards = [str(Path(args.shard_dir) / f"{i + 1}-of-{args.shards}.parquet") for i in range(args.shards)] \
        if args.shard_dir else []
    run_pool(load_experiment(args), args.ingest, args.out, shards)
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    """Grade a pool (or one shard) with one configured grader."""
    from autograde.pipeline.jobs import require_gpu
    from autograde.pipeline.stages import run_grade

    out = Path(args.out)
    stats = args.stats or str(out.with_suffix(".stats.json"))
    failures = args.failures or str(out.with_suffix(".failures.jsonl"))
    config = load_experiment(args)
    require_gpu(config.grader(args.grader), f"grader {args.grader}")
    result = run_grade(config, args.grader, args.pool, args.queries, out, stats, failures,
                       threads=args.threads, shard=args.shard, digest=args.digest)
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0


def cmd_qrels(args: argparse.Namespace) -> int:
    """Rubric-Qrels of one grades table."""
    from autograde.pipeline.stages import run_qrels

    run_qrels(args.grades, args.mode, args.threshold, args.out)
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """trec_eval measures of every system under one qrels file."""
    from autograde.pipeline.stages import run_evaluate

    run_evaluate(load_experiment(args), args.qrels, args.rankings, args.level, args.out)
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """One measure's leaderboard (TSV) with the permutation test against the next system."""
    from autograde.pipeline.stages import run_leaderboards

    run_leaderboards(args.evaluation, [args.measure], [args.out])
    return 0


def cmd_correlate(args: argparse.Namespace) -> int:
    """Rank correlation of leaderboards with the official leaderboard."""
    from autograde.core.layout import Layout
    from autograde.pipeline.stages import run_correlation

    config = load_experiment(args)
    layout = Layout.of(config.results_dir)
    entries = [{**layout.parse_leaderboard(p), "path": p} for p in args.leaderboard]
    run_correlation(config, entries, args.out)
    return 0


def cmd_outputs(args: argparse.Namespace) -> int:
    """Where the experiment's main results are (the files that exist now), for a person to open next."""
    from autograde.workflow.outputs import outputs_summary

    print(outputs_summary(load_experiment(args), experiment_file(args)))
    return 0


def register(sub: Any) -> None:
    """Add the stage commands to the ``autograde`` CLI."""

    def add(name: str, func: Any, help_: str, config: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=(func.__doc__ or help_).strip())
        if config:
            add_config_option(p)
        p.set_defaults(func=func)
        return p

    add("validate", cmd_validate, "check the config and every input; print counts")
    add("outputs", cmd_outputs, "where the experiment's main results are (leaderboards, correlation, review site)")
    p = add("ingest", cmd_ingest, "read and check inputs; write the normalized tables")
    p.add_argument("--out", default=DEFAULT_LAYOUT.ingest_dir, help="output folder (default: %(default)s)")
    p = add("pool", cmd_pool, "build the pool (judged + top-k of every system)")
    p.add_argument("--ingest", default=DEFAULT_LAYOUT.ingest_dir, help="folder written by 'autograde ingest' (default: %(default)s)")
    p.add_argument("--out", default=DEFAULT_LAYOUT.pool, help="the pool table (default: %(default)s)")
    p.add_argument("--shards", type=int, default=1, help="number of shards written to --shard-dir (default: %(default)s)")
    p.add_argument("--shard-dir", default=None, help="also write the pool's shards here (N-of-M.parquet)")
    p = add("grade", cmd_grade, "grade a pool (or shard) with one configured grader")
    p.add_argument("--grader", required=True, help="the grader's name under graders: in the config")
    p.add_argument("--pool", required=True, help="pool (or pool shard) parquet to grade")
    p.add_argument("--queries", default=DEFAULT_LAYOUT.ingest("queries"),
                   help="queries table written by ingest (default: %(default)s)")
    p.add_argument("--out", required=True, help="output grades parquet")
    p.add_argument("--stats", help="output stats JSON (default: next to --out, .stats.json)")
    p.add_argument("--failures", help="output failures JSONL (default: next to --out, .failures.jsonl)")
    add_threads_option(p)
    add_shard_options(p)
    p = add("qrels", cmd_qrels, "Rubric-Qrels from a grades table", config=False)
    p.add_argument("--grades", required=True, help="grades parquet of one grader")
    p.add_argument("--mode", choices=["max", "count"], default="max",
                   help="max: label = max grade over items; count: label = items graded >= threshold "
                        "(default: %(default)s)")
    p.add_argument("--threshold", type=int, default=4, help="grade threshold tau (default: %(default)s)")
    p.add_argument("--out", required=True, help="output TREC qrels file")
    p = add("evaluate", cmd_evaluate, "trec_eval measures of every system under a qrels file")
    p.add_argument("--qrels", required=True, help="TREC qrels file")
    p.add_argument("--rankings", default=DEFAULT_LAYOUT.ingest("rankings"),
                   help="rankings table written by ingest (default: %(default)s)")
    p.add_argument("--level", type=int, default=1, help="trec_eval relevance level -l (default: %(default)s)")
    p.add_argument("--out", required=True, help="output per-query evaluation parquet")
    p = add("leaderboard", cmd_leaderboard, "one measure's leaderboard (TSV)", config=False)
    p.add_argument("--evaluation", required=True, help="evaluation parquet written by 'autograde evaluate'")
    p.add_argument("--measure", required=True, help="the measure to rank by (a trec_eval name, e.g. ndcg_cut_10)")
    p.add_argument("--out", required=True, help="output leaderboard TSV")
    p = add("correlate", cmd_correlate, "rank correlation of leaderboards with the official one")
    p.add_argument("--leaderboard", action="append", required=True,
                   help="a leaderboard TSV (repeatable; grader, qrels and measure come from its path)")
    p.add_argument("--out", required=True, help="output correlation TSV")
