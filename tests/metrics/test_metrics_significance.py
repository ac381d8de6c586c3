"""Significance tests: determinism, agreement with scipy and with the reference's loop, corrections by hand."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
from scipy import stats
from support.helpers import shared_data

from autograde.core.errors import UnknownNameError
from autograde.metrics.config import RetrievalMetricsConfig
from autograde.metrics.retrieval import load_qrels, load_runs, measure_specs, per_query_measures
from autograde.metrics.significance import (
    adjust_pvalues,
    benjamini_hochberg,
    bootstrap_ci,
    compare_systems,
    compare_to_baseline,
    holm,
    paired_test,
    sign_flip_counts,
)


@pytest.fixture(scope="module")
def ab() -> tuple[dict, dict]:
    """Per-query measures of the reference server's A/B example runs (all families, cutoffs 1..100)."""
    ULTRARAG = shared_data("ultrarag")
    qrels = load_qrels(ULTRARAG / "qrels.txt")
    runs, _ = load_runs([ULTRARAG / "run_a.txt", ULTRARAG / "run_b.txt"])
    a, b = (per_query_measures(qrels, run, RetrievalMetricsConfig()) for run in runs.values())
    return a, b


def test_same_seed_same_pvalues_and_every_measure(ab: tuple[dict, dict]) -> None:
    a, b = ab
    first = paired_test(a, b, n_resamples=2000, seed=11)
    again = paired_test(a, b, n_resamples=2000, seed=11)
    other = paired_test(a, b, n_resamples=2000, seed=12)
    assert first == again
    assert [r["p_value"] for r in first.values()] != [r["p_value"] for r in other.values()]
    assert list(first) == [s.name for s in measure_specs()]  # map, mrr, then ndcg/P/recall at 1..100
    assert len(first) == 2 + 3 * 6
    for r in first.values():
        assert set(r) == {"A_mean", "B_mean", "diff", "p_value", "significant", "n_queries", "p_method"}
        assert r["p_method"] == "monte-carlo"  # 2^100 flips do not fit in 2000 resamples
        assert r["n_queries"] == 100 and r["significant"] == (r["p_value"] < 0.05)
    # recall@100 is 1 for both runs on every query: no difference, p = 1.
    assert first["recall@100"]["diff"] == 0.0 and first["recall@100"]["p_value"] == 1.0
    assert first["map"]["A_mean"] == pytest.approx(np.mean([a[q]["map"] for q in a]))


def test_agrees_with_scipy_permutation_test(ab: tuple[dict, dict]) -> None:
    a, b = ab
    measures = [s.name for s in measure_specs()]
    qids = sorted(a)
    xa = np.array([[a[q][m] for m in measures] for q in qids])
    xb = np.array([[b[q][m] for m in measures] for q in qids])
    n = 10000
    ours = paired_test(a, b, n_resamples=n, seed=5)
    ref = stats.permutation_test((xa, xb), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
                                 permutation_type="samples", alternative="two-sided", n_resamples=n,
                                 axis=0, rng=np.random.default_rng(6))
    for j, m in enumerate(measures):
        p_scipy, p_ours = float(ref.pvalue[j]), ours[m]["p_value"]
        assert abs(p_ours - p_scipy) < 4 * math.sqrt(p_scipy * (1 - p_scipy) / n) + 0.005, (m, p_ours, p_scipy)
    assert any(0.005 < ours[m]["p_value"] < 0.2 for m in measures)  # the comparison is not only p = 0 or 1


def _reference_loop(diffs: list[float], n_resamples: int, rnd: random.Random) -> float:
    """The reference server's loop (its random module seeded here)."""
    obs = abs(sum(diffs) / len(diffs))
    cnt = 0
    for _ in range(n_resamples):
        s = 0.0
        for d in diffs:
            s += d if rnd.getrandbits(1) else -d
        if abs(s / len(diffs)) >= obs:
            cnt += 1
    return cnt / n_resamples


def test_agrees_with_reference_loop(ab: tuple[dict, dict]) -> None:
    a, b = ab
    n = 4000
    ours = paired_test(a, b, ["mrr", "ndcg@1", "P@1"], n_resamples=n, seed=3)
    rnd = random.Random(4)
    for m in ("mrr", "ndcg@1", "P@1"):
        p_ref = _reference_loop([a[q][m] - b[q][m] for q in sorted(a)], n, rnd)
        assert abs(ours[m]["p_value"] - p_ref) < 4 * math.sqrt(p_ref * (1 - p_ref) / n) + 0.005, m


def test_exact_enumeration_small_sample() -> None:
    """With 5 queries all 32 sign patterns can be enumerated: the Monte-Carlo p-value converges to it."""
    d = np.array([0.3, -0.1, 0.25, 0.4, 0.05])
    obs = abs(d.sum())
    exact = np.mean([abs(np.dot(s, d)) >= obs - 1e-12 for s in itertools.product([1, -1], repeat=5)])
    n = 20000
    p = sign_flip_counts(d, n, np.random.default_rng(0))[0] / n
    # Flipping a subset S gives sum 0.9 - 2*sum(S); |.| >= 0.9 iff sum(S) <= 0 or sum(S) >= 0.9:
    # S in {}, {-0.1}, {-0.1, 0.05} and their 3 complements -> 6 of 32.
    assert exact == pytest.approx(6 / 32)
    assert abs(p - exact) < 4 * math.sqrt(exact * (1 - exact) / n)


def test_chunking_does_not_change_counts() -> None:
    d = np.random.default_rng(1).normal(size=(37, 5)) * 0.1
    big = sign_flip_counts(d, 3000, np.random.default_rng(9))
    small = sign_flip_counts(d, 3000, np.random.default_rng(9), chunk_bytes=8 * 37 * 7)  # 7 resamples per chunk
    assert big.tolist() == small.tolist()


def test_missing_side_scores_zero_and_identical_systems() -> None:
    a = {"q1": {"m": 0.5}, "q2": {"m": 1.0}}
    b = {"q1": {"m": 0.5}, "q3": {"m": 0.25}}
    r = paired_test(a, b, n_resamples=500, seed=0)["m"]
    assert r["n_queries"] == 3  # union
    assert r["A_mean"] == pytest.approx((0.5 + 1.0 + 0.0) / 3) and r["B_mean"] == pytest.approx((0.5 + 0 + 0.25) / 3)
    assert r["diff"] == pytest.approx(0.75 / 3)
    same = paired_test(a, a, n_resamples=500, seed=0, t_test=True, bootstrap=True)["m"]
    assert same["p_value"] == 1.0 and same["diff"] == 0.0 and not same["significant"]
    assert same["t_p_value"] == 1.0 and same["ci_low"] == same["ci_high"] == 0.0


def test_plus_one_variant() -> None:
    a = {f"q{i}": {"m": 0.1 * (i % 4)} for i in range(12)}
    b = {f"q{i}": {"m": 0.05 * (i % 3)} for i in range(12)}
    ref = paired_test(a, b, n_resamples=999, seed=2)["m"]["p_value"]
    plus = paired_test(a, b, n_resamples=999, seed=2, p_value_variant="plus_one")["m"]["p_value"]
    assert plus == pytest.approx((ref * 999 + 1) / 1000)


def test_t_test_and_bootstrap(ab: tuple[dict, dict]) -> None:
    a, b = ab
    r = paired_test(a, b, ["map", "P@10"], n_resamples=2000, seed=8, t_test=True, bootstrap=True, confidence=0.9)
    qids = sorted(a)
    for m in ("map", "P@10"):
        expected = stats.ttest_rel([a[q][m] for q in qids], [b[q][m] for q in qids]).pvalue
        assert r[m]["t_p_value"] == pytest.approx(expected)
        assert r[m]["ci_low"] < r[m]["diff"] < r[m]["ci_high"]
    again = paired_test(a, b, ["map", "P@10"], n_resamples=2000, seed=8, t_test=True, bootstrap=True, confidence=0.9)
    assert again == r
    # The bootstrap interval of a mean has about the normal-theory width.
    d = np.array([a[q]["map"] - b[q]["map"] for q in qids])
    low, high = bootstrap_ci(d, 4000, np.random.default_rng(0), 0.95)
    half = 1.96 * d.std(ddof=1) / math.sqrt(len(d))
    assert (high[0] - low[0]) / 2 == pytest.approx(half, rel=0.15)


@pytest.mark.parametrize(("p", "method", "expected"), [
    # sorted 0.005, 0.01, 0.03, 0.04: Holm 4*.005=.02, 3*.01=.03, 2*.03=.06, max(.06, .04)=.06
    ([0.01, 0.04, 0.03, 0.005], "holm", [0.03, 0.06, 0.06, 0.02]),
    # BH: .005*4/1=.02, .01*4/2=.02, .03*4/3=.04, .04*4/4=.04; running min from the top
    ([0.01, 0.04, 0.03, 0.005], "bh", [0.02, 0.04, 0.04, 0.02]),
    ([0.5, 0.9], "holm", [1.0, 1.0]),  # 2*0.5 = 1.0, then capped at 1
    ([0.5, 0.9], "bh", [0.9, 0.9]),  # 0.5*2/1 = 1.0 > 0.9*2/2 = 0.9
    ([0.02, 0.02, 0.5], "bh", [0.03, 0.03, 0.5]),  # ties: .02*3/2 = .03 for both
    ([0.2, 0.01], "none", [0.2, 0.01]),
])
def test_corrections_by_hand(p: list[float], method: str, expected: list[float]) -> None:
    assert adjust_pvalues(p, method).tolist() == pytest.approx(expected)


def test_corrections_edge_cases() -> None:
    assert holm([]).size == 0 and benjamini_hochberg([]).size == 0
    with pytest.raises(ValueError, match="valid: none, holm, bh"):
        adjust_pvalues([0.1], "bonferroni")  # type: ignore[arg-type]


def _systems() -> dict[str, dict[str, float]]:
    """Four systems on 30 queries: 'good' clearly above the baseline, 'same' equal to it, 'noise' random."""
    rng = np.random.default_rng(42)
    base = rng.uniform(0.2, 0.6, size=30)
    return {
        "base": {f"q{i}": float(v) for i, v in enumerate(base)},
        "good": {f"q{i}": float(v + 0.2) for i, v in enumerate(base)},
        "same": {f"q{i}": float(v) for i, v in enumerate(base)},
        "noise": {f"q{i}": float(v + rng.normal(0, 0.1)) for i, v in enumerate(base)},
    }


def test_compare_to_baseline_columns_and_holm() -> None:
    df = compare_to_baseline(_systems(), "base", seed=1, n_resamples=2000, alpha=0.05, correction="holm")
    assert list(df.columns) == ["system", "baseline", "A_mean", "B_mean", "diff", "p_value", "p_adjusted",
                                "significant", "p_method"]
    assert df["system"].tolist() == ["good", "same", "noise"] and set(df["baseline"]) == {"base"}
    assert df["p_adjusted"].tolist() == pytest.approx(holm(df["p_value"].to_numpy()).tolist())
    assert df["significant"].tolist() == (df["p_adjusted"] < 0.05).tolist()
    row = df.set_index("system")
    assert row.loc["good", "diff"] == pytest.approx(0.2) and row.loc["good", "p_value"] == 0.0
    assert bool(row.loc["good", "significant"]) and row.loc["same", "p_value"] == 1.0
    again = compare_to_baseline(_systems(), "base", seed=1, n_resamples=2000, correction="holm")
    assert again.equals(df)
    with pytest.raises(UnknownNameError, match="baseline 'nope' is not among the systems"):
        compare_to_baseline(_systems(), "nope")


def test_all_pairs_with_bh() -> None:
    per_query = {s: {q: {"m": v, "m2": v / 2} for q, v in rows.items()} for s, rows in _systems().items()}
    df = compare_systems(per_query, seed=0, n_resamples=1000, correction="bh")
    assert len(df) == 6 * 2  # 4 systems -> 6 pairs, 2 measures
    pairs = df[df["measure"] == "m"][["system", "baseline"]].apply(tuple, axis=1).tolist()
    assert pairs == [("base", "good"), ("base", "same"), ("base", "noise"), ("good", "same"), ("good", "noise"),
                     ("same", "noise")]
    for m in ("m", "m2"):
        part = df[df["measure"] == m]
        assert part["p_adjusted"].tolist() == pytest.approx(benjamini_hochberg(part["p_value"].to_numpy()).tolist())
    # Halving every value changes nothing in the test, only the means.
    assert df[df["measure"] == "m"]["p_value"].tolist() == df[df["measure"] == "m2"]["p_value"].tolist()


def test_exact_when_every_sign_flip_fits() -> None:
    """8 queries, 256 sign flips <= n_resamples: enumerated, not sampled (scipy's rule); p equals a full
    enumeration, and where every flip lowers |mean| but the full one, p = 2/256 (never below it)."""
    from autograde.metrics.significance import exact_sign_flip_counts

    a = {f"q{i}": {"m": 0.5 + 0.05 * i} for i in range(8)}
    b = {f"q{i}": {"m": 0.1 + 0.01 * i} for i in range(8)}
    r = paired_test(a, b, n_resamples=10000, seed=3)["m"]
    assert r["p_method"] == "exact" and r["p_value"] == 2 / 256
    assert paired_test(a, b, n_resamples=10000, seed=99)["m"]["p_value"] == 2 / 256  # no randomness left
    assert paired_test(a, b, n_resamples=255, seed=3)["m"]["p_method"] == "monte-carlo"
    rng = np.random.default_rng(0)
    d = rng.normal(0.02, 0.1, size=(8, 3))
    brute = [sum(abs(sum(s * x for s, x in zip(signs, d[:, j], strict=True))) >= abs(d[:, j].sum()) - 1e-12
                 for signs in itertools.product((1, -1), repeat=8)) for j in range(3)]
    assert exact_sign_flip_counts(d).tolist() == brute
    mixed = {f"q{i}": {"m": float(d[i, 0])} for i in range(8)}
    zero = {f"q{i}": {"m": 0.0} for i in range(8)}
    assert paired_test(mixed, zero, n_resamples=256)["m"]["p_value"] == brute[0] / 256
