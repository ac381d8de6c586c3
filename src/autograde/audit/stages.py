"""The judge audit over files: the meta-evaluation of an experiment's results, of label files against judgments, the
judge x collection table of several experiments, and the robustness audit of one grader (the rules, the CLI and
the tests call these).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from autograde.config.audit import META_FILES, ROBUSTNESS_FILES
from autograde.core.errors import ConfigError, InvalidValueError
from autograde.core.layout import HUMAN, Layout, Leaderboard, QrelsVariant
from autograde.core.log import logger

if TYPE_CHECKING:
    from autograde.audit.robustness import AuditInputs, AuditResult
    from autograde.config.audit import AuditConfig, RobustnessConfig
    from autograde.config.model import Config

JUDGE_STATISTICS = ("kappa", "kappa_linear", "alpha_ordinal", "topic_kappa_median", "kendall", "tau_ap",
                    "kendall@5", "kendall@10", "topic_tau_median")
"""The columns of the judge x collection table (system-level ones for the first measure)."""


@dataclass
class MetaTables:
    labels: pd.DataFrame
    systems: pd.DataFrame | None
    per_topic: pd.DataFrame
    confusion: pd.DataFrame


def audit_section(config: Config) -> AuditConfig:
    """The experiment's ``audit:`` section, or its defaults when it has none (the commands work without it)."""
    from autograde.config.audit import AuditConfig

    return config.audit if config.audit is not None else AuditConfig()


def _tsv(df: pd.DataFrame) -> str:
    return df.to_csv(sep="\t", index=False, float_format="%.6g")


def judgments_of(results: str | Path) -> dict[tuple[str, str], int]:
    """The human judgments the workflow ingested (``ingest/judgments.parquet``)."""
    from autograde.core.tables import read_table

    path = Path(Layout.of(results).ingest("judgments"))
    if not path.exists():
        raise InvalidValueError(f"{path}: no human judgments (fix: give data.qrels and run the ingest stage)")
    df = read_table(path)
    return {(str(q), str(p)): int(v) for q, p, v in df[["query_id", "passage_id", "relevance"]].itertuples(index=False)}


def label_tables(sources: Sequence[tuple[str, str, dict[tuple[str, str], int], int]],
                 judgments: dict[tuple[str, str], int], relevant_level: int) -> MetaTables:
    """Label-level tables of ``(grader, variant, labels, threshold)`` sources against the judgments."""
    from autograde.audit.metaeval import label_agreement

    if not judgments:
        raise InvalidValueError("no human judgments to meta-evaluate against (fix: give data.qrels)")
    rows, topics, confusion = [], [], []
    for grader, variant, labels, threshold in sources:
        try:
            la = label_agreement(labels, judgments, threshold, relevant_level)
        except InvalidValueError as exc:
            raise InvalidValueError(f"{grader} {variant}: {exc}") from None
        rows.append({"grader": grader, "variant": variant, **la.row()})
        topics.append(la.per_topic.assign(grader=grader, variant=variant, measure="-", tau=float("nan")))
        g = la.confusion
        confusion += [(grader, variant, int(lab), int(j), int(g.loc[lab, j])) for lab in g.index for j in g.columns]
    per_topic = pd.concat(topics, ignore_index=True) if topics else pd.DataFrame()
    return MetaTables(pd.DataFrame(rows), None, per_topic,
                      pd.DataFrame(confusion, columns=["grader", "variant", "label", "judgment", "count"]))


def meta_evaluate(config: Config, leaderboards: Sequence[Leaderboard], results: str | Path | None = None
                  ) -> MetaTables:
    """Label and system level agreement of every grader of the experiment with its human qrels, from its results.

    ``leaderboards`` are the experiment's (:func:`autograde.workflow.leaderboards.leaderboards`, the one list): each
    one with a leaderboard of the same measure under the human qrels is compared with it (cover and nugget
    leaderboards have none)."""
    from autograde.io.trec import read_qrels
    from autograde.reports.agreement import qrels_pairs

    if not config.data.qrels:
        raise ConfigError("the experiment has no human qrels (data.qrels): nothing to meta-evaluate against")
    audit = audit_section(config)
    lay = Layout.of(results or config.results_dir)
    relevant = config.reports.level
    sources = [(g.name, v, qrels_pairs(read_qrels(lay.qrels(g.name, v))), QrelsVariant.parse(v).level)
               for g in config.graders for v in config.qrels_variants_of(g.name)]
    tables = label_tables(sources, judgments_of(lay.root), relevant)
    tables.systems, topics = system_tables(leaderboards, audit, set(audit.measures or config.evaluation.measures))
    if len(topics):
        tables.per_topic = pd.concat([tables.per_topic, topics], ignore_index=True)
    return tables


def system_tables(leaderboards: Sequence[Leaderboard], audit: AuditConfig, measures: set[str]
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The system-level rows (one per leaderboard of ``measures`` that has a human leaderboard of its measure) and
    the per-topic Kendall tau: :func:`autograde.metrics.rank_agreement.leaderboard_agreement`, the function the
    correlation report uses, each side's means formed as its leaderboard forms them."""
    from autograde.audit.metaeval import quantiles
    from autograde.metrics.rank_agreement import leaderboard_agreement
    from autograde.pipeline.leaderboard import leaderboard_values

    human = {lb.measure: lb for lb in leaderboards if lb.grader == HUMAN}
    tables_read: dict[str, pd.DataFrame] = {}
    rows, topics = [], []
    for lb in leaderboards:
        if lb.grader == HUMAN or lb.measure not in human or lb.measure not in measures:
            continue
        try:
            sa = leaderboard_agreement(leaderboard_values(lb, tables_read),
                                       leaderboard_values(human[lb.measure], tables_read), SYSTEM_STATISTICS,
                                       audit.top_k, audit.bootstrap_samples, audit.bootstrap_seed, audit.confidence,
                                       missing_queries=lb.missing_queries)
        except InvalidValueError as exc:
            raise InvalidValueError(f"{lb.grader} {lb.qrels} {lb.measure}: {exc}") from None
        rows.append({"grader": lb.grader, "variant": lb.qrels, "measure": lb.measure, **sa.row(),
                     **{f"topic_tau_{k}": v for k, v in quantiles(sa.topic_tau).items()}})
        topics.append(pd.DataFrame({"grader": lb.grader, "variant": lb.qrels, "measure": lb.measure,
                                    "query_id": sa.queries, "tau": sa.topic_tau}))
    return pd.DataFrame(rows), (pd.concat(topics, ignore_index=True) if topics else pd.DataFrame())


SYSTEM_STATISTICS = ("kendall", "tau_ap", "spearman")
"""The system-level statistics of the meta-evaluation (besides top-k Kendall), in the order of its columns."""


def write_meta(tables: MetaTables, out: dict[str, str], top_k: Sequence[int], title: str) -> None:
    """The meta-evaluation files (keys of :data:`META_FILES`)."""
    from autograde.audit.report import meta_markdown
    from autograde.core.text import atomic_write_text

    cols = ["grader", "variant", "measure", "query_id", "n", "kappa", "kappa_linear", "tau"]
    per_topic = tables.per_topic.reindex(columns=cols)
    atomic_write_text(out["labels"], _tsv(tables.labels))
    atomic_write_text(out["systems"], _tsv(tables.systems if tables.systems is not None else pd.DataFrame()))
    atomic_write_text(out["per_topic"], _tsv(per_topic))
    atomic_write_text(out["confusion"], _tsv(tables.confusion))
    atomic_write_text(out["report"], meta_markdown(tables.labels, tables.systems, top_k, title))


def meta_outputs(results: str | Path) -> dict[str, str]:
    lay = Layout.of(results)
    return {k: lay.audit(v) for k, v in META_FILES.items()}


def run_meta_evaluation(config: Config, leaderboards: Sequence[Leaderboard], results: str | Path | None = None,
                        out: dict[str, str] | None = None) -> MetaTables:
    """Meta-evaluate the experiment from its results and write ``results/audit/meta/``."""
    res = results or config.results_dir
    tables = meta_evaluate(config, leaderboards, res)
    write_meta(tables, out or meta_outputs(res), audit_section(config).top_k, "Meta-evaluation against the human qrels")
    logger.info("meta-evaluation: %d label rows, %d leaderboard rows", len(tables.labels),
                0 if tables.systems is None else len(tables.systems))
    return tables


def judge_table(experiments: Sequence[tuple[str, Config, Sequence[Leaderboard]]], measure: str | None = None
                ) -> pd.DataFrame:
    """The long judge x collection table of several experiments (each meta-evaluated from its results): one row per
    (judge = grader and variant, collection), the label statistics and the system ones of ``measure`` (default:
    each experiment's first measure)."""
    if not experiments:
        raise InvalidValueError("no experiment given (fix: name one experiment config per collection)")
    names = [n for n, _, _ in experiments]
    if len(set(names)) != len(names):
        raise InvalidValueError(f"collection names repeat: {', '.join(names)} (fix: name each NAME=CONFIG)")
    rows = []
    for name, config, boards in experiments:
        try:
            tables = meta_evaluate(config, boards)
        except InvalidValueError as exc:
            raise InvalidValueError(f"collection {name!r}: {exc}") from None
        m = measure or (audit_section(config).measures or list(config.evaluation.measures))[0]
        systems = tables.systems if tables.systems is not None else pd.DataFrame()
        for r in tables.labels.to_dict("records"):
            row = {"judge": f"{r['grader']} {r['variant']}", "collection": name, "measure": m,
                   **{k: r[k] for k in ("kappa", "kappa_linear", "alpha_ordinal", "topic_kappa_median")}}
            sys_rows = systems[(systems["grader"] == r["grader"]) & (systems["variant"] == r["variant"])
                               & (systems["measure"] == m)] if len(systems) else systems
            if len(sys_rows):
                s = sys_rows.iloc[0].to_dict()
                row.update({k: s.get(k) for k in JUDGE_STATISTICS if k in s})
            rows.append(row)
    return pd.DataFrame(rows)


def robustness_inputs(config: Config, grader_name: str, queries: dict[str, str], texts: dict[tuple[str, str], str],
                      rc: RobustnessConfig, warn: bool = True) -> tuple[AuditInputs, int, dict[str, Any]]:
    """What one grader's robustness audit reads besides the pool's texts: the grader's items, and when its grades
    table exists the rankings and its labels (the leaderboard consequence); the threshold; the keywords of
    :func:`autograde.audit.robustness.audit_grader` (and of ``audit_requests``)."""
    from autograde.audit.robustness import AuditInputs
    from autograde.core.tables import read_table
    from autograde.pipeline.qrels import passage_labels
    from autograde.pipeline.stages import items_for_grader

    lay = Layout.of(config.results_dir)
    grades_path = Path(lay.grades(grader_name))
    labels: dict[tuple[str, str], int] = {}
    rankings = None
    if grades_path.exists():
        grades = read_table(grades_path, ["query_id", "passage_id", "item_id", "grade"])
        labels = {(str(q), str(p)): int(v) for (q, p), v in passage_labels(grades, "max", 1, warn=False).items()}
        rankings = read_table(lay.ingest("rankings"))
    elif warn:
        logger.warning("audit %s: no grades table %s yet: no leaderboard consequence", grader_name, grades_path)
    threshold = rc.threshold or config.thresholds_of(grader_name)[0]
    keywords = {"measure": config.evaluation.measures[0], "level": QrelsVariant("max", threshold).level,
                "depth": rc.system_depth or config.pool.depth, "missing_queries": config.evaluation.missing_queries}
    return AuditInputs(queries, texts, items_for_grader(config, grader_name, queries), rankings, labels), threshold, \
        keywords


def run_robustness(config: Config, grader_name: str, out: dict[str, str] | None = None,
                   perturbations: Sequence[str] | None = None, threads: int | None = None) -> AuditResult:
    """The robustness audit of one grader of the experiment from its results; writes :data:`ROBUSTNESS_FILES`."""
    from autograde.audit.perturb import check_perturbations
    from autograde.audit.report import robustness_markdown
    from autograde.audit.robustness import audit_grader
    from autograde.core.runtime import set_threads
    from autograde.core.tables import read_table, write_table
    from autograde.core.text import atomic_write_text
    from autograde.grading.registry import make_grader

    names = [g.name for g in config.graders]
    if grader_name not in names:
        raise InvalidValueError(f"grader {grader_name!r} is not in the experiment (graders: {', '.join(names) or 'none'}); "
                         "an audit grades through the experiment's grader and its cache")
    rc = audit_section(config).robustness
    if perturbations:
        check_perturbations(perturbations)
        rc = rc.model_copy(update={"perturbations": list(perturbations)})
    set_threads(threads)
    lay = Layout.of(config.results_dir)
    queries = dict(read_table(lay.ingest("queries"))[["query_id", "query_text"]].itertuples(index=False))
    pool = read_table(lay.pool, ["query_id", "passage_id", "text"])
    texts = {(q, p): t for q, p, t in pool.itertuples(index=False)}
    inputs, threshold, keywords = robustness_inputs(config, grader_name, queries, texts, rc)
    cfg = config.grader(grader_name)
    grader = make_grader(cfg)
    try:
        result = audit_grader(grader, cfg, inputs, rc, threshold, config.grading.cache_dir,
                              batch_size=config.grading.batch_size, **keywords)
    finally:
        grader.close()
    paths = out or {k: lay.audit_grader(grader_name, v) for k, v in ROBUSTNESS_FILES.items()}
    write_table(paths["pairs"], result.pairs, ["query_id", "passage_id", "variant"])
    atomic_write_text(paths["summary"], _tsv(result.summary))
    atomic_write_text(paths["leaderboard"], _tsv(result.leaderboard))
    atomic_write_text(paths["stats"], json.dumps(result.stats, indent=2, sort_keys=True) + "\n")
    atomic_write_text(paths["report"], robustness_markdown(grader_name, result.summary, result.leaderboard,
                                                           result.stats))
    logger.info("audit %s: %s", grader_name, json.dumps(result.stats, sort_keys=True))
    return result
