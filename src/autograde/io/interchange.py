"""The Rubric-Grading Workbench's graded ``*.jsonl.gz`` interchange format.

Each line is ``[query_id, [FullParagraphData, ...]]``; a paragraph carries ``paragraph_id``, ``text``,
``paragraph_data`` (``judgments``, ``rankings``) and the grading results: ``exam_grades`` (exam
questions / nuggets: ``self_ratings`` [{question_id|nugget_id, self_rating}], ``answers``,
``correctAnswered``, ``wrongAnswered``, ``llm``, ``prompt_info``) and ``grades`` (direct prompts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from autograde.errors import Problems
from autograde.io.text import atomic_write_text, iter_lines


def export_workbench(path: str | Path, pool: pd.DataFrame, grades: pd.DataFrame, rankings: pd.DataFrame,
                     judgments: pd.DataFrame, min_correct: int = 1) -> None:
    """Write pool passages with their grades in the workbench format (gzip if the name ends in .gz).

    ``correctAnswered`` lists items with grade >= ``min_correct`` (the workbench's "rating > 0" by default).
    """
    judg = {(q, p): int(r) for q, p, r in judgments[["query_id", "passage_id", "relevance"]].itertuples(index=False)}
    ranks: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for run, q, p, rank, score in rankings[["run", "query_id", "passage_id", "rank", "score"]].itertuples(index=False):
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
            exam_grades, direct = [], []
            g = by_pair.get((q, p))
            if g is not None:
                for (grader, prompt_class, model), gg in g.groupby(["grader", "prompt_class", "model"], sort=True):
                    info = {"prompt_class": prompt_class, "grader": grader, "is_self_rated": True}
                    ok = gg.dropna(subset=["grade"])
                    if gg["item_id"].str.endswith("/query").all():
                        row = ok.iloc[0] if len(ok) else None
                        direct.append({"correctAnswered": bool(row is not None and row["grade"] >= min_correct),
                                       "answer": (row["raw"] or "") if row is not None else "", "llm": model or grader,
                                       "llm_options": {}, "prompt_info": info,
                                       "self_ratings": int(row["grade"]) if row is not None else None})
                        continue
                    key = "nugget_id" if "Nugget" in (prompt_class or "") else "question_id"
                    exam_grades.append({
                        "correctAnswered": sorted(ok.loc[ok["grade"] >= min_correct, "item_id"]),
                        "wrongAnswered": sorted(ok.loc[ok["grade"] < min_correct, "item_id"]),
                        "answers": [[i, a or ""] for i, a in gg[["item_id", "answer"]].itertuples(index=False)],
                        "llm": model or grader, "llm_options": {}, "prompt_info": info,
                        "exam_ratio": float((ok["grade"] >= min_correct).mean()) if len(ok) else 0.0,
                        "self_ratings": [{key: i, "self_rating": int(r)} for i, r in ok[["item_id", "grade"]].itertuples(index=False)],
                    })
            paras.append({"paragraph_id": p, "text": text, "paragraph": "", "paragraph_data": pdata,
                          "exam_grades": exam_grades or None, "grades": direct or None})
        lines.append(json.dumps([q, paras], ensure_ascii=False) + "\n")
    atomic_write_text(path, "".join(lines))


def import_workbench(path: str | Path, problems: Problems | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a workbench graded file into (pool, grades) tables; grader = ``llm:prompt_class``."""
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
                info = eg.get("prompt_info") or {}
                grader = f"{eg.get('llm', '')}:{info.get('prompt_class', '')}"
                answers = dict((a[0], a[1]) for a in eg.get("answers") or [] if len(a) == 2)
                for sr in eg.get("self_ratings") or []:
                    item = sr.get("question_id") or sr.get("nugget_id")
                    grade_rows.append((str(qid), pid, item, grader, int(sr["self_rating"]), answers.get(item),
                                       info.get("prompt_class", ""), eg.get("llm", "")))
            for dg in para.get("grades") or []:
                info = dg.get("prompt_info") or {}
                rating = dg.get("self_ratings")
                grade = int(rating) if rating is not None else int(bool(dg.get("correctAnswered")))
                grade_rows.append((str(qid), pid, f"{qid}/query", f"{dg.get('llm', '')}:{info.get('prompt_class', '')}",
                                   grade, dg.get("answer"), info.get("prompt_class", ""), dg.get("llm", "")))
    if own:
        probs.raise_if_any()
    pool = pd.DataFrame(pool_rows, columns=["query_id", "passage_id", "text"]).drop_duplicates(["query_id", "passage_id"])
    grades = pd.DataFrame(grade_rows, columns=["query_id", "passage_id", "item_id", "grader", "grade", "answer",
                                               "prompt_class", "model"])
    grades["grade"] = grades["grade"].astype("Int64")
    grades["parse_status"] = "ok"
    return pool, grades
