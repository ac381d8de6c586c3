"""The ``autograde`` command: every workflow stage, and the tools around it, runnable without Snakemake.

Examples::

    autograde validate --config config/experiments/example.yaml
    autograde doctor
    autograde grade --grader minilm-questions --pool results/pool/pool.parquet --out grades.parquet
    autograde metrics retrieval --qrels qrels.txt --run a.run --out eval.json
    autograde bank stats banks/questions.jsonl.gz
    autograde rubric evaluate --config config/rubric/example.yaml --out evaluation.json

One module per command group registers its subcommands (:data:`GROUPS`: the core's and each registered feature's);
this module only builds the parser and dispatches. Errors: every :class:`~autograde.core.errors.AutogradeError` (bad input, bad config, an endpoint
that fails) prints as one message naming the file, line and fix, with exit status 2; anything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType

from autograde import __version__
from autograde.cli import autojudge, doctor, interchange, metrics, plan, prompts, stages
from autograde.core.errors import AutogradeError
from autograde.core.log import logger, setup_logging
from autograde.workflow.features import FEATURES

CORE_GROUPS: tuple[ModuleType, ...] = (stages, interchange, prompts, doctor, plan, metrics, autojudge)
"""The command groups of the core pipeline, first in ``autograde --help``."""
GROUPS: tuple[ModuleType, ...] = CORE_GROUPS + tuple(importlib.import_module(f.cli) for f in FEATURES if f.cli)
"""Every command group: the core's, then each feature's (:attr:`autograde.core.feature.Feature.cli`, in the order
the features are registered); each has ``register(subparsers)``."""

__all__ = ["GROUPS", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The ``autograde`` parser with every command group's subcommands."""
    parser = argparse.ArgumentParser(
        prog="autograde", description="LLM autograding of retrieval and RAG systems: every workflow stage and "
        "the tools around it, runnable without Snakemake.")
    parser.add_argument("--version", action="version", version=f"autograde {__version__}",
                        help="print the version and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one ``autograde`` command; return its exit status (2 for a user error, with the message logged)."""
    args = build_parser().parse_args(argv)
    setup_logging(10 if args.verbose else 20)
    try:
        return int(args.func(args) or 0)
    except AutogradeError as exc:
        logger.error("%s", exc)
        return 2
    except FileNotFoundError as exc:  # a path given on the command line that does not exist
        if exc.filename is None:
            raise
        logger.error("%s: file not found (fix: check the path)", exc.filename)
        return 2
    except ModuleNotFoundError as exc:  # an optional package missing from this environment
        if not exc.name or exc.name.split(".")[0] == "autograde":
            raise
        logger.error("%s (fix: pip install -e . in the project's environment, or make install)", exc)
        return 2
    except KeyboardInterrupt:
        logger.error("interrupted")
        return 130
