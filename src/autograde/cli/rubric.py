"""``autograde rubric``: LLM-RUBRIC's judge-personalized calibration network as commands.

Examples::

    autograde rubric fit --config config/rubric/example.yaml --model results/rubric/model.pt \\
        --report results/rubric/fit.json
    autograde rubric predict --model results/rubric/model.pt --llm new_llm.tsv --judge 3 --judge newcomer --out results/rubric/predictions.parquet
    autograde rubric evaluate --config config/rubric/example.yaml --out results/rubric/evaluation.json \\
        --md results/rubric/evaluation.md --seeds 0 1 2
    autograde rubric calibrate-qrels fit --config config/rubric/example.yaml --model results/calibrated_qrels/model
    autograde rubric calibrate-qrels apply --model results/calibrated_qrels/model --source new/Sun.qrel ... \\
        --out results/qrels/calibrated/threshold-2.qrels

Settings come from the ``rubric:`` (and ``calibrated_qrels:``) section of ``--config``; the options given on
the command line override them. Input errors name the file, the line and the fix; they propagate as
:class:`autograde.core.errors.InputError` (an ``AutogradeError``), which the main CLI turns into exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from autograde.cli.common import (
    DEFAULT_LAYOUT,
    add_command,
    add_config_option,
    add_threads_option,
    read_section,
    section_file,
    validate_section,
)

__all__ = ["register"]


def _rubric_config(args: argparse.Namespace) -> Any:
    from autograde.config.rubric import RubricConfig

    raw = read_section(section_file(args), "rubric")
    for key in ("rubric", "llm", "human", "texts", "seed"):
        value = getattr(args, key, None)
        if value is not None:
            raw[key] = value
    if getattr(args, "select", False):
        raw["selection"] = {**raw.get("selection", {}), "enabled": True}
    if getattr(args, "seeds", None):
        raw["evaluation"] = {**raw.get("evaluation", {}), "seeds": args.seeds}
    if getattr(args, "folds", None):
        raw["evaluation"] = {**raw.get("evaluation", {}), "folds": args.folds}
    raw["enabled"] = True
    return validate_section(RubricConfig, raw, section_file(args), "rubric")


def _threads(args: argparse.Namespace) -> None:
    from autograde.core.runtime import set_threads

    set_threads(getattr(args, "threads", None))


def cmd_fit(args: argparse.Namespace) -> int:
    """Fit the calibration network on all annotations (with hyperparameter selection when enabled)."""
    from autograde.calibrated.registry import network_kind
    from autograde.rubric.stages import run_fit

    _threads(args)
    run_fit(_rubric_config(args), args.model, args.report, network_kind())
    return 0


def cmd_predict(args: argparse.Namespace) -> int:
    """Predict each judge's answer distribution and expected answer for new texts."""
    from autograde.rubric.stages import run_predict

    _threads(args)
    cfg = read_section(section_file(args), "rubric")
    rubric = args.rubric or cfg.get("rubric")  # None: the bundled rubric
    run_predict(args.model, rubric, args.llm, args.out, args.judge, args.llm_format)
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Cross-validate (or train on one set and test on another) the network, the baselines and Table 1's rows."""
    from autograde.rubric.stages import run_evaluate, run_transfer

    _threads(args)
    if args.train:
        args.config = args.train
    cfg = _rubric_config(args)
    if args.test:
        from autograde.config.rubric import HeldOutSet

        raw = read_section(args.test, "rubric")
        keys = set(HeldOutSet.model_fields)
        test = validate_section(HeldOutSet, {k: v for k, v in raw.items() if k in keys}, args.test, "rubric")
        if raw.get("rubric") and raw["rubric"] != cfg.rubric:
            from autograde.core.errors import ConfigError

            train_rubric = cfg.rubric or "the bundled dialogue rubric"
            raise ConfigError(f"{args.test}: rubric.rubric is {raw['rubric']}, the training set's is {train_rubric} "
                              "(fix: evaluate with the rubric the model is trained with)")
        cfg = cfg.model_copy(update={"test": test})
    if cfg.test is not None:
        from autograde.rubric.protocols import transfer_markdown

        report = run_transfer(cfg, args.out, args.md, args.latex)
        if not args.quiet:
            sys.stdout.write(transfer_markdown(report))
        return 0
    report = run_evaluate(cfg, args.out, args.md, args.predictions, args.svg, args.latex)
    if not args.quiet:
        from autograde.rubric.evaluate import markdown_report
        from autograde.rubric.table1 import table1_markdown

        sys.stdout.write(markdown_report(report) + "\n" + table1_markdown(report["table1"], "Table 1"))
    return 0


def _calibrated_config(args: argparse.Namespace, keys: tuple[str, ...] | None = None) -> Any:
    """The ``calibrated_qrels:`` section of ``--config`` (only ``keys`` of it when given) with the options."""
    from autograde.config.rubric import CalibratedQrelsConfig

    raw = read_section(section_file(args), "calibrated_qrels")
    if keys is not None:
        raw = {k: v for k, v in raw.items() if k in keys}
    given: set[str] = set()
    if args.source:
        raw["sources"] = args.source
        given.add("sources")
    for key in ("judgments", "seed", "folds", "output", *(("model",) if keys is not None else ())):
        value = getattr(args, key, None)
        if value is not None:
            raw[key] = value
            given.add(key)
    if getattr(args, "estimator", None):
        raw["estimators"] = args.estimator
        given.add("estimators")
    raw["enabled"] = True
    return validate_section(CalibratedQrelsConfig, raw, section_file(args), "calibrated_qrels", given)


def cmd_calibrate_cv(args: argparse.Namespace) -> int:
    """Cross-validated calibrated labels of a judged collection; every estimator and source per fold."""
    from autograde.calibrated.report import cv_markdown
    from autograde.calibrated.stages import run_cross_validate

    _threads(args)
    report = run_cross_validate(_calibrated_config(args), args.out, args.report, args.md, args.table)
    if not args.quiet:
        sys.stdout.write(cv_markdown(report))
    return 0


def cmd_calibrate_fit(args: argparse.Namespace) -> int:
    """Fit on every judged passage and write a model folder."""
    from autograde.calibrated.stages import run_fit

    _threads(args)
    run_fit(_calibrated_config(args), args.model, args.qrels)
    return 0


def cmd_calibrate_apply(args: argparse.Namespace) -> int:
    """Label a new collection's sources with a model folder."""
    from autograde.calibrated.report import apply_markdown
    from autograde.calibrated.stages import run_apply

    _threads(args)
    if not args.model and not read_section(section_file(args), "calibrated_qrels").get("model"):
        from autograde.core.errors import ConfigError

        raise ConfigError("calibrate-qrels apply needs a model folder (fix: give --model DIR, written by "
                          "'autograde rubric calibrate-qrels fit')")
    cfg = _calibrated_config(args, keys=("sources", "judgments", "output", "model"))
    report = run_apply(cfg.model, cfg.sources, args.out, args.report, args.md, args.table, cfg.output,
                       cfg.judgments or None)
    if not args.quiet:
        sys.stdout.write(apply_markdown(report))
    return 0


def _calibrated_options(p: argparse.ArgumentParser, training: bool) -> None:
    add_config_option(p, "calibrated_qrels")
    p.add_argument("--source", action="append", help="a grader's qrels file or grades parquet (repeatable; "
                   "replaces the config's sources)")
    add_threads_option(p, None, "torch and BLAS threads (1 gives identical numbers everywhere)")
    if training:
        p.add_argument("--judgments", help="human qrels the estimators learn")
        p.add_argument("--seed", type=int, help="seed of folds and networks (default 0)")
        from typing import get_args

        from autograde.config.rubric import EstimatorKind

        p.add_argument("--estimator", action="append", choices=list(get_args(EstimatorKind)),
                       help="a candidate estimator (repeatable; default: logistic, ordinal_logistic, network; the "
                       "mean of the candidates' probabilities, equal weight per kind, is deployed)")


def _inputs(p: argparse.ArgumentParser) -> None:
    add_config_option(p, "rubric")
    p.add_argument("--rubric", help="rubric YAML (default: the config's, else LLM-RUBRIC's dialogue rubric bundled "
                   "with autograde)")
    p.add_argument("--llm", help="LLM answer distributions (LLM-RUBRIC TSV, long table or grades parquet)")
    p.add_argument("--human", help="human answers (LLM-RUBRIC TSV or long table)")
    p.add_argument("--texts", help="optional TSV with a text_id column: use only these texts")
    add_threads_option(p, None, "torch threads")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``rubric`` with its ``fit``, ``predict``, ``evaluate`` and ``calibrate-qrels`` subcommands."""
    p = subparsers.add_parser("rubric", help="LLM-RUBRIC: judge-personalized calibration network",
                              description="LLM-RUBRIC's judge-personalized calibration network, and calibrated "
                              "relevance labels from several graders.")
    sub = p.add_subparsers(dest="rubric_command", required=True)

    f = add_command(sub, "fit", "fit the network on all annotations; save the model")
    _inputs(f)
    f.add_argument("--seed", type=int, help="seed of the fit (default 0)")
    f.add_argument("--select", action="store_true", help="select hyperparameters by grouped k-fold CV first")
    f.add_argument("--model", required=True, help="output model file (.pt)")
    f.add_argument("--report", required=True, help="output JSON: hyperparameters, selection table, epochs, notes")
    f.set_defaults(func=cmd_fit)

    r = add_command(sub, "predict", "each judge's distribution and expected answer for new texts")
    add_config_option(r, "rubric")
    r.add_argument("--model", required=True, help="model written by 'rubric fit'")
    r.add_argument("--rubric", help="the rubric the model was fitted with (default: the config's, else the bundled "
                   "dialogue rubric)")
    r.add_argument("--llm", required=True, help="LLM distributions of the texts to predict")
    r.add_argument("--llm-format", default="auto", choices=["auto", "synthetic", "long", "grades"],
                   help="format of --llm (default: detected from its columns)")
    r.add_argument("--judge", action="append", help="judge to predict for (repeatable; default: every known "
                   "judge); an unseen judge gets the judge-independent prediction, flagged in the output")
    r.add_argument("--out", required=True, help="output parquet: text_id, judge, question, expected, probs, "
                   "judge_independent")
    add_threads_option(r, None, "torch threads")
    r.set_defaults(func=cmd_predict)

    e = add_command(sub, "evaluate", "cross-validated network, baselines and Table 1 over seeds, or train on one "
                    "set and evaluate on another (--train/--test)")
    _inputs(e)
    e.add_argument("--train", help="YAML config whose 'rubric:' section is the training set and settings (the same "
                   "as --config)")
    e.add_argument("--test", help="YAML config whose 'rubric:' section (llm, human, texts) is the test set: train on "
                   "every training annotation, evaluate on these (also: 'rubric.test' in the config)")
    e.add_argument("--latex", help="also write Table 1 as LaTeX")
    e.add_argument("--seeds", type=int, nargs="+", help="seeds (default: 0..9)")
    e.add_argument("--folds", type=int, help="outer folds grouped by text (default 5)")
    e.add_argument("--select", action="store_true", help="nested hyperparameter selection inside every fold")
    e.add_argument("--out", default=DEFAULT_LAYOUT.rubric("evaluation.json"),
                   help="output JSON report (default: %(default)s)")
    e.add_argument("--md", help="also write the Markdown tables")
    e.add_argument("--predictions", help="also write every held-out prediction (parquet)")
    e.add_argument("--svg", help="also write the reliability diagram of the main question (SVG)")
    e.add_argument("--quiet", action="store_true", help="do not print the tables")
    e.set_defaults(func=cmd_evaluate)

    c = add_command(sub, "calibrate-qrels", "calibrated qrels from several graders: cross-validate, fit, apply",
                    "Calibrated relevance labels from several graders' outputs: cross-validate on a judged "
                    "collection, fit a model folder on it, or apply a model folder to a collection without "
                    "judgments.")
    csub = c.add_subparsers(dest="calibrate_command", required=True)
    cv = add_command(csub, "cross-validate", "labels of a judged collection, each query labelled by a model that "
                     "never saw its judgments; kappa per fold for every estimator and single source")
    _calibrated_options(cv, training=True)
    cv.add_argument("--folds", type=int, help="outer folds grouped by query (default 5)")
    cv.add_argument("--output", choices=["threshold", "expected", "probability"], help="exported label")
    cv.add_argument("--out", required=True, help="output qrels")
    cv.add_argument("--report", required=True, help="output JSON report (kappa per fold and overall)")
    cv.add_argument("--md", help="also write the Markdown report")
    cv.add_argument("--table", help="also write per-passage probabilities (parquet)")
    cv.add_argument("--quiet", action="store_true", help="do not print the report")
    cv.set_defaults(func=cmd_calibrate_cv)

    cf = add_command(csub, "fit", "fit on every judged passage; write a model folder")
    _calibrated_options(cf, training=True)
    cf.add_argument("--model", required=True, help="output model folder (model.json, network weights)")
    cf.add_argument("--qrels", help="also write the labels the model gives the training sources")
    cf.add_argument("--output", choices=["threshold", "expected", "probability"], help="label of --qrels")
    cf.set_defaults(func=cmd_calibrate_fit)

    ca = add_command(csub, "apply", "label a new collection's sources with a model folder")
    _calibrated_options(ca, training=False)
    ca.add_argument("--model", help="model folder written by 'calibrate-qrels fit' (or the config's model)")
    ca.add_argument("--judgments", help="optional human qrels of the new collection: kappa in the report")
    ca.add_argument("--output", choices=["threshold", "expected", "probability"], help="exported label")
    ca.add_argument("--out", required=True, help="output qrels")
    ca.add_argument("--report", help="also write the JSON report (label distribution, kappa if judged)")
    ca.add_argument("--md", help="also write the Markdown report")
    ca.add_argument("--table", help="also write per-passage probabilities (parquet)")
    ca.add_argument("--quiet", action="store_true", help="do not print the report")
    ca.set_defaults(func=cmd_calibrate_apply)
