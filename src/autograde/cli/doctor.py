"""``autograde doctor``: pre-flight checks before a (cluster) run.

Example::

    autograde doctor --config config/experiments/example.yaml
    [ ok ] config: config/experiments/example.yaml is valid; graders: minilm-questions (embedded), ...
    [fail] model flan: GGUF file models/x.gguf not found (grader flan)
           fix: fix model: / options.gguf_file of grader flan
    ...

Exit status 0 when no check failed, 1 otherwise (warnings do not fail).
"""

from __future__ import annotations

import argparse
from typing import Any

from autograde.cli.common import add_config_option, experiment_file


def register(subparsers: Any) -> None:
    """Add the ``doctor`` subcommand to the ``autograde`` CLI's subparsers."""
    p = subparsers.add_parser(
        "doctor",
        help="pre-flight checks: packages, GPU, models/endpoints, cache, inputs, prompts to send",
        description="Check everything a run needs before submitting it; print ok/warn/fail with the fix for "
        "each problem. Exit status 1 if any check fails.",
    )
    add_config_option(p)
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for an endpoint (default: %(default)s)")
    p.add_argument("--no-estimate", action="store_true", help="skip the estimate of prompts to send (reads the pool)")
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    """Run every check, print them, return 0 (no failure) or 1."""
    from autograde.workflow.doctor import checks_json, exit_code, format_checks, run_checks

    checks = run_checks(experiment_file(args), endpoint_timeout=args.timeout, estimate=not args.no_estimate)
    print(checks_json(checks) if args.json else format_checks(checks))
    code = exit_code(checks)
    if not args.json:
        n_fail = sum(c.status == "fail" for c in checks)
        n_warn = sum(c.status == "warn" for c in checks)
        print(f"doctor: {n_fail} failed, {n_warn} warning(s), {len(checks) - n_fail - n_warn} ok")
    return code
