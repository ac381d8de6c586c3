"""The TREC RAG track's nugget files: assignment JSONL (what the reference assigner writes) and the reference
scorer's output, read with every problem named by file and line, and written in the same shapes.

Assignment JSONL, one answer per line (``castorini/nuggetizer``'s ``scripts/assign_nuggets.py`` output)::

    {"query": "...", "qid": "q1", "answer_text": "...", "response_length": 42, "run_id": "run-a",
     "nuggets": [{"text": "...", "importance": "vital", "assignment": "support"}, ...]}

Reference scorer output (``scripts/calculate_metrics.py``), one line per answer in the input's order, then the
mean under ``"qid": "all"``::

    {"qid": "q1", "strict_vital_score": 0.5, "strict_all_score": 0.5, "vital_score": 0.75, "all_score": 0.625}

Files are read the way the reference scorer reads them: it needs ``qid`` and each nugget's ``importance`` and
``assignment``, nothing else. An answer without ``answer_text`` (nuggetizer's own test record has none) or with
an empty one (what its assigner writes for a run without an answer) is scored from its labels; a line without
``run_id`` takes the file's stem as its run. The label ``"failed"``, which nuggetizer writes when an LLM call
fails after its retries, is kept: as an assignment it earns no credit and still counts (the reference counts
only ``support`` and ``partial_support``), as an importance it counts like ``okay`` (in All, not in Vital).
:func:`reading_notes` says what of this a file held.
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

FAILED = "failed"
"""The label nuggetizer writes for a nugget's importance or assignment when its LLM call failed after its retries."""
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
    missing: tuple[str, ...] = ()
    """Fields the line did not have (``answer_text``, ``run_id``): read as empty text, the file's stem."""

    def labels(self) -> list[tuple[str, str]]:
        return [(imp, a) for _, imp, a in self.nuggets]


def _nugget_problem(n: Any, j: int) -> str | None:
    if not isinstance(n, dict):
        return f"nugget {j} is not an object {{text, importance, assignment}}"
    if not isinstance(n.get("text"), str) or not n["text"].strip():
        return f"nugget {j} has no text"
    if n.get("importance") not in (*IMPORTANCE_LABELS, FAILED):
        return (f"nugget {j} ({n['text'][:50]!r}) has importance {n.get('importance')!r}; valid: "
                f"{', '.join(IMPORTANCE_LABELS)} (or {FAILED!r}, nuggetizer's label for a failed call)")
    if n.get("assignment") not in (*ASSIGNMENT_LABELS, FAILED):
        return (f"nugget {j} ({n['text'][:50]!r}) has assignment {n.get('assignment')!r}; valid: "
                f"{', '.join(ASSIGNMENT_LABELS)} (or {FAILED!r}, nuggetizer's label for a failed call)")
    return None


def read_assignments(path: str | Path, problems: Problems | None = None, *, nuggets: dict[str, set[str]] | None = None,
                     queries: set[str] | None = None) -> list[AssignedAnswer]:
    """Read an assignment JSONL file; every problem is reported with its line.

    ``queries`` (known query ids) and ``nuggets`` (query id -> known nugget item ids, ``query_id/md5(text)``) make
    a line naming another query, or a nugget not in the bank for its query, a problem too. A line without
    ``run_id`` takes the file's stem (as the reference assigner names runs); one without ``answer_text`` (or with
    null) is read with empty text, as the reference scorer never reads the text (:func:`reading_notes` counts both).
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
        missing = tuple(k for k in ("answer_text", "run_id") if rec.get(k) is None)
        text = rec.get("answer_text")
        if text is None:
            text = ""
        if not isinstance(text, str):
            probs.add(p, n, f"'answer_text' of run {run!r} to query {qid!r} is {type(text).__name__} {text!r}, "
                      "not a string", "give the answer's text as a string (or leave 'answer_text' out)")
            continue
        if known_queries and qid not in known_queries:
            probs.add(p, n, f"query {qid!r} is not a known query", "fix the qid, or add the query (and its nuggets)")
            continue
        if (run, qid) in seen:
            probs.add(p, n, f"second answer of run {run!r} to query {qid!r} (first on line {seen[(run, qid)]})",
                      "keep one answer per run and query")
            continue
        seen[(run, qid)] = n
        answer = AssignedAnswer(run, qid, text, query=str(rec.get("query") or ""), line=n, missing=missing)
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


def reading_notes(answers: list[AssignedAnswer]) -> list[str]:
    """What of ``answers`` was read in a way the file did not spell out: answers without (or with empty)
    ``answer_text``, lines without ``run_id``, and nuggetizer's ``"failed"`` labels, each with how it was scored.

    >>> a = AssignedAnswer("r", "q1", "", [("Bees make honey", "vital", FAILED)], missing=("answer_text",))
    >>> for line in reading_notes([a]):
    ...     print(line.split(":")[0])
    1 of 1 answers have no 'answer_text'
    1 nuggets assigned 'failed' (nuggetizer's label when the assigner's call failed) in 1 answers
    """
    total = len(answers)
    notes = []
    no_text = sum(1 for a in answers if "answer_text" in a.missing)
    empty = sum(1 for a in answers if "answer_text" not in a.missing and not a.answer_text.strip())
    no_run = [a for a in answers if "run_id" in a.missing]
    if no_text:
        notes.append(f"{no_text} of {total} answers have no 'answer_text': scored from their nuggets' labels, as the "
                     "reference scorer does (it never reads the text)")
    if empty:
        notes.append(f"{empty} of {total} answers have an empty 'answer_text' (nuggetizer's assigner writes that for "
                     "a run without an answer to the query): scored from their nuggets' labels")
    for label, what, how in (("assignment", "assigned", "scored as not_support (no credit, still counted in All and, "
                              "if vital, in Vital), as the reference scorer does"),
                             ("importance", "of importance", "scored as okay (counted in All, not in Vital; weight "
                              "0.5 in Weighted), as the reference scorer counts every nugget that is not vital")):
        k = 2 if label == "assignment" else 1
        hits = [sum(1 for nug in a.nuggets if nug[k] == FAILED) for a in answers]
        if sum(hits):
            role = "assigner" if label == "assignment" else "importance"
            notes.append(f"{sum(hits)} nuggets {what} {FAILED!r} (nuggetizer's label when the {role}'s call failed) "
                         f"in {sum(1 for h in hits if h)} answers: {how}")
    if no_run:
        names = sorted({a.run for a in no_run})
        notes.append(f"{len(no_run)} of {total} lines have no 'run_id': their run is named after the file "
                     f"({', '.join(map(repr, names))})")
    return notes


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


SHOWN = 5
"""How many one-sided answers and differing values :func:`compare_scores` shows (it counts all of them)."""


def compare_scores(ours: pd.DataFrame, theirs: pd.DataFrame, tolerance: float = 1e-12) -> dict[str, Any]:
    """Line-by-line comparison of two reference-format score tables (see :func:`read_reference_scores`).

    Compared are the values both sides have (same line, query and measure). A measure only one side writes (our
    ``--weighted`` scores, which the reference scorer has not) is listed, not a disagreement. An answer line only
    one side has is counted (the first few shown) and is a disagreement: the files did not score the same
    answers. ``agree``: something was compared, every shared value is within ``tolerance`` and no answer is on
    one side only.
    """
    key = ["line", "query_id", "measure"]
    m = ours.merge(theirs, on=key, how="outer", suffixes=("_ours", "_theirs"), indicator=True)
    both = m[m["_merge"] == "both"]
    diff = (both["value_ours"] - both["value_theirs"]).abs()
    per = {str(k): float(v) for k, v in diff.groupby(both["measure"]).max().items()}
    worst = both.assign(diff=diff)[diff > tolerance].sort_values(["diff", "line"], ascending=[False, True])
    answers_o, answers_t = (set(map(tuple, df[["line", "query_id"]].drop_duplicates().to_numpy().tolist()))
                            for df in (ours, theirs))
    measures_o, measures_t = set(ours["measure"]), set(theirs["measure"])

    def one_sided(keys: set[tuple[Any, ...]]) -> dict[str, Any]:
        first = sorted(keys)[:SHOWN]
        return {"count": len(keys), "first": [{"line": int(n), "query_id": str(q)} for n, q in first]}

    only_o, only_t = one_sided(answers_o - answers_t), one_sided(answers_t - answers_o)
    max_diff = float(diff.max()) if len(diff) else 0.0
    return {"agree": bool(len(both)) and max_diff <= tolerance and not only_o["count"] and not only_t["count"],
            "compared": int(len(both)), "tolerance": tolerance, "max_abs_diff": max_diff,
            "max_abs_diff_per_measure": per, "above_tolerance": int(len(worst)),
            "largest_differences": [{"line": int(r.line), "query_id": str(r.query_id), "measure": str(r.measure),
                                     "ours": float(r.value_ours), "theirs": float(r.value_theirs)}
                                    for r in worst.head(SHOWN).itertuples()],
            "measures_only_ours": sorted(measures_o - measures_t), "measures_only_theirs": sorted(measures_t - measures_o),
            "answers_only_ours": only_o, "answers_only_theirs": only_t}
