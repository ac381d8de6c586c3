"""Human judgments of a TREC qrels file, read once for the pre-job checks and the estimates alike: one judgment per
(query, passage) with the line that gives it, every problem with file, line and fix (:func:`read_human_judgments`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from autograde.core.errors import Problems
from autograde.core.ids import PairKey
from autograde.core.log import logger

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence


MAX_PER_KIND = 20
"""Lines reported per kind of problem; the rest are counted in one more line."""


@dataclass(frozen=True)
class Judgment:
    """One human judgment: its grade and the line of the qrels file that gives it (the first, when repeated)."""

    grade: int
    line: int


class _Kinds:
    """Problems of one file, at most :data:`MAX_PER_KIND` lines per kind, the rest counted."""

    def __init__(self, path: str, problems: Problems) -> None:
        self.path, self.problems = path, problems
        self.counts: dict[str, int] = {}

    def add(self, kind: str, line: int | None, message: str, fix: str) -> None:
        n = self.counts[kind] = self.counts.get(kind, 0) + 1
        if n <= MAX_PER_KIND:
            self.problems.add(self.path, line, message, fix)

    def close(self) -> None:
        for kind, n in self.counts.items():
            if n > MAX_PER_KIND:
                self.problems.add(self.path, None, f"... and {n - MAX_PER_KIND} more line(s) with {kind}")


def _looks_like_csv(path: str) -> int | None:
    """The line number of the first non-empty line when it is comma- or semicolon-separated text rather than a
    qrels line (a spreadsheet export), else None."""
    from autograde.core.text import iter_lines

    for n, line in iter_lines(path, Problems()):
        if not line.strip():
            continue
        separated = any(len(line.split(sep)) >= 3 for sep in (",", ";"))
        return n if separated and len(line.split()) != 4 else None
    return None


def read_human_judgments(path: str, problems: Problems, levels: Sequence[int] | None = None,
                         queries: Collection[str] | None = None,
                         pool: Collection[PairKey] | None = None) -> dict[PairKey, Judgment]:
    """The human judgments of a TREC qrels file, one per (query, passage), each problem added to ``problems``
    (module doc): no judgment at all, comma-separated text, an unknown query (``queries``), a passage outside the
    ``pool``, a grade outside ``levels``, two different grades of one passage. An identical repeat is logged as a
    warning and counted once."""
    from autograde.io.trec import qrels_lines

    csv_line = _looks_like_csv(path)
    if csv_line is not None:
        problems.add(path, csv_line, "this is comma-separated text, not a TREC qrels file", "write one judgment per "
                     "line as 'query_id 0 passage_id grade' (whitespace-separated; the judging page exports this)")
        return {}
    kinds = _Kinds(path, problems)
    allowed = set(levels) if levels is not None else None
    out: dict[PairKey, Judgment] = {}
    repeats: list[tuple[int, int]] = []
    seen_lines = 0
    malformed = Problems()
    for n, q, d, g in qrels_lines(path, malformed):
        seen_lines += 1
        key = (q, d)
        if queries is not None and q not in queries:
            kinds.add("an unknown query", n, f"query {q!r} is not a query of the experiment (data.queries)",
                      "judge the experiment's queries only (the judging page's worklist), or remove the line")
            continue
        if pool is not None and key not in pool:
            kinds.add("a passage outside the pool", n, f"query {q!r} passage {d!r} is not in the pool, so no "
                      "design could have drawn it", "judge only pooled passages (the worklist of autograde sample "
                      "draw), or remove the line")
            continue
        if allowed is not None and g not in allowed:
            kinds.add("a grade outside the scale", n, f"grade {g} is not one of human_sample.levels "
                      f"{sorted(allowed)}", "use the grade scale of the design, or set human_sample.levels")
            continue
        first = out.get(key)
        if first is None:
            out[key] = Judgment(g, n)
        elif first.grade == g:
            repeats.append((n, first.line))
        else:
            kinds.add("conflicting grades", n, f"query {q!r} passage {d!r} is judged {g} here and {first.grade} on "
                      f"line {first.line}", "keep the one judgment you mean (a passage has one human grade)")
    for p in malformed.items:
        kinds.add("a malformed line", p.line, p.message, p.fix)
    kinds.close()
    if not seen_lines and not malformed:
        problems.add(path, None, "the file holds no judgment: estimates from no human label would be certain of "
                     "nothing while claiming zero-width intervals", "judge the worklist first (the judging page), "
                     "or set human_sample.qrels: null until there are judgments")
    if repeats:
        shown = ", ".join(f"line {n} repeats line {first}" for n, first in repeats[:10])
        logger.warning("%s: %d judgment(s) repeated with the same grade, counted once: %s%s (fix: remove the "
                       "repeated lines)", path, len(repeats), shown, " ..." if len(repeats) > 10 else "")
    return out
