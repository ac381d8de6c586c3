"""Golden tests: our trec_eval wrapper against trec_eval's own test outputs (usnistgov/trec_eval ``test/``).

The golden files print ``measure <TAB> query_id <TAB> value`` with 4 decimals; ``all`` is the summary line.
We compare per query and the summary, formatted the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.helpers import MISSING_REFERENCE, SHARED_DATA

from autograde.io.trec import read_qrels, read_run
from autograde.metrics.trec import evaluate_run, mean_over_queries

DATA = SHARED_DATA / "trec_eval"

pytestmark = pytest.mark.skipif(
    not DATA.is_dir(), reason=f"{MISSING_REFERENCE}: {DATA} is not present (CI has ../shared beside the checkout)"
)

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
MEASURES = ["map", "Rprec", "recip_rank"] + [f"{m}_{k}" for m in ("P", "recall", "ndcg_cut") for k in CUTOFFS]


def read_golden(path: Path) -> dict[str, dict[str, str]]:
    """Golden file -> {query_id or 'all': {measure: printed value}}."""
    out: dict[str, dict[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        measure, qid, value = (part.strip() for part in line.split("\t"))
        out.setdefault(qid, {})[measure] = value
    return out


def run_of(name: str, tmp_path: Path | None = None) -> dict[str, dict[str, float]]:
    """The single run (tag STANDARD) of a trec_eval test run file.

    results.trunc has junk after the sixth column on its first lines ("reserved for future expansion"),
    which trec_eval ignores and our reader rejects on purpose; with ``tmp_path`` a copy cut to six
    columns is read instead.
    """
    path = DATA / name
    if tmp_path is not None:
        lines = path.read_text(encoding="utf-8").splitlines()
        path = tmp_path / name
        path.write_text("".join(" ".join(line.split()[:6]) + "\n" for line in lines), encoding="utf-8")
    runs = read_run(path).runs
    assert list(runs) == ["STANDARD"]
    return runs["STANDARD"]


def assert_matches(golden: dict[str, dict[str, str]], per_query: dict[str, dict[str, float]],
                   measures: list[str]) -> int:
    """Compare every measure per query and in the summary; return the number of values compared."""
    mismatches = []
    compared = 0
    summary = mean_over_queries(per_query, measures)
    rows = {**per_query, "all": summary}
    assert set(rows) == set(golden), f"query sets differ: ours {sorted(rows)}, golden {sorted(golden)}"
    for qid, values in rows.items():
        for m in measures:
            expected = golden[qid][m]
            got = f"{values[m]:.4f}"
            compared += 1
            if got != expected:
                mismatches.append(f"{m} {qid}: ours {got} (raw {values[m]!r}), trec_eval {expected}")
    assert not mismatches, "\n".join(mismatches)
    return compared


def test_default_and_all_measures_per_query() -> None:
    """out.test (summary) and out.test.aq (per query), qrels.test + results.test."""
    qrels = read_qrels(DATA / "qrels.test")
    per_query = evaluate_run(qrels, run_of("results.test"), MEASURES)
    assert sorted(per_query) == ["301", "302", "303"]
    n = assert_matches(read_golden(DATA / "out.test.aq"), per_query, MEASURES)
    assert n == 4 * len(MEASURES)

    summary = read_golden(DATA / "out.test")["all"]
    ours = mean_over_queries(per_query, MEASURES)
    in_summary = [m for m in MEASURES if m in summary]  # out.test prints only the "official" measures
    assert {"map", "Rprec", "recip_rank", "P_5", "P_1000"} <= set(in_summary)
    assert {m: f"{ours[m]:.4f}" for m in in_summary} == {m: summary[m] for m in in_summary}


def test_bare_measure_expands_to_trec_eval_cutoffs() -> None:
    """'P' alone gives trec_eval's default cutoffs, the same values as asking P_k one by one."""
    qrels = read_qrels(DATA / "qrels.test")
    run = run_of("results.test")
    bare = evaluate_run(qrels, run, ["P", "P_7"])
    assert set(bare["301"]) == {f"P_{k}" for k in CUTOFFS} | {"P_7"}
    golden = read_golden(DATA / "out.test.aq")
    assert f"{bare['301']['P_30']:.4f}" == golden["301"]["P_30"]
    dotted = evaluate_run(qrels, run, ["P.5,10", "ndcg_cut.10"])
    assert set(dotted["302"]) == {"P_5", "P_10", "ndcg_cut_10"}
    assert f"{dotted['302']['ndcg_cut_10']:.4f}" == golden["302"]["ndcg_cut_10"]


def test_complete_query_set_with_missing_topic(tmp_path: Path) -> None:
    """out.test.aqc: trec_eval -c with results.trunc (topic 302 missing) scores 302 as 0 and keeps it in 'all'."""
    qrels = read_qrels(DATA / "qrels.test")
    run = run_of("results.trunc", tmp_path)
    assert "302" not in run
    per_query = evaluate_run(qrels, run, MEASURES, missing_queries="zero")
    assert all(v == 0.0 for v in per_query["302"].values())
    assert_matches(read_golden(DATA / "out.test.aqc"), per_query, MEASURES)

    skipped = evaluate_run(qrels, run, MEASURES, missing_queries="skip")
    assert sorted(skipped) == ["301", "303"]
    both = mean_over_queries(skipped, ["map"])["map"]
    assert both == pytest.approx((per_query["301"]["map"] + per_query["303"]["map"]) / 2)


def test_relevance_level_two() -> None:
    """out.test.aql: qrels.rel_level (grades -1..4) at trec_eval -l 2."""
    qrels = read_qrels(DATA / "qrels.rel_level")
    assert min(g for docs in qrels.values() for g in docs.values()) == -1
    per_query = evaluate_run(qrels, run_of("results.test"), MEASURES, relevance_level=2)
    assert_matches(read_golden(DATA / "out.test.aql"), per_query, MEASURES)
    # nDCG ignores the relevance level; binary measures do not.
    level1 = evaluate_run(qrels, run_of("results.test"), ["ndcg_cut_10", "map"], relevance_level=1)
    for qid in per_query:
        assert level1[qid]["ndcg_cut_10"] == per_query[qid]["ndcg_cut_10"]
    assert level1["301"]["map"] != per_query["301"]["map"]  # 301 has grade-1 documents
