"""Run files read in bulk (``read_run_table``) give what the line reader (``read_run``) gives: rows and problems."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from autograde.core.errors import Problems
from autograde.io.run_table import read_run_table
from autograde.io.trec import read_run

GOOD = (
    "\ufeffq1 Q0 d1 1 2.5 sysA\n"
    "q1\tQ0\td2\t2\t1.0e0\tsysA\r\n"  # tabs, CRLF, scientific score
    "  q1  Q0 d3 3.0 -1 sysA  \n"  # blanks around, rank written 3.0
    "\n \t \n"  # blank lines
    "q2 Q0 d1 1 7 sysB\n"
    "q2 Q0 d\u00e9 2 6 sysB\n"
)
BAD = (
    "q1 Q0 d1 1 2.5 sysA\n"
    "q1 Q0 d2 2 nan sysA\n"  # NaN score
    "q1 Q0 d3 1.5 0.5 sysA\n"  # fractional rank
    "q1 Q0 d4 4 x sysA\n"  # not a number
    "q1 Q0 d5 5 sysA\n"  # 5 columns
    "q1 Q0 d1 6 0.1 sysA\n"  # duplicate document
    "q1\u00a0Q0 d6 7 0.1 sysA\n"  # a no-break space: str.split() splits there, so does the table reader
)


def as_rows(path: Path, chunk: int) -> tuple[list[tuple], list[str]]:
    probs = Problems()
    df = read_run_table(path, probs, chunk_bytes=chunk)
    rows = sorted((r.run, r.query_id, r.passage_id, int(r.rank), float(r.score)) for r in df.itertuples())
    return rows, sorted(str(p) for p in probs.items)


def line_rows(path: Path) -> tuple[list[tuple], list[str]]:
    probs = Problems()
    rf = read_run(path, probs)
    rows = sorted((tag, q, d, rf.ranks[tag][q][d], s) for tag, run in rf.runs.items() for q, docs in run.items()
                  for d, s in docs.items())
    return rows, sorted(str(p) for p in probs.items)


@pytest.mark.parametrize("text", [GOOD, BAD], ids=["good", "bad"])
@pytest.mark.parametrize("chunk", [1 << 20, 16])
@pytest.mark.parametrize("gz", [False, True])
def test_table_reader_equals_line_reader(tmp_path: Path, text: str, chunk: int, gz: bool) -> None:
    path = tmp_path / ("r.run.gz" if gz else "r.run")
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert as_rows(path, chunk) == line_rows(path)
    if text is BAD:
        _rows, problems = as_rows(path, chunk)
        assert any("r.run" in p and ":6: duplicate document 'd1'" in p for p in problems), problems


def test_lines_and_types(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_text(GOOD, encoding="utf-8")
    df = read_run_table(path, Problems())
    assert df["line"].tolist() == [1, 2, 3, 6, 7]
    assert df["rank"].dtype == "int64" and df["score"].dtype == "float64"
    assert isinstance(df["passage_id"].dtype, pd.StringDtype)  # Arrow-backed strings, not Python objects


def test_empty_file_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_text("\n")
    probs = Problems()
    assert read_run_table(path, probs).empty
    assert [str(p) for p in probs.items] == [f"{path}: run file is empty (fix: give a run file with at least one line)"]
