"""Parquet tables: atomic, deterministic writes (no pandas index, sorted rows, metadata)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from autograde.core.text import atomic_write_bytes

SCHEMA_VERSION = "1"


def write_table(path: str | Path, df: pd.DataFrame, sort_by: list[str] | None = None,
                metadata: dict[str, Any] | None = None) -> None:
    """Write ``df`` as parquet atomically; rows sorted by ``sort_by`` so reruns give identical bytes."""
    if sort_by:
        df = df.sort_values(sort_by, kind="mergesort").reset_index(drop=True)
    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta.pop(b"pandas", None)
    meta[b"autograde"] = json.dumps({"schema_version": SCHEMA_VERSION, **(metadata or {})}, sort_keys=True).encode()
    table = table.replace_schema_metadata(meta)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    atomic_write_bytes(path, buf.getvalue())


def read_table(path: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """One parquet file as a DataFrame (``ParquetFile.read``: the same table as ``pq.read_table`` of a file, without
    importing ``pyarrow.dataset``, about 0.3 s of every rule job)."""
    with pq.ParquetFile(path) as f:
        return f.read(columns=columns).to_pandas()
