"""``autograde agreement``, ``autograde report`` and ``autograde site``: Phase 3 reports without Snakemake.

Examples::

    autograde agreement --qrels-a autograded.qrel --qrels-b official.qrels --thresholds 4 --relevant-level 2
    autograde agreement --qrels-a a.qrel --qrels-a b.qrel --qrels-b official.qrels --per-query --format latex
    autograde report --config config/experiments/example.yaml            # every grader + correlation
    autograde report --config config/experiments/example.yaml --grader minilm-questions --no-correlation
    autograde site --config config/experiments/example.yaml                # results/site from results/

``report`` and ``site`` read the workflow's results folder (``results_dir`` of the config), so the grades,
evaluations and leaderboards must exist (run the workflow, or the stage commands, first).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from autograde.cli.common import add_config_option, load_experiment
from autograde.core.errors import AutogradeError
from autograde.core.layout import Layout
from autograde.core.log import logger

__all__ = ["register"]


def cmd_agreement(args: argparse.Namespace) -> int:
    """Table 5 of Dietz, SIGIR 2024 (Rubric-Grading Workbench) for one or more label qrels (A) against reference judgments (B)."""
    from autograde.core.errors import Problems
    from autograde.core.text import atomic_write_text
    from autograde.io.trec import read_qrels
    from autograde.reports import agreement as ag

    problems = Problems()
    b = read_qrels(args.qrels_b, problems)
    labels = [(Path(p).stem, read_qrels(p, problems)) for p in args.qrels_a]
    problems.raise_if_any()
    judged = ag.qrels_pairs(b)
    n_rel = sum(1 for v in judged.values() if v >= args.relevant_level)
    logger.info("agreement: judgments >= %d count as relevant (%d relevant, %d not relevant in %s)",
                args.relevant_level, n_rel, len(judged) - n_rel, args.qrels_b)
    results = [ag.compute_agreement(ag.qrels_pairs(a), judged, t, args.relevant_level, name)
               for name, a in labels for t in args.thresholds]
    if args.format == "latex":
        text = ag.table5_latex(results)
    elif args.format == "tsv":
        text = ag.summary_table(results).to_csv(sep="\t", index=False, float_format="%.4f")
    else:
        parts = [ag.table5_markdown(results)]
        if args.graded:
            for r in results:
                parts += [f"\n{r.name} (label ≥ {r.threshold}): label x judgment\n", ag.graded_markdown(r)]
        text = "".join(parts)
    if args.per_query:
        pq = ag.per_query_table(results)
        text += "\n" + (pq.to_csv(sep="\t", index=False, float_format="%.4f") if args.format == "tsv"
                        else pq.to_string(index=False, float_format=lambda x: f"{x:.2f}")) + "\n"
    if args.out:
        atomic_write_text(args.out, text)
        logger.info("wrote %s", args.out)
    sys.stdout.write(text)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Per-grader reports (and the correlation report) from the results folder."""
    from autograde.reports.stages import (
        grader_report_files,
        grader_report_spec,
        run_grader_reports,
        run_report_correlation,
    )

    config = load_experiment(args)
    rc = config.reports
    r = _results_folder(args.results or config.results_dir)
    lay = Layout.of(r)
    graders = args.grader or [g.name for g in config.graders]
    _require([lay.grades(g) for g in graders] + [lay.ingest(t) for t in ("judgments", "rankings", "queries")])
    for g in graders:
        spec = grader_report_spec(config, g)
        evaluations = {v: lay.evaluation(g, v) for v in spec.variants}
        run_grader_reports(spec, rc, lay.grades(g), lay.ingest("judgments"), lay.ingest("rankings"),
                           lay.ingest("queries"), evaluations, grader_report_files(r, g), config.grading.cache_dir)
    if not args.no_correlation and config.data.official_leaderboard:
        from autograde.workflow.leaderboards import leaderboards

        sources = [lb.as_dict() for lb in leaderboards(config, r)]  # the workflow's list, whatever --grader says
        _require(sorted({s["per_query"] for s in sources}))
        run_report_correlation(rc, sources, config.data.official_leaderboard, lay.reports("correlation.tsv"), r,
                               config.grading.cache_dir)
    return 0


def _require(paths: list[str]) -> None:
    """Every file a report reads exists; else one error naming the missing ones and how to make them."""
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        raise AutogradeError(f"{len(missing)} input(s) of the reports are missing: {', '.join(missing[:6])}"
                             f"{' ...' if len(missing) > 6 else ''} (fix: run the workflow first: snakemake "
                             f"{missing[0]} (or the whole workflow), or check --results and --grader)")


def _results_folder(path: str) -> str:
    """``path`` if it is a results folder the workflow (or the stage commands) wrote, else a clear error."""
    if not Path(path).is_dir():
        raise AutogradeError(f"{path}: no such results folder (fix: run the workflow first (make example, or "
                             "snakemake), or name the folder with --results)")
    return path


def cmd_site(args: argparse.Namespace) -> int:
    """The static review site from the results folder of the experiment (``--config``, else
    ``$AUTOGRADE_EXPERIMENT``, else the bundled example: the rule every command follows)."""
    from autograde.workflow.site import build_experiment_site

    config = load_experiment(args)
    results = _results_folder(args.results or config.results_dir)
    out = args.out or Layout.of(results).site
    stats = build_experiment_site(config, out, results, args.grader or None, args.official, args.relevant_level)
    print(f"{out}/index.html: {stats['pages']} pages, {stats['bytes'] / 1e6:.1f} MB, {stats['seconds']} s")
    return 0


def register(subparsers: Any) -> None:
    """Add ``agreement``, ``report`` and ``site`` to the ``autograde`` CLI's subparsers."""
    p = subparsers.add_parser(
        "agreement", help="confusion tables and Cohen's kappa of label qrels vs reference qrels (Dietz, SIGIR 2024, Table 5)",
        description="Agreement of the labels of one or more qrels files (A) with reference judgments (B): Table 5 "
        "layout (label >= threshold vs judgment >= relevant level), binary and linearly weighted Cohen's kappa, and "
        "how many judged passages the labels cover. Works on any two qrels files.")
    p.add_argument("--qrels-a", action="append", required=True, metavar="QRELS",
                   help="labels to check (e.g. autograded qrels); repeat for several")
    p.add_argument("--qrels-b", required=True, metavar="QRELS", help="reference judgments (e.g. the official qrels)")
    p.add_argument("--thresholds", type=int, nargs="+", default=[1], metavar="T",
                   help="label thresholds: label >= T counts as relevant (default: %(default)s; max-grade qrels: 4)")
    p.add_argument("--relevant-level", type=int, default=2, metavar="L",
                   help="judgment >= L counts as relevant (default: %(default)s, as TREC DL and Table 5 of Dietz, "
                        "SIGIR 2024; trec_eval's own default is 1)")
    p.add_argument("--format", choices=["markdown", "latex", "tsv"], default="markdown", help="output format")
    p.add_argument("--graded", action="store_true", help="also print the full label x judgment tables (markdown)")
    p.add_argument("--per-query", action="store_true", help="also print per-query counts and kappas")
    p.add_argument("--out", help="also write the output to this file")
    p.set_defaults(func=cmd_agreement)

    p = subparsers.add_parser(
        "report", help="Phase 3 reports per grader (verify, grid labels, missing, spurious, impact, agreement) "
        "and the correlation report, from the results folder",
        description="Write results/reports/<grader>/ and results/reports/correlation.tsv (+ plots) from the "
        "workflow's results (grades, evaluations, leaderboards).")
    add_config_option(p)
    p.add_argument("--grader", action="append", help="only this grader (repeatable; default: all)")
    p.add_argument("--results", help="results folder (default: the config's results_dir)")
    p.add_argument("--no-correlation", action="store_true", help="skip the correlation report")
    p.set_defaults(func=cmd_report)

    p = subparsers.add_parser(
        "site", help="build the static review site (results/site) from the results folder",
        description="Render index, grader and query pages (grid, verify lists, agreement, correlation plots) "
        "into one folder that opens in any browser without a server; broken local links are an error.")
    add_config_option(p)
    p.add_argument("--results", help="results folder (default: the config's results_dir, else 'results')")
    p.add_argument("--out", help="site folder (default: <results>/site)")
    p.add_argument("--grader", action="append", help="only this grader (repeatable; default: all with reports)")
    p.add_argument("--official", help="official leaderboard JSON (default: the config's data.official_leaderboard)")
    p.add_argument("--relevant-level", type=int, default=None,
                   help="relevant judgment level (default: the config's reports / evaluation setting)")
    p.set_defaults(func=cmd_site)
