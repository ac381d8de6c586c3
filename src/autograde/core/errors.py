"""The error types of autograde, and input problems that name the file, the line and the fix.

Every error a user can cause or fix derives from :class:`AutogradeError`; the CLI and the workflow's rule
scripts catch that base and print its message (no traceback), so a message must say what is wrong and how to
fix it. Programming errors (bugs) stay ordinary exceptions and keep their traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Problem:
    """One problem found in one input: where it is and how to fix it."""

    path: str
    line: int | None
    message: str
    fix: str = ""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else f"{self.path}"
        text = f"{where}: {self.message}"
        if self.fix:
            text += f" (fix: {self.fix})"
        return text


class AutogradeError(Exception):
    """Base of the errors a user can fix: printed as a message, never as a traceback."""


class UnknownNameError(AutogradeError, KeyError):
    """A name the user gave (prompt class, measure, grader, query, source) that is not known; lists the valid ones.

    A ``KeyError`` for code that looks names up, but printed as its message (not quoted like a ``KeyError``).
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidValueError(AutogradeError, ValueError):
    """A value the user gave (an option, a prompt definition, a file's content) that cannot be used as it is."""


class ConfigError(AutogradeError, ValueError):
    """The experiment config is invalid; the message lists every problem with its key path."""


class GraderSetupError(AutogradeError, ValueError):
    """A grader cannot be built as configured (unknown prompt class, wrong scoring, missing model, ...)."""


class GPUUnavailableError(AutogradeError, RuntimeError):
    """A grading job needs a GPU and sees none."""


class EndpointError(AutogradeError, RuntimeError):
    """An LLM endpoint or engine gave no usable answer for a whole grading job (the cause is in the message)."""


class UnparseableAnswersError(AutogradeError, RuntimeError):
    """A grader answered, but none of its answers could be turned into a grade (the cause and fix in the message)."""


class InputError(AutogradeError, ValueError):
    """Raised with every problem found in the inputs, one per line."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        shown = self.problems[:50]
        more = len(self.problems) - len(shown)
        lines = [f"{len(self.problems)} problem(s) in the inputs:"] + [f"  - {p}" for p in shown]
        if more > 0:
            lines.append(f"  ... and {more} more")
        super().__init__("\n".join(lines))


@dataclass
class Problems:
    """A collector: add problems while reading, then ``raise_if_any()`` once."""

    items: list[Problem] = field(default_factory=list)

    def add(self, path: str | Path, line: int | None, message: str, fix: str = "") -> None:
        self.items.append(Problem(str(path), line, message, fix))

    def extend(self, other: Problems) -> None:
        self.items.extend(other.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise InputError(self.items)
