"""Metric parity on the bundled reference files: trec_eval's golden outputs and the evaluation server (UltraRAG).

- trec_eval: every (query, measure) value of each golden output (``out.test.aq`` and its ``-c`` and ``-l 2``
  variants) against :func:`autograde.metrics.trec.evaluate_run`, compared as trec_eval prints them (4 decimals);
  the summary ("all") values of a few measures get their own rows.
- Evaluation server: our retrieval measures (:func:`autograde.metrics.retrieval.evaluate_retrieval`, the
  server's "skip" policy) against pytrec_eval averaged over the evaluated queries as the server does; our
  paired permutation test against scipy's ``permutation_test``; generation metrics
  (:func:`autograde.metrics.generation.score_item`) on the plan's cases, whose expected values (derived by
  hand from the server's code) are in the paper YAML.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from autograde.core.errors import InputError, Problem
from autograde.core.text import iter_lines
from autograde.io.trec import RunDict, read_qrels, read_run
from autograde.reproduce.config import ServerSettings, TrecEvalCase, TrecEvalSettings
from autograde.reproduce.measured import Measurement, Value

__all__ = ["EQUAL_COLUMN", "measure_server", "measure_trec_eval", "read_golden"]

EQUAL_COLUMN = "values equal at 4 decimals"
"""Column of the per-case count of equal values (its ``reference`` is the number of values compared)."""


TEXT_MEASURES = ("runid", "relstring")
"""trec_eval measures printed as text, not numbers (``relstring_20`` too)."""


def read_golden(path: str | Path) -> dict[str, dict[str, str]]:
    """A trec_eval ``-q`` output -> {query id or 'all': {measure: printed value}}."""
    from autograde.core.errors import Problems

    problems = Problems()
    out: dict[str, dict[str, str]] = {}
    for n, line in iter_lines(path, problems):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split("\t")]
        if len(parts) != 3:
            problems.add(path, n, f"expected 'measure<TAB>query<TAB>value', got {len(parts)} field(s)",
                         "give trec_eval's own output")
            continue
        measure, qid, value = parts
        if not measure.startswith(TEXT_MEASURES):
            try:
                float(value)
            except ValueError:
                problems.add(path, n, f"value {value!r} of {measure} for query {qid!r} is not a number",
                             "give trec_eval's own output (restore the file from trec_eval's test/ folder)")
                continue
        out.setdefault(qid, {})[measure] = value
    problems.raise_if_any()
    return out


def _six_column_run(path: Path) -> RunDict:
    """The single run of a trec_eval test file, read by our reader from a copy cut to six columns
    (``results.trunc`` carries junk after the sixth column, which trec_eval ignores and our reader refuses)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.name
        copy.write_text("".join(" ".join(line.split()[:6]) + "\n" for line in path.read_text(encoding="utf-8")
                                .splitlines() if line.strip()), encoding="utf-8")
        runs = read_run(copy).runs
    if len(runs) != 1:
        raise InputError([Problem(str(path), None, f"expected one run tag, found {len(runs)}",
                                  "give a trec_eval test run file")])
    return next(iter(runs.values()))


def _case(case: TrecEvalCase, s: TrecEvalSettings) -> list[Value]:
    from autograde.metrics.trec import evaluate_run, mean_over_queries

    folder = Path(s.folder)
    per_query = evaluate_run(read_qrels(folder / case.qrels), _six_column_run(folder / case.run), s.measures,
                             relevance_level=case.relevance_level, missing_queries=case.missing_queries)
    ours = {**per_query, "all": mean_over_queries(per_query, s.measures)}
    golden = read_golden(folder / case.golden)
    compared = equal = 0
    for qid, printed in golden.items():
        for m in s.measures:
            if m in printed:
                compared += 1
                equal += int(qid in ours and f"{ours[qid][m]:.4f}" == printed[m])
    values = [Value(case.name, EQUAL_COLUMN, float(equal), reference=float(compared))]
    values += [Value(case.name, m, float(ours["all"][m]), reference=float(golden["all"][m]))
               for m in s.shown if m in golden.get("all", {})]
    return values


def measure_trec_eval(s: TrecEvalSettings) -> Measurement:
    """Every case of the plan: the count of equal values and the shown summary values."""
    values = [v for case in s.cases for v in _case(case, s)]
    notes = [f"{len(s.measures)} measures compared per query and in the summary; trec_eval prints 4 decimals"]
    return Measurement("trec_eval_parity", values=values, notes=notes)


def _reference_means(qrels: dict, run: RunDict, k: int) -> dict[str, float]:
    """The server's computation: pytrec_eval per query (queries in both), averaged."""
    import pytrec_eval

    names = {"map": "map", "mrr": "recip_rank", f"ndcg@{k}": f"ndcg_cut_{k}", f"P@{k}": f"P_{k}",
             f"recall@{k}": f"recall_{k}"}
    judged = {q: d for q, d in qrels.items() if d}
    run = {q: d for q, d in run.items() if q in judged}
    pq = pytrec_eval.RelevanceEvaluator(judged, {"map", "recip_rank", f"ndcg_cut.{k}", f"P.{k}",
                                                 f"recall.{k}"}).evaluate(run)
    return {ours: float(np.mean([r[trec] for r in pq.values()])) for ours, trec in names.items()}


def measure_server(s: ServerSettings) -> Measurement:
    """Retrieval means, permutation p-values and generation metrics (see the module doc)."""
    from autograde.core.stats import scipy_paired_permutation_pvalues
    from autograde.metrics.config import RetrievalMetricsConfig
    from autograde.metrics.generation import score_item
    from autograde.metrics.retrieval import evaluate_retrieval, load_qrels, load_runs, per_query_measures
    from autograde.metrics.significance import paired_test

    qrels = load_qrels(s.qrels)
    runs, _ = load_runs(s.runs)
    cfg = RetrievalMetricsConfig(cutoffs=[s.cutoff], missing_queries="skip")
    body = evaluate_retrieval(qrels, runs, cfg)
    values: list[Value] = []
    for name, run in runs.items():
        ref = _reference_means(qrels, run, s.cutoff)
        values += [Value(name, m, float(body["results"][name][m]), reference=r) for m, r in ref.items()]
    notes = [f"{len(qrels)} queries; runs {', '.join(runs)}; cutoff {s.cutoff}"]
    if len(runs) >= 2:
        (na, a), (nb, b) = list(runs.items())[:2]
        pa, pb = per_query_measures(qrels, a, cfg), per_query_measures(qrels, b, cfg)
        measures = ["map", "mrr", f"ndcg@{s.cutoff}"]
        ours = paired_test(pa, pb, measures, n_resamples=s.permutation_resamples, seed=s.permutation_seed)
        qids = sorted(set(pa) | set(pb))
        xa = np.array([[pa.get(q, {}).get(m, 0.0) for m in measures] for q in qids])
        xb = np.array([[pb.get(q, {}).get(m, 0.0) for m in measures] for q in qids])
        scipy_p = scipy_paired_permutation_pvalues(xa, xb, s.permutation_resamples, s.permutation_seed + 1)
        values += [Value(f"{na} vs {nb}", f"p({m})", float(ours[m]["p_value"]), reference=float(scipy_p[j]))
                   for j, m in enumerate(measures)]
        notes.append(f"paired sign-flip test, {s.permutation_resamples} resamples each (ours: seed "
                     f"{s.permutation_seed}; scipy: seed {s.permutation_seed + 1}); both are Monte-Carlo estimates")
    for case in s.cases:
        values += [Value(case.name, m, float(v)) for m, v in score_item(case.golds, case.prediction).items()]
    return Measurement("evaluation_server_parity", values=values, notes=notes)
