"""TREC run files read in bulk into a table: 10^7 lines without a Python object per line.

The file is read in chunks of whole lines; each chunk is parsed by pyarrow's CSV reader after its whitespace is
normalized (TREC runs allow any whitespace between columns). A chunk the fast path cannot vouch for (a wrong
column count, a score or rank that is not a finite number or an integer, bad UTF-8, unusual whitespace) is read
line by line by :func:`autograde.io.trec.parse_run_line`, which reports each problem with its file and line
exactly as :func:`autograde.io.trec.read_run` does. Duplicate documents within a query of a run are found on the
whole table (the first line is kept, each repeat is a problem naming its line).

>>> import tempfile, os
>>> d = tempfile.mkdtemp(); p = os.path.join(d, "r.run")
>>> _ = open(p, "w").write("q1 Q0 d1 1 2.5 sys\\nq1\\tQ0 d2  2 1.0 sys\\n")
>>> read_run_table(p, Problems())[["query_id", "passage_id", "rank", "score", "line"]].values.tolist()
[['q1', 'd1', 1, 2.5, 1], ['q1', 'd2', 2, 1.0, 2]]
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autograde.core.errors import Problems
from autograde.core.text import CHUNK_BYTES, iter_chunks
from autograde.io.bulk import Lines, valid_utf8
from autograde.io.trec import DUPLICATE_FIX, duplicate_message, parse_run_line

RUN_COLUMNS = ["run", "query_id", "passage_id", "rank", "score", "line"]
_BLANKS = re.compile(rb"[ \t\r\f\v]{2,}|[\t\r\f\v]")
_EDGES = re.compile(rb"^ | $", re.M)
_OTHER_SPACE = re.compile(rb"[\x1c-\x1f]|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|"
                          rb"\xe3\x80\x80")
"""Whitespace that ``str.split()`` splits on but the fast path does not: such a chunk goes line by line."""


def _odd_space(chunk: bytes) -> bool:
    """Whether the chunk has whitespace that ``str.split()`` splits on but the fast path does not."""
    if any(c in chunk for c in (b"\x1c", b"\x1d", b"\x1e", b"\x1f")):
        return True
    return not chunk.isascii() and _OTHER_SPACE.search(chunk) is not None


def _fast(chunk: bytes, first_line: int) -> Any | None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    if not valid_utf8(chunk) or _odd_space(chunk):
        return None
    norm = chunk
    if any(c in norm for c in (b"\t", b"\r", b"\f", b"\v", b"  ")):
        norm = _BLANKS.sub(b" ", norm)
    if norm.startswith(b" ") or b"\n " in norm or b" \n" in norm or norm.endswith(b" "):
        norm = _EDGES.sub(b"", norm)
    lines = Lines.of(np.frombuffer(norm, dtype=np.uint8))
    names = ["query_id", "q0", "passage_id", "rank", "score", "run"]
    try:
        table = pcsv.read_csv(
            io.BytesIO(norm),
            read_options=pcsv.ReadOptions(column_names=names, block_size=max(len(norm), 1 << 20), use_threads=False),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False,
                                            ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(
                column_types={n: pa.string() for n in names if n != "score"} | {"score": pa.float64()},
                null_values=[], strings_can_be_null=False, include_columns=["run", "query_id", "passage_id", "rank",
                                                                            "score"]))
        rank = pc.cast(table["rank"], pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    rows = np.flatnonzero(lines.filled)
    if table.num_rows != len(rows) or not pc.all(pc.is_finite(table["score"])).as_py():
        return None
    return table.set_column(table.schema.get_field_index("rank"), "rank", rank).append_column(
        "line", pa.array(first_line + rows, pa.int64())).select(RUN_COLUMNS)


def _slow(chunk: bytes, first_line: int, path: str, probs: Problems) -> Any:
    import pyarrow as pa

    cols: dict[str, list[Any]] = {c: [] for c in RUN_COLUMNS}
    for i, raw in enumerate(chunk.split(b"\n")[: chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)]):
        n = first_line + i
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as exc:
            probs.add(path, n, f"not valid UTF-8 ({exc.reason} at byte {exc.start})", "re-encode the file as UTF-8")
            continue
        row = parse_run_line(path, n, line, probs)
        if row is None:
            continue
        qid, docid, rank, score, tag = row
        for c, v in zip(RUN_COLUMNS, (tag, qid, docid, rank, score, n), strict=True):
            cols[c].append(v)
    types = [pa.string(), pa.string(), pa.string(), pa.int64(), pa.float64(), pa.int64()]
    return pa.table({c: pa.array(cols[c], t) for c, t in zip(RUN_COLUMNS, types, strict=True)})


def _drop_repeats(table: Any, path: str, problems: Problems) -> Any:
    """The table without repeated (run, query, document) rows (the first is kept); each repeat is a problem.

    Rows are compared by the dictionary codes of their values (pyarrow, no object per row); only the rows that
    repeat another are turned into Python values, to be reported.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    codes = [pc.dictionary_encode(table[c].combine_chunks()).indices.to_numpy()
             for c in ("run", "query_id", "passage_id")]
    order = np.lexsort(codes[::-1])  # stable: among equal rows the first line comes first
    same = np.ones(len(order) - 1, dtype=bool) if len(order) else np.zeros(0, dtype=bool)
    for c in codes:
        same &= c[order][1:] == c[order][:-1]
    if not same.any():
        return table
    drop = np.sort(order[1:][same])
    rows = table.take(pa.array(drop)).select(["run", "query_id", "passage_id", "line"]).to_pylist()
    for r in rows:
        problems.add(path, r["line"], duplicate_message(r["passage_id"], r["query_id"], r["run"]), DUPLICATE_FIX)
    keep = np.ones(table.num_rows, dtype=bool)
    keep[drop] = False
    return table.filter(pa.array(keep))


def read_run_table(path: str | Path, problems: Problems, chunk_bytes: int = CHUNK_BYTES) -> pd.DataFrame:
    """The lines of a run file as a table (columns :data:`RUN_COLUMNS`), problems added to ``problems``.

    Same checks and messages as :func:`autograde.io.trec.read_run`: wrong column count, a score that is not a
    finite number, a rank that is not an integer, a duplicate document within a query of a run, an empty file.
    """
    import pyarrow as pa

    p = str(path)
    parts = []
    for first_line, _offset, chunk in iter_chunks(p, problems, chunk_bytes):
        table = _fast(chunk, first_line)
        parts.append(table if table is not None else _slow(chunk, first_line, p, problems))
        pa.default_memory_pool().release_unused()  # the chunk's parse buffers go back, not only to the pool
    if parts:
        df = _drop_repeats(pa.concat_tables(parts), p, problems).to_pandas()
    else:
        df = pd.DataFrame({c: pd.Series(dtype="int64" if c in ("rank", "line") else "float64" if c == "score"
                                        else "str") for c in RUN_COLUMNS})
    if df.empty and not any(x.path == p for x in problems.items):
        problems.add(p, None, "run file is empty", "give a run file with at least one line")
    return df
