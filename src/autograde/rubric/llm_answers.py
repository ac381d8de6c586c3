"""Reading LLM answer distributions per (text, question): LLM-RUBRIC's synthetic TSV, our long table, our grades.

See :mod:`autograde.rubric.inputs` for the formats and the error policy.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from autograde.core.errors import InvalidValueError, Problems
from autograde.core.log import logger
from autograde.rubric.definition import Rubric
from autograde.rubric.tables import (
    LlmAnswers,
    _add_distribution,
    _distribution,
    _header,
    _is_missing,
    _iter_rows,
    _number,
    _require_columns,
    _unknown_question,
    check_complete,
)

_ANSWER_PROB = re.compile(r"^answer(\d+)_prob$")


def read_synthetic_llm(path: str | Path, rubric: Rubric, problems: Problems | None = None) -> LlmAnswers:
    """LLM-RUBRIC's released LLM table: ``text_id, criterion, sample_llm, answer1_prob .. answerK_prob``.

    ``answer{k}_prob`` is the probability of answer value k. Rows of questions outside the rubric's inputs
    but inside the rubric are skipped; rows of unknown questions are errors.
    """
    own = problems is None
    problems = problems if problems is not None else Problems()
    out = LlmAnswers()
    header = _header(path, problems)
    prob_cols = {c: float(m.group(1)) for c in header if (m := _ANSWER_PROB.match(c))}
    if _require_columns(path, header, ["text_id", "criterion"], problems,
                        "the synthetic LLM format has text_id, criterion, answer1_prob .. answerK_prob") and not prob_cols:
        problems.add(path, 1, "no answer<k>_prob columns", "name the probability columns answer1_prob, answer2_prob, ...")
    if problems:
        if own:
            problems.raise_if_any()
        return out
    inputs = set(rubric.input_ids)
    for n, row in _iter_rows(path, problems):
        text_id, qid = str(row["text_id"]), str(row["criterion"])
        if not rubric.has(qid):
            _unknown_question(path, n, qid, rubric, problems)
            continue
        if qid not in inputs:
            continue
        values: dict[float, float] = {}
        for col, value in prob_cols.items():
            x = _number(row[col])
            if x is None:
                problems.add(path, n, f"{col} = {row[col]!r} is not a number", "give probabilities as numbers")
                x = float("nan")
            values[value] = x
        if any(math.isnan(v) for v in values.values()):
            out.seen.setdefault(text_id, set()).add(qid)
            continue
        q = rubric.question(qid)
        _add_distribution(out, text_id, q, _distribution(values, q, path, n, problems, out, text_id), None, path, n,
                          problems)
    check_complete(out, rubric, problems)
    if own:
        problems.raise_if_any()
    return out


def _parse_probs(raw: Any, path: str | Path, line: int | None, problems: Problems) -> dict[float, float] | None:
    """``{"1": 0.2, "2": 0.8}`` (JSON text or a mapping) -> {1.0: 0.2, 2.0: 0.8}."""
    obj = raw
    if isinstance(raw, str):
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.add(path, line, f"probs is not valid JSON: {exc.msg}", 'write probs as {"1": 0.1, "2": 0.9}')
            return None
    if not isinstance(obj, dict) or not obj:
        problems.add(path, line, "probs must be a non-empty JSON object {option value: probability}",
                     'write probs as {"1": 0.1, "2": 0.9}')
        return None
    out: dict[float, float] = {}
    for k, v in obj.items():
        key, val = _number(k), _number(v)
        if key is None or val is None:
            problems.add(path, line, f"probs entry {k!r}: {v!r} is not (number: number)",
                         "option values and probabilities must be numbers")
            return None
        out[key] = val
    return out


def read_llm_table(path: str | Path, rubric: Rubric, problems: Problems | None = None) -> LlmAnswers:
    """Our long LLM table: ``text_id, question_id, probs`` (+ optional ``group_id``), TSV, CSV or parquet."""
    own = problems is None
    problems = problems if problems is not None else Problems()
    out = LlmAnswers()
    header = _header(path, problems)
    if not _require_columns(path, header, ["text_id", "question_id", "probs"], problems,
                            'columns: text_id, question_id, probs (JSON {"value": probability}), optional group_id'):
        if own:
            problems.raise_if_any()
        return out
    inputs = set(rubric.input_ids)
    for n, row in _iter_rows(path, problems):
        text_id, qid = str(row["text_id"]), str(row["question_id"])
        if not rubric.has(qid):
            _unknown_question(path, n, qid, rubric, problems)
            continue
        if qid not in inputs:
            continue
        values = _parse_probs(row["probs"], path, n, problems)
        if values is None:
            out.seen.setdefault(text_id, set()).add(qid)
            continue
        q = rubric.question(qid)
        group = None if _is_missing(row.get("group_id")) else str(row.get("group_id"))
        _add_distribution(out, text_id, q, _distribution(values, q, path, n, problems, out, text_id), group, path, n,
                          problems)
    check_complete(out, rubric, problems)
    if own:
        problems.raise_if_any()
    return out


def _label_values(df: Any) -> dict[tuple[str, str], float]:
    """(grader, answer label) -> the grade the grader gave that label, from the table's answer/grade pairs."""
    label_value: dict[tuple[str, str], float] = {}
    if {"answer", "grade"} <= set(df.columns):
        for g, a, v in df[["grader", "answer", "grade"]].dropna().itertuples(index=False):
            label_value.setdefault((str(g), str(a)), float(v))
    return label_value


def _grade_values(obj: Any, grader: str, label_value: dict[tuple[str, str], float], path: Path, n: int,
                  problems: Problems) -> dict[float, float]:
    """One ``grade_probs`` entry as value -> probability (labels mapped to grades); ``{}`` after a problem."""
    values: dict[float, float] = {}
    for label, prob in obj.items():
        v = _number(label)
        if v is None:
            v = label_value.get((grader, str(label)))
        if v is None:
            problems.add(path, n, f"grader {grader!r}: label {label!r} has no numeric value",
                         "use numeric labels, or a grader whose table shows the grade of every label")
            return {}
        values[v] = values.get(v, 0.0) + float(prob)
    return values


def _reduce_items(dists: list[dict[float, float]], items: str) -> dict[float, float]:
    """Several items' distributions of one passage as one: the mean, or (``max``) the highest expected grade's."""
    if len(dists) == 1:
        return dists[0]
    if items == "max":
        return max(dists, key=lambda d: sum(k * v for k, v in d.items()) / max(sum(d.values()), 1e-12))
    keys = sorted({k for d in dists for k in d})
    return {k: float(np.mean([d.get(k, 0.0) for d in dists])) for k in keys}


def read_grades_llm(path: str | Path, rubric: Rubric, problems: Problems | None = None,
                    items: str = "mean") -> LlmAnswers:
    """Our grades parquet as LLM answers: question = grader, text = ``query_id/passage_id``, group = query.

    ``grade_probs`` holds the distribution over the grader's labels; numeric labels are the option values,
    other labels take the grade the grader gave them (the ``answer`` -> ``grade`` pairs of the table). A grader
    with several items per passage (a question bank) is reduced to one distribution per passage:
    ``items="mean"`` averages the items' distributions, ``"max"`` keeps the item with the highest expected
    grade, ``"error"`` refuses. Rows without a distribution (generate scoring, failures) are errors: only
    logits scoring gives distributions.
    """
    from autograde.core.tables import read_table

    own = problems is None
    problems = problems if problems is not None else Problems()
    out = LlmAnswers()
    p = Path(path)
    if not p.exists():
        problems.add(p, None, "file not found", "check the path to the grades parquet")
        if own:
            problems.raise_if_any()
        return out
    df = read_table(p)
    if not _require_columns(p, list(df.columns), ["query_id", "passage_id", "item_id", "grader", "grade_probs"],
                            problems, "give a grades table written by 'autograde grade'"):
        if own:
            problems.raise_if_any()
        return out
    label_value = _label_values(df)
    inputs = set(rubric.input_ids)
    # ids as read: a float cell (NaN, or a float column) stays a float, as the query id and group of the text
    dists: dict[tuple[str | float, str | float, str], list[tuple[int, dict[float, float]]]] = {}
    for i, rec in enumerate(df[["query_id", "passage_id", "item_id", "grader", "grade_probs"]].itertuples(index=False)):
        n = i + 2
        qid_, pid, _item, grader, raw = (str(x) if not isinstance(x, float) else x for x in rec)
        if not isinstance(grader, str) or not rubric.has(grader):  # a float is never a question id
            _unknown_question(p, n, grader, rubric, problems)
            continue
        if grader not in inputs:
            continue
        if _is_missing(raw):
            problems.add(p, n, f"grader {grader!r} has no grade_probs for query {qid_!r} passage {pid!r}",
                         "grade with 'scoring: logits' so that every grade carries its distribution")
            continue
        values = _grade_values(json.loads(raw) if isinstance(raw, str) else raw, grader, label_value, p, n, problems)
        if values:
            dists.setdefault((qid_, pid, grader), []).append((n, values))
    for (qid_, pid, grader), entries in sorted(dists.items()):
        q = rubric.question(grader)
        n = entries[0][0]
        text_id = f"{qid_}/{pid}"
        if len(entries) > 1 and items == "error":
            problems.add(p, n, f"grader {grader!r} has {len(entries)} items for passage {pid!r}",
                         "use a direct grader (one item per passage) or items='mean'")
            continue
        vec = _distribution(_reduce_items([d for _, d in entries], items), q, p, n, problems, out, text_id)
        _add_distribution(out, text_id, q, vec, qid_, p, n, problems)
    check_complete(out, rubric, problems)
    if own:
        problems.raise_if_any()
    return out


def read_llm(path: str | Path, rubric: Rubric, fmt: str = "auto", problems: Problems | None = None) -> LlmAnswers:
    """Any LLM-answer format: ``synthetic``, ``long``, ``grades`` or ``auto`` (by the columns)."""
    if fmt == "auto":
        cols = _header(path, Problems())
        fmt = "synthetic" if "criterion" in cols else "grades" if "grade_probs" in cols else "long"
    readers = {"synthetic": read_synthetic_llm, "long": read_llm_table, "grades": read_grades_llm}
    if fmt not in readers:
        raise InvalidValueError(f"unknown LLM table format {fmt!r}; valid: auto, {', '.join(readers)}")
    result = readers[fmt](path, rubric, problems)
    note = result.renormalized_note()
    if note:
        logger.warning("%s: %s", path, note)
    return result


# --------------------------------------------------------------------------------------------- humans
