"""The TREC RAG track's nugget files: assignment JSONL (what the reference assigner writes) and the reference
scorer's output, read with every problem named by file and line, and written in the same shapes.

Assignment JSONL, one answer per line (``castorini/nuggetizer``'s ``scripts/assign_nuggets.py`` output)::

    {"query": "...", "qid": "q1", "answer_text": "...", "response_length": 42, "run_id": "run-a",
     "nuggets": [{"text": "...", "importance": "vital", "assignment": "support"}, ...]}

Reference scorer output (``scripts/calculate_metrics.py``), one line per answer in the input's order, then the
mean under ``"qid": "all"``::

    {"qid": "q1", "strict_vital_score": 0.5, "strict_all_score": 0.5, "vital_score": 0.75, "all_score": 0.625}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from autograde.core.errors import Problems
from autograde.core.ids import item_id
from autograde.core.text import atomic_write_text, iter_json_objects
from autograde.grading.nugget_labels import ASSIGNMENT_LABELS, IMPORTANCE_LABELS
from autograde.metrics.nuggets import ALL_QUERIES, MEASURES, REFERENCE_MEASURES, answer_scores, evaluation_table

ASSIGNMENT_FIX = ('one JSON object per line: {"qid", "run_id", "answer_text", "nuggets": [{"text", "importance", '
                  '"assignment"}]} (the TREC RAG assignment format)')


@dataclass
class AssignedAnswer:
    """One answer with its nuggets' labels, as in one line of an assignment file."""

    run: str
    query_id: str
    answer_text: str
    nuggets: list[tuple[str, str, str]] = field(default_factory=list)
    """(nugget text, importance, assignment) in the file's order."""
    query: str = ""
    line: int | None = None

    def labels(self) -> list[tuple[str, str]]:
        return [(imp, a) for _, imp, a in self.nuggets]


def _nugget_problem(n: Any, j: int) -> str | None:
    if not isinstance(n, dict):
        return f"nugget {j} is not an object {{text, importance, assignment}}"
    if not isinstance(n.get("text"), str) or not n["text"].strip():
        return f"nugget {j} has no text"
    if n.get("importance") not in IMPORTANCE_LABELS:
        return (f"nugget {j} ({n['text'][:50]!r}) has importance {n.get('importance')!r}; valid: "
                f"{', '.join(IMPORTANCE_LABELS)}")
    if n.get("assignment") not in ASSIGNMENT_LABELS:
        return (f"nugget {j} ({n['text'][:50]!r}) has assignment {n.get('assignment')!r}; valid: "
                f"{', '.join(ASSIGNMENT_LABELS)}")
    return None


def read_assignments(path: str | Path, problems: Problems | None = None, *, nuggets: dict[str, set[str]] | None = None,
                     queries: set[str] | None = None) -> list[AssignedAnswer]:
    """Read an assignment JSONL file; every problem is reported with its line.

    ``queries`` (known query ids) and ``nuggets`` (query id -> known nugget item ids, ``query_id/md5(text)``) make
    a line naming another query, or a nugget not in the bank for its query, a problem too. A line without
    ``run_id`` takes the file's stem (as the reference assigner names runs).
    """
    own = problems is None
    probs = problems if problems is not None else Problems()
    p = str(path)
    out: list[AssignedAnswer] = []
    seen: dict[tuple[str, str], int] = {}
    known_queries = set(queries or ()) | set(nuggets or ())
    for n, rec in iter_json_objects(p, probs, ASSIGNMENT_FIX):
        qid, items = rec.get("qid"), rec.get("nuggets")
        if not isinstance(qid, str | int) or isinstance(qid, bool) or not isinstance(items, list):
            probs.add(p, n, "the line needs 'qid' (a string) and 'nuggets' (a list)", ASSIGNMENT_FIX)
            continue
        qid = str(qid)
        run = str(rec.get("run_id") or Path(p).name.split(".")[0])
        text = rec.get("answer_text")
        if not isinstance(text, str) or not text.strip():
            probs.add(p, n, f"the answer of run {run!r} to query {qid!r} has no text ('answer_text' is missing or "
                      "empty)", "give the answer's text in 'answer_text', or remove the line")
            continue
        if known_queries and qid not in known_queries:
            probs.add(p, n, f"query {qid!r} is not a known query", "fix the qid, or add the query (and its nuggets)")
            continue
        if (run, qid) in seen:
            probs.add(p, n, f"second answer of run {run!r} to query {qid!r} (first on line {seen[(run, qid)]})",
                      "keep one answer per run and query")
            continue
        seen[(run, qid)] = n
        answer = AssignedAnswer(run, qid, text, query=str(rec.get("query") or ""), line=n)
        bad = False
        for j, nug in enumerate(items):
            problem = _nugget_problem(nug, j)
            if problem is None and nuggets is not None and item_id(qid, nug["text"]) not in nuggets.get(qid, set()):
                problem = f"nugget {j} ({nug['text'][:50]!r}) is not a nugget of query {qid!r} in the bank"
            if problem:
                probs.add(p, n, problem, "use vital/okay and support/partial_support/not_support, and the bank's "
                          "nugget texts")
                bad = True
                continue
            answer.nuggets.append((nug["text"].strip(), nug["importance"], nug["assignment"]))
        if not bad:
            out.append(answer)
    if own:
        probs.raise_if_any()
    return out


def assignment_line(answer: AssignedAnswer) -> str:
    """One answer as a line of the TREC RAG assignment format."""
    rec = {"query": answer.query, "qid": answer.query_id, "answer_text": answer.answer_text,
           "response_length": len(answer.answer_text.split()), "run_id": answer.run,
           "nuggets": [{"text": t, "importance": i, "assignment": a} for t, i, a in answer.nuggets]}
    return json.dumps(rec, ensure_ascii=False) + "\n"


def write_assignments(path: str | Path, answers: list[AssignedAnswer]) -> None:
    """Write answers in the TREC RAG assignment format (atomically; ``.gz`` compressed if the name says so)."""
    atomic_write_text(path, "".join(assignment_line(a) for a in answers))


def reference_lines(answers: list[AssignedAnswer], weighted: bool = False) -> list[str]:
    """The reference scorer's output for ``answers`` (one run): one line per answer, then the ``all`` line.

    ``weighted`` adds ``strict_weighted_score`` and ``weighted_score`` (not written by the reference scorer)."""
    names = [*REFERENCE_MEASURES, *(("strict_weighted_score", "weighted_score") if weighted else ())]
    measures = [m for name in names for m in MEASURES if m.name == name]
    table = evaluation_table([("run", a.query_id, a.labels()) for a in answers], measures)
    lines = []
    for a in answers:
        s = answer_scores(a.labels(), measures)
        lines.append(json.dumps({"qid": a.query_id, **{k: s[k] for k in names}}) + "\n")
    means = table[table["query_id"] == ALL_QUERIES].set_index("measure")["value"]
    lines.append(json.dumps({"qid": ALL_QUERIES, **{k: float(means[k]) for k in names}}) + "\n")
    return lines


def read_reference_scores(path: str | Path, problems: Problems | None = None) -> pd.DataFrame:
    """The reference scorer's output as (line, query_id, measure, value); its ``all`` line has query ``all``."""
    own = problems is None
    probs = problems if problems is not None else Problems()
    rows = []
    for n, rec in iter_json_objects(path, probs, 'one JSON object per line: {"qid", "strict_vital_score", ...}'):
        if "qid" not in rec:
            probs.add(path, n, "the line has no 'qid'", "this is not the reference scorer's output")
            continue
        for k, v in rec.items():
            if k == "qid":
                continue
            if not isinstance(v, int | float) or isinstance(v, bool):
                probs.add(path, n, f"{k} is {v!r}, not a number", "this is not the reference scorer's output")
                continue
            rows.append((n, str(rec["qid"]), k, float(v)))
    if own:
        probs.raise_if_any()
    return pd.DataFrame(rows, columns=["line", "query_id", "measure", "value"])


def compare_scores(ours: pd.DataFrame, theirs: pd.DataFrame) -> dict[str, Any]:
    """Line-by-line comparison of two reference-format score tables (see :func:`read_reference_scores`): the
    largest absolute difference per measure, and lines or measures present on one side only."""
    key = ["line", "query_id", "measure"]
    m = ours.merge(theirs, on=key, how="outer", suffixes=("_ours", "_theirs"), indicator=True)
    both = m[m["_merge"] == "both"]
    diff = (both["value_ours"] - both["value_theirs"]).abs()
    per = {str(k): float(v) for k, v in diff.groupby(both["measure"]).max().items()}
    return {"compared": int(len(both)), "max_abs_diff": float(diff.max()) if len(diff) else 0.0,
            "max_abs_diff_per_measure": per,
            "only_ours": m[m["_merge"] == "left_only"][key].to_dict("records"),
            "only_theirs": m[m["_merge"] == "right_only"][key].to_dict("records")}
