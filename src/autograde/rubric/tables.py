"""The answer tables the calibration network learns from, and the parsing helpers their readers share.

See :mod:`autograde.rubric.inputs` for the formats (LLM answers: :mod:`autograde.rubric.llm_answers`; human
answers: :mod:`autograde.rubric.human_answers`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograde.core.errors import Problems
from autograde.core.text import iter_lines
from autograde.rubric.definition import Question, Rubric

MISSING = -1
"""Option index of a missing or NA answer (masked out of the loss and the evaluation)."""

RENORMALIZE_TOLERANCE = 1e-4
"""Distributions whose mass differs from 1 by more than this are reported as renormalized (smaller, rounding-level
deviations are renormalized silently)."""


@dataclass
class LlmAnswers:
    """text -> question -> probabilities over the question's options (in the rubric's option order)."""

    probs: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    groups: dict[str, str | float] = field(default_factory=dict)
    """text -> cross-validation group (the text itself unless the input names a group; a grades table's query id,
    a float where its query_id cell is one)."""
    where: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    """text -> (file, line) of its first row, for error messages."""
    seen: dict[str, set[str]] = field(default_factory=dict)
    """text -> questions with a row (valid or not), so that a bad row is not also reported as missing."""
    renormalized: int = 0
    mass_min: float = 1.0
    mass_max: float = 1.0

    def note_mass(self, mass: float) -> None:
        """Count a distribution that had to be renormalized."""
        if abs(mass - 1.0) > RENORMALIZE_TOLERANCE:
            self.renormalized += 1
            self.mass_min = min(self.mass_min, mass)
            self.mass_max = max(self.mass_max, mass)

    def renormalized_note(self) -> str | None:
        """The sentence every output carries when distributions were renormalized."""
        if not self.renormalized:
            return None
        return (f"renormalized {self.renormalized} LLM distribution(s) whose probabilities summed to "
                f"{self.mass_min:.4g}..{self.mass_max:.4g} instead of 1")


@dataclass(frozen=True)
class Annotation:
    """One judge's answers about one text: option index per rubric question (MISSING where none)."""

    text_id: str
    judge: str
    answers: tuple[int, ...]
    path: str
    line: int | None
    session: str = ""
    """Distinguishes repeated annotations of a text by one judge (the synthetic data's ``round``)."""


@dataclass
class HumanAnswers:
    annotations: list[Annotation] = field(default_factory=list)
    screened_out: int = 0
    """(text, judge) rows dropped by a screening column (synthetic format: DQQ0 != 1)."""
    masked: dict[str, int] = field(default_factory=dict)
    """question -> NA answers masked although the rubric does not allow NA there (not strict)."""
    notes: list[str] = field(default_factory=list)
    """Sentences every output built from these answers repeats (the masked answers)."""


# ---------------------------------------------------------------------------------------------- rows


def _iter_delimited(path: Path, problems: Problems) -> Iterator[tuple[int, dict[str, str]]]:
    """Rows of a TSV / CSV file as (line, {column: text}); the header is line 1."""
    delim = "," if path.suffix.lower() == ".csv" else "\t"
    header: list[str] | None = None
    for n, line in iter_lines(path, problems):
        if not line.strip():
            continue
        cells = next(csv.reader([line], delimiter=delim, quoting=csv.QUOTE_NONE if delim == "\t" else csv.QUOTE_MINIMAL))
        if header is None:
            header = [c.strip() for c in cells]
            continue
        if len(cells) != len(header):
            problems.add(path, n, f"row has {len(cells)} columns, the header has {len(header)}",
                         "give every row the header's columns (tab-separated for .tsv)")
            continue
        yield n, dict(zip(header, (c.strip() for c in cells), strict=True))
    if header is None and not problems:
        problems.add(path, None, "file is empty", "give a header line and at least one row")


def _iter_rows(path: str | Path, problems: Problems) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a TSV, CSV or parquet table; for parquet the 'line' is the 1-based row number + 1 (header)."""
    p = Path(path)
    if p.suffix.lower() == ".parquet":
        if not p.exists():
            problems.add(p, None, "file not found", "check the path")
            return
        from autograde.core.tables import read_table

        df = read_table(p)
        for i, rec in enumerate(df.to_dict(orient="records")):
            yield i + 2, rec
        return
    yield from _iter_delimited(p, problems)


def _header(path: str | Path, problems: Problems) -> list[str]:
    p = Path(path)
    if p.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(p).names) if p.exists() else []
    for _n, line in iter_lines(p, Problems()):
        if line.strip():
            return [c.strip() for c in line.split("," if p.suffix.lower() == ".csv" else "\t")]
    return []


def _require_columns(path: str | Path, have: list[str], need: list[str], problems: Problems, fix: str) -> bool:
    if not Path(path).exists():
        problems.add(path, None, "file not found", "check the path (relative paths start at the working directory)")
        return False
    missing = [c for c in need if c not in have]
    if missing:
        problems.add(path, 1, f"missing column(s) {', '.join(missing)} (columns: {', '.join(have) or 'none'})", fix)
        return False
    return True


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip().lower() in ("", "nan", "none", "null")


def _number(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x


# ------------------------------------------------------------------------------------- distributions


def _distribution(values: dict[float, float], q: Question, path: str | Path, line: int | None,
                  problems: Problems, out: LlmAnswers, text_id: str) -> np.ndarray | None:
    """Check one distribution (option value -> probability) and return it renormalized, in option order."""
    bad = False
    vec = np.zeros(len(q.options))
    for value, p in values.items():
        if not math.isfinite(p):
            problems.add(path, line, f"text {text_id!r} question {q.id}: probability of option {value:g} is {p}",
                         "give finite probabilities between 0 and 1")
            bad = True
            continue
        if p < 0:
            problems.add(path, line, f"text {text_id!r} question {q.id}: negative probability {p:g} for option "
                         f"{value:g}", "probabilities must be >= 0; recompute them from the LLM's log-probabilities")
            bad = True
            continue
        i = q.option_index(value)
        if i is None:
            if p > 0:
                problems.add(path, line, f"text {text_id!r} question {q.id}: probability {p:g} for option {value:g}, "
                             f"which {q.id} does not have (options: {', '.join(f'{v:g}' for v in q.values)})",
                             f"fix the option values or the options of {q.id} in the rubric")
                bad = True
            continue
        vec[i] += p
    if bad:
        return None
    mass = float(vec.sum())
    if mass <= 0.0:
        problems.add(path, line, f"text {text_id!r} question {q.id}: all probabilities are zero",
                     "give the LLM's probability of every option (a question the LLM was not asked belongs "
                     "out of the rubric's 'inputs')")
        return None
    out.note_mass(mass)
    return vec / mass


def _add_distribution(out: LlmAnswers, text_id: str, q: Question, vec: np.ndarray | None, group: str | float | None,
                      path: str | Path, line: int | None, problems: Problems) -> None:
    per_text = out.probs.setdefault(text_id, {})
    out.where.setdefault(text_id, (str(path), line))
    out.seen.setdefault(text_id, set()).add(q.id)
    if group is not None:
        previous = out.groups.setdefault(text_id, group)
        if previous != group:
            problems.add(path, line, f"text {text_id!r} is in group {group!r} here and {previous!r} before",
                         "give each text one group_id")
    else:
        out.groups.setdefault(text_id, text_id)
    if q.id in per_text:
        problems.add(path, line, f"text {text_id!r} question {q.id}: second distribution",
                     "keep one row per (text, question)")
        return
    if vec is not None:
        per_text[q.id] = vec


def check_complete(llm: LlmAnswers, rubric: Rubric, problems: Problems) -> None:
    """Every text needs a distribution for every input question of the rubric."""
    for text_id in llm.probs:
        missing = [qid for qid in rubric.input_ids if qid not in llm.seen.get(text_id, set())]
        if missing:
            path, line = llm.where.get(text_id, ("?", None))
            problems.add(path, line, f"text {text_id!r} has LLM distributions for only some questions: "
                         f"{', '.join(missing)} missing",
                         "give a distribution for every input question, or drop the text (all its rows)")


def _unknown_question(path: str | Path, line: int | None, qid: str | float, rubric: Rubric, problems: Problems
                      ) -> None:
    problems.add(path, line, f"question id {qid!r} is not in rubric {rubric.name!r} (questions: "
                 f"{', '.join(rubric.ids)})", "add the question to the rubric YAML or remove these rows")
