"""Retrieval metrics in the reference evaluation server's shape: ``mrr``, ``map``, ``ndcg@k``, ``P@k``, ``recall@k``.

>>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}
>>> runs = {"bm25": {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {"d3": 5.0}}}
>>> body = evaluate_retrieval(qrels, runs, RetrievalMetricsConfig(cutoffs=[1, 10]))
>>> body["results"]["bm25"]
{'map': 0.75, 'mrr': 0.75, 'ndcg@1': 0.5, 'P@1': 0.5, 'recall@1': 0.5, 'ndcg@10': 0.8154648767857288, 'P@10': 0.1, 'recall@10': 1.0}

Mapping to trec_eval (all through :func:`autograde.metrics.trec.evaluate_run`): ``mrr`` = ``recip_rank``
(no cutoff, as trec_eval and the reference), ``map`` = ``map``, ``ndcg@k`` = ``ndcg_cut_k``, ``P@k`` = ``P_k``
(divides by k), ``recall@k`` = ``recall_k``. ``mrr@k`` (option ``mrr_cutoff``) truncates every ranking to
its top k in trec_eval order (score desc, doc id desc, float32) before ``recip_rank``.

Differences from the reference server, all options: the default query set is trec_eval ``-c`` (a qrels
query missing from a run scores 0; ``missing_queries="skip"`` gives the reference's intersection); the
relevance level is explicit; malformed lines and duplicate doc ids are errors, not silently kept; the
output adds options, query counts and per-query values beside the reference's flat ``{measure: value}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from autograde.core.errors import InvalidValueError, Problems
from autograde.core.log import logger
from autograde.io.trec import Qrels, RunDict, read_qrels, read_run, trec_order
from autograde.metrics.config import RetrievalMetricsConfig
from autograde.metrics.measures import Measure, parse_measure
from autograde.metrics.report import markdown_table
from autograde.metrics.trec import PerQuery, evaluate_run, mean_over_queries, query_sort_key

__all__ = [
    "evaluate_retrieval",
    "load_qrels",
    "load_runs",
    "measure_specs",
    "per_query_measures",
    "query_accounting",
    "retrieval_markdown",
    "truncate_run",
]


def measure_specs(metrics: Iterable[str] = ("mrr", "map", "ndcg", "precision", "recall"),
                  cutoffs: Sequence[int] = (1, 5, 10, 20, 50, 100),
                  mrr_cutoff: int | None = None) -> list[Measure]:
    """Measures in the reference server's order: map, mrr, [mrr@k], then per cutoff ndcg@k, P@k, recall@k."""
    fams = list(metrics)
    unknown = [m for m in fams if m not in ("mrr", "map", "ndcg", "precision", "recall")]
    if unknown:
        raise InvalidValueError(f"unknown retrieval metric(s) {unknown}; valid: mrr, map, ndcg, precision, recall "
                         "(other trec_eval measures go in extra_measures)")
    names = [n for n in ("map", "mrr") if n in fams] + ([f"mrr@{mrr_cutoff}"] if mrr_cutoff is not None else [])
    for k in cutoffs:
        names += [f"{short}@{k}" for fam, short in (("ndcg", "ndcg"), ("precision", "P"), ("recall", "recall"))
                  if fam in fams]
    return [parse_measure(n, "server") for n in names]


def truncate_run(run: RunDict, k: int) -> RunDict:
    """Each query's top ``k`` documents in trec_eval order (score desc, doc id desc, float32 scores)."""
    return {qid: {doc: docs[doc] for doc in trec_order(docs)[:k]} for qid, docs in run.items()}


def _trec(measure: Measure) -> str:
    """The trec_eval measure behind a server measure (every server measure names one)."""
    assert measure.trec is not None
    return measure.trec


def per_query_measures(qrels: Qrels, run: RunDict, cfg: RetrievalMetricsConfig | None = None) -> PerQuery:
    """Per-query values under the JSON names (``mrr``, ``ndcg@10``, ...), then the extra trec_eval measures."""
    cfg = cfg or RetrievalMetricsConfig()
    specs = measure_specs(cfg.metrics, cfg.cutoffs, cfg.mrr_cutoff)
    level, missing = cfg.level, cfg.missing_queries
    plain = [_trec(s) for s in specs if s.truncate is None]
    base = evaluate_run(qrels, run, plain, level, missing) if plain else None
    truncated = {k: evaluate_run(qrels, truncate_run(run, k), ["recip_rank"], level, missing)
                 for k in {s.truncate for s in specs if s.truncate is not None}}
    extra = evaluate_run(qrels, run, cfg.extra_measures, level, missing) if cfg.extra_measures else None
    qids = next(iter(x for x in (base, extra, *truncated.values()) if x is not None), {})
    out: PerQuery = {}
    for qid in qids:
        row: dict[str, float] = {}
        for s in specs:
            source = base if s.truncate is None else truncated[s.truncate]
            assert source is not None
            row[s.name] = source[qid][_trec(s)]
        if extra is not None:
            row.update(extra[qid])
        out[qid] = row
    return out


def query_accounting(qrels: Qrels, run: RunDict, missing_queries: str) -> dict[str, int | str]:
    """How many queries were evaluated, scored 0 for being absent from the run, or ignored (run only)."""
    judged = {q for q, docs in qrels.items() if docs}
    in_run = set(run)
    missing = len(judged - in_run)
    return {
        "qrels_queries": len(judged),
        "run_queries": len(in_run),
        "in_both": len(judged & in_run),
        "missing_from_run": missing,
        "missing_policy": "scored 0" if missing_queries == "zero" else "skipped",
        "run_only_ignored": len(in_run - judged),
        "averaged_over": len(judged) if missing_queries == "zero" else len(judged & in_run),
    }


def warn_missing_queries(qrels: Qrels, runs: Mapping[str, RunDict], cfg: RetrievalMetricsConfig,
                         sources: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """Log, per run, the judged queries it has no ranking for and what happens to them; return them by run.

    Under ``missing_queries: zero`` (trec_eval ``-c``) they score 0 on every measure, which silently lowers the
    run's mean and, in a paired test, counts as a loss on each such query.
    """
    judged = {q for q, docs in qrels.items() if docs}
    out: dict[str, list[str]] = {}
    for name, run in runs.items():
        missing = sorted(judged - set(run), key=query_sort_key)
        if not missing:
            continue
        out[name] = missing
        what = ("score 0 on every measure (trec_eval -c; use --missing-queries skip to leave them out)"
                if cfg.missing_queries == "zero" else "are left out of its means (missing_queries: skip)")
        logger.warning("run %s%s lacks %d of the %d judged queries (%s%s): they %s", name,
                       f" ({sources[name]})" if sources and name in sources else "", len(missing), len(judged),
                       ", ".join(missing[:8]), " ..." if len(missing) > 8 else "", what)
    return out


def evaluate_retrieval(qrels: Qrels, runs: Mapping[str, RunDict],
                       cfg: RetrievalMetricsConfig | None = None,
                       sources: Mapping[str, str] | None = None, qrels_source: str | None = None
                       ) -> dict[str, Any]:
    """The body of a retrieval result document (see :func:`autograde.metrics.report.result_document`).

    ``results[run]`` is the reference server's flat ``{measure: mean}``; ``queries[run]`` counts the query
    set; ``per_query[run][query_id]`` holds per-query values when ``cfg.per_query``. ``sources`` maps run
    names to the files they came from and ``qrels_source`` names the qrels file (recorded as given).
    """
    import pytrec_eval

    cfg = cfg or RetrievalMetricsConfig()
    if not any(qrels.values()):
        raise InvalidValueError("the qrels hold no judgments; nothing can be evaluated")
    if not runs:
        raise InvalidValueError("no runs given; pass at least one run")
    results: dict[str, dict[str, float]] = {}
    accounting: dict[str, dict[str, int | str]] = {}
    per_query: dict[str, PerQuery] = {}
    warn_missing_queries(qrels, runs, cfg, sources)
    for name, run in runs.items():
        acc = query_accounting(qrels, run, cfg.missing_queries)
        if acc["in_both"] == 0:
            logger.warning("run %r shares no query with the qrels: every measure is 0", name)
        pq = per_query_measures(qrels, run, cfg)
        names = list(next(iter(pq.values()))) if pq else [s.name for s in measure_specs(
            cfg.metrics, cfg.cutoffs, cfg.mrr_cutoff)]
        results[name] = mean_over_queries(pq, names) if pq else {n: 0.0 for n in names}
        accounting[name] = acc
        per_query[name] = pq
    body: dict[str, Any] = {
        "qrels": qrels_source,
        "runs": dict(sources) if sources else {name: None for name in runs},
        "options": {
            "metrics": list(cfg.metrics),
            "cutoffs": list(cfg.cutoffs),
            "extra_measures": list(cfg.extra_measures),
            "mrr_cutoff": cfg.mrr_cutoff,
            "relevance_level": cfg.level,
            "missing_queries": cfg.missing_queries,
            "trec_eval": f"pytrec-eval-terrier {pytrec_eval.__version__} (trec_eval 9.0.8: score desc, "
                         "docid desc, float32 scores)",
        },
        "results": results,
        "queries": accounting,
    }
    if cfg.per_query:
        body["per_query"] = per_query
    return body


def load_runs(paths: Sequence[str | Path]) -> tuple[dict[str, RunDict], dict[str, str]]:
    """Read run files (every problem of every file reported together) -> ({run name: run}, {run name: file}).

    A run is named by its tag; a tag that occurs in more than one file is named ``<file name>:<tag>``.
    """
    problems = Problems()
    files = [read_run(p, problems) for p in paths]
    problems.raise_if_any()
    tag_count: dict[str, int] = {}
    for f in files:
        for tag in f.runs:
            tag_count[tag] = tag_count.get(tag, 0) + 1
    runs: dict[str, RunDict] = {}
    sources: dict[str, str] = {}
    for f in files:
        for tag, run in f.runs.items():
            name = tag if tag_count[tag] == 1 else f"{Path(f.path).name}:{tag}"
            if name in runs:
                raise InvalidValueError(f"{f.path}: run {name!r} occurs twice; give each run file once")
            runs[name] = run
            sources[name] = str(f.path)
    return runs, sources


def load_qrels(path: str | Path) -> Qrels:
    """Read qrels; an empty file is an error naming it."""
    problems = Problems()
    qrels = read_qrels(path, problems)
    if not problems and not qrels:
        problems.add(path, None, "qrels file holds no judgments", "give a TREC qrels file 'qid 0 docid grade'")
    problems.raise_if_any()
    return qrels


def retrieval_markdown(body: Mapping[str, Any]) -> str:
    """Measures as rows, runs as columns, 4 decimals."""
    results: Mapping[str, Mapping[str, float]] = body["results"]
    names: list[str] = []
    for values in results.values():
        names += [n for n in values if n not in names]
    rows = [[n] + [results[r].get(n) for r in results] for n in names]
    opts = body["options"]
    note = (f"relevance level {opts['relevance_level']}; query set: "
            f"{'qrels queries, missing = 0 (trec_eval -c)' if opts['missing_queries'] == 'zero' else 'run ∩ qrels'}")
    return markdown_table(["measure", *results], rows) + f"\n\n{note}\n"
