"""``autograde reproduce``: rebuild the papers' tables without Snakemake (``make reproduce`` runs the same stages).

Examples::

    autograde reproduce run                                # every table of config/reproduce/reproduce.yaml + index
    autograde reproduce run --table workbench_spurious --table trec_eval_parity
    autograde reproduce index --plan my-plan.yaml          # only the comparison, from the measured tables

The plan defaults to ``$AUTOGRADE_REPRODUCE`` or ``config/reproduce/reproduce.yaml``; outputs go to
``<results_dir>/reproduction/`` (index.md, index.json, index.html, tables/<table>/measured.json).
"""

from __future__ import annotations

import argparse
import sys

from autograde.cli.common import add_command, add_threads_option

__all__ = ["register"]


def cmd_run(args: argparse.Namespace) -> int:
    """Measure the tables (all, or the ones named), then build the index."""
    from autograde.core.runtime import set_threads
    from autograde.reproduce.config import load_plan, plan_path
    from autograde.reproduce.stages import build_reproduction_index, run_table

    set_threads(args.threads)
    source = plan_path(args.plan)
    plan = load_plan(source)
    for name in args.table or plan.table_names():
        run_table(plan, name)
    doc = build_reproduction_index(plan, source)
    if not args.quiet:
        _print_summary(doc)
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    """Build the index from the tables measured so far."""
    from autograde.reproduce.config import load_plan, plan_path
    from autograde.reproduce.stages import build_reproduction_index

    source = plan_path(args.plan)
    doc = build_reproduction_index(load_plan(source), source)
    if not args.quiet:
        _print_summary(doc)
    return 0


def _print_summary(doc: dict) -> None:
    for s in doc["summary"]:
        sys.stdout.write(f"{s['table']}: {s['state'][:100]} (same {s['same']}, differ {s['differs']}, ours only "
                         f"{s['ours_only']}, not computed {s['not_computed']})\n")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``reproduce`` with its ``run`` and ``index`` subcommands."""
    p = subparsers.add_parser("reproduce", help="rebuild the papers' tables from public data, next to the paper",
                              description="Rebuild every paper table the public data allows and set it next to "
                              "the published values (the paper YAML files of the plan).")
    sub = p.add_subparsers(dest="reproduce_command", required=True)

    r = add_command(sub, "run", "measure the plan's tables, then build the index")
    r.add_argument("--plan", help="reproduction plan YAML (default: $AUTOGRADE_REPRODUCE or "
                   "config/reproduce/reproduce.yaml)")
    r.add_argument("--table", action="append", help="measure only this table of the plan (repeatable; default: all)")
    add_threads_option(r, 1, "torch threads (1: the same numbers everywhere)")
    r.add_argument("--quiet", action="store_true", help="do not print the summary")
    r.set_defaults(func=cmd_run)

    i = add_command(sub, "index", "build the index (index.md, index.json, index.html) from the measured tables")
    i.add_argument("--plan", help="reproduction plan YAML (default: $AUTOGRADE_REPRODUCE or "
                   "config/reproduce/reproduce.yaml)")
    i.add_argument("--quiet", action="store_true", help="do not print the summary")
    i.set_defaults(func=cmd_index)
