"""Rounds are independent draws: over many simulated designs of two rounds, the second reusing the first round's
seed, every passage is drawn in each round as often as the probability the design file records for it (a
chi-square test per stratum of equal recorded probability, and over all strata together).

Reusing a round's uniforms for a later round would draw only passages whose uniform fell between the two rounds'
probabilities: the stratum frequencies would fall far below the recorded probabilities (this test's statistic is
then in the thousands)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import chi2

from autograde.ppi.design import Design, draw_round, round_uniforms
from autograde.ppi.pool import pool_order, ranked_pool

LEVELS = [0, 1, 2, 3]
REPLICATIONS = 400
LEVEL = 1e-3
"""The tests fail when a chi-square p-value is below this (a correct sampler fails one in a thousand runs; the seeds
are fixed, so the run is reproducible)."""


def _pool(n_queries: int = 4, per_query: int = 15) -> tuple[list[tuple[str, str]], object, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    keys = pool_order([(f"q{q}", f"d{q}-{i}") for q in range(n_queries) for i in range(per_query)])
    grades = rng.choice(LEVELS, size=len(keys), p=[0.5, 0.2, 0.2, 0.1])
    rows = [(f"s{s}", q, d, float(rng.random())) for s in range(3) for q, d in keys]
    ranked = ranked_pool(pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "score"]), keys)
    probs = np.clip(np.eye(4)[grades] * 0.6 + rng.dirichlet(np.ones(4), size=len(keys)) * 0.4, 0.0, None)
    return keys, ranked, grades, probs / probs.sum(axis=1, keepdims=True)


def _chi_square(pi: np.ndarray, drawn: np.ndarray) -> tuple[float, int]:
    """Pearson's statistic over the strata of equal recorded probability (rounded to 1e-9): per stratum the number
    drawn against the sum of the recorded probabilities, with the Poisson-binomial variance ``sum pi (1 - pi)``."""
    stat, strata = 0.0, 0
    keys = np.round(pi, 9)
    for value in np.unique(keys):
        at = keys == value
        expected = pi[at].sum()
        variance = (pi[at] * (1.0 - pi[at])).sum()
        if variance <= 0:  # probability 1: drawn with certainty, nothing random to test
            continue
        stat += (drawn[at].sum() - expected) ** 2 / variance
        strata += 1
    return float(stat), strata


def _two_rounds(second: str) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[tuple[np.ndarray, np.ndarray]]]:
    """Per replication, (recorded probability, drawn) of the passages open in each round: round 1 a simple random
    draw with seed s, round 2 ``second`` with the same seed s and round 1's judgments as its pilot."""
    keys, ranked, grades, probs = _pool()
    firsts, seconds = [], []
    for seed in range(REPLICATIONS):
        design = Design(list(keys))
        draw_round(design, "simple_random", 12.0, seed, ranked, probs, LEVELS, {}, "p")
        labels = {keys[i]: int(grades[i]) for i in np.flatnonzero(design.drawn[0])}
        draw_round(design, second, 12.0, seed, ranked, probs, LEVELS, labels, "p")
        firsts.append((design.pi[0], design.drawn[0]))
        open_ = ~design.drawn[0]
        seconds.append((design.pi[1][open_], design.drawn[1][open_]))
    return firsts, seconds


def _test(pairs: list[tuple[np.ndarray, np.ndarray]]) -> tuple[float, float]:
    pi = np.concatenate([p for p, _ in pairs])
    drawn = np.concatenate([d for _, d in pairs])
    stat, strata = _chi_square(pi, drawn)
    return stat, float(chi2.sf(stat, strata))


def test_each_round_draws_with_the_probabilities_it_records_even_with_a_reused_seed() -> None:
    for second in ("simple_random", "stratified", "active"):
        firsts, seconds = _two_rounds(second)
        stat1, p1 = _test(firsts)
        stat2, p2 = _test(seconds)
        assert p1 > LEVEL, (second, "round 1", stat1)
        assert p2 > LEVEL, (second, "round 2 with round 1's seed", stat2)


def test_the_reused_uniforms_would_fail_the_same_test() -> None:
    """The check has power: the draw of round 2 from round 1's uniforms (the sampler before) fails it."""
    keys, ranked, grades, probs = _pool()
    pairs = []
    for seed in range(REPLICATIONS):
        design = Design(list(keys))
        draw_round(design, "simple_random", 12.0, seed, ranked, probs, LEVELS, {}, "p")
        draw_round(design, "simple_random", 12.0, seed, ranked, probs, LEVELS, {}, "p")
        reused = (round_uniforms(seed, 1, len(keys)) < design.pi[1]) & ~design.drawn[0]
        open_ = ~design.drawn[0]
        pairs.append((design.pi[1][open_], reused[open_]))
    stat, p = _test(pairs)
    assert p < 1e-12, stat


def test_the_same_seed_and_round_draw_the_same_passages() -> None:
    keys, ranked, _, probs = _pool()
    a, b = Design(list(keys)), Design(list(keys))
    for d in (a, b):
        draw_round(d, "active", 10.0, 5, ranked, probs, LEVELS, {}, "p")
    assert np.array_equal(a.drawn[0], b.drawn[0]) and a.rounds[0]["seed"] == 5
