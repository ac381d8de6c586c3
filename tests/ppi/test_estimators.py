"""The estimators on cases small enough to enumerate every sample: exact unbiasedness of the linear measures (one
round and two adaptive rounds, with and without the cross-fitted power tuning), zero width when the prediction is
the truth (and the one-error floor when it is on), the measures against trec_eval on full judgments, the
linearization against finite differences."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from autograde.core.survey import poisson_factor
from autograde.metrics.estimable import estimable_measure
from autograde.ppi.calibration import fold_of, rank_strata
from autograde.ppi.design import round_probabilities
from autograde.ppi.estimators import (
    FLOOR_DF,
    Round,
    _round_gains,
    estimate_measures,
    needed_gains,
    zero_gains,
)
from autograde.ppi.measures import (
    Gains,
    Linearized,
    gains_from_distribution,
    gains_from_grades,
    sample_bounds,
)
from autograde.ppi.pool import pool_order, ranked_pool
from autograde.ppi.tuning_terms import combined_terms, system_mean

LEVELS = [0, 1, 2, 3]


def _small_case(seed: int = 0, queries: int = 2, per_query: int = 4) -> tuple:
    """A pool of ``queries x per_query`` units, 3 systems ranking them with 2 passages outside the pool, the truth
    and a wrong-ish predicted distribution."""
    rng = np.random.default_rng(seed)
    truth = {(f"q{q}", f"d{q}{i}"): int(rng.integers(0, 4)) for q in range(queries) for i in range(per_query)}
    rows = []
    for s in range(3):
        for q in range(queries):
            docs = [d for qq, d in truth if qq == f"q{q}"] + [f"x{q}{j}" for j in range(2)]
            for d in docs:
                rows.append((f"s{s}", f"q{q}", d, float(rng.random())))
    runs = pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "score"])
    keys = pool_order(list(truth))
    grades = np.array([truth[k] for k in keys], dtype=np.float64)
    probs = rng.dirichlet(np.ones(4), size=len(keys))
    return keys, ranked_pool(runs, keys), grades, probs


def _all_samples(n: int) -> np.ndarray:
    return np.array(list(itertools.product([False, True], repeat=n)))


def _probability(sampled: np.ndarray, pi: np.ndarray) -> np.ndarray:
    return np.prod(np.where(sampled, pi, 1.0 - pi), axis=-1)


@pytest.mark.parametrize("name", ["P_3", "dcg_cut_3", "dcg_cut_10", "rbp_0.7", "recip_rank"])
@pytest.mark.parametrize("human_only", [False, True])
def test_linear_measures_are_exactly_unbiased_over_every_sample(name: str, human_only: bool) -> None:
    keys, ranked, grades, probs = _small_case()
    n = len(keys)
    pi = np.linspace(0.2, 0.8, n)
    samples = _all_samples(n)
    pred = gains_from_distribution(probs, LEVELS, 2)
    if human_only:
        pred = Gains(pred.rel * 0, pred.gain * 0, pred.ge * 0, pred.thresholds, pred.steps)
    obs = gains_from_grades(grades, LEVELS, 2)
    m = estimable_measure(name)
    est = estimate_measures([m], ranked, pred, obs, [Round(np.broadcast_to(pi, samples.shape), samples, 1.0)],
                            keep_residuals=False)[m.name]
    expectation = (_probability(samples, pi)[:, None] * est.estimate).sum(axis=0)
    truth = Linearized(m, ranked, obs, None).estimate[0]
    assert np.abs(expectation - truth).max() < 1e-12
    if m.linear:  # the variance estimate is unbiased too: E[V] = E[(est - truth)^2]
        mse = (_probability(samples, pi)[:, None] * (est.estimate - truth) ** 2).sum(axis=0)
        ev = (_probability(samples, pi)[:, None] * est.variance).sum(axis=0)
        assert np.abs(ev - mse).max() < 1e-12


@pytest.mark.parametrize("name", ["P_3", "dcg_cut_3", "rbp_0.7"])
@pytest.mark.parametrize("tuning", ["leaderboard", "system"])
def test_power_tuned_linear_measures_stay_exactly_unbiased(name: str, tuning: str) -> None:
    """The weight of each fold is fitted on the other folds' units only: exact unbiasedness survives the tuning."""
    keys, ranked, grades, probs = _small_case(seed=7)
    n = len(keys)
    pi = np.linspace(0.2, 0.8, n)
    samples = _all_samples(n)
    pred, obs = gains_from_distribution(probs, LEVELS, 2), gains_from_grades(grades, LEVELS, 2)
    m = estimable_measure(name)
    est = estimate_measures([m], ranked, pred, obs, [Round(np.broadcast_to(pi, samples.shape), samples, 1.0)],
                            keep_residuals=False, power_tuning=tuning)[m.name]
    assert est.lam is not None and 0.0 <= est.lam.min() and est.lam.max() <= 1.0 and est.lam.std() > 0
    expectation = (_probability(samples, pi)[:, None] * est.estimate).sum(axis=0)
    assert np.abs(expectation - Linearized(m, ranked, obs, None).estimate[0]).max() < 1e-12


@pytest.mark.parametrize("name", ["P_10", "ndcg_cut_10", "map"])
@pytest.mark.parametrize("tuning", ["leaderboard", "system"])
def test_power_tuning_is_plain_or_human_only_at_its_ends_and_keeps_the_residuals_consistent(name: str,
                                                                                            tuning: str) -> None:
    """The tuned estimate lies between the human-only and the plain prediction-powered ones (lam in [0, 1]), its
    variance is the weighted sum of the dense residuals' squares, and a prediction equal to the truth gets lam 1."""
    keys, ranked, grades, probs = _small_case(seed=9, queries=3, per_query=8)
    rng = np.random.default_rng(1)
    pi = np.full((30, len(keys)), 0.5)
    rounds = [Round(pi, rng.random(pi.shape) < pi, 1.0)]
    pred, obs = gains_from_distribution(probs, LEVELS, 2), gains_from_grades(grades, LEVELS, 2)
    m = estimable_measure(name)
    tuned = estimate_measures([m], ranked, pred, obs, rounds, power_tuning=tuning, tune_nonlinear=True)[m.name]
    plain = estimate_measures([m], ranked, pred, obs, rounds)[m.name]
    human = estimate_measures([m], ranked, zero_gains(pred), obs, rounds)[m.name]
    lo, hi = np.minimum(plain.estimate, human.estimate), np.maximum(plain.estimate, human.estimate)
    if not m.linear:  # one weight per system: a convex combination of the two estimates
        assert np.all((tuned.estimate >= lo - 1e-12) & (tuned.estimate <= hi + 1e-12))
    c = tuned.factors[0]
    dense = (c[:, None, :] * tuned.residuals[0] ** 2).sum(axis=-1)
    assert np.abs(dense - tuned.variance).max() < 1e-12
    exact = gains_from_distribution(np.eye(4)[grades.astype(int)], LEVELS, 2)
    perfect = estimate_measures([m], ranked, exact, obs, rounds, power_tuning=tuning, tune_nonlinear=True)[m.name]
    assert perfect.lam is not None and np.abs(perfect.lam - 1.0).max() < 1e-12
    if not m.linear:  # by default a nonlinear measure keeps lam = 1: plain prediction-powered
        default = estimate_measures([m], ranked, pred, obs, rounds, power_tuning=tuning)[m.name]
        assert np.array_equal(default.estimate, plain.estimate) and np.array_equal(default.variance, plain.variance)


def test_combined_terms_are_the_dense_residuals_weighted_sums() -> None:
    """:func:`combined_terms` (no dense array) equals the variance and its squares from the dense residuals of a
    per-system mix of two linearizations, per-query terms included."""
    keys, ranked, grades, probs = _small_case(seed=2, queries=3, per_query=6)
    rng = np.random.default_rng(3)
    pi = np.full((6, len(keys)), 0.4)
    r = Round(pi, rng.random(pi.shape) < pi, 1.0)
    pred, obs = gains_from_distribution(probs, LEVELS, 2), gains_from_grades(grades, LEVELS, 2)
    ms = [estimable_measure(x) for x in ("ndcg_cut_5", "map", "recip_rank", "P_5")]
    needs = needed_gains(ms)
    ps, rs, ref, sc = _round_gains(pred, obs, r, True, needs, ranked, rank_strata(ranked))
    hp, hr, href, hsc = _round_gains(zero_gains(pred), obs, r, True, needs, ranked, rank_strata(ranked))
    bounds = sample_bounds(ranked, obs, r.sampled, needs)
    c = poisson_factor(pi, r.sampled)
    for m in ms:
        lp, lh = Linearized(m, ranked, ps, bounds, True, ref, sc), Linearized(m, ranked, hp, bounds, True, href, hsc)
        w = rng.random(lp.estimate.shape)
        v, q = combined_terms((lh, hr), (lp, rs), 1.0 - w, w, c)
        u = (1.0 - w)[..., None] * lh.residuals(hr) + w[..., None] * lp.residuals(rs)
        assert np.abs(v - (c[:, None, :] * u * u).sum(axis=-1)).max() < 1e-12
        assert np.abs(q - ((c[:, None, :] * u * u) ** 2).sum(axis=-1)).max() < 1e-12
        dense = lp.residuals(rs)  # the leaderboard's objective: the summed variance of every difference
        pairs = sum((c * (dense[:, i] - dense[:, j]) ** 2).sum(axis=-1) for i in range(dense.shape[1])
                    for j in range(i + 1, dense.shape[1]))
        mean = system_mean(lp, rs)
        assert np.abs(mean - dense.mean(axis=1)).max() < 1e-12
        v_all, _ = lp.variance_terms(rs, c)
        s_ = dense.shape[1]
        assert np.abs(pairs - s_ * (v_all.sum(axis=1) - s_ * (c * mean * mean).sum(axis=-1))).max() < 1e-12


@pytest.mark.parametrize("design", ["stratified", "active"])
def test_two_adaptive_rounds_are_exactly_unbiased(design: str) -> None:
    """Round 2's probabilities depend on round 1's judgments (a pilot): the weighted rounds stay unbiased."""
    keys, ranked, grades, probs = _small_case(seed=3, per_query=3)
    n = len(keys)
    pi1 = np.full(n, 0.4)
    first = _all_samples(n)
    w = np.linspace(0.5, 1.5, n)
    pi2, _ = round_probabilities(design, 2.0, first, first, np.broadcast_to(grades, first.shape),
                                 np.broadcast_to(1.0 / pi1, first.shape), probs, LEVELS, w, 0.2)
    second = _all_samples(n)
    b1 = np.repeat(np.arange(len(first)), len(second))
    b2 = np.tile(np.arange(len(second)), len(first))
    d1, d2 = first[b1], second[b2] & ~first[b1]
    keep = ~(second[b2] & first[b1]).any(axis=1)  # round 2 never draws a unit of round 1 (it has probability 1)
    d1, d2, b1 = d1[keep], d2[keep], b1[keep]
    p2 = pi2[b1]
    prob = _probability(d1, pi1) * np.prod(np.where(d1, 1.0, np.where(d2, p2, 1.0 - p2)), axis=1)
    assert abs(prob.sum() - 1.0) < 1e-12
    pred = gains_from_distribution(probs, LEVELS, 2)
    obs = gains_from_grades(grades, LEVELS, 2)
    rounds = [Round(np.broadcast_to(pi1, d1.shape), d1, 0.5), Round(np.where(d1, 1.0, p2), d1 | d2, 0.5)]
    for name in ("P_2", "dcg_cut_5"):
        m = estimable_measure(name)
        est = estimate_measures([m], ranked, pred, obs, rounds, keep_residuals=False)[m.name]
        truth = Linearized(m, ranked, obs, None).estimate[0]
        assert np.abs((prob[:, None] * est.estimate).sum(axis=0) - truth).max() < 1e-12


@pytest.mark.parametrize("name", ["P_3", "dcg_cut_3", "rbp_0.7", "ndcg_cut_3", "ndcg", "map", "recip_rank",
                                  "recall_3"])
def test_a_prediction_equal_to_the_truth_gives_the_truth_with_zero_width(name: str) -> None:
    keys, ranked, grades, _ = _small_case(seed=5)
    exact = np.eye(4)[grades.astype(int)]
    pred = gains_from_distribution(exact, LEVELS, 2)
    obs = gains_from_grades(grades, LEVELS, 2)
    rng = np.random.default_rng(0)
    pi = np.full((20, len(keys)), 0.3)
    m = estimable_measure(name)
    rounds = [Round(pi, rng.random(pi.shape) < pi, 1.0)]
    est = estimate_measures([m], ranked, pred, obs, rounds)[m.name]
    lo, hi = est.interval(0.95)
    truth = Linearized(m, ranked, obs, None).estimate[0]
    # the ratio measures' calibration reads probabilities kept 1e-12 inside (0, 1): the truth to that precision
    tol = 0.0 if m.linear or m.kind == "rr" else 1e-9
    assert np.abs(est.estimate - truth).max() < max(tol, 1e-12)
    assert np.abs(hi - lo).max() <= tol
    _, dvar, _ = est.differences()
    assert np.abs(dvar).max() <= tol**2
    # with the one-error floor (the workflow's default) the same estimate gets the floor's width: no sample can
    # tell a prediction right everywhere from one right where the sample looked
    floored = estimate_measures([m], ranked, pred, obs, rounds, power_tuning="leaderboard",
                                variance_floor=True)[m.name]
    assert np.abs(floored.estimate - truth).max() < max(tol, 1e-12)
    assert floored.floored is not None and floored.floored.all() and np.all(floored.df <= FLOOR_DF)
    assert floored.floor is not None and np.all(floored.variance == floored.floor) and floored.floor.min() > 0
    _, fdvar, fddf = floored.differences()
    assert fdvar.min() > 0 and np.all(fddf <= FLOOR_DF)


def test_the_floor_vanishes_when_every_unit_is_judged_and_stays_below_a_real_variance() -> None:
    """A census (pi = 1 everywhere) has no sampling error: zero width even with the floor. A sample with errors
    where the measure reads is left alone unless its variance is below one maximal error's."""
    keys, ranked, grades, probs = _small_case(seed=5)
    pred, obs = gains_from_distribution(probs, LEVELS, 2), gains_from_grades(grades, LEVELS, 2)
    m = estimable_measure("P_3")
    census = np.ones((1, len(keys)))
    est = estimate_measures([m], ranked, pred, obs, [Round(census, census > 0, 1.0)], variance_floor=True)[m.name]
    lo, hi = est.interval(0.95)
    assert np.abs(hi - lo).max() == 0.0 and est.floored is not None and not est.floored.any()
    rng = np.random.default_rng(2)
    pi = np.full((50, len(keys)), 0.5)
    rounds = [Round(pi, rng.random(pi.shape) < pi, 1.0)]
    raw = estimate_measures([m], ranked, pred, obs, rounds)[m.name]
    fl = estimate_measures([m], ranked, pred, obs, rounds, variance_floor=True)[m.name]
    assert fl.floor is not None and fl.floored is not None
    assert np.array_equal(fl.floored, raw.variance < fl.floor)
    assert np.array_equal(fl.variance, np.maximum(raw.variance, fl.floor))
    assert (~fl.floored).any() and np.array_equal(fl.df[~fl.floored], raw.df[~fl.floored])


def test_measures_on_full_judgments_equal_trec_eval() -> None:
    import pytrec_eval

    rng = np.random.default_rng(1)
    qrels = {f"{q + 1}": {f"d{i}": int(rng.choice([0, 0, 1, 2, 3])) for i in rng.choice(30, 20, replace=False)}
             for q in range(6)}
    qrels["6"] = dict.fromkeys(qrels["6"], 0)  # a query without a relevant passage scores 0
    rows = [(f"s{s}", q, f"d{i}", float(np.round(rng.random(), 1)))  # ties in score: trec_eval's doc id order
            for s in range(4) for q in qrels if not (s == 3 and q == "3") for i in rng.choice(30, 25, replace=False)]
    runs = pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "score"])
    keys = pool_order([(q, d) for q in qrels for d in qrels[q]])
    ranked = ranked_pool(runs, keys)
    obs = gains_from_grades(np.array([qrels[q][d] for q, d in keys], dtype=np.float64), LEVELS, 2)
    names = ["P_5", "P_10", "ndcg_cut_10", "ndcg_cut_5", "ndcg", "map", "recip_rank", "recall_10"]
    ev = pytrec_eval.RelevanceEvaluator(qrels, set(names), relevance_level=2)
    for name in names:
        ours = Linearized(estimable_measure(name), ranked, obs, None).estimate[0]
        for si, s in enumerate(ranked.systems):
            run: dict[str, dict[str, float]] = {}
            for r in runs[runs["run"] == s].itertuples():
                run.setdefault(r.query_id, {})[r.passage_id] = r.score
            res = ev.evaluate(run)
            ref = np.mean([res.get(q, {}).get(name, 0.0) for q in qrels])
            assert abs(ours[si] - ref) < 1e-12, (name, s)


@pytest.mark.parametrize("name", ["ndcg_cut_5", "ndcg", "map", "recip_rank", "recall_5", "P_5"])
@pytest.mark.parametrize("coherent", [False, True])
def test_the_linearization_is_the_derivative(name: str, coherent: bool) -> None:
    keys, ranked, _, probs = _small_case(seed=2, queries=3, per_query=6)
    rng = np.random.default_rng(4)
    x = gains_from_distribution(probs, LEVELS, 2)
    x = replace(x, rel_count=x.rel.copy())
    e = replace(x, rel=rng.normal(size=x.rel.shape), gain=rng.normal(size=x.gain.shape),
                ge=rng.normal(size=x.ge.shape), rel_count=rng.normal(size=x.rel.shape))
    m = estimable_measure(name)
    lin = Linearized(m, ranked, x, None, coherent)
    eps = 1e-6
    moved = replace(x, rel=x.rel + eps * e.rel, gain=x.gain + eps * e.gain, ge=x.ge + eps * e.ge,
                    rel_count=x.rel_count + eps * e.rel_count)
    numeric = (Linearized(m, ranked, moved, None, coherent).estimate - lin.estimate) / eps
    assert np.abs(numeric - lin.residuals(e).sum(axis=-1)).max() < 1e-6


def test_rank_strata_split_the_pool_by_how_many_systems_rank_a_unit_on_top() -> None:
    keys = [("q1", "a"), ("q1", "b"), ("q1", "c")]
    rows = [("r1", "q1", "a", 3.0), ("r1", "q1", "b", 2.0), ("r1", "q1", "c", 1.0),
            ("r2", "q1", "a", 3.0), ("r2", "q1", "c", 2.0), ("r2", "q1", "b", 1.0),
            ("r3", "q1", "a", 3.0), ("r3", "q1", "c", 2.0), ("r3", "q1", "b", 1.0)]
    ranked = ranked_pool(pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "score"]), pool_order(keys))
    assert rank_strata(ranked, depth=1).tolist() == [2, 0, 0]  # a: every system's first
    assert rank_strata(ranked, depth=2).tolist() == [2, 1, 2]  # b: one of three top 2s; c: two of three


@pytest.mark.parametrize("name", ["ndcg_cut_3", "ndcg", "map", "recall_3"])
def test_a_miscalibrated_prediction_that_tells_the_grades_apart_gives_the_truth(name: str) -> None:
    """A prediction wrong on every unit's scale but with a different value for each true grade: once every cell
    (predicted value x rank stratum) has judged units in two cross-fitting folds (each fold's units are recalibrated
    on the other folds' judgments), the recalibrated prediction is the truth, and the coherent ratio reads it in its
    numerator as in its normalizer: the truth, with zero width."""
    keys, ranked, grades, _ = _small_case(seed=5, queries=3, per_query=6)
    # every threshold's predicted probability lands in its own bin per true grade: 0.05, 0.35, 0.65, 0.95 at
    # or above any grade, whatever the grade (a grade-3 passage is predicted 0.95 >= 1, >= 2 and >= 3 alike)
    probs = np.array([[0.95, 0.0, 0.0, 0.05], [0.65, 0.0, 0.0, 0.35], [0.35, 0.0, 0.0, 0.65],
                      [0.05, 0.0, 0.0, 0.95]])[grades.astype(int)]
    pred, obs = gains_from_distribution(probs, LEVELS, 2), gains_from_grades(grades, LEVELS, 2)
    strata = rank_strata(ranked)
    cell = grades.astype(int) + 4 * strata
    sampled = np.zeros(len(keys), dtype=bool)
    folds = fold_of(len(keys))
    for c in np.unique(cell):  # the first unit of the cell in each of two folds
        first = {int(folds[i]): int(i) for i in np.flatnonzero(cell == c)[::-1]}
        assert len(first) >= 2, "every cell of this case has units in two folds"
        sampled[sorted(first.values())[:2]] = True
    pi = np.full((1, len(keys)), 0.3)
    rounds = [Round(pi, sampled[None], 1.0)]
    m = estimable_measure(name)
    truth = Linearized(m, ranked, obs, None).estimate[0]
    est = estimate_measures([m], ranked, pred, obs, rounds)[m.name]
    assert np.abs(est.estimate - truth).max() < 1e-9 and np.abs(est.variance).max() < 1e-18  # see the next test
