"""The robustness audit's mechanics with graders whose behaviour is known (tests/support/known_graders.py): a grader
that ignores the passage shifts by exactly 0 under every perturbation; one that counts query terms is lifted by
stuffing and not by injection; a seeded run is identical; perturbed grades are cached (a rerun grades nothing); the
leaderboard consequence moves the perturbed system; bad input is a clear error."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from support.known_graders import KnownGrader, PassageBlind, QueryTermCounter, known_config

from autograde.audit.perturb import perturb
from autograde.audit.robustness import AuditInputs, AuditResult, audit_grader
from autograde.config.audit import RobustnessConfig
from autograde.core.errors import UnknownNameError
from autograde.grading.shard import direct_items

QUERIES = {f"q{i}": text for i, text in enumerate([
    "how do vaccines train the immune system", "causes of the french revolution", "how solar panels generate power",
    "why is the sky blue", "history of rock music"])}
FILLER = ["The weather was mild and the market opened late.", "A recipe needs flour, water and patience.",
          "Trains leave the station every hour on weekdays.", "The committee met twice and adjourned."]


def _inputs(with_rankings: bool = False) -> AuditInputs:
    texts = {}
    for q in QUERIES:
        for j, f in enumerate(FILLER):
            texts[(q, f"{q}-d{j}")] = f + (" " + QUERIES[q] if j == 0 else "")  # d0 mentions the query once
    rankings = None
    if with_rankings:
        rows = [(run, q, f"{q}-d{j}", float(10 - j if run != "worst" else j)) for run in ("best", "worst", "mid")
                for q in QUERIES for j in range(len(FILLER))]
        rankings = pd.DataFrame(rows, columns=["run", "query_id", "passage_id", "score"])
    return AuditInputs(QUERIES, texts, direct_items(QUERIES), rankings)


def _audit(grader: KnownGrader, tmp: Path, inputs: AuditInputs | None = None, **rc: object) -> AuditResult:
    cfg = RobustnessConfig.model_validate({"sample": 12, "seed": 3, "bootstrap_samples": 200, **rc})
    ins = inputs or _inputs()
    if ins.rankings is not None and not ins.labels:
        ins.labels = {pair: min(3, grader.grade(r)) for pair, text in ins.texts.items()
                      for r in _requests(pair, text)}
    return audit_grader(grader, known_config(grader), ins, cfg, threshold=2, cache_dir=tmp / "cache",
                        measure="P_1", level=2, depth=4)


def _requests(pair: tuple[str, str], text: str) -> list:
    from autograde.grading.base import GradeRequest

    q, p = pair
    return [GradeRequest(q, QUERIES[q], p, text, f"{q}/query", "query", QUERIES[q])]


def test_a_grader_blind_to_the_passage_never_moves(tmp_path: Path) -> None:
    res = _audit(PassageBlind(), tmp_path)
    assert len(res.pairs) == 12 * 7 and set(res.summary["perturbation"]) == {
        "stuffing", "injection", "query", "first_sentence", "off_topic"}
    assert (res.pairs["shift"] == 0).all()
    assert (res.summary[["mean_shift", "mean_shift_low", "mean_shift_high"]] == 0).all().all()
    assert (res.summary["unchanged_share"] == 1).all()
    assert res.summary["lifted"].sum() == 0


def test_stuffing_lifts_a_term_counter_and_injection_does_not(tmp_path: Path) -> None:
    res = _audit(QueryTermCounter(), tmp_path)
    s = res.summary.set_index("perturbation")
    assert s.loc["stuffing", "mean_shift"] > 1 and s.loc["stuffing", "lifted_share"] == 1.0
    assert s.loc["stuffing", "mean_shift_low"] > 0
    assert s.loc["injection", "mean_shift"] == 0 and s.loc["injection", "lifted"] == 0
    assert s.loc["query", "lifted_share"] == 1.0  # the query as the passage holds every term
    assert s.loc["off_topic", "lifted_share"] == 1.0  # another query's passage with this query's terms


def test_seeded_runs_are_identical_and_a_rerun_grades_nothing(tmp_path: Path) -> None:
    first_grader, again_grader = QueryTermCounter(), QueryTermCounter()
    first = _audit(first_grader, tmp_path)
    again = _audit(again_grader, tmp_path)
    pd.testing.assert_frame_equal(first.pairs, again.pairs)
    pd.testing.assert_frame_equal(first.summary, again.summary)
    assert first.stats["computed"] > 0 and first_grader.calls == first.stats["computed"]
    assert again.stats["computed"] == 0 and again_grader.calls == 0 and again.stats["cached"] == first.stats["prompts"]
    other = _audit(QueryTermCounter(), tmp_path / "other", seed=4)
    assert set(map(tuple, other.pairs[["query_id", "passage_id"]].values)) != set(
        map(tuple, first.pairs[["query_id", "passage_id"]].values))


def test_stuffing_one_systems_passages_moves_its_rank(tmp_path: Path) -> None:
    res = _audit(QueryTermCounter(), tmp_path, _inputs(with_rankings=True), system="worst",
                 perturbations=["stuffing"], system_perturbations=["stuffing", "injection"])
    lb = res.leaderboard.set_index("perturbation")
    assert lb.loc["stuffing", "rank_before"] == 3 and lb.loc["stuffing", "rank_after"] == 2  # tied first of 3
    assert lb.loc["injection", "rank_after"] == lb.loc["injection", "rank_before"] == 3
    assert lb.loc["stuffing", "passages"] == 5 * 4


def test_unknown_names_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(UnknownNameError, match="valid: stuffing, injection, query, first_sentence, off_topic"):
        perturb("shouting", "q0", "query", "passage")
    with pytest.raises(UnknownNameError, match="not a system of the experiment"):
        _audit(QueryTermCounter(), tmp_path, _inputs(with_rankings=True), system="nobody")


def test_auditing_a_grader_outside_the_experiment_is_a_clear_error() -> None:
    from autograde.audit.stages import run_robustness
    from autograde.config.model import Config
    from autograde.core.errors import InvalidValueError

    config = Config.model_validate({"data": {"queries": "q.tsv"}, "graders": [{"name": "sim", "bank": "direct"}]})
    with pytest.raises(InvalidValueError, match="grader 'ghost' is not in the experiment"):
        run_robustness(config, "ghost")
    with pytest.raises(UnknownNameError, match="unknown perturbation"):
        run_robustness(config, "sim", perturbations=["shouting"])


def test_off_topic_donors_come_from_other_queries() -> None:
    from autograde.audit.robustness import donors

    texts = {(q, f"d{i}"): f"{q} text {i}" for q in ("a", "b", "c") for i in range(3)}
    pairs = sorted(texts)
    for pair, text in donors(pairs, texts, seed=1).items():
        assert text is not None and not text.startswith(pair[0])
    assert donors([("a", "d0")], texts, seed=1) == {("a", "d0"): None}  # no other query in the pool
    assert donors([("z", "d0")], texts, seed=1, pool=pairs)[("z", "d0")] in texts.values()
