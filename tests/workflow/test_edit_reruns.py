"""The workflow's promise, one test for every kind of edit: after editing one item, a rerun schedules exactly the
shard of the edited query and what is downstream of it (no ingest, no pool, no other shard), sends exactly
(the query's passages or answers) x 1 new pairs to the model, and then has nothing to do.

Every case starts from a finished run that other tests read too (built once per session, tests/conftest.py and
tests/workflow/conftest.py) and edits a copy of it:

- ``question``: a hand-made question bank;
- ``edited-bank``: the edited copy of a bank an LLM generated (``grade_with: edited``);
- ``nugget``: a nugget of the nugget bank (whole-answer assessment of RAG answers);
- ``reports``: a question of the bundled example, whose reports and review site are rebuilt from the merged grades.

The analysis after a grading edit is incremental too: the evaluation and cover jobs compute the edited query only
(their stats files count the queries computed and those read from the per-query cache), and the results equal a
from-scratch analysis of the edited state byte for byte.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from support.helpers import copy_run, job_stats, output, run_workflow

from autograde.pipeline.shards import shard_assignment

GRADING_DOWNSTREAM = {"merge_grades", "rubric_qrels", "evaluate", "leaderboards", "cover", "correlation", "all"}
REPORTS = {"reports", "report_correlation", "site"}
NUGGETS_DOWNSTREAM = {"merge_nuggets", "nugget_leaderboards", "nugget_importance", "merge_importance", "correlation", "all"}


def replace(path: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(wd: Path) -> None:
        f = wd / path
        assert old in f.read_text(encoding="utf-8"), f"{old!r} not in {f}"
        f.write_text(f.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")

    return edit


@dataclass(frozen=True)
class Edit:
    base: str
    """The session fixture of the finished run the case starts from."""
    edit: Callable[[Path], None]
    query: str
    """The query whose item is edited."""
    queries: tuple[str, ...]
    """Every query of the run, in the queries file's order (shards are assigned from them)."""
    job: str
    """The rule of the shard that must rerun (once)."""
    shard_stats: str
    """The stats file of that shard, ``{shard}`` for its name."""
    downstream: frozenset[str]
    """Rules that may rerun besides it."""
    must: frozenset[str] = frozenset()
    """Rules that must rerun (the reports of an edited grader, ...)."""
    per_item_pairs: str = "pool"
    """What one item is paired with: ``pool`` (the query's pooled passages) or ``answers`` (its distinct answers)."""
    grader: str | None = None
    """The grader of the edited bank (its evaluation and cover count the queries they computed)."""
    moves_labels: bool = False
    """The edit changes labels of the edited query in every qrels variant (so each evaluation computes exactly that
    query); otherwise the evaluations compute the queries whose labels moved, which may be none."""
    from_scratch: bool = False
    """Also compare every result with a from-scratch analysis of the edited state (no per-query cache, everything
    downstream of the merged grades forced)."""


CASES = {
    "question": Edit("mini_run", replace("data/questions.jsonl", "When do spring tides occur?",
                                         "Why does honey never spoil?"), "q2", ("q1", "q2", "q3"), "grade",
                     "results/grades/sim/shards/{shard}.stats.json", frozenset(GRADING_DOWNSTREAM), grader="sim",
                     moves_labels=True),
    "edited-bank": Edit("bank_run", replace("banks/questions.edited.jsonl", "When do spring tides occur?",
                                            "When exactly do spring tides occur?"), "q2",
                        tuple(f"q{i}" for i in range(1, 10)), "grade", "results/grades/sim/shards/{shard}.stats.json",
                        frozenset(GRADING_DOWNSTREAM), grader="sim"),
    "nugget": Edit("nuggets_run", replace("data/nuggets.jsonl", "Bees collect nectar from flowers",
                                          "Bees collect nectar from many flowers"), "q1", ("q1", "q2", "q3"),
                   "assign_nuggets", "results/nuggets/sim-assign/shards/{shard}.stats.json",
                   frozenset(NUGGETS_DOWNSTREAM | {"score_nuggets"}), frozenset({"score_nuggets", "merge_nuggets"}),
                   per_item_pairs="answers"),
    "reports": Edit("example_run", replace("data/bank/questions.jsonl", "What is the bloom when brewing coffee?",
                                           "What is the bloom when brewing French press coffee?"), "q105",
                    tuple(f"q10{i}" for i in range(1, 9)), "grade",
                    "results/grades/minilm-questions/shards/{shard}.stats.json",
                    frozenset(GRADING_DOWNSTREAM | REPORTS), frozenset(REPORTS), grader="minilm-questions",
                    from_scratch=True),
}


def pairs_of_one_item(wd: Path, case: Edit) -> int:
    if case.per_item_pairs == "pool":
        pool = pd.read_parquet(wd / "results/pool/pool.parquet")
        return int((pool["query_id"] == case.query).sum())
    answers = pd.read_parquet(wd / "results/nuggets/answers.parquet")
    return int(answers[answers["query_id"] == case.query]["text"].nunique())


@pytest.mark.workflow
@pytest.mark.slow
@pytest.mark.parametrize("name", list(CASES))
def test_editing_one_item_reruns_exactly_its_share(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    case = CASES[name]
    wd = copy_run(request.getfixturevalue(case.base), tmp_path / "run")
    shard = f"{shard_assignment(list(case.queries), 2)[case.query] + 1}-of-2"
    others = {p.name: p.stat().st_mtime_ns for p in (wd / case.shard_stats.format(shard=shard)).parent.iterdir()
              if not p.name.startswith(shard)}
    qrels_before = _qrels_by_variant(wd, case.grader)
    case.edit(wd)

    dry = run_workflow(wd, "-n")
    jobs = job_stats(dry)
    assert jobs.pop(case.job, None) == 1, output(dry)
    assert set(jobs) <= case.downstream and case.must <= set(jobs), jobs  # no ingest, no pool, no other shard
    assert set(re.findall(r"scatteritem=(\d+-of-2)", output(dry))) == {shard}

    run_workflow(wd, check=True)
    stats = json.loads((wd / case.shard_stats.format(shard=shard)).read_text())
    n = pairs_of_one_item(wd, case)
    assert stats["computed"] == n and stats["cached"] == stats["pairs"] - n  # the edited item's pairs, no more
    untouched = {p.name: p.stat().st_mtime_ns for p in (wd / case.shard_stats.format(shard=shard)).parent.iterdir()
                 if not p.name.startswith(shard)}
    assert untouched == others  # the other shard's files were not rewritten
    assert "Nothing to be done" in output(run_workflow(wd, "-n"))
    if case.grader:
        _check_analysis_is_incremental(wd, case, qrels_before)
    if name == "reports":
        items = pd.read_parquet(wd / "results/reports/minilm-questions/items.parquet")
        assert "What is the bloom when brewing French press coffee?" in set(items["text"])
        page = (wd / "results/site/minilm-questions/q/q105.html").read_text()
        assert "brewing French press coffee?" in page


def _qrels_by_variant(wd: Path, grader: str | None) -> dict[str, dict[str, dict[str, int]]]:
    """variant -> the grader's qrels (query -> passage -> label)."""
    from autograde.io.trec import read_qrels

    folder = wd / "results" / "qrels" / str(grader)
    return {p.stem: read_qrels(p) for p in sorted(folder.glob("*.qrels"))} if grader else {}


def _check_analysis_is_incremental(wd: Path, case: Edit, before: dict[str, dict[str, dict[str, int]]]) -> None:
    """Evaluation computed exactly the queries whose labels changed (the edited one at most), cover the edited query
    (its grades changed); with ``from_scratch``, a from-scratch analysis gives the same bytes."""
    after = _qrels_by_variant(wd, case.grader)
    for variant, qrels in after.items():
        changed = {q for q in set(qrels) | set(before[variant]) if qrels.get(q) != before[variant].get(q)}
        assert changed == {case.query} if case.moves_labels else changed <= {case.query}, (variant, changed)
        stats = json.loads((wd / "results" / "eval" / str(case.grader) / f"{variant}.stats.json").read_text())
        assert stats["computed"] == len(changed), (variant, stats)  # that query only, and only when its labels moved
        assert stats["cached"] == sum(1 for docs in qrels.values() if docs) - len(changed), (variant, stats)
    graded = pd.read_parquet(wd / "results" / "grades" / f"{case.grader}.parquet", columns=["query_id"])
    for path in (wd / "results" / "cover" / str(case.grader)).glob("*.stats.json"):
        stats = json.loads(path.read_text())
        assert (stats["computed"], stats["queries"]) == (1, graded["query_id"].nunique()), (path.name, stats)
    if case.from_scratch:
        incremental = _result_bytes(wd)
        shutil.rmtree(wd / "cache" / "analysis")
        # everything downstream of the merged grades (every stage with a per-query cache) from scratch; ingest, pool
        # and grading are upstream of the edit's analysis and would only read the same inputs again
        run_workflow(wd, "-R", "merge_grades", check=True)
        scratch = _result_bytes(wd)
        assert set(scratch) == set(incremental)
        assert [f for f in sorted(scratch) if scratch[f] != incremental[f]] == []
        stats = json.loads((wd / "results" / "eval" / str(case.grader) / "max-4.stats.json").read_text())
        assert stats["cached"] == 0 and stats["computed"] == stats["queries"]  # it was from scratch


def _result_bytes(wd: Path) -> dict[str, bytes]:
    """Every result file's bytes (stats files say how a result was made: cached or computed; they are left out), a
    metrics result document's without its ``timestamp`` (the time it was written; autograde.metrics.report: the
    rest is a function of the inputs)."""
    root = wd / "results"
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.name.endswith(".stats.json") and p.suffix != ".log":
            data = p.read_bytes()
            if p.parent.name == "metrics" and p.suffix == ".json":
                doc = json.loads(data)
                doc.pop("timestamp", None)
                data = json.dumps(doc, sort_keys=True).encode()
            out[p.relative_to(root).as_posix()] = data
    return out
