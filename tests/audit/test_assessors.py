"""Agreement among several assessors (``autograde audit assessors``): Krippendorff's alpha of three or more qrels files
with missing judgments equals the ``krippendorff`` package; each pair's kappa equals scikit-learn's on the passages
both judged. And ``autograde audit labels`` tells two inputs of the same file name apart by their folders."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from autograde.audit.assessors import assessor_agreement, file_names
from autograde.cli import main
from autograde.core.errors import InvalidValueError


def _assessors(seed: int = 3, n: int = 4, passages: int = 60) -> dict[str, dict[tuple[str, str], int]]:
    """``n`` assessors judging a pool of ``passages`` on 0-3, each leaving out about a third, noisy around a truth."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 4, size=passages)
    out = {}
    for a in range(n):
        grades = np.clip(truth + rng.integers(-1, 2, size=passages), 0, 3)
        out[f"a{a}"] = {(f"q{i % 7}", f"d{i}"): int(g) for i, g in enumerate(grades) if rng.random() > 0.35}
    return out


def _write(folder: Path, judgments: dict[str, dict[tuple[str, str], int]]) -> list[str]:
    paths = []
    for name, j in judgments.items():
        p = folder / f"{name}.qrels"
        p.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in j.items()))
        paths.append(str(p))
    return paths


def test_alpha_of_three_or_more_assessors_equals_krippendorff() -> None:
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    for n in (3, 4, 6):
        judgments = _assessors(seed=n, n=n)
        ag = assessor_agreement(judgments)
        keys = sorted({k for j in judgments.values() for k in j})
        data = np.array([[j.get(k, np.nan) for k in keys] for j in judgments.values()], dtype=float)
        for level in ("nominal", "ordinal", "interval"):
            theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
            assert ag.alpha[level] == pytest.approx(theirs, abs=1e-12), (n, level)
        assert ag.units == int(((~np.isnan(data)).sum(axis=0) >= 2).sum()) and ag.judged == len(keys)
        first = ag.pairs.iloc[0]
        a, b = judgments[first["a"]], judgments[first["b"]]
        both = sorted(set(a) & set(b))
        assert first["shared"] == len(both)
        assert first["kappa"] == pytest.approx(cohen_kappa_score([a[k] for k in both], [b[k] for k in both]), abs=1e-12)
        assert len(ag.pairs) == n * (n - 1) // 2


def test_assessors_command_prints_and_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judgments = _assessors()
    paths = _write(tmp_path, judgments)
    assert main(["audit", "assessors", *paths, "--tsv", str(tmp_path / "pairs.tsv")]) == 0
    out = capsys.readouterr().out
    ag = assessor_agreement(judgments)
    assert f"| ordinal | {ag.alpha['ordinal']:.3f} |" in out and "# Agreement of 4 assessors" in out
    assert "| a0 | a1 |" in out
    assert (tmp_path / "pairs.tsv").read_text().splitlines()[0].startswith("a\tb\tshared\tagree\tkappa")
    assert main(["audit", "assessors", paths[0], "--quiet"]) == 2  # one assessor: nothing to agree on
    assert "at least two assessors" in capsys.readouterr().err


def test_no_passage_judged_twice_is_a_clear_error() -> None:
    with pytest.raises(InvalidValueError, match="no passage is judged by two of the assessors"):
        assessor_agreement({"a": {("q1", "d1"): 1}, "b": {("q1", "d2"): 1}})
    ag = assessor_agreement({"a": {("q1", "d1"): 1, ("q1", "d2"): 1}, "b": {("q1", "d1"): 1, ("q1", "d2"): 1}})
    assert math.isnan(ag.alpha["nominal"])  # one grade only: undefined, as krippendorff refuses it


def test_file_names_tell_files_of_the_same_name_apart() -> None:
    assert file_names(["a/x.qrels", "b/x.qrels", "y.qrels"]) == ["a/x", "b/x", "y"]
    assert file_names(["r/qrels/sim/max-4.qrels", "r/qrels/strict/max-4.qrels"]) == ["sim/max-4", "strict/max-4"]
    assert file_names(["p/a/x.qrels", "q/a/x.qrels"]) == ["p/a/x", "q/a/x"]
    with pytest.raises(InvalidValueError, match="given twice"):
        file_names(["a/x.qrels", "a/../a/x.qrels"])


def test_audit_labels_tells_two_inputs_of_the_same_file_name_apart(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Two graders' ``max-4.qrels`` were two identical "max-4 | max-4" rows; now each row names its folder."""
    judged = {("q1", f"d{i}"): i % 4 for i in range(12)}
    (tmp_path / "human.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in judged.items()))
    for grader, shift in (("sim", 0), ("strict", 1)):
        (tmp_path / grader).mkdir()
        (tmp_path / grader / "max-4.qrels").write_text("".join(f"{q} 0 {d} {min(5, g + 2 + shift)}\n"
                                                               for (q, d), g in judged.items()))
    assert main(["audit", "labels", "--judgments", str(tmp_path / "human.qrels"), "--labels",
                 str(tmp_path / "sim/max-4.qrels") + "=4", "--labels", str(tmp_path / "strict/max-4.qrels") + "=4",
                 "--out-dir", str(tmp_path / "out")]) == 0
    report = capsys.readouterr().out
    assert "| sim/max-4 | max-4 |" in report and "| strict/max-4 | max-4 |" in report
    labels = (tmp_path / "out/labels.tsv").read_text().splitlines()
    assert [line.split("\t")[0] for line in labels[1:]] == ["sim/max-4", "strict/max-4"]


def test_alpha_of_the_dl20_human_and_three_released_prompt_qrels_equals_krippendorff() -> None:
    """Real labels: the NIST DL20 qrels (11,386 judgments) and three of the workbench's released prompt qrels (FagB,
    Thomas, Sun: 16,101 graded passages each) as four "assessors"; NIST's judgments are missing for the passages it
    did not judge. On raw grades the scales differ, so only parity is meant here, not a measure of agreement."""
    import krippendorff
    from support.helpers import shared_data

    from autograde.io.trec import read_qrels
    from autograde.reports.agreement import qrels_pairs

    files = {"nist": shared_data("dl20", "qrels.dl20-passage.txt")}
    files |= {p: shared_data("dl20", "autograded-qrels", f"{p}.qrel") for p in ("FagB", "Thomas", "Sun")}
    judgments = {n: qrels_pairs(read_qrels(p)) for n, p in files.items()}
    ag = assessor_agreement(judgments)
    keys = sorted({k for j in judgments.values() for k in j})
    data = np.array([[j.get(k, np.nan) for k in keys] for j in judgments.values()], dtype=float)
    assert np.isnan(data).any()  # some passages are missing from some files
    for level in ("nominal", "ordinal", "interval"):
        theirs = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert ag.alpha[level] == pytest.approx(theirs, abs=1e-12), level
