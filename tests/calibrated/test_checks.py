"""``autograde validate`` loads and checks a ``calibrated_qrels.model:`` folder before any job: a missing folder,
a truncated ``model.json``, a format version this release does not read, a missing field, sources the model was
not fitted with and labels it never saw are each one problem at the config line of the key, with a fix, never a
traceback; a good model folder validates."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from support.calibrated_data import tiny_sources

from autograde.calibrated.features import features_from_sources
from autograde.calibrated.fit import fit_calibrated
from autograde.calibrated.model import load_calibrated_model
from autograde.cli import main
from autograde.config.rubric import CalibratedQrelsConfig
from autograde.core.errors import InputError
from autograde.io.trec import read_qrels


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    """A logistic model folder fitted on the tiny sources 'close' and 'binary' (milliseconds), and the files."""
    root = tmp_path_factory.mktemp("calibrated-model")
    f = tiny_sources(root / "data")
    cfg = CalibratedQrelsConfig.model_validate({"sources": [str(f["close"]), str(f["binary"])],
                                                "judgments": str(f["judgments"]), "estimators": ["logistic"],
                                                "selection_folds": 2})
    fit_calibrated(cfg, features_from_sources(cfg.sources, cfg), read_qrels(f["judgments"])).model.save(root / "model")
    return root / "model", f


def _validate(mini: Path, capsys: pytest.CaptureFixture[str], model: Path | str, sources: list[Path]
              ) -> tuple[int, str, int]:
    """``autograde validate`` of the mini experiment with a calibrated_qrels section applying ``model``:
    (exit code, stderr, the config line of ``model:``)."""
    raw = yaml.safe_load(mini.read_text())
    raw["calibrated_qrels"] = {"model": str(model), "sources": [str(s) for s in sources]}
    text = yaml.safe_dump(raw, sort_keys=False)
    mini.write_text(text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.strip().startswith("model:"))
    capsys.readouterr()
    code = main(["validate", "--config", str(mini)])
    return code, capsys.readouterr().err, line


def _copy(model: Path, to: Path) -> Path:
    shutil.copytree(model, to)
    return to


def test_a_good_model_validates(mini: Path, capsys: pytest.CaptureFixture[str],
                                fitted: tuple[Path, dict[str, Path]]) -> None:
    model, f = fitted
    code, err, _ = _validate(mini, capsys, model, [f["close"], f["binary"]])
    assert code == 0, err


def test_a_missing_folder(mini: Path, capsys: pytest.CaptureFixture[str], fitted: tuple[Path, dict[str, Path]]) -> None:
    _, f = fitted
    code, err, line = _validate(mini, capsys, "models/nope", [f["close"], f["binary"]])
    assert code == 2 and "Traceback" not in err
    assert f"config.yaml:{line}: calibrated_qrels.model: the folder 'models/nope' does not exist" in err
    assert "fix: give the folder written by 'autograde rubric calibrate-qrels fit --model DIR'" in err


def test_a_truncated_model_json(mini: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                fitted: tuple[Path, dict[str, Path]]) -> None:
    model = _copy(fitted[0], tmp_path / "m")
    text = (model / "model.json").read_text()
    (model / "model.json").write_text(text[: len(text) // 2])
    code, err, line = _validate(mini, capsys, model, [fitted[1]["close"], fitted[1]["binary"]])
    assert code == 2 and "Traceback" not in err
    assert f"config.yaml:{line}: calibrated_qrels.model: {model}/model.json:" in err
    assert "not valid JSON" in err and "a truncated or edited file" in err and "fix: copy the model folder" in err


def test_an_unknown_format_version(mini: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                   fitted: tuple[Path, dict[str, Path]]) -> None:
    model = _copy(fitted[0], tmp_path / "m")
    doc = json.loads((model / "model.json").read_text())
    (model / "model.json").write_text(json.dumps({**doc, "format_version": 3}))
    code, err, line = _validate(mini, capsys, model, [fitted[1]["close"], fitted[1]["binary"]])
    assert code == 2 and f"config.yaml:{line}: calibrated_qrels.model:" in err
    assert "model format version 3; this autograde reads version 2" in err and "refit the model" in err


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda d: d.pop("estimator"), "lacks the field(s) estimator"),
    (lambda d: d["sources"][0].pop("kind"), "lacks the field 'kind'"),
    (lambda d: d["estimator"]["state"]["estimators"][0]["state"].pop("coef"), "lacks the field 'coef'"),
    (lambda d: d["estimator"].pop("kind"), "unknown estimator kind None"),
    (lambda d: d["sources"][0].update(levels=[0, 1]), "damaged model: ValueError"),  # fewer columns than the weights
])
def test_a_missing_or_damaged_field(mini: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                    fitted: tuple[Path, dict[str, Path]], edit: object, expected: str) -> None:
    model = _copy(fitted[0], tmp_path / "m")
    doc = json.loads((model / "model.json").read_text())
    edit(doc)  # type: ignore[operator]
    (model / "model.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="model.json"):  # the apply path: the same error
        load_calibrated_model(model)
    code, err, line = _validate(mini, capsys, model, [fitted[1]["close"], fitted[1]["binary"]])
    assert code == 2 and "Traceback" not in err and "KeyError" not in err
    assert f"config.yaml:{line}: calibrated_qrels.model: {model}/model.json: " in err and expected in err


def test_sources_the_model_was_not_fitted_with(mini: Path, capsys: pytest.CaptureFixture[str],
                                               fitted: tuple[Path, dict[str, Path]]) -> None:
    model, f = fitted
    code, err, line = _validate(mini, capsys, model, [f["close"], f["random"]])
    sources_line = line + 1
    assert code == 2 and "Traceback" not in err
    assert (f"config.yaml:{sources_line}: calibrated_qrels.sources: the model {model} needs source(s) binary, which "
            "none of the given files has (given: close, random; the model was fitted with close, binary)") in err


def test_sources_given_nowhere(mini: Path, capsys: pytest.CaptureFixture[str],
                               fitted: tuple[Path, dict[str, Path]]) -> None:
    model, f = fitted
    code, err, line = _validate(mini, capsys, model, [f["close"], Path("data/typo.qrel")])
    assert code == 2
    assert f"config.yaml:{line + 3}: calibrated_qrels.sources[1]: 'data/typo.qrel' does not exist" in err
    # the workflow's own grades of a configured grader are not there yet: named by their grader
    code, err, _ = _validate(mini, capsys, model, [f["close"], Path("results/grades/sim.parquet")])
    assert code == 2 and "needs source(s) binary" in err and "(given: close, sim;" in err


def test_labels_the_model_never_saw(mini: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                    fitted: tuple[Path, dict[str, Path]]) -> None:
    model, f = fitted
    shifted = tmp_path / "new" / "binary.qrel"
    shifted.parent.mkdir()
    shifted.write_text("".join(f"q0 0 d{i} {i % 5}\n" for i in range(10)))
    code, err, _ = _validate(mini, capsys, model, [f["close"], shifted])
    assert code == 2 and "source 'binary' has label(s) 2, 3, 4 the model never saw" in err
    assert f"{shifted}:3: source 'binary'" in err  # the first line holding label 2 (d2)


def test_apply_names_every_given_source(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        fitted: tuple[Path, dict[str, Path]]) -> None:
    """The sources mismatch of ``apply`` lists the sources given, also those the model does not use."""
    model, f = fitted
    code = main(["rubric", "calibrate-qrels", "apply", "--model", str(model), "--source", str(f["close"]),
                 "--source", str(f["random"]), "--out", str(tmp_path / "o.qrels"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "the model needs source 'binary', which none of the given files has (given: close, random)" in err
