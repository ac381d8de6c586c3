"""``autograde plan``: what a configured run will compute, before it runs.

Example::

    autograde plan --config config/experiments/example.yaml --measure 64
    | stage | grader | backend | pairs | cached | to compute | input tokens | output tokens | time | cost |
    | grading | minilm-questions | embedded | 2,310 | 0 | 2,310 | 61,210 | 0 | 41s | - |
    ...

Per grader: the pairs, what the grade cache holds, the prompts to compute and their tokens (the grader's own
tokenizer; an endpoint's approximated), per shard; ``--measure N`` times N prompts per grader on this node and
extrapolates the time per shard and in total, and the cost where an openai grader's prices are configured
(``options.input_price_per_million`` / ``output_price_per_million``). The last line counts the cluster jobs the run
submits under the SLURM profile's grouping (``--cluster-profile``, ``--group-components``; docs/cluster.md).
"""

from __future__ import annotations

import argparse
import sys

from autograde.cli.common import (
    add_config_option,
    add_threads_option,
    experiment_file,
    load_experiment,
    non_negative_int,
)
from autograde.workflow.cluster import SLURM_PROFILE

__all__ = ["register"]


def cmd_plan(args: argparse.Namespace) -> int:
    """Print the plan of the configured run."""
    from autograde.core.runtime import set_threads
    from autograde.workflow.plan import format_plan, plan_json, plan_run

    set_threads(args.threads)  # --measure times the models with the thread count their jobs get
    plans, source = plan_run(load_experiment(args), experiment_file(args), measure=args.measure,
                             graders=args.grader, load_models=args.load_models)
    cluster = None
    if args.cluster_profile != "none":
        from autograde.workflow.cluster import cluster_jobs, parse_group_components

        components = parse_group_components(args.group_components or [], key="--group-components")
        cluster = cluster_jobs(experiment_file(args), ".", args.cluster_profile, components)
    sys.stdout.write(plan_json(plans, source, cluster) if args.json else format_plan(plans, source, cluster))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``plan`` subcommand."""
    p = subparsers.add_parser(
        "plan", help="what a run will compute: pairs, cached, prompts, tokens; with --measure its time and cost",
        description="The plan of the configured run before it runs: per grader the pairs, what the grade cache "
        "holds, the prompts to compute and their input and output tokens per shard; --measure N also times N "
        "prompts on this node and extrapolates the time per shard and in total, and the cost where prices are set.")
    add_config_option(p)
    p.add_argument("--measure", type=non_negative_int, default=0, metavar="N",
                   help="time N prompts per grader on this node (loads each model; nothing is cached) and "
                   "extrapolate (default: %(default)s, no timing)")
    p.add_argument("--grader", action="append", help="plan only this grader (repeatable; default: all)")
    p.add_argument("--load-models", action="store_true", help="also load local models (hf) to count their tokens "
                   "and look up their cache without timing them")
    add_threads_option(p, what="CPU threads of the models --measure times: give the grading jobs' count (the "
                       "workflow's grade rule: 2) for a like-for-like time")
    p.add_argument("--cluster-profile", default=str(SLURM_PROFILE), metavar="DIR",
                   help="count the cluster jobs under this Snakemake profile's grouping (its group-components and "
                   "groups; default: the checkout's profiles/slurm; none: do not count)")
    p.add_argument("--group-components", action="append", metavar="GROUP=N",
                   help="as snakemake --group-components: up to N unconnected parts of GROUP per cluster job "
                   "(repeatable; overrides the profile's)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=cmd_plan)
