"""The correlation report: plots that say when a correlation is undefined, the analysis cache, and the same
ranking and tau as the judge audit whatever the missing-query policy."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from support.leaderboards import per_query_table


def test_a_plot_with_an_undefined_correlation_says_so(tmp_path) -> None:
    """One system shared with the official leaderboard: no correlation; the plot says why instead of a bare point."""
    import json

    import pandas as pd

    from autograde.config.reports import ReportsConfig
    from autograde.core.tables import write_table
    from autograde.reports.stages import run_report_correlation

    per_query = tmp_path / "eval.parquet"
    write_table(per_query, pd.DataFrame({"run": ["a", "a"], "query_id": ["q1", "q2"], "measure": ["map", "map"],
                                         "value": [0.5, 0.7]}), ["run", "query_id", "measure"])
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"a": 1, "b": 2}))
    src = {"grader": "g", "qrels": "max-4", "measure": "map", "path": "", "per_query": str(per_query),
           "column": "value"}
    run_report_correlation(ReportsConfig(bootstrap_samples=0), [src], official, tmp_path / "corr.tsv", tmp_path)
    svg = next(tmp_path.rglob("*.svg")).read_text(encoding="utf-8")
    assert "correlation undefined: 1 system(s) shared with the official leaderboard" in svg


def test_the_report_bootstraps_only_the_leaderboards_whose_inputs_changed(tmp_path, messages) -> None:  # type: ignore[no-untyped-def]
    """With the analysis cache, a rerun after an edit bootstraps only the leaderboards whose per-query values moved,
    and writes the same bytes as a run without any cache."""
    import json

    from autograde.config.reports import ReportsConfig
    from autograde.core.tables import write_table
    from autograde.reports.stages import run_report_correlation

    official = tmp_path / "official.json"
    sources = []
    for g in range(3):
        per_q, off = per_query_table(seed=g)
        official.write_text(json.dumps(off))
        path = tmp_path / f"eval-{g}.parquet"
        write_table(path, per_q.assign(measure="map"), ["run", "query_id", "measure"])
        sources.append({"grader": f"g{g}", "qrels": "max-4", "measure": "map", "path": "", "per_query": str(path),
                        "column": "value"})
    rc = ReportsConfig(bootstrap_samples=200)

    def run(name: str, cache: Path | None) -> bytes:
        messages.seek(0)
        messages.truncate(0)
        out = tmp_path / name / "corr.tsv"
        out.parent.mkdir(exist_ok=True)
        run_report_correlation(rc, sources, official, out, tmp_path / name, cache)
        return out.read_bytes()

    cache = tmp_path / "cache"
    first = run("first", cache)
    assert "3 leaderboards, 3 computed, 0 from the cache" in messages.getvalue()
    assert run("again", cache) == first and "3 leaderboards, 0 computed, 3 from the cache" in messages.getvalue()
    edited, _ = per_query_table(seed=7)  # one grader's per-query values move
    write_table(sources[1]["per_query"], edited.assign(measure="map"), ["run", "query_id", "measure"])
    after = run("after", cache)
    assert "3 leaderboards, 1 computed, 2 from the cache" in messages.getvalue()
    assert after == run("scratch", None) and after != first


def test_the_report_and_the_audit_rank_as_the_leaderboard_under_both_missing_query_policies(tmp_path: Path) -> None:
    """A table where two systems lack some queries: under ``skip`` the leaderboard averages the queries a system has,
    under ``zero`` a missing query counts 0. The correlation report and the judge audit rank the systems as that
    leaderboard does and give the Kendall tau of its ranking, under both policies (they share one function)."""
    import json

    from scipy.stats import kendalltau

    from autograde.audit.stages import system_tables
    from autograde.config.audit import AuditConfig
    from autograde.config.reports import ReportsConfig
    from autograde.core.layout import Leaderboard
    from autograde.core.tables import write_table
    from autograde.reports.stages import run_report_correlation

    per_q, _ = per_query_table(n_sys=6, n_q=10, seed=3)
    # s1 is strong on the queries it has but lacks four of them: skip ranks it high, zero low
    per_q.loc[per_q["run"] == "s1", "value"] = 0.95
    gaps = (per_q["run"] == "s1") & per_q["query_id"].isin(["q0", "q1", "q2", "q3"])
    gaps |= (per_q["run"] == "s4") & (per_q["query_id"] == "q5")
    grader = per_q[~gaps]
    human = per_q.assign(value=per_q["value"] * 0.5 + 0.1)  # the human table has every query
    write_table(tmp_path / "grader.parquet", grader.assign(measure="map"), ["run", "query_id", "measure"])
    write_table(tmp_path / "human.parquet", human.assign(measure="map"), ["run", "query_id", "measure"])
    truth = human.groupby("run")["value"].mean()
    official = {r: float(rank) for rank, r in enumerate(truth.sort_values(ascending=False).index, 1)}
    (tmp_path / "official.json").write_text(json.dumps(official))
    seen = {}
    for policy in ("skip", "zero"):
        full = grader.pivot_table(index="run", columns="query_id", values="value")
        means = (full.mean(axis=1) if policy == "skip" else full.fillna(0.0).mean(axis=1)).sort_index()
        expected = float(kendalltau(means.to_numpy(), truth.sort_index().to_numpy()).statistic)
        lb = Leaderboard("g", "max-4", "map", "", str(tmp_path / "grader.parquet"), missing_queries=policy)
        ref = Leaderboard("human", "-", "map", "", str(tmp_path / "human.parquet"), missing_queries=policy)
        run_report_correlation(ReportsConfig(bootstrap_samples=0), [lb.as_dict()], tmp_path / "official.json",
                               tmp_path / f"corr-{policy}.tsv", tmp_path)
        report = pd.read_csv(tmp_path / f"corr-{policy}.tsv", sep="\t")
        systems, _ = system_tables([lb, ref], AuditConfig(bootstrap_samples=0), {"map"})
        assert report["kendall"].iloc[0] == pytest.approx(expected, abs=1e-12), policy
        assert systems["kendall"].iloc[0] == pytest.approx(expected, abs=1e-12), policy
        seen[policy] = list(means.sort_values(ascending=False, kind="mergesort").index)
    assert seen["skip"].index("s1") < seen["zero"].index("s1")  # the two policies rank differently here
