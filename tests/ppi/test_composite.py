"""The leaderboard's composite order (the Fay-Herriot model, with a fitted slope on the LLM-only value or a slope of
one): the spread maximizes Li and Lahiri's adjusted residual likelihood (checked against the likelihood written with
full matrices and scipy's bounded minimizer) and is the moment equation's root for a leaderboard of a few systems
(scipy's root finder), its two limits (a spread within the noise: nearly the synthetic order, yet never exactly; a
wide one: the direct estimate), a smaller squared error than either input under the model, and the tables' order
option."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

from autograde.core.errors import InvalidValueError
from autograde.ppi.composite import fay_herriot


def _design(llm: np.ndarray, direct: np.ndarray, slope: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, offset) of the model: y = x beta + v + e, the synthetic value x beta + offset."""
    ones = np.ones((len(llm), 1))
    if slope == "fitted":
        return np.hstack([ones, llm[:, None]]), direct, np.zeros_like(llm)
    return ones, direct - llm, llm


def _wls(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    beta = np.linalg.lstsq(x * np.sqrt(w)[:, None], y * np.sqrt(w), rcond=None)[0]
    return x @ beta


def _moment(a: float, x: np.ndarray, y: np.ndarray, psi: np.ndarray) -> float:
    w = 1.0 / (a + psi)
    return float((w * (y - _wls(x, y, w)) ** 2).sum() - (len(y) - x.shape[1]))


def _case(seed: int, spread: float, noise: float, systems: int = 40) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.2, 0.7, systems)
    llm = truth + 0.1 + rng.normal(0.0, spread, systems)
    psi = noise**2 * rng.uniform(0.5, 1.5, systems)
    direct = truth + rng.normal(0.0, 1.0, systems) * np.sqrt(psi)
    return truth, llm, psi, direct


def _adjusted_reml(log_a: float, x: np.ndarray, y: np.ndarray, psi: np.ndarray) -> float:
    """Li and Lahiri's adjusted residual log-likelihood, written with the full matrices of Rao and Molina (2015),
    section 6.1.2: ``log A - 1/2 log|V| - 1/2 log|X' V^-1 X| - 1/2 y' P y``."""
    a = np.exp(log_a)
    vinv = np.diag(1.0 / (a + psi))
    xvx = x.T @ vinv @ x
    proj = vinv - vinv @ x @ np.linalg.inv(xvx) @ x.T @ vinv
    return float(np.log(a) - 0.5 * np.log(a + psi).sum() - 0.5 * np.linalg.slogdet(xvx)[1] - 0.5 * y @ proj @ y)


@pytest.mark.parametrize("slope", ["fitted", "one"])
@pytest.mark.parametrize(("seed", "spread"), [(0, 0.05), (1, 0.05), (2, 0.05), (3, 0.0), (4, 0.01)])
def test_the_spread_maximizes_the_adjusted_residual_likelihood(seed: int, spread: float, slope: str) -> None:
    _, llm, psi, direct = _case(seed, spread=spread, noise=0.03)
    fit = fay_herriot(direct, psi, llm, slope)
    x, y, offset = _design(llm, direct, slope)
    assert fit.spread > 0  # also where the moment equation has no positive root (spread 0)
    reference = np.exp(minimize_scalar(lambda t: -_adjusted_reml(t, x, y, psi), bounds=(np.log(1e-9), np.log(1.0)),
                                       method="bounded", options={"xatol": 1e-10}).x)
    # the likelihood is flat at its maximum: the two agree to 1e-5 in A, and the fit's is not below the reference's
    assert float(fit.spread) == pytest.approx(reference, rel=1e-5)
    assert _adjusted_reml(np.log(float(fit.spread)), x, y, psi) >= _adjusted_reml(np.log(reference), x, y, psi) - 1e-9
    synthetic = _wls(x, y, 1.0 / (float(fit.spread) + psi)) + offset
    assert np.allclose(fit.synthetic, synthetic, atol=1e-9)
    assert np.allclose(fit.gamma, fit.spread / (fit.spread + psi), atol=1e-12)
    assert np.allclose(fit.estimate, fit.gamma * direct + (1 - fit.gamma) * fit.synthetic, atol=1e-12)


@pytest.mark.parametrize("slope", ["fitted", "one"])
def test_a_few_systems_take_the_moment_equations_root(slope: str) -> None:
    # with at most p + 2 systems the adjusted likelihood grows without bound in A: the moment estimate instead
    _, llm, psi, direct = _case(0, spread=0.05, noise=0.03, systems=40)
    few = 4 if slope == "fitted" else 3
    llm, psi, direct = llm[:few], psi[:few], direct[:few]
    fit = fay_herriot(direct, psi, llm, slope)
    x, y, _ = _design(llm, direct, slope)
    if _moment(0.0, x, y, psi) > 0:
        assert float(fit.spread) == pytest.approx(brentq(_moment, 0.0, 10.0, args=(x, y, psi), xtol=1e-15), rel=1e-9)
    else:
        assert float(fit.spread) == 0.0


@pytest.mark.parametrize("slope", ["fitted", "one"])
def test_the_moment_spread_solves_fay_and_herriots_equation(slope: str) -> None:
    # the estimator before the adjusted likelihood (benchmarks/human_sample.py --spread moment compares the two)
    _, llm, psi, direct = _case(0, spread=0.05, noise=0.03)
    x, y, _ = _design(llm, direct, slope)
    fit = fay_herriot(direct, psi, llm, slope, "moment")
    assert float(fit.spread) == pytest.approx(brentq(_moment, 0.0, 10.0, args=(x, y, psi), xtol=1e-15), rel=1e-9)
    with pytest.raises(InvalidValueError, match="spread"):
        fay_herriot(direct, psi, llm, slope, "profile")


def test_a_fitted_slope_sees_through_a_compressed_llm_scale() -> None:
    # an LLM-only value that keeps the order but halves the spread: with a slope of one the model sees a wide bias
    # spread and trusts the noisy estimate; with a fitted slope it sees none and keeps the LLM's (correct) order
    truth, _, psi, direct = _case(6, spread=0.0, noise=0.03, systems=59)
    llm = 0.5 * truth + 0.2
    fitted, one = fay_herriot(direct, psi, llm), fay_herriot(direct, psi, llm, "one")
    assert float(fitted.spread) < 0.1 * float(one.spread)
    err = {k: float(((f.estimate - truth) ** 2).mean()) for k, f in (("fitted", fitted), ("one", one))}
    assert err["fitted"] < 0.1 * err["one"]
    with pytest.raises(InvalidValueError, match="slope"):
        fay_herriot(direct, psi, llm, "free")


def test_no_bias_spread_nearly_keeps_the_llm_order_and_a_wide_one_the_estimate() -> None:
    # the direct estimates scatter less around the LLM values than their own noise allows: the moment equation has no
    # positive root (A = 0 would give the direct estimates no weight at all); the adjusted likelihood's A is small but
    # positive, so the composite is nearly the synthetic value and keeps the LLM's order
    _, llm, psi, _ = _case(3, spread=0.0, noise=0.03)
    direct = llm - 0.1 + 0.001 * np.sin(np.arange(len(llm)))
    x, y, _ = _design(llm, direct, "fitted")
    assert _moment(0.0, x, y, psi) < 0
    fit = fay_herriot(direct, psi, llm)
    assert 0.0 < float(fit.spread) and np.all((fit.gamma > 0.0) & (fit.gamma < 0.1))
    assert np.argsort(fit.estimate).tolist() == np.argsort(llm).tolist()
    # biases far wider than the noise: the composite is (nearly) the direct estimate
    _, llm, psi, direct = _case(4, spread=1.0, noise=0.001)
    fit = fay_herriot(direct, psi, llm)
    assert np.all(fit.gamma > 0.999) and np.allclose(fit.estimate, direct, atol=1e-3)


def test_a_zero_variance_estimate_is_kept_as_it_is() -> None:
    _, llm, psi, direct = _case(5, spread=0.05, noise=0.03)
    psi = psi.copy()
    psi[0] = 0.0
    fit = fay_herriot(direct, psi, llm)
    assert fit.gamma[0] == 1.0 and fit.estimate[0] == direct[0]
    assert np.all(np.isfinite(fit.estimate))


def test_many_leaderboards_at_once_equal_one_at_a_time() -> None:
    rows = [_case(s, spread=0.04, noise=0.03) for s in range(4)]
    llm = rows[0][1]
    direct = np.stack([r[3] for r in rows])
    psi = np.stack([r[2] for r in rows])
    fit = fay_herriot(direct, psi, llm)
    for b in range(4):
        one = fay_herriot(direct[b], psi[b], llm)
        assert np.allclose(one.estimate, fit.estimate[b], atol=1e-12)
        assert float(one.spread) == pytest.approx(float(fit.spread[b]), abs=1e-14)


@pytest.mark.parametrize("slope", ["fitted", "one"])
@pytest.mark.parametrize(("spread", "noise"), [(0.05, 0.03), (0.02, 0.04), (0.08, 0.02)])
def test_the_composite_errs_less_than_either_input_under_the_model(spread: float, noise: float, slope: str) -> None:
    rng = np.random.default_rng(7)
    systems, reps = 50, 400
    truth = rng.uniform(0.2, 0.7, systems)
    draws = [(truth + 0.1 + rng.normal(0.0, spread, systems), truth + rng.normal(0.0, noise, systems))
             for _ in range(reps)]
    llm, direct = np.stack([d[0] for d in draws]), np.stack([d[1] for d in draws])
    fit = fay_herriot(direct, np.full(direct.shape, noise**2), llm, slope)  # the 400 leaderboards at once
    err = {"direct": float(((direct - truth) ** 2).mean(axis=-1).sum()),
           "llm": float(((fit.synthetic - truth) ** 2).mean(axis=-1).sum()),  # the model's LLM-only part alone
           "composite": float(((fit.estimate - truth) ** 2).mean(axis=-1).sum())}
    assert err["composite"] < min(err["direct"], err["llm"])
    # the best fixed weight A / (A + psi), with the true spread: estimating A (and the slope) from 50 systems costs
    # at most 30% here
    g = spread**2 / (spread**2 + noise**2)
    assert err["composite"] < 1.3 * reps * (g * g * noise**2 + (1 - g) ** 2 * spread**2)


@pytest.fixture(scope="module")
def tables_by_order() -> dict:
    """The estimate tables of one case under each order (built once: every case of the test reads all three)."""
    import pandas as pd

    from autograde.metrics.estimable import estimable_measure
    from autograde.ppi.estimate import Settings, estimate_tables
    from autograde.ppi.estimators import Round
    from autograde.ppi.pool import pool_order, ranked_pool

    rng = np.random.default_rng(11)
    truth = {(f"q{q}", f"d{i}"): int(rng.integers(0, 4)) for q in range(6) for i in range(12)}
    runs = pd.DataFrame([(f"s{s}", q, d, float(rng.random())) for s in range(8) for q, d in truth],
                        columns=["run", "query_id", "passage_id", "score"])
    keys = pool_order(list(truth))
    grades = np.array([truth[k] for k in keys], dtype=np.float64)
    probs = rng.dirichlet(np.ones(4), size=len(keys))
    pi = np.full((1, len(keys)), 0.5)
    rounds = [Round(pi, rng.random((1, len(keys))) < pi, 1.0)]
    measures = [estimable_measure("P_5"), estimable_measure("ndcg_cut_5")]
    return {o: estimate_tables(measures, ranked_pool(runs, keys), probs, grades, rounds,
                               Settings(LEVELS, 2, order=o))[0] for o in ("composite", "composite-fitted", "estimate")}


@pytest.mark.parametrize("order", ["composite", "composite-fitted", "estimate"])
def test_the_tables_rank_by_the_chosen_order_and_keep_the_estimates_intervals(order: str, tables_by_order: dict) -> None:
    import pandas as pd

    tables = tables_by_order
    est = tables[order]
    for _, t in est.groupby("measure"):
        t = t.sort_values("rank")
        assert t["rank"].tolist() == list(range(1, len(t) + 1))
        assert (t["estimate" if order == "estimate" else "composite"].diff().dropna() <= 0).all()  # best first
        assert t["group"].is_monotonic_increasing and t["group"].iloc[0] == 1
        assert ((t["gamma"] >= 0) & (t["gamma"] <= 1)).all()
    cols = ["measure", "system", "estimate", "low", "high", "llm_only", "human_only"]
    same = [t.sort_values(["measure", "system"])[cols].reset_index(drop=True) for t in tables.values()]
    pd.testing.assert_frame_equal(same[0], same[1])
    pd.testing.assert_frame_equal(same[0], same[2])
    ranks = {o: t.sort_values(["measure", "system"])["rank"].tolist() for o, t in tables.items()}
    assert ranks["composite"] != ranks["estimate"]  # the case tells the orders apart


LEVELS = [0, 1, 2, 3]


@pytest.mark.parametrize("slope", ["fitted", "one"])
def test_equal_llm_values_and_two_systems_do_not_break_the_fit(slope: str) -> None:
    # a prediction that gives every system the same LLM-only value (e.g. all zero) leaves the slope free
    _, _, psi, direct = _case(8, spread=0.05, noise=0.03)
    psi = np.full_like(psi, psi.mean())  # equal variances: equal shrinkage, so the order is the estimate's
    fit = fay_herriot(direct, psi, np.zeros_like(direct), slope)
    assert np.all(np.isfinite(fit.estimate)) and float(fit.spread) > 0
    assert np.argsort(fit.estimate).tolist() == np.argsort(direct).tolist()  # only the estimate tells them apart
    two = fay_herriot(direct[:2], psi[:2], np.array([0.3, 0.5]), slope)
    assert np.all(np.isfinite(two.estimate))


def test_a_system_without_a_finite_estimate_is_left_out_of_the_fit() -> None:
    from autograde.ppi.estimate import _composite

    _, llm, psi, direct = _case(9, spread=0.05, noise=0.03)
    est, se = direct.copy(), np.sqrt(psi)
    est[3] = np.nan
    composite, gamma = _composite(est, se, llm, "composite")
    keep = np.arange(len(est)) != 3
    alone = fay_herriot(direct[keep], psi[keep], llm[keep], "one")
    assert np.isnan(composite[3]) and np.isnan(gamma[3])
    assert np.allclose(composite[keep], alone.estimate, atol=1e-12)


@pytest.mark.parametrize("slope", ["fitted", "one"])
def test_a_system_the_model_does_not_describe_keeps_its_direct_estimate(slope: str) -> None:
    # 40 systems whose LLM-only values are their truth plus a common bias, and one whose LLM-only value is far above
    # its truth (a run tuned to please the judge, at the bottom by its human value): it is set apart and keeps its
    # direct estimate; the others are shrunk as before
    truth, llm, psi, direct = _case(3, spread=0.01, noise=0.03)
    llm, truth, direct = llm.copy(), truth.copy(), direct.copy()
    truth[0], direct[0], llm[0] = 0.05, 0.06, truth.max() + 0.3
    fit = fay_herriot(direct, psi, llm, slope)
    assert fit.gamma[0] == 1.0 and fit.estimate[0] == direct[0]
    assert np.argsort(-fit.estimate).tolist()[-1] == 0  # last, as its human value says (LLM-only: first)
    clean = fay_herriot(direct[1:], psi[1:], llm[1:], slope)
    assert np.allclose(fit.estimate[1:], clean.estimate, atol=1e-9)


def test_under_the_model_a_system_is_set_apart_in_few_leaderboards() -> None:
    rng = np.random.default_rng(11)
    llm, direct = [], []
    for _ in range(200):
        truth = rng.uniform(0.2, 0.7, 50)
        llm.append(truth + 0.1 + rng.normal(0.0, 0.03, 50))
        direct.append(truth + rng.normal(0.0, 0.03, 50))
    fit = fay_herriot(np.stack(direct), np.full((200, 50), 0.03**2), np.stack(llm), "one")  # 200 leaderboards at once
    apart = int(np.any(fit.gamma == 1.0, axis=-1).sum())
    assert apart / 200 <= 0.1  # the family-wise error rate of the check is 5%
