"""``autograde autojudge``: the TREC AutoJudge track's formats (docs/autojudge.md).

Examples::

    autograde autojudge check runs/*.jsonl --track rag25 --topics topics.jsonl   # the track's report checks
    autograde autojudge convert run.jsonl --track ragtime26 --out run.ragtime.jsonl
    autograde autojudge export --config exp.yaml --out autojudge/                 # leaderboards for meta-evaluate
    autograde autojudge annotations export.jsonl --qrels human.qrels --leaderboard human-reports.txt
    autograde autojudge worklist judging/design.worklist-1.tsv --out annotate/    # open it in autojudge-annotate
    autograde autojudge page-fix annotate/annotate.html                            # its 0.3.7 page records ratings

The judge the track's runner loads is not a command: ``judge_class: autograde.autojudge.judge.AutogradeJudge``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from autograde.cli.common import add_command, add_config_option
from autograde.core.log import logger


def cmd_check(args: argparse.Namespace) -> int:
    from autograde.core.errors import Problems
    from autograde.core.paths import expand_globs
    from autograde.io.queries import read_requests
    from autograde.io.track_checks import check_report_files
    from autograde.io.track_specs import get_spec

    problems = Problems()
    spec = get_spec(args.track)
    requests = read_requests(args.topics, problems) if args.topics else None
    found = check_report_files(expand_globs(args.reports), spec, requests, problems, strict=args.strict)
    for f in found:
        if f.severity == "warning":
            logger.warning("%s:%s: %s (smell; fix: %s)", f.path, f.line, f.message, f.fix)
    problems.raise_if_any()
    errors = sum(f.severity == "error" for f in found)
    print(json.dumps({"track": args.track, "errors": errors, "warnings": len(found) - errors}, sort_keys=True))
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from autograde.core.errors import Problems
    from autograde.core.paths import expand_globs
    from autograde.io.reports import iter_reports, write_reports
    from autograde.io.track_convert import convert_report
    from autograde.io.track_specs import get_spec

    problems = Problems()
    spec = get_spec(args.track)
    reports = [r for p in expand_globs(args.reports) for r in iter_reports(p, problems)]
    problems.raise_if_any()
    write_reports(args.out, [convert_report(r, spec) for r in reports])
    logger.info("%d report(s) in the %s format: %s", len(reports), args.track, args.out)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from autograde.autojudge.engine import leaderboards_table
    from autograde.autojudge.formats import write_leaderboard
    from autograde.cli.common import load_experiment
    from autograde.core.layout import HUMAN

    config = load_experiment(args)
    if args.results:
        config = config.model_copy(update={"results_dir": args.results})
    table = leaderboards_table(config)
    human = table["measure"].str.startswith(f"{HUMAN}/")
    out = Path(args.out)
    suffix = "" if args.format == "trec_eval" else (".jsonl" if args.format == "jsonl" else ".txt")
    written = write_leaderboard(out / f"autograde{suffix}", table[~human], args.format)
    if human.any():
        written += write_leaderboard(out / f"{HUMAN}{suffix}", table[human], args.format)
    print(json.dumps({"files": written, "measures": sorted(set(table["measure"]))}, indent=2))
    return 0


def cmd_annotations(args: argparse.Namespace) -> int:
    from autograde.autojudge.annotate import RATING_GRADES, parse_scale, read_annotations
    from autograde.autojudge.formats import write_leaderboard
    from autograde.io.trec import write_qrels

    imp = read_annotations(args.export, parse_scale(args.scale) if args.scale else RATING_GRADES,
                           username=args.username, dataset=args.dataset)
    if args.qrels:
        write_qrels(args.qrels, imp.passages)
    if args.leaderboard and imp.reports:
        write_leaderboard(args.leaderboard, imp.report_table(), args.format)
    summary = {"passage_judgments": sum(len(v) for v in imp.passages.values()), "report_judgments": len(imp.reports),
               "skipped": imp.skipped}
    print(json.dumps(summary, indent=2, sort_keys=True))
    return 0


def cmd_worklist(args: argparse.Namespace) -> int:
    from autograde.autojudge.annotate import read_worklist, worklist_reports
    from autograde.io.reports import write_reports

    topics, reports = worklist_reports(read_worklist(args.worklist), args.team)
    out = Path(args.out)
    write_reports(out / "topics.jsonl", topics)
    write_reports(out / "responses" / "worklist.jsonl", reports)
    print(f"autojudge-annotate generate --rag-responses {out / 'responses'} --rag-topics {out / 'topics.jsonl'} "
          f"--output {out / 'annotate.html'} --dataset {args.dataset}\n"
          f"autograde autojudge page-fix {out / 'annotate.html'}")
    return 0


def cmd_page_fix(args: argparse.Namespace) -> int:
    from autograde.autojudge.annotate import fix_annotate_page

    fixed = fix_annotate_page(args.page)
    logger.info("%s: %s", args.page, "fixed (ratings are recorded now)" if fixed else "needs no fix")
    return 0


def register(subparsers: Any) -> None:
    """Add ``autojudge`` with its subcommands to the ``autograde`` CLI."""
    from autograde.autojudge.formats import LEADERBOARD_FORMATS
    from autograde.io.track_specs import SPEC_NAMES

    p = subparsers.add_parser("autojudge", help="the TREC AutoJudge track's formats: check and convert reports, "
                              "export leaderboards, import annotations",
                              description="The TREC AutoJudge track's formats: its report checks and conversions, "
                              "autograde's leaderboards for its meta-evaluation, judgments from its annotation page "
                              "(the judge class the runner loads: autograde.autojudge.judge.AutogradeJudge).")
    sub = p.add_subparsers(dest="autojudge_command", required=True)

    c = add_command(sub, "check", "check reports against a track's format (file, line and fix of every problem)")
    c.add_argument("reports", nargs="+", help="report files (JSONL; globs allowed)")
    c.add_argument("--track", required=True, choices=SPEC_NAMES, help="the track whose format the reports follow")
    c.add_argument("--topics", default=None, help="the topics (requests) JSONL: missing and new topics, per-topic "
                   "length limits, exact narratives")
    c.add_argument("--strict", action="store_true", help="smells are errors too")
    c.set_defaults(func=cmd_check)

    v = add_command(sub, "convert", "write reports in another track's format (as auto-judge-report convert)")
    v.add_argument("reports", nargs="+", help="report files (JSONL; globs allowed)")
    v.add_argument("--track", required=True, choices=SPEC_NAMES, help="the track whose format to write")
    v.add_argument("--out", required=True, help="the converted reports (JSONL)")
    v.set_defaults(func=cmd_convert)

    e = add_command(sub, "export", "write an experiment's leaderboards in the track's leaderboard format (the human "
                    "qrels' leaderboard in a file of its own: the truth of auto-judge-evaluate meta-evaluate)")
    add_config_option(e)
    e.add_argument("--results", default=None, help="the results folder (default: the config's results_dir)")
    e.add_argument("--out", required=True, help="folder for autograde.txt (every leaderboard) and human.txt")
    e.add_argument("--format", default="ir_measures", choices=LEADERBOARD_FORMATS,
                   help="the track's leaderboard format (default: ir_measures)")
    e.set_defaults(func=cmd_export)

    a = add_command(sub, "annotations", "import an autojudge-annotate JSONL export as judgments: document ratings "
                    "as qrels, report ratings as a per-topic leaderboard")
    a.add_argument("export", help="the page's JSONL export")
    a.add_argument("--qrels", default=None, help="write the passage (document) judgments here (TREC qrels)")
    a.add_argument("--leaderboard", default=None, help="write the report judgments here (a leaderboard)")
    a.add_argument("--format", default="ir_measures", choices=LEADERBOARD_FORMATS, help="format of --leaderboard")
    a.add_argument("--scale", default=None, help="grades of the ratings (default: 'Perfect=3,Mostly Good=2,So-so=1,"
                   "Bad=0')")
    a.add_argument("--username", default=None, help="only this annotator's judgments")
    a.add_argument("--dataset", default=None, help="only the records of this dataset label")
    a.set_defaults(func=cmd_annotations)

    w = add_command(sub, "worklist", "a judging worklist (autograde sample draw) as autojudge-annotate's input "
                    "(judge the passages in its Documents mode)")
    w.add_argument("worklist", help="the worklist TSV")
    w.add_argument("--out", required=True, help="folder for topics.jsonl and responses/worklist.jsonl")
    w.add_argument("--team", default="autograde", help="the team id of the worklist's reports")
    w.add_argument("--dataset", default="autograde-sample", help="the dataset label the printed command gives the "
                   "page (its export carries it)")
    w.set_defaults(func=cmd_worklist)

    f = add_command(sub, "page-fix", "make a page of autojudge-annotate 0.3.7 record ratings (it names a variable it "
                    "never defines, so its rating buttons do nothing)")
    f.add_argument("page", help="the HTML page autojudge-annotate generate wrote (changed in place)")
    f.set_defaults(func=cmd_page_fix)
