"""Reading human judges' answers per (text, judge, question): LLM-RUBRIC's synthetic TSV and our long table.

See :mod:`autograde.rubric.inputs` for the formats and the error policy.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from autograde.core.errors import InvalidValueError, Problems
from autograde.core.log import logger
from autograde.rubric.definition import Question, Rubric
from autograde.rubric.tables import (
    MISSING,
    Annotation,
    HumanAnswers,
    _header,
    _is_missing,
    _iter_rows,
    _number,
    _require_columns,
    _unknown_question,
)


def _answer_index(raw: Any, q: Question, na_tokens: tuple[str, ...], path: str | Path, line: int | None,
                  problems: Problems, text_id: str, judge: str, out: HumanAnswers, strict: bool) -> int | None:
    """Option index of one human answer; MISSING for missing / NA; None (+ a problem) when invalid.

    An NA answer ("no answer", 0 in the released format) to a question that does not allow NA is masked for that
    question and counted in ``out.masked`` (one warning per question, :func:`warn_masked`); with ``strict`` it is
    a problem.
    """
    if _is_missing(raw):
        return MISSING
    if isinstance(raw, str) and raw.strip().upper() in na_tokens or (not isinstance(raw, str) and
                                                                     str(raw) in na_tokens):
        if not q.na:
            if not strict:
                out.masked[q.id] = out.masked.get(q.id, 0) + 1
                return MISSING
            problems.add(path, line, f"text {text_id!r} judge {judge!r}: NA answer to {q.id}, which does not allow NA",
                         f"set 'na: true' for {q.id} in the rubric, or give an answer "
                         f"({', '.join(f'{v:g}' for v in q.values)}), or drop 'strict: true' to mask such answers")
            return None
        return MISSING
    x = _number(raw)
    if x is None:
        problems.add(path, line, f"text {text_id!r} judge {judge!r}: answer {raw!r} to {q.id} is not a number",
                     f"answer with one of {', '.join(f'{v:g}' for v in q.values)}")
        return None
    i = q.option_index(x)
    if i is None:
        problems.add(path, line, f"text {text_id!r} judge {judge!r}: answer {x:g} to {q.id} is outside its options "
                     f"({', '.join(f'{v:g}' for v in q.values)})",
                     f"fix the answer, or the options of {q.id} in the rubric")
        return None
    return i


def read_synthetic_human(path: str | Path, rubric: Rubric, problems: Problems | None = None,
                         screen_column: str | None = "DQQ0") -> HumanAnswers:
    """LLM-RUBRIC's released human table: a row per (text, judge), a column per question, 0 = NA.

    Rows whose ``screen_column`` is present and not 1 (the judge said the text is not a dialogue, and
    answered nothing else) are dropped and counted. Columns named like a question (``Q<digits>``) that the
    rubric lacks are errors. A judge may annotate a text again in another ``round`` (the released data has
    nine such pairs, with different answers); both annotations are kept, as in the paper.
    """
    own = problems is None
    problems = problems if problems is not None else Problems()
    out = HumanAnswers()
    header = _header(path, problems)
    ok = _require_columns(path, header, ["text_id", "annotator_id", *rubric.ids], problems,
                          "the synthetic human format has text_id, annotator_id and a column per rubric question")
    for col in header:
        if re.fullmatch(r"Q\d+", col) and not rubric.has(col):
            _unknown_question(path, 1, col, rubric, problems)
    if not ok:
        if own:
            problems.raise_if_any()
        return out
    screen = screen_column if screen_column in header else None
    for n, row in _iter_rows(path, problems):
        if screen is not None and _number(row[screen]) != 1:
            out.screened_out += 1
            continue
        text_id, judge = str(row["text_id"]), str(row["annotator_id"])
        answers = [_answer_index(row[q.id], q, ("0", "0.0", "NA"), path, n, problems, text_id, judge, out,
                                 rubric.strict) for q in rubric.questions]
        if any(a is None for a in answers):
            continue
        session = str(row.get("round", ""))
        out.annotations.append(Annotation(text_id, judge, tuple(int(a) for a in answers), str(path), n,  # type: ignore[arg-type]
                                          session))
    _check_duplicates(out, problems)
    warn_masked(out, path)
    if own:
        problems.raise_if_any()
    return out


def warn_masked(out: HumanAnswers, path: str | Path) -> None:
    """One warning per question whose NA answers were masked although the rubric does not allow NA there."""
    for qid, count in sorted(out.masked.items()):
        note = (f"{path}: masked {count} NA answer(s) to {qid}, which does not allow NA (only {qid} is masked in "
                f"those annotations; fix: set 'na: true' for {qid} in the rubric if 'no answer' is valid there, or "
                "correct the answers; 'strict: true' in the rubric refuses such files)")
        out.notes.append(note)
        logger.warning("%s", note)


def read_human_table(path: str | Path, rubric: Rubric, problems: Problems | None = None) -> HumanAnswers:
    """Our long human table: ``text_id, judge_id, question_id, answer`` (empty = missing, NA = not applicable)."""
    own = problems is None
    problems = problems if problems is not None else Problems()
    out = HumanAnswers()
    header = _header(path, problems)
    if not _require_columns(path, header, ["text_id", "judge_id", "question_id", "answer"], problems,
                            "columns: text_id, judge_id, question_id, answer"):
        if own:
            problems.raise_if_any()
        return out
    rows: dict[tuple[str, str], dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    for n, row in _iter_rows(path, problems):
        text_id, judge, qid = str(row["text_id"]), str(row["judge_id"]), str(row["question_id"])
        if not rubric.has(qid):
            _unknown_question(path, n, qid, rubric, problems)
            continue
        a = _answer_index(row["answer"], rubric.question(qid), ("NA", "N/A"), path, n, problems, text_id, judge, out,
                          rubric.strict)
        if a is None:
            continue
        key = (text_id, judge)
        first.setdefault(key, n)
        if qid in rows.setdefault(key, {}):
            problems.add(path, n, f"text {text_id!r} judge {judge!r}: second answer to {qid}",
                         "keep one row per (text, judge, question)")
            continue
        rows[key][qid] = a
    for key, per_q in rows.items():
        answers = tuple(per_q.get(qid, MISSING) for qid in rubric.ids)
        out.annotations.append(Annotation(key[0], key[1], answers, str(path), first[key]))
    _check_duplicates(out, problems)
    warn_masked(out, path)
    if own:
        problems.raise_if_any()
    return out


def _check_duplicates(out: HumanAnswers, problems: Problems) -> None:
    seen: dict[tuple[str, str, str], int | None] = {}
    for a in out.annotations:
        key = (a.text_id, a.judge, a.session)
        if key in seen:
            problems.add(a.path, a.line, f"judge {a.judge!r} annotated text {a.text_id!r} twice (first at line "
                         f"{seen[key]})", "keep one annotation per (text, judge)")
        else:
            seen[key] = a.line


def read_human(path: str | Path, rubric: Rubric, fmt: str = "auto", problems: Problems | None = None) -> HumanAnswers:
    """Any human-answer format: ``synthetic`` (wide), ``long`` or ``auto`` (by the columns)."""
    if fmt == "auto":
        cols = _header(path, Problems())
        fmt = "synthetic" if "annotator_id" in cols else "long"
    if fmt == "synthetic":
        return read_synthetic_human(path, rubric, problems)
    if fmt == "long":
        return read_human_table(path, rubric, problems)
    raise InvalidValueError(f"unknown human table format {fmt!r}; valid: auto, synthetic, long")
