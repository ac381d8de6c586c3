"""Helpers for reading a chunk of whole lines in bulk (numpy), without a Python object per line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

WHITESPACE = np.array([9, 10, 11, 12, 13, 32], dtype=np.uint8)
"""ASCII whitespace bytes."""


@dataclass
class Lines:
    """Where the lines of a chunk are: start and end (exclusive, without the newline) of each, and whether it has
    anything but whitespace."""

    starts: np.ndarray
    ends: np.ndarray
    filled: np.ndarray

    @classmethod
    def of(cls, arr: np.ndarray) -> Lines:
        """The lines of a chunk given as a uint8 array."""
        nl = np.flatnonzero(arr == 10)
        ends = nl if len(arr) and arr[-1] == 10 else np.append(nl, len(arr))
        starts = np.concatenate(([0], nl + 1))[: len(ends)].astype(np.int64)
        ends = ends.astype(np.int64)
        filled = ends > starts
        if len(arr):  # a line that starts with a blank may be blank throughout: look at those few alone
            padded = filled & np.isin(arr[np.minimum(starts, len(arr) - 1)], WHITESPACE)
            for i in np.flatnonzero(padded).tolist():
                filled[i] = bool(arr[starts[i]:ends[i]].tobytes().strip())
        return cls(starts, ends, filled)


def valid_utf8(chunk: bytes) -> bool:
    """Whether the chunk is valid UTF-8 (the bulk readers leave a chunk that is not to the line readers)."""
    try:
        chunk.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def string_spans(values: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(data, starts, lengths)`` of the values of a pyarrow string (chunked) array, read from its buffers."""
    import pyarrow as pa

    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    arr = arr.cast(pa.large_string())
    _validity, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[arr.offset: arr.offset + len(arr) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    return data, offsets[:-1], np.diff(offsets)

