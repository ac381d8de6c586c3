"""``autograde metrics``: retrieval measures, generation metrics and significance tests as commands.

Examples::

    autograde metrics retrieval --qrels qrels.txt --run run_a.txt --run run_b.txt --out eval.json --md eval.md
    autograde metrics significance --qrels qrels.txt --run-a run_a.txt --run-b run_b.txt --seed 7 --out sig.json
    autograde metrics significance --qrels qrels.txt --run a.run --run b.run --run c.run --baseline b --out sig.json
    autograde metrics generation --data answers.jsonl --out gen.json

Defaults come from the ``metrics:`` section of ``--config`` (if given) or from
:class:`autograde.metrics.config.MetricsConfig`; command-line options override them. Output JSON is
indent=4 with UTF-8 kept, and identical for identical inputs and seed except its ``timestamp`` field.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from autograde.cli.common import add_command, add_config_option, override, section_file
from autograde.core.errors import AutogradeError
from autograde.core.log import logger

__all__ = ["register"]


def _load_metrics_config(path: str | None) -> Any:
    """The ``metrics:`` section of a YAML config (or the defaults), read and validated like every config."""
    from autograde.cli.common import section_config
    from autograde.metrics.config import MetricsConfig

    return section_config(MetricsConfig, path, "metrics")


def _write_outputs(args: argparse.Namespace, doc: dict[str, Any], markdown: str) -> None:
    from autograde.core.text import atomic_write_text
    from autograde.metrics.report import write_server_json

    write_server_json(args.out, doc)
    logger.info("wrote %s", args.out)
    if args.md:
        atomic_write_text(args.md, markdown)
        logger.info("wrote %s", args.md)
    if not args.quiet:
        sys.stdout.write(markdown)


def _retrieval_cfg(args: argparse.Namespace, base: Any) -> Any:
    return override(base, metrics=args.metrics, cutoffs=args.cutoffs, extra_measures=args.extra_measure,
                     relevance_level=args.relevance_level, missing_queries=args.missing_queries,
                     mrr_cutoff=args.mrr_cutoff, per_query=False if args.no_per_query else None)


def cmd_retrieval(args: argparse.Namespace) -> int:
    """Evaluate one or more runs against qrels."""
    from autograde.metrics.report import result_document
    from autograde.metrics.retrieval import evaluate_retrieval, load_qrels, load_runs, retrieval_markdown

    cfg = _retrieval_cfg(args, _load_metrics_config(section_file(args)).retrieval)
    qrels = load_qrels(args.qrels)
    runs, sources = load_runs(args.run)
    body = evaluate_retrieval(qrels, runs, cfg, sources=sources, qrels_source=args.qrels)
    _write_outputs(args, result_document("retrieval", body), retrieval_markdown(body))
    return 0


def _one_run(path: str) -> tuple[str, dict[str, dict[str, float]]]:
    from autograde.metrics.retrieval import load_runs

    runs, _ = load_runs([path])
    if len(runs) != 1:
        raise AutogradeError(f"{path}: holds {len(runs)} runs ({', '.join(runs)}); give a file with one run tag")
    return next(iter(runs.items()))


def cmd_significance(args: argparse.Namespace) -> int:
    """Paired permutation test between two runs (--run-a/--run-b) or many (--run, optional --baseline)."""
    from autograde.metrics.report import markdown_table, result_document
    from autograde.metrics.retrieval import load_qrels, load_runs, per_query_measures, warn_missing_queries
    from autograde.metrics.significance import compare_systems, paired_test

    mcfg = _load_metrics_config(section_file(args))
    rcfg = _retrieval_cfg(args, mcfg.retrieval)
    scfg = override(mcfg.significance, baseline=args.baseline, n_resamples=args.n_resamples, seed=args.seed,
                     alpha=args.alpha, correction=args.correction, p_value_variant=args.p_value_variant,
                     t_test=True if args.t_test else None, bootstrap=True if args.bootstrap else None,
                     confidence=args.confidence)
    pair_mode = args.run_a is not None or args.run_b is not None
    if pair_mode and (args.run_a is None or args.run_b is None or args.run):
        raise AutogradeError("give both --run-a and --run-b (and no --run), or two or more --run")
    if not pair_mode and len(args.run or []) < 2:
        raise AutogradeError("give --run-a A --run-b B, or at least two --run files")
    qrels = load_qrels(args.qrels)
    options = {"retrieval": rcfg.model_dump(exclude={"per_query"}),
               "significance": scfg.model_dump(exclude={"baseline"} if pair_mode else set()),
               "query_set": "union of the two systems' queries; a missing side scores 0"}
    if pair_mode:
        (name_a, run_a), (name_b, run_b) = _one_run(args.run_a), _one_run(args.run_b)
        warn_missing_queries(qrels, {name_a: run_a, name_b: run_b}, rcfg, {name_a: args.run_a, name_b: args.run_b})
        pa, pb = per_query_measures(qrels, run_a, rcfg), per_query_measures(qrels, run_b, rcfg)
        results = paired_test(pa, pb, n_resamples=scfg.n_resamples, seed=scfg.seed, alpha=scfg.alpha,
                              p_value_variant=scfg.p_value_variant, t_test=scfg.t_test, bootstrap=scfg.bootstrap,
                              confidence=scfg.confidence)
        body = {"qrels": args.qrels, "run_a": {"name": name_a, "file": args.run_a},
                "run_b": {"name": name_b, "file": args.run_b}, "options": options, "results": results}
        cols = ["A_mean", "B_mean", "diff", "p_value", "significant"]
        first = next(iter(results.values()), {})
        extra = [c for c in ("t_p_value", "ci_low", "ci_high") if c in first]
        table = markdown_table(["measure", *cols, *extra], [[m, *(r[c] for c in cols + extra)]
                                                             for m, r in results.items()])
        md = f"A = {name_a} ({args.run_a}), B = {name_b} ({args.run_b})\n\n{table}\n"
    else:
        runs, sources = load_runs(args.run)
        warn_missing_queries(qrels, runs, rcfg, sources)
        per_query = {name: per_query_measures(qrels, run, rcfg) for name, run in runs.items()}
        df = compare_systems(per_query, baseline=scfg.baseline, seed=scfg.seed, n_resamples=scfg.n_resamples,
                             alpha=scfg.alpha, correction=scfg.correction, p_value_variant=scfg.p_value_variant,
                             t_test=scfg.t_test, bootstrap=scfg.bootstrap, confidence=scfg.confidence)
        records = df.to_dict(orient="records")
        body = {"qrels": args.qrels, "runs": sources, "options": options, "comparisons": records}
        cols = ["measure", "system", "baseline", "A_mean", "B_mean", "diff", "p_value", "p_adjusted", "significant"]
        md = markdown_table(cols, [[r[c] for c in cols] for r in records]) + (
            f"\n\ncorrection: {scfg.correction} across the comparisons of each measure\n")
    _write_outputs(args, result_document("significance", body), md)
    return 0


def cmd_generation(args: argparse.Namespace) -> int:
    """EM, Acc, StringEM, CoverEM, F1 and ROUGE of predictions against gold answers (JSONL)."""
    from autograde.metrics.generation import evaluate_generation, generation_markdown, read_generation_data
    from autograde.metrics.report import result_document

    gcfg = override(_load_metrics_config(section_file(args)).generation, gold_key=args.gold_key, pred_key=args.pred_key,
                     metrics=args.metrics, rouge_tokenizer=args.rouge_tokenizer,
                     empty_reference=args.empty_reference)
    data = read_generation_data(args.data, gcfg.gold_key, gcfg.pred_key, args.predictions)
    body = evaluate_generation(data.golds, data.preds, gcfg, where=data.where)
    body = {"data": args.data, "predictions": args.predictions or args.data, **body}
    _write_outputs(args, result_document("generation", body), generation_markdown(body))
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="result JSON")
    p.add_argument("--md", help="also write a Markdown table here")
    add_config_option(p, "metrics")
    p.add_argument("--quiet", action="store_true", help="do not print the table on stdout")


def _retrieval_options(p: argparse.ArgumentParser) -> None:
    from autograde.metrics.config import RETRIEVAL_FAMILIES

    p.add_argument("--qrels", required=True, help="TREC qrels file")
    p.add_argument("--metrics", nargs="+", choices=RETRIEVAL_FAMILIES, help="measure families (default: all)")
    p.add_argument("--cutoffs", nargs="+", type=int, help="cutoffs k (default: 1 5 10 20 50 100)")
    p.add_argument("--extra-measure", action="append", help="another trec_eval measure (repeatable): Rprec, P_7, ...")
    p.add_argument("--relevance-level", type=int, help="trec_eval -l (default 1; nDCG ignores it)")
    p.add_argument("--missing-queries", choices=["zero", "skip"],
                   help="zero: qrels queries missing from a run score 0 (trec_eval -c, default); skip: run ∩ qrels")
    p.add_argument("--mrr-cutoff", type=int, help="also report mrr@k (rankings truncated to k)")
    p.add_argument("--no-per-query", action="store_true", help="leave per-query values out of the JSON")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``metrics`` with its ``retrieval``, ``generation`` and ``significance`` subcommands."""
    p = subparsers.add_parser("metrics", help="evaluation-server metrics: retrieval, generation, significance",
                              description="Retrieval measures, generation metrics and significance tests of the "
                              "evaluation server, as commands.")
    sub = p.add_subparsers(dest="metrics_command", required=True)

    r = add_command(sub, "retrieval", "trec_eval measures of runs (mrr, map, ndcg@k, P@k, recall@k)")
    _retrieval_options(r)
    r.add_argument("--run", action="append", required=True, help="TREC run file (repeatable)")
    _common(r)
    r.set_defaults(func=cmd_retrieval)

    s = add_command(sub, "significance", "paired two-sided permutation test between runs, per measure")
    _retrieval_options(s)
    s.add_argument("--run-a", help="system A (the new one)")
    s.add_argument("--run-b", help="system B (the old one)")
    s.add_argument("--run", action="append", help="many systems (repeatable): all pairs, or each vs --baseline")
    s.add_argument("--baseline", help="with --run: the run name every other run is compared with")
    s.add_argument("--seed", type=int, help="seed of the random sign flips (default 0)")
    s.add_argument("--n-resamples", type=int, help="number of sign-flip resamples (default 10000)")
    s.add_argument("--alpha", type=float, help="significance level (default 0.05)")
    s.add_argument("--correction", choices=["none", "holm", "bh"], help="with --run: multiple-comparison correction")
    s.add_argument("--p-value-variant", choices=["reference", "plus_one"],
                   help="reference: count/n (default); plus_one: (count+1)/(n+1)")
    s.add_argument("--t-test", action="store_true", help="also a paired t-test p-value")
    s.add_argument("--bootstrap", action="store_true", help="also a bootstrap CI of the mean difference")
    s.add_argument("--confidence", type=float, help="bootstrap confidence level (default 0.95)")
    _common(s)
    s.set_defaults(func=cmd_significance)

    g = add_command(sub, "generation", "EM, Acc, StringEM, CoverEM, F1, ROUGE-1/2/L of predicted answers")
    g.add_argument("--data", required=True, help="JSONL with gold answers (and predictions)")
    g.add_argument("--predictions", help="separate JSONL with predictions, aligned with --data line by line")
    g.add_argument("--gold-key", help="key of the gold answer list (default golden_answers)")
    g.add_argument("--pred-key", help="key of the prediction (default pred_answer)")
    g.add_argument("--metrics", nargs="+", help="subset of: acc em stringem coverem f1 rouge-1 rouge-2 rouge-l")
    g.add_argument("--rouge-tokenizer", choices=["reference", "unicode"],
                   help="reference (drops non-ASCII, default) or unicode")
    g.add_argument("--empty-reference", choices=["keep", "drop", "error"],
                   help="gold answers that normalize to nothing: keep (reference, warned), drop or error")
    _common(g)
    g.set_defaults(func=cmd_generation)
