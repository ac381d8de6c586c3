"""The one trec_eval wrapper of the tool (in-process, through ``pytrec-eval-terrier``).

>>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
>>> run = {"q1": {"d2": 2.0, "d1": 1.0}}
>>> per_query = evaluate_run(qrels, run, ["recip_rank", "P_5"])
>>> per_query["q2"]["recip_rank"]   # missing from the run: scored 0, like trec_eval -c
0.0
>>> mean_over_queries(per_query, ["recip_rank", "P_5"])
{'recip_rank': 0.25, 'P_5': 0.1}

Semantics are trec_eval 9.0.8's (the version inside pytrec-eval-terrier): a ranking is ordered by score
descending, then doc id descending (byte order), scores compare as float32, the rank column is ignored;
``relevance_level`` decides which grades count as relevant for binary measures (map, P, recall,
recip_rank, Rprec, ...) and does not change nDCG, whose gain is the raw grade.

Measure names are trec_eval's, in either spelling: ``P_10`` or ``P.10``, ``ndcg_cut_10`` or
``ndcg_cut.10``, ``P.5,10``; a bare parameterised measure (``P``, ``recall``, ``ndcg_cut``) expands to
trec_eval's default cutoffs (5, 10, 15, 20, 30, 100, 200, 500, 1000). Result keys are always the
underscore form trec_eval prints (``P_10``, ``ndcg_cut_10``, ``iprec_at_recall_0.50``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from autograde.core.errors import InvalidValueError, UnknownNameError
from autograde.core.layout import MissingQueries
from autograde.core.log import logger
from autograde.io.trec import Qrels, RunDict
from autograde.metrics.measures import parse_measure, split_trec_measure

PerQuery = dict[str, dict[str, float]]
"""query_id -> measure -> value."""

__all__ = [
    "MissingQueries",
    "PerQuery",
    "evaluate_run",
    "mean_over_queries",
    "query_sort_key",
    "supported_measures",
]


def supported_measures() -> list[str]:
    """trec_eval measure names (and nicknames such as ``official``) that :func:`evaluate_run` accepts."""
    import pytrec_eval

    return sorted(set(pytrec_eval.supported_measures) | set(pytrec_eval.supported_nicknames))


def _split(name: str) -> tuple[str, tuple[str, ...] | None]:
    """(base, parameters) of a trec_eval measure; an unknown name is the measure registry's error."""
    split = split_trec_measure(name)
    if split is None:
        parse_measure(name, "trec_eval")  # raises, listing valid names
    assert split is not None
    return split


def _evaluator_groups(measures: Iterable[str]) -> list[set[str]]:
    """Group measures into pytrec_eval measure sets that do not clash.

    pytrec_eval keeps one parameter list per base measure, so a bare ``P`` (defaults) and ``P_50`` in
    the same evaluator would lose one of them; such requests go to separate evaluators.
    """
    bare: set[str] = set()
    params: dict[str, set[str]] = {}
    for name in measures:
        base, args = _split(name)
        if args is None:
            bare.add(base)
        else:
            params.setdefault(base, set()).update(args)
    first = set(bare)
    second: set[str] = set()
    for base, values in params.items():
        spec = f"{base}.{','.join(sorted(values, key=float))}"
        (second if base in bare else first).add(spec)
    return [g for g in (first, second) if g]


def query_sort_key(qid: str) -> tuple[int, int, str]:
    """Numeric query ids in numeric order, then the others in string order (stable output)."""
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


def evaluate_run(
    qrels: Qrels,
    run: RunDict,
    measures: Iterable[str],
    relevance_level: int = 1,
    missing_queries: MissingQueries = "zero",
) -> PerQuery:
    """Per-query trec_eval values ``{query_id: {measure: value}}`` for one run.

    ``missing_queries="zero"`` is trec_eval ``-c``: a query of the qrels that the run lacks is evaluated
    with an empty ranking (0 for every effectiveness measure) and so counts in the mean;
    ``"skip"`` keeps only queries in both. Queries in the run but not in the qrels are always ignored,
    as trec_eval does (they are counted in a debug log line). Query ids come back in
    :func:`query_sort_key` order.
    """
    import pytrec_eval

    measures = list(measures)
    if not measures:
        raise InvalidValueError("no measures requested; give at least one trec_eval measure such as 'map'")
    if missing_queries not in ("zero", "skip"):
        raise InvalidValueError(f"missing_queries must be 'zero' or 'skip', got {missing_queries!r}")
    groups = _evaluator_groups(measures)
    # pytrec_eval drops qrels queries without judgments; so do we, to agree on the query set.
    judged = {qid: docs for qid, docs in qrels.items() if docs}
    scores: dict[str, dict[str, float]] = {qid: dict(docs) for qid, docs in run.items() if qid in judged}
    ignored = len(run) - len(scores)
    missing = [qid for qid in judged if qid not in scores]
    if missing_queries == "zero":
        for qid in missing:
            scores[qid] = {}
    logger.debug("evaluate_run: %d queries evaluated, %d missing from the run (%s), %d run-only ignored",
                 len(scores), len(missing), "scored 0" if missing_queries == "zero" else "skipped", ignored)
    merged: dict[str, dict[str, float]] = {qid: {} for qid in scores}
    if scores:
        for group in groups:
            evaluator = pytrec_eval.RelevanceEvaluator(judged, group, relevance_level=int(relevance_level))
            for qid, values in evaluator.evaluate(scores).items():
                merged[qid].update(values)
    order = _key_order(measures)
    return {qid: {k: merged[qid][k] for k in sorted(merged[qid], key=order)}
            for qid in sorted(merged, key=query_sort_key)}


def _key_order(measures: list[str]):  # a sort key function
    """Sort key for result keys: request order of the base measure, then numeric parameter.

    pytrec_eval returns keys in hash order (varies between processes); this makes output bytes stable.
    """
    first: dict[str, int] = {}
    for i, name in enumerate(measures):
        first.setdefault(_split(name)[0], i)

    def key(result_key: str) -> tuple[int, float, str]:
        try:
            base, args = _split(result_key)
        except ValueError:
            return (len(first), 0.0, result_key)
        return (first.get(base, len(first)), float(args[0]) if args else -1.0, result_key)

    return key


def _aggregate(measure: str, values: list[float]) -> float:
    """trec_eval's summary: sum for ``num_*``, geometric mean for ``gm_*`` (values are logs), else mean."""
    if not values:
        return 0.0
    if measure.startswith("num_"):
        return float(sum(values))
    mean = math.fsum(values) / len(values)
    return math.exp(mean) if measure.startswith("gm_") else mean


def mean_over_queries(per_query: Mapping[str, Mapping[str, float]], measures: Iterable[str] | None = None
                      ) -> dict[str, float]:
    """The "all" line of trec_eval: each measure aggregated over the queries of ``per_query``.

    ``measures`` are result keys (``P_10``, not ``P``); ``None`` means every key of the first query.
    A query that lacks a requested measure is an error, not a silent zero. An empty ``per_query`` gives 0.
    """
    if measures is None:
        first = next(iter(per_query.values()), {})
        names = list(first)
    else:
        names = list(measures)
    out: dict[str, float] = {}
    for name in names:
        values = []
        for qid, row in per_query.items():
            if name not in row:
                raise UnknownNameError(f"query {qid!r} has no value for measure {name!r}; "
                               f"available: {', '.join(sorted(row))}")
            values.append(float(row[name]))
        out[name] = _aggregate(name, values)
    return out
