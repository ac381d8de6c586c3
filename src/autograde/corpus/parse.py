"""One chunk of a corpus file -> the index entries of its records, in bulk (numpy + pyarrow, no object per line).

A chunk is a run of whole lines (:func:`autograde.core.text.iter_chunks`). The fast paths parse JSONL with
pyarrow's JSON reader and split TSV on the first tab with numpy; anything they cannot vouch for (bad UTF-8, a
malformed line, a record whose id or text is missing or of another type, an id with surrounding blanks) sends
the whole chunk through the line readers of :mod:`autograde.io.corpus`, which report each problem with its
file and line exactly as a full read does.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

from autograde.core.errors import Problems
from autograde.core.ids import fnv1a64_spans, id_keys
from autograde.core.text import DuplicateKeyError, loads_strict
from autograde.io.bulk import WHITESPACE, Lines, string_spans, valid_utf8
from autograde.io.corpus import ID_KEYS, JSONL_FIX, TEXT_KEYS, TSV_FIX, doc_from_json, doc_from_tsv


@dataclass
class Entries:
    """Index entries of one chunk: id key, byte start within the chunk, line length (no newline), line number."""

    keys: np.ndarray
    starts: np.ndarray
    lengths: np.ndarray
    lines: np.ndarray

    @classmethod
    def empty(cls) -> Entries:
        z = np.zeros(0, dtype=np.int64)
        return cls(np.zeros(0, dtype=np.uint64), z, z, z)


def _jsonl_fast(chunk: bytes, lines: Lines, first_line: int) -> Entries | None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    if not valid_utf8(chunk):
        return None
    text_fields = [(k, pa.string()) for k in TEXT_KEYS]
    table = None
    for id_type in (pa.string(), pa.int64()):
        schema = pa.schema([*((k, id_type) for k in ID_KEYS), *text_fields])
        try:
            table = pj.read_json(io.BytesIO(chunk), read_options=pj.ReadOptions(block_size=max(len(chunk), 1 << 20)),
                                 parse_options=pj.ParseOptions(explicit_schema=schema,
                                                               unexpected_field_behavior="ignore"))
            break
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
    if table is None or table.num_rows != int(lines.filled.sum()):
        return None
    ids = pc.coalesce(*(table[k].cast(pa.string()) for k in ID_KEYS))
    texts = pc.coalesce(*(table[k] for k in TEXT_KEYS))
    if ids.null_count or texts.null_count:
        return None  # a record without id or text (or with a null one): the line reader names it
    data, starts, lengths = string_spans(ids)
    keys = fnv1a64_spans(data, starts, lengths)
    rows = np.flatnonzero(lines.filled)
    return Entries(keys, lines.starts[rows], lines.ends[rows] - lines.starts[rows], first_line + rows)


def _tsv_fast(arr: np.ndarray, chunk: bytes, lines: Lines, first_line: int, path: str,
              probs: Problems) -> Entries | None:
    if not valid_utf8(chunk):
        return None
    rows = np.flatnonzero(lines.filled)
    starts, ends = lines.starts[rows], lines.ends[rows]
    tabs = np.flatnonzero(arr == 9)
    at = np.searchsorted(tabs, starts)
    if len(tabs):
        tab = tabs[np.minimum(at, len(tabs) - 1)]
        has_tab = (at < len(tabs)) & (tab < ends)
    else:
        tab, has_tab = np.zeros_like(starts), np.zeros(len(starts), dtype=bool)
    for r in np.flatnonzero(~has_tab):
        probs.add(path, int(first_line + rows[r]), "expected 'doc_id<TAB>text'", TSV_FIX)
    starts, ends, tab, rows = starts[has_tab], ends[has_tab], tab[has_tab], rows[has_tab]
    lengths = tab - starts
    keys = fnv1a64_spans(arr, starts, lengths)
    padded = np.flatnonzero((lengths > 0) & (np.isin(arr[starts], WHITESPACE) | np.isin(arr[np.maximum(tab - 1, 0)],
                                                                                         WHITESPACE)))
    if len(padded):  # ids with blanks around them are stripped, as the line reader does
        keys[padded] = id_keys([chunk[s:t].decode("utf-8").strip() for s, t in zip(starts[padded], tab[padded],
                                                                                 strict=True)])
    return Entries(keys, starts, ends - starts, first_line + rows)


def _slow(chunk: bytes, lines: Lines, first_line: int, path: str, tsv: bool, probs: Problems) -> Entries:
    """Line by line with the line readers' checks (the chunk has a problem, or a form the fast path skips)."""
    ids: list[str] = []
    kept: list[int] = []
    for i, (s, e) in enumerate(zip(lines.starts.tolist(), lines.ends.tolist(), strict=True)):
        n = first_line + i
        try:
            line = chunk[s:e].decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as exc:
            probs.add(path, n, f"not valid UTF-8 ({exc.reason} at byte {exc.start})", "re-encode the file as UTF-8")
            continue
        if not line.strip():
            continue
        if tsv:
            doc = doc_from_tsv(path, n, line, probs)
        else:
            doc = _json_doc(path, n, line, probs)
        if doc is not None:
            ids.append(doc[0])
            kept.append(i)
    idx = np.array(kept, dtype=np.int64)
    return Entries(id_keys(ids), lines.starts[idx], lines.ends[idx] - lines.starts[idx], first_line + idx)


def _json_doc(path: str, n: int, line: str, probs: Problems) -> tuple[str, str] | None:
    import json

    try:
        rec = loads_strict(line)
    except DuplicateKeyError as exc:
        probs.add(path, n, str(exc), "keep one entry per key")
        return None
    except json.JSONDecodeError as exc:
        probs.add(path, n, f"not valid JSON: {exc.msg} (column {exc.colno})", JSONL_FIX)
        return None
    if not isinstance(rec, dict):
        probs.add(path, n, f"expected a JSON object, got {type(rec).__name__}", JSONL_FIX)
        return None
    return doc_from_json(path, n, rec, probs)


def chunk_entries(chunk: bytes, first_line: int, path: str, tsv: bool, probs: Problems) -> Entries:
    """The index entries of one chunk of whole lines; problems (with file and line) go to ``probs``."""
    arr = np.frombuffer(chunk, dtype=np.uint8)
    lines = Lines.of(arr)
    fast = _tsv_fast(arr, chunk, lines, first_line, path, probs) if tsv else _jsonl_fast(chunk, lines, first_line)
    return fast if fast is not None else _slow(chunk, lines, first_line, path, tsv, probs)


def line_record(source: str, tsv: bool, raw: bytes) -> tuple[str, str] | None:
    """``(doc_id, text)`` of one line the index build accepted (read back later); None when it is not a record (the
    file changed since)."""
    import json

    probs = Problems()
    try:
        line = raw.decode("utf-8").rstrip("\r")
        if tsv:
            return doc_from_tsv(source, 0, line, probs)
        rec = json.loads(line)  # checked when the index was built (duplicate keys included): no strict hook
        return doc_from_json(source, 0, rec, probs) if isinstance(rec, dict) else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
