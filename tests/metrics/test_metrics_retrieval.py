"""Retrieval metrics: names, trec_eval semantics (order, ties, float32, -c, -l), and a pure-Python oracle."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from support.helpers import shared_data

from autograde.core.errors import InputError
from autograde.io.trec import read_qrels, read_run
from autograde.metrics.config import RetrievalMetricsConfig
from autograde.metrics.measures import parse_measure, split_trec_measure
from autograde.metrics.retrieval import (
    evaluate_retrieval,
    load_qrels,
    load_runs,
    measure_specs,
    per_query_measures,
    retrieval_markdown,
    truncate_run,
)
from autograde.metrics.trec import evaluate_run, mean_over_queries

# q1: d1 and d3 relevant (grades 1 and 2), d2 judged non-relevant; q2: only d9 relevant (grade 2);
# q3: judged (d7 relevant) but absent from the run; q9 is in the run only.
QRELS_TEXT = """\
q1 0 d1 1
q1 0 d2 0
q1 0 d3 2
q2 0 d9 2
q2 0 d8 0
q3 0 d7 1
"""
# q1 ranking by score: d2 (3.0), d1 (2.0), d3 (1.0) -> first relevant at rank 2.
# q2: d8 and d9 tie at 5.0; trec_eval breaks ties by doc id descending, so d9 comes first.
RUN_TEXT = """\
q1 Q0 d1 1 2.0 sys
q1 Q0 d2 2 3.0 sys
q1 Q0 d3 3 1.0 sys
q2 Q0 d8 1 5.0 sys
q2 Q0 d9 2 5.0 sys
q9 Q0 d1 1 1.0 sys
"""


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[dict, dict]:
    (tmp_path / "q.txt").write_text(QRELS_TEXT)
    (tmp_path / "r.txt").write_text(RUN_TEXT)
    return read_qrels(tmp_path / "q.txt"), read_run(tmp_path / "r.txt").runs["sys"]


def test_names_and_order_like_the_reference() -> None:
    names = [s.name for s in measure_specs(cutoffs=[1, 10])]
    assert names == ["map", "mrr", "ndcg@1", "P@1", "recall@1", "ndcg@10", "P@10", "recall@10"]
    trec = {s.name: s.trec for s in measure_specs(cutoffs=[5], mrr_cutoff=3)}
    assert trec == {"map": "map", "mrr": "recip_rank", "mrr@3": "recip_rank", "ndcg@5": "ndcg_cut_5",
                    "P@5": "P_5", "recall@5": "recall_5"}
    with pytest.raises(ValueError, match="valid: mrr, map"):
        measure_specs(["bpref"])


def test_parse_measure_both_spellings() -> None:
    assert split_trec_measure("recall_100") == ("recall", ("100",))
    assert split_trec_measure("ndcg_cut.10") == ("ndcg_cut", ("10",))
    assert split_trec_measure("Rprec_mult_0.20") == ("Rprec_mult", ("0.20",))
    assert split_trec_measure("Rprec") == ("Rprec", None)
    with pytest.raises(ValueError, match="unknown trec_eval measure 'ndcg@10'"):
        parse_measure("ndcg@10", "trec_eval")


def test_one_parser_for_every_family() -> None:
    """trec_eval, evaluation-server, nugget and cover names go through one parser to one value type."""
    assert parse_measure("ndcg@10") == parse_measure("ndcg@10", "server")
    assert parse_measure("ndcg@10").trec == parse_measure("ndcg_cut_10").trec == "ndcg_cut_10"
    assert parse_measure("AllScore(strict=True)").name == "strict_all_score"
    assert {parse_measure(m).missing for m in ("cover", "ncover", "all_score")} == {"skip"}
    assert parse_measure("map").family == "trec_eval" and parse_measure("map", "server").family == "server"
    with pytest.raises(ValueError, match="trec_eval: map, recip_rank.*nugget: all_score"):
        parse_measure("nDCG@10")


def test_tiny_values_by_hand(tiny: tuple[dict, dict]) -> None:
    qrels, run = tiny
    cfg = RetrievalMetricsConfig(cutoffs=[1, 2], mrr_cutoff=1)
    pq = per_query_measures(qrels, run, cfg)
    assert list(pq) == ["q1", "q2", "q3"]  # q3 scored 0 (missing), q9 ignored (no judgments)
    q1 = pq["q1"]
    assert q1["mrr"] == 0.5 and q1["mrr@1"] == 0.0  # first relevant at rank 2; cut at 1 -> 0
    assert q1["P@1"] == 0.0 and q1["P@2"] == 0.5
    assert q1["recall@2"] == 0.5
    assert q1["map"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    # nDCG@2 with raw grades: ranking grades [0, 1]; ideal [2, 1].
    assert q1["ndcg@2"] == pytest.approx((1 / math.log2(3)) / (2 + 1 / math.log2(3)))
    q2 = pq["q2"]  # the tie goes to d9 (doc id descending): relevant at rank 1
    assert q2["mrr"] == 1.0 and q2["mrr@1"] == 1.0 and q2["P@1"] == 1.0 and q2["ndcg@1"] == 1.0
    assert all(v == 0.0 for v in pq["q3"].values())


def test_missing_query_policies(tiny: tuple[dict, dict]) -> None:
    qrels, run = tiny
    zero = evaluate_retrieval(qrels, {"sys": run}, RetrievalMetricsConfig(cutoffs=[1]))
    skip = evaluate_retrieval(qrels, {"sys": run}, RetrievalMetricsConfig(cutoffs=[1], missing_queries="skip"))
    assert zero["results"]["sys"]["mrr"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert skip["results"]["sys"]["mrr"] == pytest.approx((0.5 + 1.0) / 2)
    assert zero["queries"]["sys"] == {"qrels_queries": 3, "run_queries": 3, "in_both": 2, "missing_from_run": 1,
                                      "missing_policy": "scored 0", "run_only_ignored": 1, "averaged_over": 3}
    assert skip["queries"]["sys"]["averaged_over"] == 2
    assert sorted(skip["per_query"]["sys"]) == ["q1", "q2"]
    assert zero["options"]["missing_queries"] == "zero" and skip["options"]["missing_queries"] == "skip"


def test_relevance_level_changes_binary_measures_not_ndcg(tiny: tuple[dict, dict]) -> None:
    qrels, run = tiny
    one = per_query_measures(qrels, run, RetrievalMetricsConfig(cutoffs=[3]))["q1"]
    two = per_query_measures(qrels, run, RetrievalMetricsConfig(cutoffs=[3], relevance_level=2))["q1"]
    assert one["ndcg@3"] == two["ndcg@3"]
    assert one["mrr"] == 0.5 and two["mrr"] == pytest.approx(1 / 3)  # only d3 (grade 2) is relevant at -l 2
    assert one["recall@3"] == 1.0 and two["recall@3"] == 1.0
    assert one["P@3"] == pytest.approx(2 / 3) and two["P@3"] == pytest.approx(1 / 3)


def test_extra_measures_and_bare_families(tiny: tuple[dict, dict]) -> None:
    qrels, run = tiny
    cfg = RetrievalMetricsConfig(metrics=["mrr"], cutoffs=[], extra_measures=["Rprec", "success", "P_2"])
    row = per_query_measures(qrels, run, cfg)["q1"]
    assert list(row) == ["mrr", "Rprec", "success_1", "success_5", "success_10", "P_2"]
    assert row["Rprec"] == 0.5 and row["success_1"] == 0.0 and row["success_5"] == 1.0 and row["P_2"] == 0.5
    with pytest.raises(ValueError, match="unknown trec_eval measure"):
        RetrievalMetricsConfig(extra_measures=["ndcg@10"])


def test_float32_ties_and_truncation() -> None:
    """Scores equal in float32 tie (trec_eval <= 9.0.8) and then fall back to doc id descending."""
    a, b = 1.00000001, 1.00000002  # distinct doubles, the same float32
    assert np.float32(a) == np.float32(b)
    qrels = {"q": {"dA": 1, "dB": 0}}
    run = {"q": {"dA": b, "dB": a}}  # as doubles dA ranks first; in float32 dB wins the tie (B > A)
    assert list(truncate_run(run, 1)["q"]) == ["dB"]
    assert evaluate_run(qrels, run, ["recip_rank"])["q"]["recip_rank"] == 0.5
    pq = per_query_measures(qrels, run, RetrievalMetricsConfig(metrics=["mrr"], cutoffs=[], mrr_cutoff=1))
    assert pq["q"] == {"mrr": 0.5, "mrr@1": 0.0}


def test_mean_over_queries_summaries() -> None:
    pq = {"a": {"num_ret": 3.0, "map": 0.5, "gm_map": math.log(0.25)},
          "b": {"num_ret": 2.0, "map": 0.25, "gm_map": math.log(1.0)}}
    assert mean_over_queries(pq) == {"num_ret": 5.0, "map": 0.375, "gm_map": pytest.approx(0.5)}
    with pytest.raises(KeyError, match="no value for measure 'P_5'"):
        mean_over_queries(pq, ["P_5"])
    assert mean_over_queries({}, ["map"]) == {"map": 0.0}


def _oracle(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], k: int, level: int = 1
            ) -> dict[str, dict[str, float]]:
    """Independent pure-Python trec_eval: order by float32 score desc then doc id desc; linear-gain nDCG."""
    out = {}
    for qid, judged in qrels.items():
        docs = run.get(qid, {})
        ranked = sorted(docs, key=lambda d: (float(np.float32(docs[d])), d.encode()), reverse=True)
        rel = [judged.get(d, 0) >= level for d in ranked]
        n_rel = sum(g >= level for g in judged.values())
        first = next((i for i, r in enumerate(rel) if r), None)
        hits, ap = 0, 0.0
        for i, r in enumerate(rel):
            if r:
                hits += 1
                ap += hits / (i + 1)
        dcg = sum(max(judged.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        out[qid] = {"mrr": 0.0 if first is None else 1 / (first + 1), "map": ap / n_rel if n_rel else 0.0,
                    f"P@{k}": sum(rel[:k]) / k, f"recall@{k}": sum(rel[:k]) / n_rel if n_rel else 0.0,
                    f"ndcg@{k}": dcg / idcg if idcg else 0.0}
    return out


@pytest.mark.parametrize("level", [1, 2])
def test_against_pure_python_oracle_on_ultrarag(level: int) -> None:
    qrels = load_qrels(shared_data("ultrarag", "qrels.txt"))
    runs, _ = load_runs([shared_data("ultrarag", "run_a.txt"), shared_data("ultrarag", "run_b.txt")])
    for run in runs.values():
        for k in (1, 5, 20):
            ours = per_query_measures(qrels, run, RetrievalMetricsConfig(cutoffs=[k], relevance_level=level))
            expected = _oracle(qrels, run, k, level)
            assert set(ours) == set(expected)
            for qid, row in expected.items():
                for name, value in row.items():
                    assert ours[qid][name] == pytest.approx(value, abs=1e-12), (qid, name, k, level)


def test_reference_server_mean_equals_skip_policy() -> None:
    """The reference averages pytrec_eval's output (queries in run and qrels): our 'skip'."""
    import pytrec_eval

    qrels = load_qrels(shared_data("trec_eval", "qrels.test"))
    run = load_runs([shared_data("trec_eval", "results.test")])[0]["STANDARD"]
    run = {q: d for q, d in run.items() if q != "302"}
    ref_pq = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "map", "ndcg_cut.10", "P.10"}).evaluate(run)
    ref = {m: sum(r[m] for r in ref_pq.values()) / len(ref_pq) for m in ("map", "recip_rank", "ndcg_cut_10", "P_10")}
    ours = evaluate_retrieval(qrels, {"s": run}, RetrievalMetricsConfig(cutoffs=[10], missing_queries="skip"))
    res = ours["results"]["s"]
    assert res["map"] == pytest.approx(ref["map"]) and res["mrr"] == pytest.approx(ref["recip_rank"])
    assert res["ndcg@10"] == pytest.approx(ref["ndcg_cut_10"]) and res["P@10"] == pytest.approx(ref["P_10"])


def test_markdown_and_per_query_switch(tiny: tuple[dict, dict]) -> None:
    qrels, run = tiny
    body = evaluate_retrieval(qrels, {"sys": run, "other": {"q1": {"d3": 1.0}}},
                              RetrievalMetricsConfig(cutoffs=[1], per_query=False))
    assert "per_query" not in body
    md = retrieval_markdown(body)
    assert md.splitlines()[0] == "| measure | sys | other |"
    assert "| mrr | 0.5000 | 0.3333 |" in md


def test_bad_inputs_name_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq1 0 d2 high\n")
    with pytest.raises(InputError, match=r"q\.txt:2: relevance grade 'high' is not an integer"):
        load_qrels(tmp_path / "q.txt")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2.0 s\nq1 Q0 d1 2 1.0 s\n")
    (tmp_path / "r2.txt").write_text("q1 Q0 d1 1 x s\n")
    with pytest.raises(InputError) as err:
        load_runs([tmp_path / "r.txt", tmp_path / "r2.txt"])
    text = str(err.value)
    assert "r.txt:2: duplicate document 'd1'" in text and "r2.txt:1: score 'x' is not a number" in text
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(InputError, match="qrels file holds no judgments"):
        load_qrels(tmp_path / "empty.txt")


def test_same_tag_in_two_files_is_disambiguated(tmp_path: Path) -> None:
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 2.0 STANDARD\n")
    (tmp_path / "b.run").write_text("q1 Q0 d2 1 2.0 STANDARD\nq1 Q0 d2 1 2.0 other\n")
    runs, sources = load_runs([tmp_path / "a.run", tmp_path / "b.run"])
    assert list(runs) == ["a.run:STANDARD", "b.run:STANDARD", "other"]
    assert sources["other"] == str(tmp_path / "b.run")
