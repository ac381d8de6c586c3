"""The Rubric-Grading Workbench's graded ``*.jsonl.gz`` interchange format.

Each line is ``[query_id, [FullParagraphData, ...]]``; a paragraph carries ``paragraph_id``, ``text``,
``paragraph_data`` (``judgments``, ``rankings``) and the grading results: ``exam_grades`` (exam
questions / nuggets: ``self_ratings`` [{question_id|nugget_id, self_rating}], ``answers``,
``correctAnswered``, ``wrongAnswered``, ``llm``, ``prompt_info``) and ``grades`` (direct prompts).

Ranks: ``export_workbench`` writes the rank we use everywhere (trec_eval order: score desc, then doc id
desc; :func:`autograde.io.trec.trec_ranked`), not the run file's rank column, so that the workbench's cover
(which cuts by the rank field) selects the same top-k passages as ours when a run has ties or a scrambled
rank column. ``import_workbench`` keeps every grade set: self-ratings (``self_ratings``) become grades
0-5; grade sets without self-ratings (answer extraction / answer verification prompts) become grades
1 (item in ``correctAnswered``) or 0 (in ``wrongAnswered``) with their answers; direct ``grades`` keep
their rating (or correctness). Each imported row says where its grade came from in ``extra``.

Round trip: an imported file exports as the same bytes (after decompression). The import keeps what the tables
do not hold: each paragraph's other fields (``paragraph``, anything else), its place in the file and its field
order (the pool's ``workbench`` column), and each grade set's other fields (``prompt_type``, ``relevance_label``,
``llm_response_errors``, ...), its place, its field order and the order of its items (``extra``). Judgments and
rankings go to tables of their own, shaped as ``autograde ingest`` writes them. What is rewritten on purpose is
listed in docs/workbench.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from autograde.core.errors import Problems
from autograde.core.log import logger
from autograde.core.text import atomic_write_text, iter_lines
from autograde.io.trec import trec_ranked

GRADE_SOURCES = ("self_rating", "correctness", "direct_rating", "direct_correctness")
"""Where an imported grade came from (``extra`` = ``{"workbench_grade": <source>}``)."""

PARAGRAPH_KEYS = ("paragraph_id", "text", "paragraph", "paragraph_data", "exam_grades", "grades")
"""A paragraph's fields in the workbench's order (``FullParagraphData``)."""
EXAM_KEYS = ("correctAnswered", "wrongAnswered", "answers", "llm", "llm_options", "exam_ratio", "prompt_info",
             "self_ratings", "prompt_type")
"""The fields an exported exam grade set has, in the workbench's order (``ExamGrades``)."""
DIRECT_KEYS = ("correctAnswered", "answer", "llm", "llm_options", "prompt_info", "self_ratings", "prompt_type")
"""The fields an exported direct grade has, in the workbench's order (``Grades``)."""
PROMPT_TYPES = {"question": "question", "nugget": "nugget", "direct": "direct_grading"}
"""The workbench's ``prompt_type`` of question, nugget and direct grading prompts."""
_PARAGRAPH_OWN = {"paragraph_id", "text", "paragraph_data", "exam_grades", "grades"}
"""Paragraph fields the export writes from the tables (the others are kept as they were)."""
_EXAM_OWN = {"correctAnswered", "wrongAnswered", "answers", "exam_ratio", "self_ratings", "llm"}
_DIRECT_OWN = {"correctAnswered", "answer", "self_ratings", "llm"}
_LAST = float("inf")


class WorkbenchTables(NamedTuple):
    """What :func:`import_workbench` reads from a graded file."""

    pool: pd.DataFrame
    """query_id, passage_id, text, workbench (JSON: the paragraph's place in the file and its other fields)."""
    grades: pd.DataFrame
    judgments: pd.DataFrame
    """query_id, passage_id, relevance (as ``autograde ingest`` writes them)."""
    rankings: pd.DataFrame
    """run, query_id, passage_id, rank, score, source (as ``autograde ingest`` writes them)."""


def _ordered(values: dict[str, Any], keys: list[str] | None, defaults: tuple[str, ...]) -> dict[str, Any]:
    """``values`` as a record: with ``keys`` (a file's own fields in their order), those, then any field of
    ``defaults`` the file lacked that now has a value; without ``keys``, the fields ``defaults``."""
    if keys is None:
        return {k: values.get(k) for k in defaults}
    out = {k: values.get(k) for k in keys}
    out.update({k: values[k] for k in defaults if k not in out and values.get(k) is not None})
    return out


def export_workbench(path: str | Path, pool: pd.DataFrame, grades: pd.DataFrame, rankings: pd.DataFrame,
                     judgments: pd.DataFrame, min_correct: int = 1) -> dict[str, Any]:
    """Write pool passages with their grades in the workbench format (gzip if the name ends in .gz); returns
    what was written (records = lines, paragraphs, grade sets, grades).

    Each ranking entry's ``rank`` is the passage's position in trec_eval order (not the run file's rank).
    ``correctAnswered`` lists items with grade >= ``min_correct`` (the workbench's "rating > 0" by default).
    Passages and grade sets read from a workbench file keep their place, fields and order (see the module).
    """
    judg = {(q, p): int(r) for q, p, r in judgments[["query_id", "passage_id", "relevance"]].itertuples(index=False)}
    ranks: dict[tuple[str, str], list[dict[str, Any]]] = {}
    ranked = trec_ranked(rankings)
    for run, q, p, rank, score in ranked[["run", "query_id", "passage_id", "trec_rank", "score"]].itertuples(index=False):
        ranks.setdefault((q, p), []).append({"method": run, "paragraphId": p, "queryId": q, "rank": int(rank),
                                             "score": float(score)})
    by_pair = _grade_rows(grades)
    parsed: dict[str | None, dict[str, Any]] = {}

    def parse(extra: str | None) -> dict[str, Any]:
        if extra not in parsed:
            parsed[extra] = _extra(extra)
        return parsed[extra]

    kept = pool["workbench"] if "workbench" in pool else pd.Series([None] * len(pool))
    rows = [(str(q), str(p), text, _extra(w), k) for k, (q, p, text, w)
            in enumerate(zip(pool["query_id"], pool["passage_id"], pool["text"], kept, strict=True))]

    def place(row: tuple[str, str, Any, dict[str, Any], int]) -> tuple[Any, ...]:
        """The file's order for imported paragraphs, then the others by query (pool order within a query)."""
        at = row[3].get("at")
        return (0, at[0], at[1], "", 0) if at else (1, 0, 0, row[0], row[4])

    lines: dict[tuple[Any, ...], tuple[str, list[dict[str, Any]]]] = {}
    n_grades = 0
    for q, p, text, layout, _k in sorted(rows, key=place):
        methods = layout.get("methods") or []
        entries = sorted(ranks.get((q, p), []), key=lambda r: (methods.index(r["method"]) if r["method"] in methods
                                                             else len(methods), r["method"]))
        pdata: dict[str, Any] = {"judgments": [], "rankings": entries}
        if (q, p) in judg:
            pdata["judgments"].append({"paragraphId": p, "query": q, "relevance": judg[(q, p)], "titleQuery": q})
        g = by_pair.get((q, p))
        n_grades += sum(len(set_rows) for set_rows in (g or {}).values())
        exam_grades, direct = _grade_sets(g, min_correct, parse)
        fields = layout.get("fields") or {}
        values = {"paragraph": None, **fields, "paragraph_id": p, "text": text, "paragraph_data": pdata,
                  "exam_grades": exam_grades or fields.get("exam_grades"), "grades": direct or fields.get("grades")}
        line_key = ("line", layout["at"][0]) if "at" in layout else ("query", q)
        lines.setdefault(line_key, (q, []))[1].append(_ordered(values, layout.get("keys"), PARAGRAPH_KEYS))
    atomic_write_text(path, "".join(json.dumps([q, paras]) + "\n" for q, paras in lines.values()))
    paras = [p for _q, ps in lines.values() for p in ps]
    sets = sum(len(p.get("exam_grades") or []) + len(p.get("grades") or []) for p in paras)
    return {"out": str(path), "records": len(lines), "paragraphs": len(paras), "grade_sets": sets, "grades": n_grades}


def _extra(value: Any) -> dict[str, Any]:
    if isinstance(value, str) and value:
        try:
            out = json.loads(value)
            return out if isinstance(out, dict) else {}
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


class _Row(NamedTuple):
    """One grade of a grade set, as the export needs it."""

    item_id: str
    grade: int | None
    answer: Any
    raw: Any
    extra: str | None


def _grade_rows(grades: pd.DataFrame) -> dict[tuple[str, str], dict[tuple[str, str, str], list[_Row]]]:
    """The grades by (query, passage), then by (grader, prompt class, model), in table order (plain Python: one
    pass, where grouping the frame per passage took seconds for a few hundred passages)."""
    n = len(grades)

    def col(name: str) -> list[Any]:
        return grades[name].tolist() if name in grades else [None] * n

    out: dict[tuple[str, str], dict[tuple[str, str, str], list[_Row]]] = {}
    for q, p, item, grader, grade, answer, pc, model, raw, extra in zip(
            col("query_id"), col("passage_id"), col("item_id"), col("grader"), col("grade"), col("answer"),
            col("prompt_class"), col("model"), col("raw"), col("extra"), strict=True):
        g = None if grade is None or grade is pd.NA or grade != grade else int(grade)
        key = (str(grader), "" if pc is None else str(pc), "" if model is None or model != model else str(model))
        out.setdefault((str(q), str(p)), {}).setdefault(key, []).append(
            _Row(str(item), g, answer, raw, extra if isinstance(extra, str) else None))
    return out


def _source(rows: list[_Row], prompt_class: str, parse: Any) -> str:
    """Which kind of workbench grade set a group of grades is (one of :data:`GRADE_SOURCES`).

    Imported grades remember it; our own grades: a rating prompt gives self-ratings, an extraction or
    verification prompt gives correctness (answered or not, with its answers).
    """
    seen = {parse(r.extra).get("workbench_grade") for r in rows} - {None}
    if len(seen) == 1:
        return str(seen.pop())
    from autograde.core.errors import AutogradeError
    from autograde.grading.prompts import get_prompt

    try:
        rated = get_prompt(prompt_class).kind in ("rating", "direct")
    except AutogradeError:
        rated = True
    is_direct = all(r.item_id.endswith("/query") for r in rows)
    return ("direct_" if is_direct else "") + ("rating" if rated and is_direct else "self_rating" if rated
                                               else "correctness")


def _grade_sets(sets: dict[tuple[str, str, str], list[_Row]] | None, min_correct: int,
                parse: Any = _extra) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``exam_grades`` and ``grades`` entries of one paragraph: one per (grader, prompt class, model), in the
    shape of the set they came from (self-ratings, correctness with answers, or a direct grade); imported sets
    in their file's place and with their fields, the others after them."""
    exam_grades: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    direct: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    for (grader, prompt_class, model), rows in sorted((sets or {}).items()):
        src = _source(rows, prompt_class, parse)
        kept = parse(rows[0].extra)
        kept = kept if "workbench_grade" in kept else {}  # a set read from a workbench file, else our own grades
        order = kept.get("order")
        if order:
            at = {item: k for k, item in enumerate(order)}
            rows = sorted(rows, key=lambda r: at.get(r.item_id, len(at)))
        else:
            rows = sorted(rows, key=lambda r: r.item_id)
        nugget = "Nugget" in prompt_class
        kind = "direct" if src.startswith("direct") else "nugget" if nugget else "question"
        keys = kept.get("keys")
        values: dict[str, Any] = {"llm": model or grader, **(kept.get("fields") or {})} if keys else {
            "llm": model or grader, "llm_options": kept.get("llm_options") or {}, "prompt_type": PROMPT_TYPES[kind],
            "prompt_info": kept.get("prompt_info") or {"prompt_class": prompt_class, "grader": grader,
                                                       "is_self_rated": src in ("self_rating", "direct_rating")}}
        place = (kept.get("set", _LAST), grader, prompt_class, model)
        ok = [r for r in rows if r.grade is not None]
        if src.startswith("direct"):
            row = ok[0] if ok else None
            answer = None if row is None else row.raw if isinstance(row.raw, str) else row.answer
            values.update({"correctAnswered": bool(row is not None and row.grade >= min_correct),  # type: ignore[operator]
                           "answer": answer if isinstance(answer, str) else "",
                           "self_ratings": row.grade if src == "direct_rating" and row is not None else None})
            direct.append((place, _ordered(values, keys, DIRECT_KEYS)))
            continue
        correct = [r.item_id for r in ok if r.grade >= min_correct]  # type: ignore[operator]
        values.update({
            "correctAnswered": correct,
            "wrongAnswered": [r.item_id for r in ok if r.grade < min_correct],  # type: ignore[operator]
            "answers": [[r.item_id, r.answer if isinstance(r.answer, str) else ""] for r in rows
                        if src == "self_rating" or isinstance(r.answer, str)],
            "exam_ratio": len(correct) / len(ok) if ok else 0.0,
            "self_ratings": None,  # answer extraction / verification: correctness only, as the workbench
        })
        if src == "self_rating":
            shape = kept.get("rating") or [["nugget_id" if nugget else "question_id", "id", None],
                                           ["self_rating", "rating", None]]
            values["self_ratings"] = [{k: r.item_id if role == "id" else r.grade if role == "rating" else v
                                       for k, role, v in shape} for r in ok]
        exam_grades.append((place, _ordered(values, keys, EXAM_KEYS)))
    return ([e for _, e in sorted(exam_grades, key=lambda x: x[0])],
            [d for _, d in sorted(direct, key=lambda x: x[0])])


def _rating_shape(ratings: list[Any]) -> list[list[Any]] | None:
    """How a set's ``self_ratings`` entries are written: [field, "id" | "rating" | "const", value] per field, when
    every entry has the same shape (else None: the export writes the plain shape)."""
    shapes = []
    for sr in ratings:
        item = sr.get("question_id") or sr.get("nugget_id")
        shapes.append([[k, "rating", None] if k == "self_rating" else [k, "id", None] if v == item and v is not None
                       else [k, "const", v] for k, v in sr.items()])
    return shapes[0] if shapes and all(s == shapes[0] for s in shapes) else None


def _kept(source: str, grade_set: dict[str, Any], own: set[str], k: int, order: list[str],
          rating: list[list[Any]] | None = None) -> str:
    """``extra`` of an imported row: the grade set's kind, its place in the paragraph, its fields in their order,
    the ones the tables do not hold, and the order of its items (what an export needs to write it back)."""
    llm = grade_set.get("llm")
    fields = {key: v for key, v in grade_set.items() if key not in own or (key == "llm" and not isinstance(llm, str))}
    out: dict[str, Any] = {"workbench_grade": source, "set": k, "keys": list(grade_set), "fields": fields,
                           "order": order}
    if rating:
        out["rating"] = rating
    return json.dumps(out)


def _exam_grade_rows(qid: str, pid: str, eg: dict[str, Any], k: int) -> list[tuple]:
    """Rows of one ``exam_grades`` entry: self-ratings, or else correctness (answer extraction / verification)."""
    info = eg.get("prompt_info") or {}
    llm, prompt_class = eg.get("llm") or "", str(info.get("prompt_class") or "")
    grader = f"{llm}:{prompt_class}"
    pairs = [a for a in eg.get("answers") or [] if isinstance(a, list | tuple) and len(a) == 2]
    answers = {a[0]: a[1] for a in pairs}
    ratings = eg.get("self_ratings")
    if ratings:
        items = [sr.get("question_id") or sr.get("nugget_id") for sr in ratings]
        kept = _kept("self_rating", eg, _EXAM_OWN, k, items, _rating_shape(ratings))
        return [(qid, pid, item, grader, int(sr["self_rating"]), answers.get(item), prompt_class, llm, kept)
                for item, sr in zip(items, ratings, strict=True)]
    # answer extraction / verification prompts: no self-ratings, the grade is the correctness
    correct, wrong = list(eg.get("correctAnswered") or []), list(eg.get("wrongAnswered") or [])
    items = list(dict.fromkeys([a[0] for a in pairs] + correct + wrong))
    kept = _kept("correctness", eg, _EXAM_OWN, k, items)
    is_correct, is_wrong = set(correct), set(wrong)
    return [(qid, pid, item, grader, 1 if item in is_correct else 0 if item in is_wrong else None, answers.get(item),
             prompt_class, llm, kept) for item in items]


def _direct_row(qid: str, pid: str, dg: dict[str, Any], k: int) -> tuple:
    """The row of one direct grade (``grades`` entry): its rating, else its correctness; item ``<query>/query``."""
    info = dg.get("prompt_info") or {}
    llm, prompt_class = dg.get("llm") or "", str(info.get("prompt_class") or "")
    rating = dg.get("self_ratings")
    grade = int(rating) if rating is not None else int(bool(dg.get("correctAnswered")))
    source = "direct_rating" if rating is not None else "direct_correctness"
    return (qid, pid, f"{qid}/query", f"{llm}:{prompt_class}", grade, dg.get("answer"), prompt_class, llm,
            _kept(source, dg, _DIRECT_OWN, k, []))


def _paragraph_problem(para: Any) -> str | None:
    """What makes a paragraph unreadable (None when it is fine)."""
    if not isinstance(para, dict) or not isinstance(para.get("paragraph_id"), str | int):
        return "is not an object with a 'paragraph_id'"
    for field in ("exam_grades", "grades"):
        sets = para.get(field)
        if sets is not None and (not isinstance(sets, list) or not all(isinstance(s, dict) for s in sets)):
            return f"'{field}' is not a list of objects"
    for field in ("exam_grades", "grades"):
        for k, gs in enumerate(para.get(field) or []):
            if not isinstance(gs.get("llm"), str | None) or not isinstance(gs.get("prompt_info"), dict | None):
                return f"{field}[{k}] has 'llm' {gs.get('llm')!r} or 'prompt_info' {gs.get('prompt_info')!r}"
    for k, eg in enumerate(para.get("exam_grades") or []):
        answers, listed = eg.get("answers"), [eg.get("correctAnswered"), eg.get("wrongAnswered")]
        if not all(x is None or (isinstance(x, list) and all(isinstance(i, str) for i in x)) for x in listed):
            return f"exam_grades[{k}].correctAnswered or wrongAnswered is not a list of item ids"
        if answers is not None and not (isinstance(answers, list) and all(
                isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and isinstance(a[1], str | None)
                for a in answers)):
            return f"exam_grades[{k}].answers is not a list of [item id, answer text]"
        ratings = eg.get("self_ratings")
        if ratings is not None and not isinstance(ratings, list):
            return f"exam_grades[{k}].self_ratings is not a list"
        for sr in ratings or []:
            if not isinstance(sr, dict) or not isinstance(sr.get("question_id") or sr.get("nugget_id"), str) \
                    or isinstance(sr.get("self_rating"), bool) or not isinstance(sr.get("self_rating"), int):
                return (f"exam_grades[{k}].self_ratings has {sr!r}, not {{question_id or nugget_id, self_rating: "
                        "integer}")
    for k, dg in enumerate(para.get("grades") or []):
        r = dg.get("self_ratings")
        if r is not None and (isinstance(r, bool) or not isinstance(r, int)):
            return f"grades[{k}].self_ratings is {r!r}, not an integer"
        if not isinstance(dg.get("answer"), str | None):
            return f"grades[{k}].answer is {dg.get('answer')!r}, not a text"
    if not isinstance(para.get("text", ""), str):
        return f"'text' is {para.get('text')!r}, not a text"
    pdata = para.get("paragraph_data") or {}
    if not isinstance(pdata, dict):
        return "'paragraph_data' is not an object"
    for j in pdata.get("judgments") or []:
        if not isinstance(j, dict) or isinstance(j.get("relevance"), bool) or not isinstance(j.get("relevance"), int):
            return f"paragraph_data.judgments has {j!r}, not {{relevance: integer, ...}}"
    for r in pdata.get("rankings") or []:
        if not isinstance(r, dict) or not isinstance(r.get("method"), str) \
                or not all(isinstance(r.get(f), int | float) and not isinstance(r.get(f), bool) for f in ("rank", "score")):
            return f"paragraph_data.rankings has {r!r}, not {{method, rank, score, ...}}"
    return None


def import_workbench(path: str | Path, problems: Problems | None = None) -> WorkbenchTables:
    """Read a workbench graded file into pool, grades, judgments and rankings tables; grader = ``llm:prompt_class``.

    Every grade set is kept: self-ratings as grades 0-5, grade sets without self-ratings (answer extraction
    or verification prompts) as correctness 1/0 with their answers, direct grades as their rating. What was
    kept is logged per grader; ``extra`` holds ``{"workbench_grade": source}`` (one of ``GRADE_SOURCES``) and
    what an export needs to write the set back as it was. A correctness row of an item that is neither correct
    nor wrong (an answer only) has no grade (``parse_status`` ``"no_grade"``).
    """
    own = problems is None
    probs = problems if problems is not None else Problems()
    fix = "each line must be [query_id, [paragraph, ...]] as the workbench writes it (FullParagraphData)"
    pool_rows: list[tuple[str, str, Any, str]] = []
    grade_rows: list[tuple[Any, ...]] = []
    judgment_rows: list[tuple[str, str, int]] = []
    ranking_rows: list[tuple[str, str, str, int, float, str]] = []
    for n, line in iter_lines(path, probs):
        if not line.strip():
            continue
        try:
            qid, paras = json.loads(line)
            if not isinstance(qid, str | int) or not isinstance(paras, list):
                raise TypeError("not [query_id, [paragraphs...]]")
        except (json.JSONDecodeError, ValueError, TypeError) as exc:
            probs.add(path, n, f"expected [query_id, [paragraphs...]]: {exc}", "check the file is a workbench graded file")
            continue
        qid = str(qid)
        for i, para in enumerate(paras):
            problem = _paragraph_problem(para)
            if problem:
                pid = para.get("paragraph_id") if isinstance(para, dict) else None
                probs.add(path, n, f"paragraph {i}{f' ({pid})' if pid is not None else ''} of query {qid!r} {problem}",
                          fix)
                continue
            pid = str(para["paragraph_id"])
            pdata = para.get("paragraph_data") or {}
            fields = {k: v for k, v in para.items() if k not in _PARAGRAPH_OWN
                      or (k in ("exam_grades", "grades") and not v)}
            methods = list(dict.fromkeys(r["method"] for r in pdata.get("rankings") or []))
            layout = {"at": [n, i], "keys": list(para), "fields": fields, "methods": methods}
            pool_rows.append((qid, pid, para.get("text", ""), json.dumps(layout)))
            for k, eg in enumerate(para.get("exam_grades") or []):
                grade_rows.extend(_exam_grade_rows(qid, pid, eg, k))
            grade_rows.extend(_direct_row(qid, pid, dg, k) for k, dg in enumerate(para.get("grades") or []))
            judgment_rows.extend((qid, pid, int(j["relevance"])) for j in pdata.get("judgments") or [])
            ranking_rows.extend((r["method"], qid, pid, int(r["rank"]), float(r["score"]), str(path))
                                for r in pdata.get("rankings") or [])
    if own:
        probs.raise_if_any()
    pool = pd.DataFrame(pool_rows, columns=["query_id", "passage_id", "text", "workbench"]).drop_duplicates(
        ["query_id", "passage_id"])
    grades = pd.DataFrame(grade_rows, columns=["query_id", "passage_id", "item_id", "grader", "grade", "answer",
                                               "prompt_class", "model", "source"])
    grades["grade"] = grades["grade"].astype("Int64")
    grades["parse_status"] = grades["grade"].notna().map({True: "ok", False: "no_grade"})
    grades["extra"] = grades.pop("source")
    judgments = pd.DataFrame(judgment_rows, columns=["query_id", "passage_id", "relevance"]).drop_duplicates(
        ["query_id", "passage_id"]).astype({"relevance": "int64"})
    rankings = pd.DataFrame(ranking_rows, columns=["run", "query_id", "passage_id", "rank", "score", "source"])
    log_import_summary(path, grades)
    return WorkbenchTables(pool, grades, judgments, rankings)


def import_summary(grades: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per grader: rows per grade source (``self_rating``, ``correctness``, ...), plus answers kept."""
    src = grades["extra"].map(lambda e: _extra(e).get("workbench_grade"))
    out: dict[str, dict[str, int]] = {}
    frame = grades.assign(_src=src.to_numpy())
    for grader, g in frame.groupby("grader", sort=True):
        counts = {k: int(v) for k, v in g["_src"].value_counts().sort_index().items()}
        counts["answers"] = int(g["answer"].fillna("").astype(str).str.len().gt(0).sum())
        counts["no_grade"] = int(g["grade"].isna().sum())
        out[str(grader)] = counts
    return out


def log_import_summary(path: str | Path, grades: pd.DataFrame) -> None:
    """Say what was kept from a workbench file, one line per grader."""
    for grader, counts in import_summary(grades).items():
        logger.info("import-workbench %s: grader %s: %s", path, grader,
                    ", ".join(f"{k} {v}" for k, v in counts.items()))
