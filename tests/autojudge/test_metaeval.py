"""``auto-judge-evaluate meta-evaluate`` (autojudge-evaluate 1.1.0 in its environment) on leaderboards autograde
writes gives autograde's own audit values to 1e-12, ties included: Kendall's tau-b, the top-k Kendall and tau_ap_b
of :func:`autograde.metrics.rank_agreement.leaderboard_agreement` (the judge audit's and the correlation report's one
implementation; ``tau_ap_b`` is :func:`autograde.core.stats.tau_ap_b_matrix`, the default ``tau_ap`` the original
asymmetric one, without the tie rule). The code behind the command (its ``LeaderboardEvaluator``,
built as the command builds it) gives full precision; the command itself, whose output file keeps 10 digits, is run
once on the same files."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from support.reference_envs import AUTOJUDGE_VENV, run_reference, run_tool

from autograde.autojudge.formats import write_leaderboard
from autograde.core.stats import tau_ap_b_matrix
from autograde.metrics.rank_agreement import leaderboard_agreement

METAEVAL = """
import json, sys, warnings
from pathlib import Path
warnings.simplefilter("ignore")
from autojudge_evaluate.evaluation import LeaderboardEvaluator
out = []
for job in json.load(sys.stdin):
    e = LeaderboardEvaluator(Path(job["truth"]), correlation_methods=job["methods"], truth_format=job["format"],
                             eval_format=job["format"], on_missing="error")
    out.append({f"{a}|{b}": v for (a, b), v in e.evaluate(Path(job["eval"])).items()})
print(json.dumps(out))
"""
KS = (3, 5)
METHODS = ["kendall", "tauap_b", *(f"kendall@{k}" for k in KS)]


def _tables(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Eight systems on six topics, values multiples of 1/8 (every mean exact: ties are ties in any summation order);
    s1 and s2 identical under both (a tie on both sides), s3 ties s4 on the human side only, and a tie at the top-3
    boundary of the human ranking."""
    rng = np.random.default_rng(seed)
    runs, topics = [f"s{i}" for i in range(8)], [f"t{j}" for j in range(6)]
    human = rng.integers(0, 9, size=(8, 6)) / 8.0
    grader = np.clip(human + rng.integers(-2, 3, size=(8, 6)) / 8.0, 0, 1)
    human[2], grader[2] = human[1], grader[1]
    human[4] = human[3][::-1]
    order = np.argsort(-human.mean(axis=1), kind="stable")
    human[order[3]] = human[order[2]]

    def long(values: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame([(r, t, float(values[i, j])) for i, r in enumerate(runs) for j, t in enumerate(topics)],
                            columns=["run", "query_id", "value"])

    return long(grader), long(human)


def _leaderboard(per_query: pd.DataFrame, measure: str) -> pd.DataFrame:
    means = per_query.groupby("run")["value"].apply(lambda v: math.fsum(v) / len(v)).reset_index()  # trec_eval's "all"
    rows = pd.concat([per_query, means.assign(query_id="all")], ignore_index=True)
    return rows.assign(measure=measure)[["run", "query_id", "measure", "value"]]


def test_meta_evaluate_equals_the_audit_ties_included(tmp_path: Path) -> None:
    jobs, tables = [], []
    for seed in (3, 4, 5):
        grader, human = _tables(seed)
        truth, evaluated = tmp_path / f"human-{seed}.txt", tmp_path / f"grader-{seed}.txt"
        write_leaderboard(truth, _leaderboard(human, "ndcg_cut_10"), "ir_measures")
        write_leaderboard(evaluated, _leaderboard(grader, "ndcg_cut_10"), "ir_measures")
        jobs.append({"truth": str(truth), "eval": str(evaluated), "methods": METHODS, "format": "ir_measures"})
        tables.append((grader, human))
    for (grader, human), theirs in zip(tables, run_reference(AUTOJUDGE_VENV, "autojudge-env", METAEVAL, jobs),
                                       strict=True):
        t = theirs["ndcg_cut_10|ndcg_cut_10"]
        ours = leaderboard_agreement(grader, human, ("kendall", "tau_ap_b"), top_k=KS, samples=0).point
        for m in ("kendall", *(f"kendall@{k}" for k in KS)):
            assert abs(ours[m] - t[m]) <= 1e-12, (m, ours[m], t[m])
        assert abs(ours["tau_ap_b"] - t["tauap_b"]) <= 1e-12
        g = grader.pivot(index="run", columns="query_id", values="value").mean(axis=1).to_numpy()
        h = human.pivot(index="run", columns="query_id", values="value").mean(axis=1).to_numpy()
        assert float(tau_ap_b_matrix(g[None, :], h)[0]) == ours["tau_ap_b"]
        assert len(set(h)) < len(h) and len(set(g)) < len(g)  # ties on both sides

    out = tmp_path / "meta.jsonl"
    run = run_tool(AUTOJUDGE_VENV, "autojudge-env", "auto-judge-evaluate", [
        "meta-evaluate", "--truth-leaderboard", str(truth), "--truth-format", "ir_measures", "--eval-format",
        "ir_measures", *[a for m in METHODS for a in ("--correlation", m)], "--output", str(out), "--silent",
        str(evaluated)], env={"NLTK_DATA": str(AUTOJUDGE_VENV / "nltk_data")})
    assert run.returncode == 0, run.stdout + run.stderr
    row = json.loads(out.read_text().splitlines()[0])
    for m in METHODS:
        assert abs(row[m] - t[m]) <= 1e-9, m


def test_tau_ap_b_equals_autojudges_on_random_rankings_with_ties() -> None:
    script = """
import json, sys
from autojudge_evaluate.pyircore import tauap_b
print(json.dumps([tauap_b(a, b) for a, b in json.load(sys.stdin)]))
"""
    rng = np.random.default_rng(0)
    pairs = []
    for k in range(300):
        n = int(rng.integers(3, 15))
        a = rng.integers(0, 4, size=n).astype(float) if k % 2 else rng.normal(size=n)
        pairs.append((a.tolist(), rng.integers(0, 4, size=n).astype(float).tolist()))
    theirs = run_reference(AUTOJUDGE_VENV, "autojudge-env", script, pairs)
    for (a, b), t in zip(pairs, theirs, strict=True):
        assert abs(float(tau_ap_b_matrix(np.array([b]), np.array(a))[0]) - t) <= 1e-12
