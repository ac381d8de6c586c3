"""Result documents of the metrics commands: JSON (indent=4, UTF-8 kept) and Markdown tables.

>>> print(markdown_table(["measure", "run"], [["map", 0.12345], ["P@10", None]]))
| measure | run |
|---|---|
| map | 0.1235 |
| P@10 | - |

Every document carries one ``timestamp`` field; everything else is a function of the inputs and options,
so two runs with the same inputs (and seed) give the same bytes apart from that field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from autograde.core.text import atomic_write_text


def now_timestamp() -> str:
    """Local time with offset, to the second (``2025-01-31T12:00:00+01:00``)."""
    return datetime.now().astimezone().isoformat(timespec="seconds")


def tool_version() -> str:
    """The installed autograde version (provenance in every result document)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("autograde")
    except PackageNotFoundError:
        return "unknown"


def result_document(kind: str, body: Mapping[str, Any], timestamp: str | None = None) -> dict[str, Any]:
    """``{"timestamp", "kind", "autograde_version", **body}``; ``timestamp`` defaults to now."""
    return {"timestamp": timestamp or now_timestamp(), "kind": kind, "autograde_version": tool_version(), **body}


def _json_safe(value: Any) -> Any:
    """NaN and infinities become null (JSON has no NaN); numpy scalars become Python numbers."""
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dump_json(doc: Mapping[str, Any]) -> str:
    """The reference server's JSON layout: indent=4, ensure_ascii=False; strict JSON (no NaN)."""
    return json.dumps(_json_safe(doc), indent=4, ensure_ascii=False, allow_nan=False) + "\n"


def write_server_json(path: str | Path, doc: Mapping[str, Any]) -> None:
    """Write a result document atomically."""
    atomic_write_text(path, dump_json(doc))


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value).replace("|", "\\|")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub Markdown table; floats with 4 decimals, None as '-'."""
    lines = ["| " + " | ".join(_cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
