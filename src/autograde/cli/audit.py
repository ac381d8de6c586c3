"""``autograde audit``: how a judge agrees with the human judgments per topic and at the top, whether it can be
gamed, and the judge x collection table.

Examples::

    autograde audit meta --config config/experiments/example.yaml          # results/audit/meta/ from results/
    autograde audit labels --judgments qrels.dl20-passage.txt --labels Thomas.qrel=1 --labels Question.qrel=4
    autograde audit assessors assessor-a.qrels assessor-b.qrels assessor-c.qrels   # Krippendorff's alpha of all
    autograde audit judges dl19=dl19.yaml dl20=dl20.yaml --out judges.md    # several experiments' results
    autograde audit robustness --config exp.yaml --grader umbrela --perturbation stuffing --perturbation injection

``meta``, ``judges`` and ``robustness`` read the workflow's results folder (pool, grades, qrels, evaluations), so
run the workflow (or the stage commands) first; ``robustness`` grades the perturbed copies through the experiment's
grade cache (a rerun grades nothing).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from autograde.cli.common import add_command, add_config_option, add_threads_option, load_experiment, write_text_outputs
from autograde.core.errors import InvalidValueError
from autograde.core.log import logger

__all__ = ["register"]


def cmd_meta(args: argparse.Namespace) -> int:
    from autograde.audit.stages import meta_outputs, run_meta_evaluation
    from autograde.workflow.leaderboards import leaderboards

    config = load_experiment(args)
    results = args.results or config.results_dir
    out = meta_outputs(results)
    run_meta_evaluation(config, leaderboards(config, results), results, out)
    if not args.quiet:
        print(Path(out["report"]).read_text(encoding="utf-8"), end="")
    return 0


def _label_source(text: str) -> tuple[str, int]:
    path, _, t = text.rpartition("=") if "=" in text else (text, "", "1")
    if not t.isdigit() or int(t) < 1:
        raise InvalidValueError(f"--labels {text!r}: the threshold after '=' must be an integer >= 1 (fix: PATH=4)")
    return path, int(t)


def cmd_labels(args: argparse.Namespace) -> int:
    from autograde.audit.assessors import file_names
    from autograde.audit.stages import label_tables, write_meta
    from autograde.config.audit import META_FILES
    from autograde.core.errors import Problems
    from autograde.io.trec import read_qrels
    from autograde.reports.agreement import qrels_pairs

    problems = Problems()
    judged = qrels_pairs(read_qrels(args.judgments, problems))
    given = [_label_source(text) for text in args.labels]
    sources = []
    # two files of the same name (results/qrels/a/max-4.qrels, results/qrels/b/max-4.qrels) are told apart by folder
    for name, (path, t) in zip(file_names([p for p, _ in given]), given, strict=True):
        sources.append((name, f"max-{t}", qrels_pairs(read_qrels(path, problems)), t))
    problems.raise_if_any()
    tables = label_tables(sources, judged, args.relevant_level)
    out = Path(args.out_dir)
    files = {k: str(out / Path(v).name) for k, v in META_FILES.items()}
    write_meta(tables, files, [], f"Label agreement with {Path(args.judgments).name}")
    logger.info("wrote %s", out)
    if not args.quiet:
        print(Path(files["report"]).read_text(encoding="utf-8"), end="")
    return 0


def cmd_assessors(args: argparse.Namespace) -> int:
    from autograde.audit.assessors import assessor_agreement, assessors_markdown, file_names
    from autograde.core.errors import Problems
    from autograde.core.text import atomic_write_text
    from autograde.io.trec import read_qrels
    from autograde.reports.agreement import qrels_pairs

    problems = Problems()
    names = args.name or file_names(args.qrels)
    if len(names) != len(args.qrels):
        raise InvalidValueError(f"--name given {len(names)} time(s) for {len(args.qrels)} qrels file(s) (fix: name "
                                "every file, in order, or none)")
    judgments = {n: qrels_pairs(read_qrels(p, problems)) for n, p in zip(names, args.qrels, strict=True)}
    problems.raise_if_any()
    ag = assessor_agreement(judgments)
    if args.tsv:
        table = ag.pairs.assign(alpha_nominal=ag.alpha["nominal"], alpha_ordinal_all=ag.alpha["ordinal"],
                                alpha_interval=ag.alpha["interval"], units=ag.units)
        atomic_write_text(args.tsv, table.to_csv(sep="\t", index=False, float_format="%.6g"))
    write_text_outputs(args.out, assessors_markdown(ag, f"Agreement of {len(names)} assessors"), args.quiet)
    return 0


def cmd_judges(args: argparse.Namespace) -> int:
    from autograde.audit.report import judge_table_markdown
    from autograde.audit.stages import JUDGE_STATISTICS, judge_table
    from autograde.config.experiment import load_config
    from autograde.core.text import atomic_write_text
    from autograde.workflow.leaderboards import leaderboards

    experiments = []
    for text in args.experiments:
        name, sep, path = text.partition("=")
        if not sep:
            name, path = Path(text).stem, text
        config = load_config(path)
        experiments.append((name, config, leaderboards(config)))
    long = judge_table(experiments, args.measure)
    if args.tsv:
        atomic_write_text(args.tsv, long.to_csv(sep="\t", index=False, float_format="%.6g"))
    stats = args.statistic or [s for s in JUDGE_STATISTICS if s in long]
    write_text_outputs(args.out, judge_table_markdown(long, stats), args.quiet)
    return 0


def cmd_robustness(args: argparse.Namespace) -> int:
    from autograde.audit.stages import run_robustness
    from autograde.config.audit import ROBUSTNESS_FILES
    from autograde.core.layout import Layout

    config = load_experiment(args)
    lay = Layout.of(config.results_dir)
    out = {k: getattr(args, f"{k}_out") or lay.audit_grader(args.grader, v) for k, v in ROBUSTNESS_FILES.items()}
    run_robustness(config, args.grader, out, args.perturbation, args.threads)
    if not args.quiet:
        print(Path(out["report"]).read_text(encoding="utf-8"), end="")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "audit", "judge audit: meta-evaluation against human qrels, robustness, judge x collection")
    s = p.add_subparsers(dest="audit_command", required=True, metavar="AUDIT_COMMAND")

    m = add_command(s, "meta", "meta-evaluate every grader of an experiment against its human qrels (label and "
                    "system level, per topic, top-k) from its results")
    add_config_option(m)
    m.add_argument("--results", default=None, help="results folder (default: results_dir of the config)")
    m.add_argument("--quiet", action="store_true", help="do not print the report")
    m.set_defaults(func=cmd_meta)

    la = add_command(s, "labels", "label agreement of qrels files with reference judgments: kappas, Krippendorff's "
                     "alpha, confusion matrices, per-topic kappa")
    la.add_argument("--judgments", required=True, help="the reference (human) qrels")
    la.add_argument("--labels", action="append", required=True, metavar="PATH[=T]",
                    help="a label qrels file, with the label threshold counted as relevant (default 1); repeat")
    la.add_argument("--relevant-level", type=int, default=2, help="judgment level counted as relevant (default 2)")
    la.add_argument("--out-dir", required=True, help="folder of labels.tsv, per-topic.tsv, confusion.tsv and the "
                    "Markdown report")
    la.add_argument("--quiet", action="store_true", help="do not print the report")
    la.set_defaults(func=cmd_labels)

    a = add_command(s, "assessors", "agreement among several assessors' qrels of the same pool: Krippendorff's "
                    "alpha of all of them (nominal, ordinal, interval; missing judgments allowed), each pair's kappa")
    a.add_argument("qrels", nargs="+", metavar="QRELS", help="one TREC qrels file per assessor (two or more)")
    a.add_argument("--name", action="append", default=None, help="the assessors' names, in the order of the files "
                   "(repeat; default: the file names, with their folder where two are the same)")
    a.add_argument("--out", default=None, help="write the Markdown report here")
    a.add_argument("--tsv", default=None, help="write the pairs (and the alphas of all) as TSV here")
    a.add_argument("--quiet", action="store_true", help="do not print the report")
    a.set_defaults(func=cmd_assessors)

    j = add_command(s, "judges", "one judge x collection table from several experiments' results (each "
                    "meta-evaluated against its own human qrels)")
    j.add_argument("experiments", nargs="+", metavar="[NAME=]CONFIG", help="an experiment config per collection "
                   "(NAME: the column; default: the config file's name)")
    j.add_argument("--measure", default=None, help="measure of the system-level columns (default: each "
                   "experiment's first)")
    j.add_argument("--statistic", action="append", default=None, help="a statistic to tabulate (repeat; default: "
                   "kappa, kappa_linear, alpha_ordinal, topic_kappa_median, kendall, tau_ap, kendall@5, kendall@10, "
                   "topic_tau_median)")
    j.add_argument("--out", default=None, help="write the Markdown tables here")
    j.add_argument("--tsv", default=None, help="write the long table (judge, collection, statistics) here")
    j.add_argument("--quiet", action="store_true", help="do not print the tables")
    j.set_defaults(func=cmd_judges)

    r = add_command(s, "robustness", "grade perturbed copies of a seeded sample of pooled passages with one grader "
                    "(through its cache): grade shifts, non-relevant lifted to relevant, one system's rank")
    add_config_option(r)
    r.add_argument("--grader", required=True, help="the grader of the experiment to audit")
    r.add_argument("--perturbation", action="append", default=None, help="a perturbation (repeat; default: "
                   "audit.robustness.perturbations): stuffing, injection, query, first_sentence, off_topic")
    for key in ("pairs", "summary", "leaderboard", "stats", "report"):
        r.add_argument(f"--{key}-out", default=None, help=f"where the {key} file goes (default: "
                       "results/audit/robustness/<grader>/)")
    add_threads_option(r)
    r.add_argument("--quiet", action="store_true", help="do not print the report")
    r.set_defaults(func=cmd_robustness)
