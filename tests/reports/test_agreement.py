"""Agreement with human judgments: Table 5 layout, Cohen's kappa (checked against scikit-learn), the CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.helpers import shared_data

from autograde.io.trec import read_qrels
from autograde.reports.agreement import (
    aligned_labels,
    compute_agreement,
    graded_markdown,
    per_query_table,
    qrels_pairs,
    summary_table,
    table5_latex,
    table5_markdown,
)

# max-grade labels and human judgments (0-3) of 11 passages; k is judged but has no label (not in the pool).
LABELS = {("q1", "a"): 5, ("q1", "b"): 4, ("q1", "c"): 3, ("q1", "d"): 0, ("q1", "e"): 2,
          ("q2", "f"): 4, ("q2", "g"): 1, ("q2", "h"): 0, ("q2", "i"): 5, ("q2", "j"): 3}
JUDGED = {("q1", "a"): 3, ("q1", "b"): 1, ("q1", "c"): 2, ("q1", "d"): 0, ("q1", "e"): 0,
          ("q2", "f"): 2, ("q2", "g"): 0, ("q2", "h"): 1, ("q2", "i"): 3, ("q2", "j"): 0, ("q2", "k"): 2}


def test_table5_counts_and_binary_kappa_hand_computed() -> None:
    res = compute_agreement(LABELS, JUDGED, threshold=4, relevant_level=2, name="Question")
    # label >= 4: a b f i; judged >= 2: a c f i (k has no label) -> tp a f i, fp b, fn c, tn d e g h j
    assert res.binary.tolist() == [[3, 1], [1, 5]]
    assert (res.n_covered, res.n_judged) == (10, 11)
    assert res.label_bins == ("4–5", "0–3") and res.judgment_bins == ("2–3", "0–1")
    # po = 8/10, pe = 0.4*0.4 + 0.6*0.6 = 0.52 -> kappa = 0.28 / 0.48 = 7/12
    assert res.kappa == pytest.approx(7 / 12)
    assert res.graded.loc[5, 3] == 2 and res.graded.loc[4, 1] == 1 and int(res.graded.to_numpy().sum()) == 10
    q = per_query_table([res]).set_index("query_id")
    assert q.loc["q1", ["n", "tp", "fp", "fn", "tn"]].tolist() == [5, 1, 1, 1, 2]
    assert q.loc["q2", ["n", "tp", "fp", "fn", "tn"]].tolist() == [5, 2, 0, 0, 3] and q.loc["q2", "kappa"] == 1.0


def test_kappas_agree_with_sklearn() -> None:
    from sklearn.metrics import cohen_kappa_score

    res = compute_agreement(LABELS, JUDGED, threshold=4, relevant_level=2)
    keys = sorted(LABELS)
    lab = np.array([LABELS[k] for k in keys])
    jud = np.array([JUDGED[k] for k in keys])
    assert res.kappa == pytest.approx(cohen_kappa_score(lab >= 4, jud >= 2))
    aligned = aligned_labels(lab, 4, 2, 0, 3)
    assert aligned.tolist() == [3, 2, 1, 0, 0, 2, 0, 0, 3, 1]  # 5->3, 4->2, 3->1, <=2->0
    assert res.kappa_linear == pytest.approx(cohen_kappa_score(aligned, jud, weights="linear", labels=[0, 1, 2, 3]))
    rng = np.random.default_rng(7)
    a = {("q", str(i)): int(v) for i, v in enumerate(rng.integers(0, 6, 300))}
    b = {("q", str(i)): int(v) for i, v in enumerate(rng.integers(0, 4, 300))}
    r = compute_agreement(a, b, threshold=3, relevant_level=1)
    la, lb = np.array([a[k] for k in sorted(a)]), np.array([b[k] for k in sorted(a)])
    assert r.kappa == pytest.approx(cohen_kappa_score(la >= 3, lb >= 1))
    assert r.kappa_linear == pytest.approx(cohen_kappa_score(np.clip(la - 2, 0, 3), lb, weights="linear"))


def test_table5_markdown_latex_and_tsv_layout() -> None:
    res = [compute_agreement(LABELS, JUDGED, 4, 2, "Question"), compute_agreement(LABELS, JUDGED, 3, 2, "Nugget")]
    md = table5_markdown(res).splitlines()
    assert md[0] == "| Label | Grade | Judgments 2–3 | Judgments 0–1 | Total | Cohen's κ | linear κ | judged covered |"
    assert md[2] == "| Question (≥4) | 4–5 | 3 | 1 | 4 | 0.58 | 0.69 | 10 of 11 |"
    assert md[3] == "|  | 0–3 | 1 | 5 | 6 | 0.58 | 0.69 |  |"
    assert md[4].startswith("| Nugget (≥3) | 3–5 | 4 | 2 | 6 |")
    tex = table5_latex(res)
    assert r"Question ($\geq$4) & 4--5 & 3 & 1 & 4 & 0.58 & 0.69 \\" in tex and tex.count(r"\midrule") == 2
    tsv = summary_table(res)
    assert tsv[["name", "threshold", "tp", "fp", "fn", "tn", "n_judged", "n_covered"]].values.tolist() == [
        ["Question", 4, 3, 1, 1, 5, 11, 10], ["Nugget", 3, 4, 2, 0, 4, 11, 10]]
    assert "| Total | 4 | 2 | 2 | 2 | 10 |" in graded_markdown(res[0])


def test_single_category_gives_nan_kappa_not_an_error() -> None:
    res = compute_agreement({("q", "a"): 5, ("q", "b"): 5}, {("q", "a"): 2, ("q", "b"): 3}, 4, 2)
    assert res.binary.tolist() == [[2, 0], [0, 0]] and res.kappa != res.kappa  # NaN, as scikit-learn
    assert "–" in table5_markdown([res])


def _agreement_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from autograde.cli import main

    rc = main(argv)
    return rc, capsys.readouterr().out


def test_agreement_cli_on_two_qrels_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "auto.qrels", tmp_path / "official.qrels"
    a.write_text("".join(f"{q} 0 {p} {v}\n" for (q, p), v in sorted(LABELS.items())))
    b.write_text("".join(f"{q} 0 {p} {v}\n" for (q, p), v in sorted(JUDGED.items())))
    rc, out = _agreement_cli(["agreement", "--qrels-a", str(a), "--qrels-b", str(b), "--thresholds", "4",
                              "--relevant-level", "2", "--per-query", "--graded"], capsys)
    assert rc == 0
    assert "| auto (≥4) | 4–5 | 3 | 1 | 4 | 0.58 | 0.69 | 10 of 11 |" in out
    assert "label x judgment" in out and "q2" in out
    rc, out = _agreement_cli(["agreement", "--qrels-a", str(a), "--qrels-b", str(b), "--format", "tsv",
                              "--out", str(tmp_path / "t.tsv")], capsys)
    assert rc == 0 and out.splitlines()[1].startswith("auto\t1\t2\t")  # default level 2 and (tmp_path / "t.tsv").read_text() == out
    b.write_text("q1 0 a\n")
    rc, _ = _agreement_cli(["agreement", "--qrels-a", str(a), "--qrels-b", str(b)], capsys)
    assert rc == 2  # the bad line is reported (file:line: problem), no traceback


def test_released_dl20_autograded_qrels_vs_official() -> None:
    """What the released files give (docs/reports.md sets these next to the paper's Table 5)."""
    official = qrels_pairs(read_qrels(shared_data("dl20", "qrels.dl20-passage.txt")))
    assert len(official) == 11386
    got = {}
    for name in ("QuestionSelfRatedUnanswerablePromptWithChoices", "NuggetSelfRatedPrompt"):
        labels = qrels_pairs(read_qrels(shared_data("dl20", "autograded-qrels", f"{name}.qrel")))
        r = compute_agreement(labels, official, threshold=4, relevant_level=2, name=name)
        got[name] = (r.binary.tolist(), round(r.kappa, 4), round(r.kappa_linear, 4), r.n_covered)
    assert got == {
        "QuestionSelfRatedUnanswerablePromptWithChoices": ([[1274, 3917], [392, 5803]], 0.1928, 0.227, 11386),
        "NuggetSelfRatedPrompt": ([[1395, 5666], [271, 4054]], 0.1086, 0.1069, 11386),
    }


def test_agreement_cli_defaults_to_level_2_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """The default relevant level is Table 5's (2): on DL20, 1,666 relevant and 9,720 non-relevant judgments."""
    from autograde.cli import main

    official = shared_data("dl20", "qrels.dl20-passage.txt")
    auto = shared_data("dl20", "autograded-qrels", "QuestionSelfRatedUnanswerablePromptWithChoices.qrel")
    assert main(["agreement", "--qrels-a", str(auto), "--qrels-b", str(official), "--thresholds", "4"]) == 0
    err = capsys.readouterr().err
    assert "judgments >= 2 count as relevant (1666 relevant, 9720 not relevant" in err
