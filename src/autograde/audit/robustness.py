"""The robustness audit of one grader: perturbed copies of a seeded sample of pooled (query, passage) pairs, graded
by the same grader through the same grade cache, and one system's passages perturbed to see its rank move.

A passage's label is its max grade over the query's items (the ``max`` qrels label,
:func:`autograde.pipeline.qrels.passage_labels`). Per perturbation (its copies pooled): the mean grade shift
(perturbed label - original label) and the share of non-relevant passages (label < threshold) lifted to relevant
(label >= threshold), each with a seeded bootstrap percentile interval over the perturbed copies. The leaderboard
consequence: the system's top ``depth`` passages of every query are replaced by perturbed copies (the first copy of
each perturbation: for ``injection``, the first injection text), labelled by the grader, and every system is
evaluated again under the grader's qrels; the system's rank before and after.

Everything is deterministic for a seed: the sample, the off-topic donors, the bootstrap; grading goes through
:func:`autograde.grading.shard.grade_requests`, so a rerun takes every grade from the cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autograde.audit.perturb import Perturbed, check_perturbations, perturb
from autograde.config.audit import RobustnessConfig
from autograde.core.errors import InvalidValueError, UnknownNameError
from autograde.core.stats import mean_interval, rank_scores, round_scores
from autograde.grading.base import Grader, GradeRequest
from autograde.io.banks.model import BankItem
from autograde.pipeline.qrels import passage_labels

Pair = tuple[str, str]
SEP = "#"
"""Joins a passage id and a perturbation variant into the perturbed copy's id (``p17#stuffing``)."""
PAIR_COLUMNS = ["query_id", "passage_id", "perturbation", "variant", "original", "perturbed", "shift", "lifted"]
SHIFT_COLUMNS = ["perturbation", "n", "mean_shift", "mean_shift_low", "mean_shift_high", "n_nonrelevant",
                   "lifted", "lifted_share", "lifted_share_low", "lifted_share_high", "unchanged_share"]
LEADERBOARD_COLUMNS = ["perturbation", "system", "measure", "n_systems", "rank_before", "rank_after", "score_before",
                       "score_after", "passages"]


@dataclass
class AuditInputs:
    """What the audit of one grader reads: the pool's texts, the queries, the grader's items per query, and (for the
    leaderboard consequence) the rankings and the grader's labels of every pooled passage."""

    queries: Mapping[str, str]
    texts: Mapping[Pair, str]
    """(query_id, passage_id) -> passage text of every pooled passage."""
    items: Mapping[str, list[BankItem]]
    rankings: pd.DataFrame | None = None
    """run, query_id, passage_id, score (None: no leaderboard consequence)."""
    labels: Mapping[Pair, int] = field(default_factory=dict)
    """The grader's label of every pooled passage (its max-mode qrels)."""


@dataclass
class AuditResult:
    pairs: pd.DataFrame
    summary: pd.DataFrame
    leaderboard: pd.DataFrame
    stats: dict[str, Any]


def sample_pairs(candidates: Sequence[Pair], n: int, seed: int) -> list[Pair]:
    """``n`` pairs drawn without replacement from the sorted candidates (all when fewer), in sorted order."""
    pool = sorted(set(candidates))
    if len(pool) <= n:
        return pool
    rng = np.random.default_rng(seed)
    return sorted(pool[i] for i in rng.choice(len(pool), size=n, replace=False))


def donors(pairs: Sequence[Pair], texts: Mapping[Pair, str], seed: int,
           pool: Sequence[Pair] | None = None) -> dict[Pair, str | None]:
    """An off-topic passage for each pair: the text of a pair of another query in ``pool`` (default: ``pairs``),
    chosen with ``seed`` uniformly among the other queries' pairs (linear in the number of pairs)."""
    rng = np.random.default_rng(seed + 1)
    ordered = sorted(set(pool if pool is not None else pairs))  # each query's pairs are contiguous
    start: dict[str, int] = {}
    count: dict[str, int] = {}
    for i, (q, _) in enumerate(ordered):
        start.setdefault(q, i)
        count[q] = count.get(q, 0) + 1
    out: dict[Pair, str | None] = {}
    for pair in pairs:
        q = pair[0]
        others = len(ordered) - count.get(q, 0)
        if others == 0:
            out[pair] = None
            continue
        r = int(rng.integers(others))
        out[pair] = texts[ordered[r if q not in start or r < start[q] else r + count[q]]]
    return out


def _copies(names: Sequence[str], pair: Pair, inputs: AuditInputs, rc: RobustnessConfig,
            donor: str | None) -> list[Perturbed]:
    q, p = pair
    return [c for name in names for c in perturb(name, q, inputs.queries.get(q, ""), inputs.texts[pair],
                                                 repeats=rc.stuffing_repeats, injections=rc.injections, donor=donor)]


def _requests(q: str, pid: str, text: str, inputs: AuditInputs) -> list[GradeRequest]:
    return [GradeRequest(q, inputs.queries.get(q, ""), pid, text, it.item_id, it.kind, it.text, it.gold_answers)
            for it in inputs.items.get(q, [])]


def summarize_shifts(pairs: pd.DataFrame, names: Sequence[str], samples: int, seed: int,
              confidence: float) -> pd.DataFrame:
    """Per perturbation: mean shift and lifted share with their bootstrap intervals (copies without a grade on
    either side left out)."""
    rows = []
    for name in names:
        sub = pairs[(pairs["perturbation"] == name) & pairs["shift"].notna()]
        shift = sub["shift"].to_numpy(dtype=float)
        mean, lo, hi = mean_interval(shift, samples, seed, confidence)
        nonrel = sub[sub["lifted"].notna()]
        lifted = nonrel["lifted"].astype(float).to_numpy()
        share, slo, shi = mean_interval(lifted, samples, seed, confidence)
        unchanged = float((shift == 0).mean()) if len(shift) else float("nan")
        rows.append((name, len(sub), mean, lo, hi, len(nonrel), int(lifted.sum()), share, slo, shi, unchanged))
    return pd.DataFrame(rows, columns=SHIFT_COLUMNS)


def _pair_rows(sampled: Sequence[Pair], copies: Mapping[Pair, list[Perturbed]], labels: pd.Series,
               threshold: int) -> pd.DataFrame:
    def label(q: str, pid: str) -> float:
        v = labels.get((q, pid))
        return float(v) if v is not None else float("nan")

    rows = []
    for q, p in sampled:
        before = label(q, p)
        for c in copies[(q, p)]:
            after = label(q, f"{p}{SEP}{c.variant}")
            shift = after - before
            lifted = None if before != before or after != after or before >= threshold else bool(after >= threshold)
            rows.append((q, p, c.perturbation, c.variant, before, after, shift, lifted))
    out = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    out["lifted"] = out["lifted"].astype("boolean")
    return out


def _target_system(rankings: pd.DataFrame, labels: Mapping[Pair, int], measure: str, level: int,
                   missing_queries: str, system: str | None) -> tuple[str, dict[str, Any]]:
    from autograde.pipeline.leaderboard import evaluate_systems, runs_from_rankings

    runs = runs_from_rankings(rankings)
    if system is not None and system not in runs:
        raise UnknownNameError(f"audit.robustness.system {system!r} is not a system of the experiment; systems: "
                               f"{', '.join(sorted(runs))}")
    qrels: dict[str, dict[str, int]] = {}
    for (q, p), v in labels.items():
        qrels.setdefault(q, {})[p] = int(v)
    before = _means(evaluate_systems(qrels, runs, [measure], level, missing_queries), measure)
    if system is None:  # the system the grader ranks last (ties: the last name)
        system = sorted(before, key=lambda r: (float(round_scores([before[r]])[0]), r))[0]
    return system, {"runs": runs, "qrels": qrels, "before": before}


def _means(ev: pd.DataFrame, measure: str) -> dict[str, float]:
    rows = ev[(ev["query_id"] == "all") & (ev["measure"] == measure)]
    return dict(zip(rows["run"], rows["value"].astype(float), strict=True))


def _rank(scores: Mapping[str, float], system: str) -> float:
    names = sorted(scores)
    return float(rank_scores([scores[n] for n in names])[names.index(system)])


@dataclass
class AuditRequests:
    """What the robustness audit of one grader grades: the sampled pairs and their perturbed copies, the target
    system and its perturbed top passages, and the requests (``perturbed``: those of the copies only; the rest are
    the sampled pairs as the grading jobs grade them)."""

    sampled: list[Pair]
    copies: dict[Pair, list[Perturbed]]
    target: tuple[str, dict[str, Any]] | None
    system_copies: dict[str, dict[Pair, Perturbed]]
    requests: list[GradeRequest]
    perturbed: list[GradeRequest]


def audit_requests(grader_name: str, inputs: AuditInputs, rc: RobustnessConfig, *, measure: str = "ndcg_cut_10",
                   level: int = 1, depth: int = 20, missing_queries: str = "zero") -> AuditRequests:
    """The sample, the copies and the requests of one grader's robustness audit (deterministic for a seed; the
    system part needs ``inputs.rankings``)."""
    check_perturbations([*rc.perturbations, *rc.system_perturbations])
    candidates = sorted(pair for pair in inputs.texts if inputs.items.get(pair[0]))
    if not candidates:
        raise InvalidValueError(f"grader {grader_name!r} has no pooled passage with an item to grade it by (fix: run "
                         "the pool stage first, and check the grader's bank covers the queries)")
    sampled = sample_pairs(candidates, rc.sample, rc.seed)
    donor_of = donors(sampled, inputs.texts, rc.seed)
    copies = {pair: _copies(rc.perturbations, pair, inputs, rc, donor_of[pair]) for pair in sampled}
    requests: list[GradeRequest] = []
    perturbed: list[GradeRequest] = []
    for (q, p), cs in copies.items():
        requests += _requests(q, p, inputs.texts[(q, p)], inputs)
        for c in cs:
            mine = _requests(q, f"{p}{SEP}{c.variant}", c.text, inputs)
            requests += mine
            perturbed += mine
    target: tuple[str, dict[str, Any]] | None = None
    system_copies: dict[str, dict[Pair, Perturbed]] = {}
    if inputs.rankings is not None and rc.system_perturbations:
        target = _target_system(inputs.rankings, inputs.labels, measure, level, missing_queries, rc.system)
        top = _top_passages(inputs.rankings, target[0], depth, inputs.texts)
        system_donor = donors(top, inputs.texts, rc.seed, pool=candidates)
        for system_perturbation in rc.system_perturbations:
            system_copies[system_perturbation] = {}
            for pair in top:
                c = _copies([system_perturbation], pair, inputs, rc, system_donor.get(pair))[0]
                system_copies[system_perturbation][pair] = c
                mine = _requests(pair[0], _system_id(pair[1], c), c.text, inputs)
                requests += mine
                perturbed += mine
    return AuditRequests(sampled, copies, target, system_copies, requests, perturbed)


def audit_grader(grader: Grader, grader_cfg: Any, inputs: AuditInputs, rc: RobustnessConfig, threshold: int,
                 cache_dir: str | Path, *, batch_size: int = 64, measure: str = "ndcg_cut_10", level: int = 1,
                 depth: int = 20, missing_queries: str = "zero") -> AuditResult:
    """The robustness audit of one grader (see the module docstring); ``grader_cfg`` is its config entry."""
    from autograde.grading.shard import grade_requests
    from autograde.pipeline.leaderboard import evaluate_systems

    planned = audit_requests(grader_cfg.name, inputs, rc, measure=measure, level=level, depth=depth,
                             missing_queries=missing_queries)
    sampled, copies, target, system_copies = planned.sampled, planned.copies, planned.target, planned.system_copies
    requests = planned.requests
    outcome = grade_requests(requests, grader, grader_cfg, cache_dir, batch_size)
    grades = outcome.grades[["query_id", "passage_id", "item_id", "grade"]].drop_duplicates(
        ["query_id", "passage_id", "item_id"])
    labels = passage_labels(grades, "max", threshold, warn=False)
    pairs = _pair_rows(sampled, copies, labels, threshold)
    summary = summarize_shifts(pairs, rc.perturbations, rc.bootstrap_samples, rc.seed, rc.confidence)
    rows = []
    if target is not None:
        system, ctx = target
        for name, chosen in system_copies.items():
            qrels = {q: dict(d) for q, d in ctx["qrels"].items()}
            run = {q: dict(d) for q, d in ctx["runs"][system].items()}
            for (q, p), c in chosen.items():
                new = _system_id(p, c)
                v = labels.get((q, new))
                if v is not None:
                    qrels.setdefault(q, {})[new] = int(v)
                run[q][new] = run[q].pop(p)
            after = _means(evaluate_systems(qrels, {**ctx["runs"], system: run}, [measure], level, missing_queries),
                           measure)
            rows.append((name, system, measure, len(after), _rank(ctx["before"], system), _rank(after, system),
                         ctx["before"][system], after[system], len(chosen)))
    stats = {"grader": grader_cfg.name, "sampled_pairs": len(sampled), "perturbed_copies": int(len(pairs)),
             "threshold": threshold, "seed": rc.seed, "prompts": outcome.stats.get("pairs"),
             "computed": outcome.stats.get("computed"), "cached": outcome.stats.get("cached"),
             "unparseable": outcome.stats.get("unparseable"), "failed": outcome.stats.get("failed")}
    return AuditResult(pairs, summary, pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS), stats)


def _system_id(passage_id: str, copy: Perturbed) -> str:
    """The id of a system passage's perturbed copy (apart from the sample's: its off-topic donor may differ)."""
    return f"{passage_id}{SEP}{copy.variant}{SEP}system"


def _top_passages(rankings: pd.DataFrame, system: str, depth: int, texts: Mapping[Pair, str]) -> list[Pair]:
    """The system's top ``depth`` passages of every query that have a text in the pool."""
    r = rankings[rankings["run"] == system].sort_values(["query_id", "score", "passage_id"],
                                                         ascending=[True, False, True], kind="mergesort")
    top = r.groupby("query_id", sort=True).head(depth)
    return [(q, p) for q, p in top[["query_id", "passage_id"]].itertuples(index=False) if (q, p) in texts]
