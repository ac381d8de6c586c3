"""The meta-evaluation's statistics against their references: Krippendorff's alpha against the ``krippendorff``
package and kappa against scikit-learn on DL20's eight released prompt qrels vs the official qrels; top-k Kendall,
Kendall and Spearman against TREC AutoJudge's ``meta-evaluate`` code (in its own environment) on a shared example;
seeded intervals; a clear error when labels and judgments share no query."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest
from support.helpers import shared_data
from support.reference_envs import AUTOJUDGE_SCRIPT, AUTOJUDGE_VENV, AUTOJUDGE_VERSION, run_reference

from autograde.audit.metaeval import label_agreement
from autograde.core.errors import InvalidValueError
from autograde.io.trec import read_qrels
from autograde.metrics.rank_agreement import leaderboard_agreement
from autograde.reports.agreement import aligned_labels, qrels_pairs

DL20_PROMPTS = {"QuestionSelfRatedUnanswerablePromptWithChoices": 4, "NuggetSelfRatedPrompt": 4, "FagB": 1,
                "FagB_few": 1, "HELM": 1, "Sun": 1, "Sun_few": 1, "Thomas": 1}
"""The eight released DL20 prompt qrels and the label threshold each is read at (self-ratings 0-5 at 4, direct
prompts at 1), as docs/reports.md and docs/audit.md."""


@functools.lru_cache(maxsize=1)
def _dl20_judgments() -> dict[tuple[str, str], int]:
    return qrels_pairs(read_qrels(shared_data("dl20", "qrels.dl20-passage.txt")))


@pytest.mark.parametrize("prompt", sorted(DL20_PROMPTS))
def test_alpha_and_kappa_equal_their_references_on_dl20(prompt: str) -> None:
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    judged = _dl20_judgments()
    labels = qrels_pairs(read_qrels(shared_data("dl20", "autograded-qrels", f"{prompt}.qrel")))
    t, r = DL20_PROMPTS[prompt], 2
    res = label_agreement(labels, judged, t, r)
    keys = sorted(k for k in judged if k in labels)
    lab = np.array([labels[k] for k in keys])
    jud = np.array([judged[k] for k in keys])
    aligned = aligned_labels(lab, t, r, 0, 3)
    theirs = krippendorff.alpha(reliability_data=np.vstack([aligned, jud]).astype(float),
                                level_of_measurement="ordinal")
    assert abs(res.alpha_ordinal - theirs) <= 1e-12
    assert res.kappa == pytest.approx(cohen_kappa_score((lab >= t).astype(int), (jud >= r).astype(int)), abs=1e-12)
    assert res.kappa_linear == pytest.approx(cohen_kappa_score(aligned, jud, weights="linear", labels=[0, 1, 2, 3]),
                                             abs=1e-12)
    assert res.n_covered == 11386 and len(res.per_topic) == 54 and int(res.confusion.to_numpy().sum()) == 11386


STATS = ("kendall", "tau_ap", "spearman")


def _tables(seed: int = 0, systems: int = 12, queries: int = 15) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=systems)
    runs = [f"run{i:02d}" for i in range(systems)]
    qids = [f"q{j}" for j in range(queries)]
    human = [(r, q, float(np.clip(quality[i] + rng.normal(scale=0.8), -3, 3))) for i, r in enumerate(runs) for q in qids]
    grader = [(r, q, v + float(rng.normal(scale=0.6))) for r, q, v in human]
    cols = ["run", "query_id", "value"]
    return pd.DataFrame(grader, columns=cols), pd.DataFrame(human, columns=cols)


def test_leaderboard_agreement_is_seeded_and_has_intervals() -> None:
    grader, human = _tables()
    a = leaderboard_agreement(grader, human, STATS, (5, 10), samples=300, seed=4)
    assert a.row() == leaderboard_agreement(grader, human, STATS, (5, 10), samples=300, seed=4).row()
    assert a.row() != leaderboard_agreement(grader, human, STATS, (5, 10), samples=300, seed=5).row()
    for k in ("kendall", "tau_ap", "spearman", "kendall@5", "kendall@10"):
        assert a.low[k] <= a.point[k] <= a.high[k] or math.isnan(a.point[k])
    assert len(a.topic_tau) == 15 and a.n_systems == 12


def test_no_shared_query_is_a_clear_error() -> None:
    grader, human = _tables()
    with pytest.raises(InvalidValueError, match="share no query"):
        leaderboard_agreement(grader.assign(query_id="other-" + grader["query_id"]), human, samples=0)
    with pytest.raises(InvalidValueError, match="share no query"):
        label_agreement({("x1", "d"): 1}, {("q1", "d"): 2}, 1, 2)


def test_top_k_kendall_equals_autojudge() -> None:
    """AutoJudge 1.1.0's LeaderboardEvaluator (kendall@k: the top k runs of the truth's aggregate ranking, pandas'
    Kendall tau-b over them; tauap_b: its own tau-ap with ties) on the same per-topic tables."""
    grader, human = _tables(seed=11)
    ks = [3, 5, 10]

    def rows(df: pd.DataFrame) -> list[tuple[str, str, str, float]]:
        per = [(r, q, "m", v) for r, q, v in df.itertuples(index=False)]
        means = df.groupby("run")["value"].mean()
        return per + [(r, "all", "m", float(v)) for r, v in means.items()]

    ref = run_reference(AUTOJUDGE_VENV, "autojudge-env", AUTOJUDGE_SCRIPT,
                        {"truth": rows(human), "eval": rows(grader), "ks": ks})
    assert ref["version"] == AUTOJUDGE_VERSION
    theirs = ref["result"]["m|m"]
    ours = leaderboard_agreement(grader, human, STATS, ks, samples=0).point
    for k in ks:
        assert ours[f"kendall@{k}"] == pytest.approx(theirs[f"kendall@{k}"], abs=1e-12), k
    assert ours["kendall"] == pytest.approx(theirs["kendall"], abs=1e-12)
    assert ours["spearman"] == pytest.approx(theirs["spearman"], abs=1e-12)
