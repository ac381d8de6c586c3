"""What the tool measured for one table: named values, written as ``measured.json`` and read back by the index.

>>> m = Measurement("t", values=[Value("network", "pearson", 0.44, sd=0.01, n=10)])
>>> m.value("network", "pearson").value, m.status
(0.44, 'ok')

Values are keyed by the names the tool itself uses (a system name, a measure name, a question's text), so the
index matches a paper row to them by name: a row the paper YAML lists but this version of the tool does not
compute shows "not computed by this version" instead of failing. A value may carry a ``reference``: the
number an independent implementation or a golden file gives for the same thing (parity tables).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from autograde.core.text import atomic_write_text

__all__ = ["Measurement", "Status", "Value", "read_measurement", "summarize", "write_measurement"]

Status = Literal["ok", "input missing", "error"]


@dataclass(frozen=True)
class Value:
    """One measured number: ``row`` x ``column``; mean with sd and n over seeds where seeds are involved."""

    row: str
    column: str
    value: float
    sd: float | None = None
    n: int | None = None
    """Number of seeds behind ``value`` (None: deterministic, one computation)."""
    reference: float | None = None
    """The reference implementation's or golden file's value (parity tables), else None."""


@dataclass
class Measurement:
    """A table's measured values, its status (``ok``, ``input missing``, ``error``) and provenance."""

    table: str
    status: Status = "ok"
    message: str = ""
    values: list[Value] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    inputs: dict[str, str] = field(default_factory=dict)
    """input path -> sha256 of the file the values were computed from."""
    seconds: float | None = None

    def value(self, row: str, column: str) -> Value | None:
        """The value of (row, column), None when the tool did not measure it."""
        return next((v for v in self.values if v.row == row and v.column == column), None)

    def rows(self) -> list[str]:
        """The measured row names in order of first appearance."""
        return list(dict.fromkeys(v.row for v in self.values))


def summarize(row: str, column: str, samples: list[float], reference: float | None = None) -> Value:
    """A value from per-seed samples: mean, sample sd (0 for one seed) and n; NaN samples are left out."""
    xs = [x for x in samples if not math.isnan(x)]
    if not xs:
        return Value(row, column, float("nan"), None, 0, reference)
    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return Value(row, column, mean, sd, len(xs), reference)


def _clean(x: Any) -> Any:
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def write_measurement(path: str | Path, m: Measurement) -> None:
    """Write ``m`` as JSON (NaN as null), atomically."""
    doc = asdict(m)
    doc["values"] = [{k: _clean(v) for k, v in d.items()} for d in doc["values"]]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n")


def read_measurement(path: str | Path) -> Measurement:
    """Read a ``measured.json`` written by :func:`write_measurement`."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    values = [Value(**{**v, "value": float("nan") if v["value"] is None else v["value"]}) for v in doc.pop("values")]
    return Measurement(values=values, **doc)
