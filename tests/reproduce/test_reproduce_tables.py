"""Each reproduced number is computed by the tool from the reference files (changing an input file changes it),
and is compared with the value the paper YAML holds (never a number written into this test)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.helpers import REPO, shared_data

from autograde.reproduce.compare import DIFFERS, NOT_COMPUTED, SAME, compare_paper
from autograde.reproduce.measured import Measurement
from autograde.reproduce.papers import PaperTable, load_paper
from autograde.reproduce.stages import run_table

PAPERS = REPO / "config" / "reproduce" / "papers"


def paper_table(file: str, table_id: str) -> PaperTable:
    return next(t for t in load_paper(PAPERS / file).tables if t.id == table_id)


def outcomes(file: str, table_id: str, measurement: Measurement) -> dict[tuple[str, str], str]:
    paper = load_paper(PAPERS / file)
    one = paper.model_copy(update={"tables": [t for t in paper.tables if t.id == table_id]})
    cmp = compare_paper(one, {measurement.table: measurement})[0]
    return {(c.row, c.column): c.outcome for c in cmp.cells}


def test_spurious_counts_match_the_paper_and_follow_the_grid(plan_factory, tmp_path: Path) -> None:
    grid = shared_data("dl20-rocknroll-grid", "grid-full.jsonl")
    m = run_table(plan_factory(workbench_spurious={"grid": str(grid)}), "workbench_spurious")
    assert m.status == "ok" and m.inputs == {str(grid): m.inputs[str(grid)]}
    assert set(outcomes("dietz-sigir2024.yaml", "workbench-spurious", m).values()) == {SAME}
    # lower one high grade of the worst question on a passage judged 0: its count drops by one, the row differs
    top = paper_table("dietz-sigir2024.yaml", "workbench-spurious").rows[0]
    lines = grid.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        obj = json.loads(line)
        if obj["question_text"] == top.row and obj["judgment"] == 0 and obj["flan_t5_large_rating"] >= 4:
            lines[i] = json.dumps({**obj, "flan_t5_large_rating": 0})
            break
    edited = tmp_path / "grid.jsonl"
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    m2 = run_table(plan_factory(workbench_spurious={"grid": str(edited)}), "workbench_spurious")
    assert m2.value(top.row, "count").value == m.value(top.row, "count").value - 1
    assert outcomes("dietz-sigir2024.yaml", "workbench-spurious", m2)[(top.row, "frequency")] == DIFFERS


def test_table5_from_the_released_qrels(plan_factory, tmp_path: Path) -> None:
    judgments = shared_data("dl20", "qrels.dl20-passage.txt")
    question = shared_data("dl20", "autograded-qrels", "QuestionSelfRatedUnanswerablePromptWithChoices.qrel")
    nugget = shared_data("dl20", "autograded-qrels", "NuggetSelfRatedPrompt.qrel")
    settings = {"judgments": str(judgments), "sources": {"Question": str(question), "Nugget": str(nugget)}}
    m = run_table(plan_factory(workbench_agreement=settings), "workbench_agreement")
    assert m.status == "ok"
    table = paper_table("dietz-sigir2024.yaml", "workbench-table5")
    # the judged side agrees exactly with the paper: each label's column sums are the paper's column sums
    for label in ("Question", "Nugget"):
        for col, key in (("Judgments 2–3", "judged_relevant"), ("Judgments 0–1", "judged_nonrelevant")):
            paper = sum(r.values[col] for r in table.rows if r.row.startswith(label))
            ours = sum(v.value for v in m.values if v.row.startswith(f"{label} ") and v.column == key)
            assert ours == paper, (label, col)
    got = outcomes("dietz-sigir2024.yaml", "workbench-table5", m)
    assert got and set(got.values()) == {DIFFERS}  # the released grades are not the paper's (docs/reports.md)
    # relabel one judged-0 passage as highly relevant: the counts move
    lines = judgments.read_text(encoding="utf-8").splitlines()
    i = next(i for i, line in enumerate(lines) if line.split()[3] == "0")
    q, it, d, _ = lines[i].split()
    lines[i] = f"{q} {it} {d} 3"
    edited = tmp_path / "qrels.txt"
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    m2 = run_table(plan_factory(workbench_agreement={**settings, "judgments": str(edited)}), "workbench_agreement")
    rel = [(v.row, v.value) for v in m.values if v.column == "judged_relevant"]
    rel2 = [(v.row, v.value) for v in m2.values if v.column == "judged_relevant"]
    assert rel != rel2 and sum(x for _, x in rel2) == sum(x for _, x in rel) + 2  # one more per source


def test_trec_eval_parity_every_value_and_a_changed_golden_file(plan_factory, tmp_path: Path) -> None:
    folder = shared_data("trec_eval")
    m = run_table(plan_factory(trec_eval_parity={"folder": str(folder)}), "trec_eval_parity")
    assert m.status == "ok"
    counts = [v for v in m.values if v.column == "values equal at 4 decimals"]
    assert len(counts) == 3 and all(v.value == v.reference and v.value > 90 for v in counts)
    assert set(outcomes("trec-eval.yaml", "trec-eval-parity", m).values()) == {SAME}
    # a copy of the folder whose golden map summary is off by one unit: that value (and the count) differ
    copy = tmp_path / "trec_eval"
    copy.mkdir()
    for f in folder.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    lines = (copy / "out.test.aq").read_text(encoding="utf-8").splitlines()
    i = next(i for i, line in enumerate(lines) if line.split("\t")[0].strip() == "map" and
             line.split("\t")[1].strip() == "all")
    value = float(lines[i].split("\t")[2])
    lines[i] = lines[i].rsplit("\t", 1)[0] + f"\t{value + 0.0001:.4f}"
    (copy / "out.test.aq").write_text("\n".join(lines) + "\n", encoding="utf-8")
    m2 = run_table(plan_factory(trec_eval_parity={"folder": str(copy)}), "trec_eval_parity")
    first = m2.value("trec_eval -q", "values equal at 4 decimals")
    assert first is not None and first.value == first.reference - 1
    assert outcomes("trec-eval.yaml", "trec-eval-parity", m2)[("trec_eval -q", "map")] == DIFFERS


def test_evaluation_server_parity_and_a_changed_run(plan_factory, tmp_path: Path) -> None:
    folder = shared_data("ultrarag")
    settings = {"qrels": str(folder / "qrels.txt"), "runs": [str(folder / "run_a.txt"), str(folder / "run_b.txt")],
                "permutation_resamples": 2000}
    plan = plan_factory(evaluation_server_parity=settings)
    cases = load_paper(PAPERS / "evaluation-server.yaml")
    gen = next(t for t in cases.tables if t.id == "server-generation")
    from autograde.reproduce.config import load_plan

    plan_cases = load_plan(PAPERS.parent / "reproduce.yaml").tables.evaluation_server_parity.cases  # type: ignore[union-attr]
    plan = plan_factory(evaluation_server_parity={**settings, "cases": [c.model_dump() for c in plan_cases]})
    m = run_table(plan, "evaluation_server_parity")
    assert m.status == "ok"
    for tid in ("server-retrieval", "server-significance", "server-generation"):
        got = outcomes("evaluation-server.yaml", tid, m)
        assert got and set(got.values()) == {SAME}, (tid, got)
    assert len(outcomes("evaluation-server.yaml", "server-generation", m)) == sum(len(r.values) for r in gen.rows)
    # drop the first ranked line of run A: our map of run A changes
    run_a = (folder / "run_a.txt").read_text(encoding="utf-8").splitlines()
    (tmp_path / "run_a.txt").write_text("\n".join(run_a[1:]) + "\n", encoding="utf-8")
    m2 = run_table(plan_factory(evaluation_server_parity={**settings, "runs": [str(tmp_path / "run_a.txt")]}),
                   "evaluation_server_parity")
    name = m.rows()[0]
    assert m2.value(name, "map").value != m.value(name, "map").value  # type: ignore[union-attr]


FAST_NETWORK = {"members": 1, "pretrain_epochs": 4, "finetune_epochs": 4, "hidden1": 8, "hidden2": 8}


def _synthetic_settings(human: Path | None = None) -> dict:
    folder = shared_data("llm-rubric", "synthetic")
    return {"llm": str(folder / "gpt-3.5-turbo-16k_synth_evaluations_FIXED.tsv"),
            "human": str(human or folder / "human_judges_synth_all_FIXED_ANON.tsv"),
            "texts": str(folder / "synth_dialogue_ids.tsv"),
            "settings": {"network": FAST_NETWORK,
                         "evaluation": {"folds": 3, "seeds": [0, 1], "permutation_resamples": 100}}}


@pytest.mark.model
@pytest.mark.slow
def test_llm_rubric_rows_are_read_by_system_name(plan_factory, tmp_path: Path) -> None:
    m = run_table(plan_factory(llm_rubric_synthetic=_synthetic_settings()), "llm_rubric_synthetic")
    assert m.status == "ok" and {"network", "llm_expected", "llm_argmax"} <= set(m.rows())
    assert all(v.n == 2 and v.sd is not None for v in m.values)  # mean +- sd over the two seeds
    report = json.loads((tmp_path / "results/reproduction/tables/llm_rubric_synthetic/evaluation.json").read_text())
    assert set(m.rows()) == set(report["systems"])
    table = paper_table("llm-rubric-acl2024.yaml", "llm-rubric-table1-synthetic")
    got = outcomes("llm-rubric-acl2024.yaml", "llm-rubric-table1-synthetic", m)
    for r in table.rows:  # a paper row is compared exactly when the tool reports one of its systems
        computed = any(n in report["systems"] for n in r.names())
        assert all((got[(r.row, c)] != NOT_COMPUTED) == computed for c in r.values), r.row
    # change the judges' Q0 answers: the LLM baselines' correlation with them changes
    human = Path(_synthetic_settings()["human"])
    lines = human.read_text(encoding="utf-8").splitlines()
    col = lines[0].split("\t").index("Q0")
    flipped = [lines[0]] + ["\t".join(c if j != col or c in ("0", "") else str(5 - int(c))
                                      for j, c in enumerate(line.split("\t"))) for line in lines[1:]]
    (tmp_path / "human.tsv").write_text("\n".join(flipped) + "\n", encoding="utf-8")
    plan2 = plan_factory(llm_rubric_synthetic=_synthetic_settings(tmp_path / "human.tsv"))
    m2 = run_table(plan2, "llm_rubric_synthetic")
    before, after = m.value("llm_expected", "pearson"), m2.value("llm_expected", "pearson")
    assert before is not None and after is not None and after.value == pytest.approx(-before.value)


@pytest.mark.slow
def test_llm_rubric_transfer_to_other_dialogues(plan_factory) -> None:
    """The right side's path (train on all synthetic dialogues, predict other judges), here on the synthetic files
    themselves since the real ones are not in ../shared/data."""
    s = _synthetic_settings()
    plan = plan_factory(llm_rubric_synthetic=s, llm_rubric_real={"llm": s["llm"], "human": s["human"],
                                                                 "texts": s["texts"], "seeds": [0, 1]})
    m = run_table(plan, "llm_rubric_real")
    assert m.status == "ok" and {"network", "constant", "llm_expected"} <= set(m.rows())
    net = m.value("network", "pearson")
    assert net is not None and net.n == 2 and -1 <= net.value <= 1


@pytest.mark.model
@pytest.mark.slow
def test_calibrated_qrels_kappa_is_computed_per_seed(plan_factory, tmp_path: Path) -> None:
    judgments = shared_data("dl20", "qrels.dl20-passage.txt")
    sources = [str(shared_data("dl20", "autograded-qrels", f"{p}.qrel")) for p in ("FagB", "Sun")]
    settings = {"judgments": str(judgments), "sources": sources, "seeds": [0, 1],
                "settings": {"estimators": ["logistic"], "logistic_c": [1.0]}}  # the fast estimator: the table's plumbing
    m = run_table(plan_factory(calibrated_qrels_dl20=settings), "calibrated_qrels_dl20")
    assert m.status == "ok" and len(m.values) == 4 and all(v.n == 2 for v in m.values)
    got = outcomes("calibrated-qrels.yaml", "calibrated-qrels-dl20", m)
    assert len(got) == 4 and set(got.values()) == {"ours only"}  # no paper prints these
    # every judgment flipped to the other side of the relevance level: the single prompts' kappa changes sign
    lines = [line.split() for line in judgments.read_text(encoding="utf-8").splitlines()]
    (tmp_path / "flipped.txt").write_text("".join(f"{q} {i} {d} {3 - int(r)}\n" for q, i, d, r in lines),
                                          encoding="utf-8")
    m2 = run_table(plan_factory(calibrated_qrels_dl20={**settings, "judgments": str(tmp_path / "flipped.txt")}),
                   "calibrated_qrels_dl20")
    row = "best single prompt chosen on the training folds"
    assert m2.value(row, "kappa").value != m.value(row, "kappa").value  # type: ignore[union-attr]


def test_a_malformed_golden_value_is_an_error_naming_its_line(tmp_path: Path) -> None:
    """A golden file with a value that is no number is a file:line error (it used to show as one differing value)."""
    from autograde.core.errors import InputError
    from autograde.reproduce.parity import read_golden

    golden = tmp_path / "out.test.aq"
    golden.write_text("runid                 \tall\tSTANDARD\nnum_q                 \tall\t3\n"
                      "map                   \tall\t0.2x\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_golden(golden)
    assert f"{golden}:3: value '0.2x' of map for query 'all' is not a number" in str(err.value)
