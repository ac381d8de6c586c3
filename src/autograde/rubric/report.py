"""JSON documents of the rubric stage: NaN becomes null, keys sorted, UTF-8 kept, atomic write."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from autograde.core.text import atomic_write_text

__all__ = ["to_jsonable", "write_json"]


def to_jsonable(value: Any) -> Any:
    """Plain JSON values: numpy scalars and arrays unpacked, NaN and infinities as None."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(path: str | Path, doc: dict[str, Any]) -> None:
    """Write ``doc`` as indented JSON (sorted keys: identical inputs give identical bytes)."""
    atomic_write_text(path, json.dumps(to_jsonable(doc), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
