"""The comparison: paper values read from the paper YAML, rows matched by name, missing inputs and refused inputs
reported per table without failing the others, the index (Markdown, JSON, HTML page), the plan's validation."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from support.helpers import REPO

from autograde.core.errors import ConfigError
from autograde.reproduce.compare import DIFFERS, NOT_COMPUTED, SAME, compare_paper
from autograde.reproduce.config import ReproduceConfig, load_plan
from autograde.reproduce.measured import Measurement, Value, read_measurement, write_measurement
from autograde.reproduce.papers import PaperFile, load_paper
from autograde.reproduce.stages import build_reproduction_index, measured_path, run_table

PAPERS = REPO / "config" / "reproduce" / "papers"

CASES = [{"name": "capital sentence", "golds": ["Paris"], "prediction": "The capital is Paris."},
         {"name": "U.S.", "golds": ["U.S."], "prediction": "u s"}]


def _as_measured(paper: PaperFile, table_id: str) -> Measurement:
    """A measurement holding exactly the paper's values under the tool's names."""
    t = next(t for t in paper.tables if t.id == table_id)
    values = [Value(r.names()[0], t.columns[c], v) for r in t.rows for c, v in r.values.items() if v is not None]
    return Measurement(t.measured or "", values=values)


def test_paper_values_are_read_from_the_yaml(tmp_path: Path) -> None:
    paper = load_paper(PAPERS / "dietz-sigir2024.yaml")
    m = _as_measured(paper, "workbench-spurious")
    cells = compare_paper(paper, {m.table: m})[0].cells
    assert cells and {c.outcome for c in cells} == {SAME}
    # the same measurement against an edited copy of the YAML: the paper column follows the file
    raw = yaml.safe_load((PAPERS / "dietz-sigir2024.yaml").read_text(encoding="utf-8"))
    first = raw["tables"][0]["rows"][0]
    first["values"]["frequency"] += 7
    edited = tmp_path / "paper.yaml"
    edited.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    cell = compare_paper(load_paper(edited), {m.table: m})[0].cells[0]
    assert (cell.row, cell.paper, cell.outcome, cell.difference) == (first["row"], first["values"]["frequency"],
                                                                     DIFFERS, -7)
    assert cell.why == raw["tables"][0]["why"]


def _paper_numbers() -> set[str]:
    out = set()
    for p in PAPERS.glob("*.yaml"):
        for t in load_paper(p).tables:
            for r in t.rows:
                out |= {f"{v:.{t.digits_of(c)}f}" for c, v in r.values.items()
                        if v is not None and len(f"{abs(v):.{t.digits_of(c)}f}".replace(".", "").lstrip("0")) >= 3}
    return out


def test_no_paper_value_is_written_into_the_code() -> None:
    numbers = _paper_numbers()
    assert {"116", "0.401", "2377"} <= numbers  # the walk sees the papers' values
    code = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "src" / "autograde" / "reproduce").glob("*.py"))
    found = sorted(n for n in numbers if re.search(rf"(?<![\d.]){re.escape(n)}(?![\d])", code))
    assert not found, f"paper values belong in config/reproduce/papers/*.yaml, not in the code: {found}"


def test_rows_the_tool_does_not_compute_say_so_and_appear_when_computed() -> None:
    paper = load_paper(PAPERS / "llm-rubric-acl2024.yaml")
    values = [Value(s, m, 0.5, 0.01, 10) for s in ("network", "llm_expected") for m in ("rmse", "pearson")]
    m = Measurement("llm_rubric_synthetic", values=values)
    table = compare_paper(paper, {m.table: m})[0]
    by_row = {(c.row, c.column): c for c in table.cells}
    assert by_row[("1 Random Eval", "RMSE")].outcome == NOT_COMPUTED
    assert by_row[("6 LLM-RUBRIC", "RMSE")].measured_row == "network"
    assert by_row[("6 LLM-RUBRIC", "Spearman's ρ")].outcome == NOT_COMPUTED  # the tool did not measure that column
    assert by_row[("3 Expected LLM Q0", "Pearson's ρ")].sd == 0.01
    # a newer rubric stage that reports a system named like the paper row fills it, without a code change
    m.values.append(Value("random", "rmse", 1.5, 0.02, 10))
    cell = {(c.row, c.column): c for c in compare_paper(paper, {m.table: m})[0].cells}[("1 Random Eval", "RMSE")]
    assert cell.outcome in (SAME, DIFFERS) and cell.ours == 1.5


def _tiny_server_files(tmp_path: Path) -> dict:
    (tmp_path / "q.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("1 Q0 a 1 2.0 s\n1 Q0 b 2 1.0 s\n2 Q0 d 1 1.0 s\n2 Q0 c 2 0.5 s\n",
                                    encoding="utf-8")
    return {"qrels": str(tmp_path / "q.txt"), "runs": [str(tmp_path / "r.txt")], "cases": CASES}


def test_a_missing_input_is_named_with_its_source_and_the_other_tables_still_build(plan_factory,
                                                                                     tmp_path: Path) -> None:
    absent = tmp_path / "absent"
    plan = plan_factory(["llm-rubric-acl2024.yaml", "evaluation-server.yaml"],
                        llm_rubric_synthetic={"llm": str(absent / "s.tsv"), "human": str(absent / "h.tsv"),
                                              "texts": None},
                        llm_rubric_real={"llm": str(absent / "real.tsv"), "human": str(absent / "human.tsv")},
                        evaluation_server_parity=_tiny_server_files(tmp_path))
    for name in plan.table_names():
        run_table(plan, name)
    real = read_measurement(measured_path(plan, "llm_rubric_real"))
    assert real.status == "input missing" and real.values == []
    assert f"input missing: the real dialogues' judges' answers ({absent / 'human.tsv'}), from microsoft/LLM-Rubric" \
        in real.message
    doc = build_reproduction_index(plan, "test plan")
    states = {t["id"]: t["state"] for t in doc["tables"]}
    assert states["llm-rubric-table1-real"].startswith("input missing: ")
    assert states["server-generation"] == "ok"
    gen = next(t for t in doc["tables"] if t["id"] == "server-generation")
    ours = [c["outcome"] for c in gen["cells"] if c["row"] in {case["name"] for case in CASES}]
    assert ours == [SAME] * 16  # two cases x 8 metrics; the paper file's other cases are not in this plan
    assert {c["outcome"] for c in gen["cells"] if c["row"] not in {case["name"] for case in CASES}} == {NOT_COMPUTED}
    index = (tmp_path / "results/reproduction/index.md").read_text(encoding="utf-8")
    assert "**input missing: " in index and "| capital sentence | F1 | 0.500 | 0.500 | +0.0000 | same |  |" in index


def test_refused_input_is_an_error_of_that_table_only(plan_factory, tmp_path: Path) -> None:
    files = _tiny_server_files(tmp_path)
    (tmp_path / "r.txt").write_text("1 Q0 a 1 high s\n", encoding="utf-8")
    plan = plan_factory(["evaluation-server.yaml"], evaluation_server_parity=files)
    m = run_table(plan, "evaluation_server_parity")
    assert m.status == "error" and f"{tmp_path / 'r.txt'}:1: score 'high' is not a number" in m.message
    doc = build_reproduction_index(plan, "test plan")
    assert all(t["state"].startswith("error: ") for t in doc["tables"])


def test_index_json_and_html_page(plan_factory, tmp_path: Path) -> None:
    from autograde.reports.linkcheck import broken_links

    plan = plan_factory(["evaluation-server.yaml", "dietz-sigir2024.yaml"],
                        evaluation_server_parity=_tiny_server_files(tmp_path))
    run_table(plan, "evaluation_server_parity")
    doc = build_reproduction_index(plan, "test plan")
    out = tmp_path / "results/reproduction"
    assert json.loads((out / "index.json").read_text(encoding="utf-8")) == doc
    html = (out / "index.html").read_text(encoding="utf-8")
    assert broken_links(out) == []
    for t in doc["tables"]:
        assert f'id="{t["id"]}"' in html and f'href="#{t["id"]}"' in html
    assert "not reproducible from public data" in html and "NIST" in html  # Table 4's why
    built = {t["id"]: t["state"] for t in doc["tables"]}
    assert built["workbench-table5"].startswith("not built: ")  # switched off in this plan


def test_the_repository_plan_and_papers_are_valid_and_consistent() -> None:
    plan = load_plan(REPO / "config" / "reproduce" / "reproduce.yaml")
    assert plan.table_names() == list(type(plan.tables).model_fields)
    used = set()
    for p in plan.papers:
        for t in load_paper(REPO / p).tables:
            assert t.measured is None or t.measured in plan.table_names(), (p, t.id)
            used.add(t.measured)
    assert used - {None} == set(plan.table_names())  # every table is compared with some paper


def test_plan_and_paper_errors_name_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "plan.yaml"
    bad.write_text("papers: []\ntables:\n  workbench_spurious:\n    treshold: 4\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{re.escape(str(bad))}:4: tables.workbench_spurious.treshold"):
        load_plan(bad)
    bad.write_text("papers: []\ntables:\n  llm_rubric_synthetic:\n    settings: {evaluation: {folds: 1}}\n",
                   encoding="utf-8")
    with pytest.raises(ConfigError, match=r"settings.evaluation.folds"):
        load_plan(bad)
    paper = tmp_path / "paper.yaml"
    paper.write_text("paper: p\ntables:\n  - {id: t, table: T, title: x, measured: m, why: w, columns: {a: a},\n"
                     "     rows: [{row: r, values: {b: 1}}]}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"column\(s\) \['b'\] not listed in 'columns'"):
        load_paper(paper)


def test_every_setting_and_paper_field_is_described() -> None:
    from pydantic import BaseModel

    import autograde.reproduce.config as c
    import autograde.reproduce.papers as p

    models = [m for mod in (c, p) for m in vars(mod).values()
              if isinstance(m, type) and issubclass(m, BaseModel) and m.__module__ == mod.__name__]
    assert ReproduceConfig in models and PaperFile in models
    missing = [f"{m.__name__}.{n}" for m in models for n, f in m.model_fields.items() if not f.description]
    assert not missing
    assert all(m.model_config.get("extra") == "forbid" for m in models)


def test_cli_runs_the_plan(plan_factory, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from autograde.cli import main

    plan = plan_factory(["evaluation-server.yaml"], evaluation_server_parity=_tiny_server_files(tmp_path))
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(plan.model_dump(mode="json"), allow_unicode=True), encoding="utf-8")
    assert main(["reproduce", "run", "--plan", str(path)]) == 0
    assert "Generation metrics: ok (same 16, differ 0, ours only 0, not computed 48)" in capsys.readouterr().out
    m = read_measurement(tmp_path / "results/reproduction/tables/evaluation_server_parity/measured.json")
    write_measurement(tmp_path / "copy.json", m)
    assert read_measurement(tmp_path / "copy.json") == m
    assert main(["reproduce", "run", "--plan", str(tmp_path / "nope.yaml")]) == 2
