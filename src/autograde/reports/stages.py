"""The report stages as plain functions over files (called by ``scripts/report_*.py`` and the CLI).

Outputs under ``<results>/reports/<grader>/`` (:func:`grader_report_files`) and
``<results>/reports/correlation.tsv`` with one SVG scatter plot per leaderboard
(:func:`correlation_plot_path`); the site goes to ``<results>/site``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from autograde.config.reports import GRADER_REPORT_FILES, ReportsConfig
from autograde.core.errors import Problems
from autograde.core.layout import Layout, QrelsVariant
from autograde.core.log import logger
from autograde.core.tables import read_table, write_table
from autograde.core.text import atomic_write_text

if TYPE_CHECKING:
    from autograde.config.model import Config


@dataclass(frozen=True)
class GraderReportSpec:
    """What one grader's reports need from the experiment (a rule's params; no config object needed)."""

    grader: str
    variants: list[str]
    """Qrels variants (``max-4``, ``count-3``): one agreement table and one bank-impact run each."""
    thresholds: list[int]
    """Grade thresholds tau of missing-in-bank and spurious entries."""
    measures: list[str]
    missing_queries: str
    relevant_level: int
    bank: str | None
    """The grader's test bank file (None: a direct prompt, its item is the query)."""

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GraderReportSpec:
        return cls(**{k: d[k] for k in ("grader", "variants", "thresholds", "measures", "missing_queries",
                                         "relevant_level", "bank")})


def grader_report_spec(config: Config, grader: str) -> GraderReportSpec:
    """The report spec of one grader of an experiment config."""
    rc = config.reports
    g = config.grader(grader)
    taus = list(config.thresholds_of(grader))
    variants = list(config.qrels_variants_of(grader))
    return GraderReportSpec(
        grader=grader, variants=variants, thresholds=rc.thresholds_or(taus), measures=list(config.evaluation.measures),
        missing_queries=config.evaluation.missing_queries,
        relevant_level=rc.level,
        bank=None if g.bank == "direct" else config.banks[g.bank])


def grader_report_files(results: str | Path, grader: str) -> dict[str, str]:
    """Paths of one grader's report files."""
    lay = Layout.of(results)
    return {k: lay.report(grader, v) for k, v in GRADER_REPORT_FILES.items()}


def correlation_plot_path(results: str | Path, grader: str, variant: str, measure: str) -> str:
    """Where the scatter plot of one leaderboard goes (the human qrels' leaderboards under ``human/qrels/``)."""
    return Layout.of(results).reports(f"plots/{grader}/{variant if variant != '-' else 'qrels'}/{measure}.svg")


def grader_items(bank: str | None, queries: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The grader's test items: query_id, item_id, kind, text (``bank`` None: direct prompts, the query itself)."""
    from autograde.io.banks.read import read_bank

    cols = ["query_id", "item_id", "kind", "text"]
    if bank is None:
        from autograde.grading.shard import direct_items

        rows = [(i.query_id, i.item_id, i.kind, i.text) for its in direct_items(dict(queries or {})).values() for i in its]
        return pd.DataFrame(rows, columns=cols)
    problems = Problems()
    items = read_bank(bank, problems)
    problems.raise_if_any()
    return pd.DataFrame([(i.query_id, i.item_id, i.kind, i.text) for i in items.items], columns=cols)


def agreements_for_grader(grader: str, labels: pd.DataFrame, judgments: pd.DataFrame, variants: Sequence[str],
                          level: int) -> list:
    """One :class:`~autograde.reports.agreement.Agreement` per qrels variant (max: tau; count: >= 1 item)."""
    from autograde.reports.agreement import compute_agreement
    from autograde.reports.verify import count_column

    judged = {(q, p): int(r) for q, p, r in judgments[["query_id", "passage_id", "relevance"]].itertuples(index=False)}
    out = []
    for name in variants:
        variant = QrelsVariant.parse(name)
        col = "max_grade" if variant.mode == "max" else count_column(variant.tau)
        lab = labels[labels[col].notna()]  # the labels of the evaluated qrels (both from qrels.passage_labels)
        pairs = {(q, p): int(v) for q, p, v in lab[["query_id", "passage_id", col]].itertuples(index=False)}
        out.append(compute_agreement(pairs, judged, variant.level, level, f"{grader} {name}"))
    return out


def _write_tsv(path: str | Path, df: pd.DataFrame) -> None:
    atomic_write_text(path, df.to_csv(sep="\t", index=False, float_format="%.4f", na_rep=""))


def write_agreement(results: list, paths: Mapping[str, str]) -> None:
    """Agreement TSVs (summary, graded, per query), Markdown and LaTeX (Table 5 layout)."""
    from autograde.reports import agreement as ag

    _write_tsv(paths["agreement"], ag.summary_table(results))
    _write_tsv(paths["agreement_graded"], ag.graded_table(results))
    _write_tsv(paths["agreement_per_query"], ag.per_query_table(results))
    md = ["# Agreement with human judgments", "", ag.table5_markdown(results)]
    for r in results:
        md += [f"## {r.name}: label x judgment", "", ag.graded_markdown(r)]
    atomic_write_text(paths["agreement_md"], "\n".join(md))
    atomic_write_text(paths["agreement_tex"], ag.table5_latex(results))


def run_grader_reports(spec: GraderReportSpec, rc: ReportsConfig, grades_path: str | Path, judgments_path: str | Path,
                       rankings_path: str | Path, queries_path: str | Path, evaluations: Mapping[str, str | Path],
                       out: Mapping[str, str], cache_dir: str | Path | None = None) -> dict[str, Any]:
    """All Phase 3 reports of one grader (see :data:`GRADER_REPORT_FILES`); returns the summary.

    ``evaluations`` maps each qrels variant to its per-query evaluation parquet (for the bank impact, whose
    per-query re-evaluations are read from the per-query cache of ``cache_dir`` where their inputs did not change).
    """
    from autograde.core.querycache import describe, merge_stats
    from autograde.reports import verify
    from autograde.reports.impact import IMPACT_COLUMNS, bank_impact_cached

    t0 = time.perf_counter()
    grader, thresholds, level = spec.grader, list(spec.thresholds), spec.relevant_level
    grades = read_table(grades_path)
    judgments = read_table(judgments_path)
    queries = dict(read_table(queries_path)[["query_id", "query_text"]].itertuples(index=False))
    items = grader_items(spec.bank, queries)
    items = items[items["query_id"].isin(set(grades["query_id"]))] if len(grades) else items
    for path in out.values():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_table(out["bank_items"], items, ["query_id", "item_id"])
    label_taus = sorted({*thresholds, *(QrelsVariant.parse(v).tau for v in spec.variants)})
    labels = verify.passage_label_table(grades, judgments, label_taus)
    write_table(out["passages"], labels, ["query_id", "passage_id"], metadata={"thresholds": label_taus})
    write_table(out["verify"], verify.verify_lists(grades, judgments, items), None)
    missing = verify.missing_in_bank(labels, grades, thresholds, level)
    _write_tsv(out["missing"], missing)
    spurious = verify.spurious_entries(grades, judgments, thresholds, rc.spurious_judgments, level,
                                       rc.spurious_min_count, items)
    _write_tsv(out["spurious"], spurious)
    impact = pd.DataFrame(columns=IMPACT_COLUMNS)
    counts = []
    if rc.impact and evaluations:
        frames = []
        for name, evaluation_path in evaluations.items():
            v = QrelsVariant.parse(name)
            if v.mode not in ("max", "count"):
                continue  # calibrated labels are not made from this grader's grades
            frame, n = bank_impact_cached(grades, rankings_path, read_table(evaluation_path), v.mode, v.tau,
                                          spec.measures, spec.missing_queries, name, cache_dir)
            frames.append(frame)
            counts.append(n)
        impact = pd.concat(frames, ignore_index=True) if frames else impact
    _write_tsv(out["impact"], impact)
    results = agreements_for_grader(grader, labels, judgments, spec.variants, level) if len(judgments) else []
    write_agreement(results, out)
    summary = {
        "grader": grader, "queries": int(grades["query_id"].nunique()) if len(grades) else 0,
        "passages": len(labels), "items": len(items), "pairs": len(grades),
        "failed_pairs": int(grades["grade"].isna().sum()) if len(grades) else 0,
        "judged_passages": len(judgments), "relevant_level": level, "thresholds": thresholds,
        "spurious_judgments": list(rc.spurious_judgments), "variants": list(spec.variants),
        "missing": {str(t): int((missing["threshold"] == t).sum()) for t in thresholds},
        "agreement": {r.name.split(" ", 1)[1]: {"kappa": _num(r.kappa), "kappa_linear": _num(r.kappa_linear),
                                                "covered": r.n_covered, "judged": r.n_judged} for r in results},
        "spec": asdict(spec),
    }
    atomic_write_text(out["summary"], json.dumps(summary, indent=2, sort_keys=True) + "\n")
    logger.info("reports %s: %d passages, %d items, %d missing-in-bank rows, %d spurious rows, %d impact rows (bank "
                "impact: %s; %.1f s)", grader, len(labels), len(items), len(missing), len(spurious), len(impact),
                describe(merge_stats(counts)), time.perf_counter() - t0)
    return {**summary, "cache": merge_stats(counts)}


def _num(x: float) -> float | None:
    return None if x != x else round(float(x), 6)


def read_official(path: str | Path) -> dict[str, float]:
    """The official leaderboard ``{run: rank}`` (errors name the file and the fix)."""
    from autograde.pipeline.ingest import read_official_leaderboard

    problems = Problems()
    official = read_official_leaderboard(path, problems)
    problems.raise_if_any()
    return official


CORRELATION_VERSION = 3
"""Version of a stored correlation result (bump when
:func:`autograde.metrics.rank_agreement.leaderboard_agreement` changes)."""


def _correlations(rc: ReportsConfig, sources: Sequence[Mapping[str, str]], official: Mapping[str, float],
                  methods: list[str], cache_dir: str | Path | None) -> tuple[list[Any], dict[str, int]]:
    """The agreement of every leaderboard with the official one (in order), each read from the analysis cache when
    its per-query values, its missing-query policy, the official leaderboard and the bootstrap settings are those it
    was computed from: after an edit only the edited grader's leaderboards are bootstrapped again. Returns (results,
    cache counts)."""
    from autograde.core.layout import Leaderboard
    from autograde.core.querycache import QueryCache
    from autograde.metrics.rank_agreement import RankAgreement, leaderboard_agreement
    from autograde.pipeline.leaderboard import leaderboard_values
    from autograde.pipeline.perquery import query_digests

    tables: dict[str, pd.DataFrame] = {}
    boards = {str(i): Leaderboard.from_dict(dict(src)) for i, src in enumerate(sources)}
    per_q = {i: leaderboard_values(lb, tables) for i, lb in boards.items()}
    settings = {"official": dict(sorted(official.items())), "methods": methods, "samples": rc.bootstrap_samples,
                "seed": rc.bootstrap_seed, "confidence": rc.confidence}
    cache = QueryCache(cache_dir, "correlation", CORRELATION_VERSION)
    keys = {i: cache.key({**settings, "missing": boards[i].missing_queries,
                          "rows": query_digests(df, ["run", "value"])}) for i, df in per_q.items()}

    def compute(todo: list[str]) -> dict[str, Any]:
        out = {}
        for i in todo:
            res = leaderboard_agreement(per_q[i], official, methods, samples=rc.bootstrap_samples,
                                        seed=rc.bootstrap_seed, confidence=rc.confidence,
                                        missing_queries=boards[i].missing_queries)
            out[i] = {"n_systems": res.n_systems, "n_queries": res.n_queries, "point": res.point, "low": res.low,
                      "high": res.high, "scores": res.scores}
        return out

    stored = cache.values(keys, compute)
    return [RankAgreement(**stored[i]) for i in per_q], cache.stats


def run_report_correlation(rc: ReportsConfig, sources: Sequence[Mapping[str, str]], official_path: str | Path,
                           out_path: str | Path, results: str | Path,
                           cache_dir: str | Path | None = None) -> pd.DataFrame:
    """Correlation of every leaderboard with the official one, bootstrap intervals, one scatter plot each.

    ``sources`` are the experiment's leaderboards (:class:`autograde.core.layout.Leaderboard` as dicts, the list of
    :func:`autograde.workflow.leaderboards.leaderboards`): one row each, in their order, as
    ``results/correlation.tsv`` has them. With ``cache_dir``, a leaderboard whose inputs did not change is read
    from the analysis cache instead of being bootstrapped again (the same bytes either way)."""
    from autograde.core.querycache import describe
    from autograde.metrics.rank_agreement import RANK_STATISTICS
    from autograde.reports.plots import Point, scatter_svg

    official = read_official(official_path)
    methods = [m for m in RANK_STATISTICS if m != "tau_ap" or rc.tau_ap]
    results_of, stats = _correlations(rc, sources, official, methods, cache_dir)
    rows = []
    for src, res in zip(sources, results_of, strict=True):
        plot = correlation_plot_path(results, src["grader"], src["qrels"], src["measure"])
        pts = [Point(s, float(official[s]), v) for s, v in sorted(res.scores.items())]
        sub = " · ".join(f"{m} {res.point[m]:.3f}" for m in methods if res.point[m] == res.point[m]) or (
            f"correlation undefined: {len(pts)} system(s) shared with the official leaderboard"
            + (", all with the same score" if len(pts) > 1 else ""))
        Path(plot).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(plot, scatter_svg(pts, f"{src['grader']} {src['qrels']} {src['measure']}",
                                            "official rank (best at the right)", f"{src['measure']} (autograded)"
                                            if src["grader"] != "human" else f"{src['measure']} (human qrels)",
                                            invert_x=True, subtitle=sub))
        rows.append({"grader": src["grader"], "qrels": src["qrels"], "measure": src["measure"], **res.row(methods),
                     "plot": str(Path(plot).relative_to(Layout.of(results).reports("")))})
    cols = ["grader", "qrels", "measure", "n_systems", "n_queries"]
    cols += [c for m in methods for c in (m, f"{m}_low", f"{m}_high")] + ["plot"]
    df = pd.DataFrame(rows, columns=cols)
    _write_tsv(out_path, df)
    logger.info("correlation: %d leaderboards, %d bootstrap samples (seed %d); %s", len(df), rc.bootstrap_samples,
                rc.bootstrap_seed, describe(stats).replace("queries", "leaderboards"))
    return df


def correlation_plot_paths(results: str | Path, sources: Sequence[Mapping[str, str]]) -> list[str]:
    """The scatter plot files of :func:`run_report_correlation` (rule outputs)."""
    return [correlation_plot_path(results, s["grader"], s["qrels"], s["measure"]) for s in sources]


def report_targets(config: Config) -> list[str]:
    """The report files and the site a workflow run makes (``[]`` when ``reports.enabled`` is false)."""
    rc = config.reports
    if not rc.enabled:
        return []
    r = config.results_dir
    out = [f for g in config.graders for f in grader_report_files(r, g.name).values()]
    if config.data.official_leaderboard:
        out.append(Layout.of(r).reports("correlation.tsv"))
    if rc.site:
        out.append(Layout.of(r).site)
    return out
