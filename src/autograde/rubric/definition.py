"""The rubric: questions, their answer options, which one is the main task, where NA is allowed.

>>> r = Rubric.model_validate({"name": "demo", "main": "Q0", "questions": [
...     {"id": "Q0", "text": "Overall?", "options": {1: "bad", 2: "ok", 3: "good"}},
...     {"id": "Q1", "text": "Cited?", "options": [1, 2], "na": True}]})
>>> r.option_counts, r.question("Q1").values, r.input_ids
((3, 2), (1.0, 2.0), ('Q0', 'Q1'))

YAML (the bundled :data:`BUNDLED_RUBRIC`, LLM-RUBRIC's dialogue rubric, used when no rubric is given)::

    name: llm-rubric-dialogue
    main: Q0
    questions:
      - id: Q0
        text: "All in all, how would you rate your overall satisfaction ...?"
        options: {1: "1", 2: "2", 3: "3", 4: "4"}
      - id: Q8
        text: "Is the number of exchange turns appropriate ...?"
        options: {1: "No, fewer ...", 2: "No, more ...", 3: "Yes, ..."}
        na: true

``options`` maps each answer value (a number: the expected score is the probability-weighted mean of the
values) to its text, or is a plain list of values. ``na: true`` lets judges answer "not applicable", which
is masked out of training and evaluation like a missing answer; an NA answer to a question without
``na: true`` (the released real-dialogue file answers 0 in such a column) is masked for that question with one
warning per question, or refused as an input error with ``strict: true``. ``inputs`` (default: every question) lists the questions whose LLM
answer distributions are the network's input features.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator

from autograde.core.errors import Problems, UnknownNameError
from autograde.core.schema import Strict

__all__ = ["BUNDLED_RUBRIC", "Question", "Rubric", "load_rubric", "rubric_file"]

BUNDLED_RUBRIC = Path(__file__).resolve().parent / "dialogue.yaml"
"""LLM-RUBRIC's dialogue rubric (Q0..Q8), installed with the package: the rubric when none is given."""


def rubric_file(path: str | Path | None) -> Path:
    """The rubric YAML to read: ``path``, or the bundled one when it is not given."""
    return Path(path) if path else BUNDLED_RUBRIC


class Question(Strict):
    """One rubric question with its ordered answer options (value -> text)."""

    id: str = Field(min_length=1, description="question id used in every input table (Q0, Q1, relevance, ...)")
    text: str = Field(default="", description="the question as asked (documentation; not used for training)")
    options: dict[float, str] = Field(description="answer value -> answer text, at least two; values are numbers")
    na: bool = Field(default=False, description="judges may answer 'not applicable' (masked like a missing answer)")

    @field_validator("options", mode="before")
    @classmethod
    def _list_to_map(cls, v: Any) -> Any:
        if isinstance(v, list):
            return {x: str(x) for x in v}
        return v

    @field_validator("options")
    @classmethod
    def _two_or_more(cls, v: dict[float, str]) -> dict[float, str]:
        if len(v) < 2:
            raise ValueError(f"a question needs at least two answer options, got {len(v)}")
        return dict(sorted(v.items()))

    @property
    def values(self) -> tuple[float, ...]:
        """The answer values in increasing order (option index i <-> values[i])."""
        return tuple(float(x) for x in self.options)

    def option_index(self, value: float) -> int | None:
        """Index of an answer value, or None if it is not one of the options."""
        for i, x in enumerate(self.values):
            if abs(x - value) < 1e-9:
                return i
        return None


class Rubric(Strict):
    """Questions asked of the LLM and of the human judges; ``main`` is the task fine-tuning focuses on."""

    name: str = Field(default="rubric", description="a name for reports")
    main: str = Field(description="id of the main-task question (LLM-RUBRIC: Q0, overall quality)")
    questions: list[Question] = Field(min_length=1, description="the questions, in feature order")
    inputs: list[str] | None = Field(default=None, description="questions whose LLM distributions are input "
                                     "features (default: all)")
    strict: bool = Field(default=False, description="an NA answer to a question without 'na: true' is an error "
                         "(default: it is masked for that question, with one warning per question)")

    @model_validator(mode="after")
    def _consistent(self) -> Rubric:
        ids = [q.id for q in self.questions]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"question ids repeat: {', '.join(dup)}")
        if self.main not in ids:
            raise ValueError(f"main question {self.main!r} is not among the questions ({', '.join(ids)})")
        unknown = [i for i in (self.inputs or []) if i not in ids]
        if unknown:
            raise ValueError(f"inputs name unknown questions: {', '.join(unknown)} (questions: {', '.join(ids)})")
        return self

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(q.id for q in self.questions)

    @property
    def input_ids(self) -> tuple[str, ...]:
        return tuple(self.inputs) if self.inputs is not None else self.ids

    @property
    def option_counts(self) -> tuple[int, ...]:
        return tuple(len(q.options) for q in self.questions)

    @property
    def main_index(self) -> int:
        return self.ids.index(self.main)

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise UnknownNameError(f"question {qid!r} is not in rubric {self.name!r} (questions: {', '.join(self.ids)})")

    def has(self, qid: str) -> bool:
        return qid in self.ids


def load_rubric(path: str | Path | None = None) -> Rubric:
    """Read and validate a rubric YAML (the bundled one when ``path`` is not given); every problem is reported
    with its file, line and fix."""
    from autograde.core.yamlfile import read_yaml, yaml_key_lines

    problems = Problems()
    p = rubric_file(path)
    if not p.is_file():
        problems.add(p, None, "rubric file not found", "check the path (a relative path starts at the working "
                     f"directory, {Path.cwd()}), or give no rubric to use the bundled dialogue rubric")
        problems.raise_if_any()
    raw = read_yaml(p, "rubric")
    if not isinstance(raw, dict):
        problems.add(p, 1, "a rubric must be a mapping with 'main' and 'questions'",
                     f"see the bundled rubric for the format ({BUNDLED_RUBRIC})")
        problems.raise_if_any()
    lines = {k[1]: v for k, v in yaml_key_lines(p).items() if len(k) == 2 and k[0] == "questions"}
    for i, q in enumerate(raw.get("questions") or []):
        try:
            Question.model_validate(q)
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(x) for x in err["loc"])
                problems.add(p, lines.get(i), f"question {i + 1}: {loc}: {err['msg']}",
                             "each question needs an id and options (value: text, at least two)")
    problems.raise_if_any()
    try:
        return Rubric.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            loc = ".".join(str(x) for x in err["loc"]) or "rubric"
            problems.add(p, None, f"{loc}: {err['msg']}",
                         "give 'main' (a question id), 'questions' (a list) and optionally 'inputs'")
        problems.raise_if_any()
        raise AssertionError("unreachable") from None
