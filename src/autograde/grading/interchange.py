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
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from autograde.core.errors import Problems
from autograde.core.log import logger
from autograde.core.text import atomic_write_text, iter_lines
from autograde.io.trec import trec_ranked

GRADE_SOURCES = ("self_rating", "correctness", "direct_rating", "direct_correctness")
"""Where an imported grade came from (``extra`` = ``{"workbench_grade": <source>}``)."""


def export_workbench(path: str | Path, pool: pd.DataFrame, grades: pd.DataFrame, rankings: pd.DataFrame,
                     judgments: pd.DataFrame, min_correct: int = 1) -> None:
    """Write pool passages with their grades in the workbench format (gzip if the name ends in .gz).

    Each ranking entry's ``rank`` is the passage's position in trec_eval order (not the run file's rank).
    ``correctAnswered`` lists items with grade >= ``min_correct`` (the workbench's "rating > 0" by default).
    """
    judg = {(q, p): int(r) for q, p, r in judgments[["query_id", "passage_id", "relevance"]].itertuples(index=False)}
    ranks: dict[tuple[str, str], list[dict[str, Any]]] = {}
    ranked = trec_ranked(rankings)
    for run, q, p, rank, score in ranked[["run", "query_id", "passage_id", "trec_rank", "score"]].itertuples(index=False):
        ranks.setdefault((q, p), []).append({"method": run, "paragraphId": p, "queryId": q, "rank": int(rank),
                                             "score": float(score)})
    by_pair: dict[tuple[str, str], pd.DataFrame] = dict(tuple(grades.groupby(["query_id", "passage_id"])))
    lines = []
    for q, qpool in pool.groupby("query_id", sort=True):
        paras = []
        for p, text in qpool[["passage_id", "text"]].itertuples(index=False):
            pdata: dict[str, Any] = {"judgments": [], "rankings": sorted(ranks.get((q, p), []), key=lambda r: r["method"])}
            if (q, p) in judg:
                pdata["judgments"].append({"paragraphId": p, "query": q, "relevance": judg[(q, p)], "titleQuery": q})
            exam_grades, direct = _grade_sets(by_pair.get((q, p)), min_correct)
            paras.append({"paragraph_id": p, "text": text, "paragraph": "", "paragraph_data": pdata,
                          "exam_grades": exam_grades or None, "grades": direct or None})
        lines.append(json.dumps([q, paras], ensure_ascii=False) + "\n")
    atomic_write_text(path, "".join(lines))


def _extra(value: Any) -> dict[str, Any]:
    if isinstance(value, str) and value:
        try:
            out = json.loads(value)
            return out if isinstance(out, dict) else {}
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


def _source(gg: pd.DataFrame, prompt_class: str) -> str:
    """Which kind of workbench grade set a group of grades is (one of :data:`GRADE_SOURCES`).

    Imported grades remember it; our own grades: a rating prompt gives self-ratings, an extraction or
    verification prompt gives correctness (answered or not, with its answers).
    """
    if "extra" in gg:
        seen = {_extra(e).get("workbench_grade") for e in gg["extra"]} - {None}
        if len(seen) == 1:
            return str(seen.pop())
    from autograde.core.errors import AutogradeError
    from autograde.grading.prompts import get_prompt

    try:
        rated = get_prompt(prompt_class).kind in ("rating", "direct")
    except AutogradeError:
        rated = True
    is_direct = bool(gg["item_id"].str.endswith("/query").all())
    return ("direct_" if is_direct else "") + ("rating" if rated and is_direct else "self_rating" if rated
                                               else "correctness")


def _grade_sets(g: pd.DataFrame | None, min_correct: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``exam_grades`` and ``grades`` entries of one paragraph: one per (grader, prompt class, model), in the
    shape of the set they came from (self-ratings, correctness with answers, or a direct grade)."""
    exam_grades: list[dict[str, Any]] = []
    direct: list[dict[str, Any]] = []
    if g is None:
        return exam_grades, direct
    for (grader, prompt_class, model), gg in g.groupby(["grader", "prompt_class", "model"], sort=True):
        src = _source(gg, prompt_class)
        first = _extra(gg["extra"].iloc[0]) if "extra" in gg else {}
        info = first.get("prompt_info") or {"prompt_class": prompt_class, "grader": grader,
                                            "is_self_rated": src in ("self_rating", "direct_rating")}
        common = {"llm": model or grader, "llm_options": first.get("llm_options") or {}, "prompt_info": info}
        ok = gg.dropna(subset=["grade"])
        if src.startswith("direct"):
            row = ok.iloc[0] if len(ok) else None
            raw = row.get("raw") if row is not None else None
            answer = raw if isinstance(raw, str) else (row.get("answer") if row is not None else None)
            rated = src == "direct_rating"
            direct.append({"correctAnswered": bool(row is not None and row["grade"] >= min_correct),
                           "answer": answer if isinstance(answer, str) else "", **common,
                           "self_ratings": int(row["grade"]) if rated and row is not None else None})
            continue
        entry: dict[str, Any] = {
            "correctAnswered": sorted(ok.loc[ok["grade"] >= min_correct, "item_id"]),
            "wrongAnswered": sorted(ok.loc[ok["grade"] < min_correct, "item_id"]),
            "answers": [[i, a if isinstance(a, str) else ""] for i, a in gg[["item_id", "answer"]].itertuples(index=False)
                        if src == "self_rating" or isinstance(a, str)],
            **common,
            "exam_ratio": float((ok["grade"] >= min_correct).mean()) if len(ok) else 0.0,
        }
        if src == "self_rating":
            key = "nugget_id" if "Nugget" in (prompt_class or "") else "question_id"
            entry["self_ratings"] = [{key: i, "self_rating": int(r)} for i, r in ok[["item_id", "grade"]].itertuples(index=False)]
        else:
            entry["self_ratings"] = None  # answer extraction / verification: correctness only, as the workbench
        exam_grades.append(entry)
    return exam_grades, direct


def _exam_grade_rows(qid: str, pid: str, eg: dict[str, Any]) -> list[tuple]:
    """Rows of one ``exam_grades`` entry: self-ratings, or else correctness (answer extraction / verification)."""
    info = eg.get("prompt_info") or {}
    llm, prompt_class = eg.get("llm", "") or "", info.get("prompt_class", "") or ""
    grader = f"{llm}:{prompt_class}"
    answers = {a[0]: a[1] for a in eg.get("answers") or [] if isinstance(a, list | tuple) and len(a) == 2}
    ratings = eg.get("self_ratings")
    if ratings:
        rows = []
        for sr in ratings:
            item = sr.get("question_id") or sr.get("nugget_id")
            rows.append((qid, pid, item, grader, int(sr["self_rating"]), answers.get(item), prompt_class, llm,
                         _provenance("self_rating", eg)))
        return rows
    # answer extraction / verification prompts: no self-ratings, the grade is the correctness
    correct, wrong = set(eg.get("correctAnswered") or []), set(eg.get("wrongAnswered") or [])
    items = sorted(correct | wrong | set(answers))
    return [(qid, pid, item, grader, 1 if item in correct else 0 if item in wrong else None, answers.get(item),
             prompt_class, llm, _provenance("correctness", eg)) for item in items]


def _provenance(source: str, grade_set: dict[str, Any]) -> str:
    """``extra`` of an imported row: the grade set's kind and the fields an export needs to write it back."""
    keep = {k: grade_set[k] for k in ("prompt_info", "llm_options") if grade_set.get(k)}
    return json.dumps({"workbench_grade": source, **keep}, sort_keys=True)


def import_workbench(path: str | Path, problems: Problems | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a workbench graded file into (pool, grades) tables; grader = ``llm:prompt_class``.

    Every grade set is kept: self-ratings as grades 0-5, grade sets without self-ratings (answer extraction
    or verification prompts) as correctness 1/0 with their answers, direct grades as their rating. What was
    kept is logged per grader; ``extra`` holds ``{"workbench_grade": source}`` (one of ``GRADE_SOURCES``).
    A correctness row of an item that is neither correct nor wrong (an answer only) has no grade
    (``parse_status`` ``"no_grade"``).
    """
    own = problems is None
    probs = problems if problems is not None else Problems()
    pool_rows, grade_rows = [], []
    for n, line in iter_lines(path, probs):
        if not line.strip():
            continue
        try:
            qid, paras = json.loads(line)
        except (json.JSONDecodeError, ValueError, TypeError) as exc:
            probs.add(path, n, f"expected [query_id, [paragraphs...]]: {exc}", "check the file is a workbench graded file")
            continue
        for para in paras:
            pid = str(para.get("paragraph_id"))
            pool_rows.append((str(qid), pid, para.get("text", "")))
            for eg in para.get("exam_grades") or []:
                grade_rows.extend(_exam_grade_rows(str(qid), pid, eg))
            for dg in para.get("grades") or []:
                info = dg.get("prompt_info") or {}
                rating = dg.get("self_ratings")
                grade = int(rating) if rating is not None else int(bool(dg.get("correctAnswered")))
                grade_rows.append((str(qid), pid, f"{qid}/query", f"{dg.get('llm', '')}:{info.get('prompt_class', '')}",
                                   grade, dg.get("answer"), info.get("prompt_class", ""), dg.get("llm", ""),
                                   _provenance("direct_rating" if rating is not None else "direct_correctness", dg)))
    if own:
        probs.raise_if_any()
    pool = pd.DataFrame(pool_rows, columns=["query_id", "passage_id", "text"]).drop_duplicates(["query_id", "passage_id"])
    grades = pd.DataFrame(grade_rows, columns=["query_id", "passage_id", "item_id", "grader", "grade", "answer",
                                               "prompt_class", "model", "source"])
    grades["grade"] = grades["grade"].astype("Int64")
    grades["parse_status"] = grades["grade"].notna().map({True: "ok", False: "no_grade"})
    grades["extra"] = grades.pop("source")
    log_import_summary(path, grades)
    return pool, grades


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
