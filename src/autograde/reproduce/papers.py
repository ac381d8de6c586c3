"""Paper values as data: one YAML file per paper (``config/reproduce/papers/*.yaml``), validated strictly.

>>> t = PaperTable.model_validate({"id": "t5", "table": "Table 5", "title": "agreement", "measured": "agreement",
...     "digits": 2, "why": "other grades", "columns": {"kappa": "kappa"},
...     "rows": [{"row": "Question 4–5", "values": {"kappa": 0.25}}]})
>>> t.rows[0].names(), t.tolerance_of("kappa")
(['Question 4–5'], 0.005)

A table names the reproduced table of the plan it is compared with (``measured``) and maps each paper
column to the tool's column name; a row names the tool's row(s) it stands for (``measured``; the first
one the tool computed is used, so a row can name the system a newer version will add). A table the
released data cannot rebuild says so (``status: not public``) and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from autograde.core.schema import Strict

__all__ = ["PaperFile", "PaperRow", "PaperTable", "load_paper"]




class PaperRow(Strict):
    """One row of a paper's table and the values the paper prints in it."""

    row: str = Field(description="the row as the paper labels it")
    measured: list[str] = Field(default_factory=list, description="the tool's row name(s) this row stands for, "
                                "first computed one wins (default: the paper's label)")
    values: dict[str, float | None] = Field(default_factory=dict, description="paper column -> the value the "
                                            "paper prints (null: the paper prints none)")
    why: str = Field(default="", description="one line on why ours may differ in this row (default: the table's)")

    def names(self) -> list[str]:
        """The tool's row names to look for, in order."""
        return list(self.measured) or [self.row]


class PaperTable(Strict):
    """One table (or numbered claim) of a paper, and how it is compared with what the tool measures."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="short id, unique within the paper (used in anchors)")
    table: str = Field(description="where in the paper: 'Table 5', 'Section 6', ...")
    title: str = Field(description="what the table shows")
    measured: str | None = Field(default=None, description="the plan's table whose measurement this is compared "
                                 "with (null for a table the public data cannot rebuild)")
    status: Literal["reproduced", "not public"] = Field(default="reproduced", description="'not public': the "
                                                        "inputs are not publicly available; 'why' says which")
    digits: int = Field(default=3, ge=0, le=8, description="decimals the paper prints (values shown and compared "
                        "at this precision)")
    column_digits: dict[str, int] = Field(default_factory=dict, description="per paper column, overriding "
                                          "'digits' (counts next to kappas)")
    tolerance: float | None = Field(default=None, ge=0, description="largest |ours - paper| still counted as the "
                                    "same (default: half a unit of the last printed decimal)")
    tolerances: dict[str, float] = Field(default_factory=dict, description="per paper column, overriding "
                                         "'tolerance' (e.g. Monte-Carlo p-values)")
    columns: dict[str, str] = Field(description="paper column -> the tool's column name")
    rows: list[PaperRow] = Field(default_factory=list, description="the paper's rows and values")
    rows_from_measured: bool = Field(default=False, description="compare every row the tool measured instead "
                                     "(parity tables: the reference value travels with each measured value)")
    why: str = Field(description="one line on why ours may differ from the paper")

    @model_validator(mode="after")
    def _rows_given(self) -> PaperTable:
        if not self.rows and not self.rows_from_measured:
            raise ValueError("give 'rows' (the paper's values) or set rows_from_measured: true")
        if self.status == "reproduced" and not self.measured:
            raise ValueError("a reproduced table names its plan table in 'measured'")
        unknown = sorted({c for r in self.rows for c in r.values} - set(self.columns))
        if unknown:
            raise ValueError(f"row values for column(s) {unknown} not listed in 'columns'")
        return self

    def digits_of(self, column: str) -> int:
        """Decimals the paper prints in ``column``."""
        return self.column_digits.get(column, self.digits)

    def tolerance_of(self, column: str) -> float:
        """The largest difference counted as the same in ``column``."""
        if column in self.tolerances:
            return self.tolerances[column]
        return self.tolerance if self.tolerance is not None else 0.5 * 10 ** -self.digits_of(column)


class PaperFile(Strict):
    """One paper: its citation, the seed document it is, and its tables."""

    paper: str = Field(description="citation of the paper (authors, title, venue)")
    short: str = Field(description="short name for the summary table ('Dietz, SIGIR 2024')")
    seed: str | None = Field(default=None, description="the file name of the paper's text in the reference material it was copied from (provenance; not read)")
    tables: list[PaperTable] = Field(min_length=1, description="the paper's tables compared with the tool")

    @model_validator(mode="after")
    def _unique_ids(self) -> PaperFile:
        ids = [t.id for t in self.tables]
        if len(set(ids)) != len(ids):
            raise ValueError(f"table ids must be unique, got {ids}")
        return self


def load_paper(path: str | Path) -> PaperFile:
    """Read and validate one paper YAML (strict YAML; every problem with its line)."""
    from autograde.core.yamlfile import read_yaml
    from autograde.reproduce.config import validated

    return validated(PaperFile, read_yaml(path, "paper values") or {}, path,
                     "paper values")
