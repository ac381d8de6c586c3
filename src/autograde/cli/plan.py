"""``autograde plan``: what a configured run will compute, before it runs.

Example::

    autograde plan --config config/experiments/example.yaml --measure 64
    | stage | grader | backend | pairs | cached | to compute | input tokens | output tokens | time | cost |
    | grading | minilm-questions | embedded | 2,310 | 0 | 2,310 | 61,210 | 0 | 41s | - |
    ...

Per grader: the pairs, what the grade cache holds, the prompts to compute and their tokens (the grader's own
tokenizer; an endpoint's approximated), per shard; ``--measure N`` times N prompts per grader on this node and
extrapolates the time per shard and in total, and the cost where an openai grader's prices are configured
(``options.input_price_per_million`` / ``output_price_per_million``).
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

__all__ = ["register"]


def cmd_plan(args: argparse.Namespace) -> int:
    """Print the plan of the configured run."""
    from autograde.core.runtime import set_threads
    from autograde.workflow.plan import format_plan, plan_json, plan_run

    set_threads(args.threads)  # --measure times the models with the thread count their jobs get
    plans, source = plan_run(load_experiment(args), experiment_file(args), measure=args.measure,
                             graders=args.grader, load_models=args.load_models)
    sys.stdout.write(plan_json(plans, source) if args.json else format_plan(plans, source))
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
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=cmd_plan)
