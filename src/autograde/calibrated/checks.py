"""Checks of the ``calibrated_qrels:`` section before any job (``autograde validate`` and the workflow's DAG build,
through :func:`autograde.workflow.checks.check_experiment`).

With ``model:`` the model folder is loaded as ``apply`` would load it (:func:`~autograde.calibrated.model.
load_calibrated_model`): a missing folder, a truncated or edited ``model.json``, a format version this release
does not read, a missing field or weights file is a problem at the config line of ``calibrated_qrels.model``. The
sources must give every source the model was fitted with (matched by name; the files the workflow itself writes,
``results/grades/<grader>.parquet``, count by their grader), and a source file already there must not hold labels
the model never saw. Source and judgment files that neither exist nor are the workflow's outputs are named with
their config line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.errors import InputError, Problems

if TYPE_CHECKING:
    from autograde.calibrated.features import SourceData
    from autograde.calibrated.model import CalibratedQrelsModel
    from autograde.config.experiment import ConfigSource
    from autograde.config.model import Config

__all__ = ["check_calibrated"]

_FIT = "autograde rubric calibrate-qrels fit --model DIR"


def _inside(path: str, folder: str) -> bool:
    return Path(path).resolve().is_relative_to(Path(folder).resolve())


def _planned_names(config: Config, path: str) -> list[str] | None:
    """The source names of a file the workflow writes (a grader's grades table), else None (unknown)."""
    from autograde.core.layout import Layout

    lay = Layout.of(config.results_dir)
    for g in config.graders:
        if Path(lay.grades(g.name)).resolve() == Path(path).resolve():
            return [g.name]
    return None


def _load(folder: str, at: tuple[str, int | None], problems: Problems) -> CalibratedQrelsModel | None:
    """The model folder loaded, or None with its problems added at the config line of ``calibrated_qrels.model``."""
    from autograde.calibrated.model import load_calibrated_model

    path, line = at
    if not Path(folder).is_dir():
        problems.add(path, line, f"calibrated_qrels.model: the folder {folder!r} does not exist (working directory "
                     f"{os.getcwd()})", f"give the folder written by '{_FIT}' or by the workflow of the experiment "
                     "that trained it (results/calibrated_qrels/model)")
        return None
    try:
        return load_calibrated_model(folder)
    except InputError as exc:
        for p in exc.problems:
            where = f"{p.path}:{p.line}" if p.line is not None else p.path
            problems.add(path, line, f"calibrated_qrels.model: {where}: {p.message}", p.fix)
    return None


def check_calibrated(config: Config, src: ConfigSource, problems: Problems) -> None:
    """Every check of the ``calibrated_qrels:`` section (module doc)."""
    from autograde.calibrated.workflow import calibrated_section

    cfg = calibrated_section(config)
    if cfg is None:
        return
    results = config.results_dir
    model = _load(cfg.model, src.locate(("calibrated_qrels", "model")), problems) if cfg.model else None
    if cfg.judgments and not Path(cfg.judgments).exists() and not _inside(cfg.judgments, results):
        problems.add(*src.locate(("calibrated_qrels", "judgments")), f"calibrated_qrels.judgments: "
                     f"{cfg.judgments!r} does not exist (working directory {os.getcwd()})", "correct the path")
    present: list[SourceData] = []
    names: list[str] = []
    known = True  # every source's names are known (a workflow output other than a grades table: not)
    count_threshold = _count_threshold(model, cfg)
    for i, path in enumerate(cfg.sources):
        if Path(path).exists():
            from autograde.calibrated.features import read_sources

            read = read_sources([path], count_threshold, problems, src.locate(("calibrated_qrels", "sources", i)))
            present += read
            names += [s.name for s in read]
        elif (planned := _planned_names(config, path)) is not None:
            names += planned
        elif _inside(path, results):
            known = False
        else:
            problems.add(*src.locate(("calibrated_qrels", "sources", i)), f"calibrated_qrels.sources[{i}]: "
                         f"{path!r} does not exist and is no output of this workflow (working directory "
                         f"{os.getcwd()})", "correct the path (a grader's grades: results/grades/<grader>.parquet)")
            known = False
    if model is None:
        return
    needed = [e.name for e in model.encodings]
    lacking = [n for n in needed if n not in names]
    if lacking and known:
        problems.add(*src.locate(("calibrated_qrels", "sources")), f"calibrated_qrels.sources: the model "
                     f"{cfg.model} needs source(s) {', '.join(lacking)}, which none of the given files has (given: "
                     f"{', '.join(sorted(names)) or 'none'}; the model was fitted with {', '.join(needed)})",
                     "add each missing source (a qrels file named <source>.qrel, or the grades of grader <source>), "
                     "or use a model fitted on these sources")
    _check_present(model, present, names, problems, src.locate(("calibrated_qrels", "sources")))


def _count_threshold(model: CalibratedQrelsModel | None, cfg: Any) -> int:
    if model is not None:
        return int(model.info.get("settings", {}).get("count_threshold", cfg.count_threshold))
    return int(cfg.count_threshold)


def _check_present(model: CalibratedQrelsModel, present: list[SourceData], names: list[str],
                   problems: Problems, at: tuple[str, int | None]) -> None:
    """The source files already there against the model: labels it saw, the same features."""
    from autograde.calibrated.features import check_against

    used = {s.name for s in present}
    encodings = [e for e in model.encodings if e.name in used]
    sources = [s for s in present if s.name in {e.name for e in encodings}]
    keys = sorted({k for s in sources for k in s.labels})
    check_against(sources, encodings, keys, problems, names, at)
