"""The reproduction over files: measure one table, build the index (the rules, the CLI and the tests call these).

>>> from autograde.reproduce.config import ReproduceConfig
>>> plan = ReproduceConfig.model_validate({"papers": [], "results_dir": "out"})
>>> reproduction_files(plan)["index"], measured_path(plan, "trec_eval_parity")
('out/reproduction/index.md', 'out/reproduction/tables/trec_eval_parity/measured.json')

A table whose input file is absent writes a measurement with status ``input missing`` that names the file
and where it comes from; a table whose inputs the tool refuses writes status ``error`` with the message.
Either way the other tables and the index are still built.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograde.core.errors import AutogradeError
from autograde.core.layout import Layout
from autograde.core.log import logger
from autograde.reproduce.config import InputFile, ReproduceConfig, RubricSyntheticSettings, TableSettings
from autograde.reproduce.measured import Measurement, read_measurement, write_measurement

__all__ = ["TABLES", "build_reproduction_index", "measured_path", "reproduction_files", "run_table", "table_inputs",
           "table_params"]


def _spurious(s: Any, plan: ReproduceConfig, out: Path) -> Measurement:
    from autograde.reproduce.workbench import measure_spurious

    return measure_spurious(s)


def _agreement(s: Any, plan: ReproduceConfig, out: Path) -> Measurement:
    from autograde.reproduce.workbench import measure_agreement

    return measure_agreement(s)


def _synthetic(s: Any, plan: ReproduceConfig, out: Path) -> Measurement:
    from autograde.reproduce.rubric_tables import measure_rubric_synthetic

    return measure_rubric_synthetic(s, out)


def _real(s: Any, plan: ReproduceConfig, out: Path) -> Measurement:
    from autograde.reproduce.rubric_tables import measure_rubric_real

    return measure_rubric_real(s, _training(plan), out)


def _calibrated(s: Any, plan: ReproduceConfig, out: Path) -> Measurement:
    from autograde.reproduce.rubric_tables import measure_calibrated

    return measure_calibrated(s, out)


def _trec_eval(s: Any, plan: ReproduceConfig, out: Path) -> Measurement:
    from autograde.reproduce.parity import measure_trec_eval

    return measure_trec_eval(s)


def _server(s: Any, plan: ReproduceConfig, out: Path) -> Measurement:
    from autograde.reproduce.parity import measure_server

    return measure_server(s)


TABLES: dict[str, Callable[[Any, ReproduceConfig, Path], Measurement]] = {
    "workbench_spurious": _spurious,
    "workbench_agreement": _agreement,
    "llm_rubric_synthetic": _synthetic,
    "llm_rubric_real": _real,
    "calibrated_qrels_dl20": _calibrated,
    "trec_eval_parity": _trec_eval,
    "evaluation_server_parity": _server,
}
"""Plan table name -> its measurement (settings, plan, output folder) -> :class:`Measurement`."""


def _training(plan: ReproduceConfig) -> RubricSyntheticSettings:
    """The synthetic-dialogue settings the real-dialogue table trains with (the plan's, else the defaults)."""
    return plan.tables.llm_rubric_synthetic or RubricSyntheticSettings()


def table_inputs(plan: ReproduceConfig, name: str) -> list[InputFile]:
    """Every input file of one table (the real-dialogue table also reads the synthetic training data)."""
    files = plan.table(name).inputs()
    if name == "llm_rubric_real":
        files = _training(plan).inputs() + files
    return files


def table_params(plan: ReproduceConfig, name: str) -> str:
    """The table's settings as canonical JSON (a rule param: editing them reruns exactly that table)."""
    settings: TableSettings = plan.table(name)
    doc = {"table": name, "settings": settings.model_dump(mode="json")}
    if name == "llm_rubric_real":
        doc["training"] = _training(plan).model_dump(mode="json")
    return json.dumps(doc, sort_keys=True)


def measured_path(plan: ReproduceConfig, name: str) -> str:
    """Where one table's measurement goes."""
    return Layout.of(plan.results_dir).reproduction_table(name)


def reproduction_files(plan: ReproduceConfig) -> dict[str, str]:
    """The index files: Markdown, JSON and the HTML page."""
    lay = Layout.of(plan.results_dir)
    return {"index": lay.reproduction("index.md"), "json": lay.reproduction("index.json"),
            "html": lay.reproduction("index.html")}


def run_table(plan: ReproduceConfig, name: str, out: str | Path | None = None) -> Measurement:
    """Measure one table and write its ``measured.json`` (missing inputs and refused inputs are recorded)."""
    from autograde.core.ids import file_sha256

    out_path = Path(out or measured_path(plan, name))
    out_path.parent.mkdir(parents=True, exist_ok=True)
    settings = plan.table(name)
    files = table_inputs(plan, name)
    missing = [f for f in files if not Path(f.path).exists()]
    t0 = time.perf_counter()
    if missing:
        m = Measurement(name, "input missing", "; ".join(f.missing_message() for f in missing))
        logger.warning("%s: %s", name, m.message)
    else:
        try:
            m = TABLES[name](settings, plan, out_path.parent)
            m.inputs = {f.path: file_sha256(f.path) for f in files if Path(f.path).is_file()}
        except AutogradeError as exc:
            m = Measurement(name, "error", str(exc))
            logger.error("%s: %s", name, exc)
    m.table = name
    m.seconds = round(time.perf_counter() - t0, 2)
    write_measurement(out_path, m)
    logger.info("%s: %s, %d value(s) in %.1f s -> %s", name, m.status, len(m.values), m.seconds, out_path)
    return m


def _no_nan(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _no_nan(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_no_nan(v) for v in x]
    return x


def build_reproduction_index(plan: ReproduceConfig, plan_source: str, measured: dict[str, str | Path] | None = None,
                out_md: str | Path | None = None, out_json: str | Path | None = None,
                out_html: str | Path | None = None) -> dict[str, Any]:
    """Compare every paper YAML of the plan with the measurements; write the index (Markdown, JSON, HTML)."""
    from autograde.core.text import atomic_write_text
    from autograde.reproduce.compare import compare_paper, index_json, index_markdown
    from autograde.reproduce.papers import load_paper

    files = reproduction_files(plan)
    paths = measured or {n: measured_path(plan, n) for n in plan.table_names()}
    ms = {n: read_measurement(p) for n, p in paths.items() if Path(p).is_file()}
    tables = [t for paper in plan.papers for t in compare_paper(load_paper(paper), ms)]
    doc = _no_nan(index_json(tables, plan_source))
    atomic_write_text(out_md or files["index"], index_markdown(tables, plan_source))
    atomic_write_text(out_json or files["json"], json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    from autograde.reproduce.site import reproduction_page

    atomic_write_text(out_html or files["html"], reproduction_page(doc))
    logger.info("wrote %s (%d tables)", out_md or files["index"], len(tables))
    return doc
