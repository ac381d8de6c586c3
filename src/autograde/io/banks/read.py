"""Reading test banks for the workflow: strict (every problem is an error naming file, line and fix).

The format and the data model are in :mod:`autograde.io.banks.model`; lines are parsed by the one workbench reader,
:func:`autograde.io.banks.readers.read_workbench`, and checked by :func:`autograde.io.banks.convert.assemble`, which
the conversion tools (``autograde bank ...``) run leniently (dropping and reporting). So a bank the workflow
refuses is refused the same way by ``autograde bank stats``, and one the tools write is one the workflow reads.

A bank read and written back keeps its lines' other fields and their order (``info``, ``hash``, ...) and each
item's ``info``: the workbench's DL20 banks come out byte for byte as they went in.
"""

from __future__ import annotations

from pathlib import Path

from autograde.core.errors import Problems
from autograde.core.log import logger
from autograde.io.banks.model import BANK_COLUMNS, Bank, BankItem, bank_lines, item_fields, write_bank

__all__ = ["BANK_COLUMNS", "Bank", "BankItem", "bank_lines", "item_fields", "read_bank", "read_bank_for_queries",
           "read_banks", "write_bank"]


def read_bank(path: str | Path, problems: Problems | None = None) -> Bank:
    """Read a question or nugget bank strictly; every malformed line or item is reported with its line."""
    from autograde.io.banks.convert import ConversionReport, assemble
    from autograde.io.banks.readers import read_workbench

    own = problems is None
    probs = problems if problems is not None else Problems()
    p = str(path)
    report = ConversionReport(p, "workbench", strict=True, problems=probs)
    before = len(probs.items)
    bank = assemble(read_workbench(p, report), report)
    if not bank.items and len(probs.items) == before:
        probs.add(p, None, "the test bank has no items", "add questions or nuggets")
    if own:
        probs.raise_if_any()
    return bank


def read_bank_for_queries(path: str | Path, problems: Problems, queries: dict[str, str] | None = None,
                          queries_source: str = "the queries file") -> Bank:
    """Read a bank; items of queries unknown to ``queries`` are problems, queries without items a warning."""
    bank = read_bank(path, problems)
    if queries is not None and bank.items:
        for qid in sorted({i.query_id for i in bank.items} - set(queries)):
            problems.add(path, bank.lines.get(qid), f"test bank has items for query {qid!r}, which is not in "
                         f"{queries_source}", "fix the query id or add the query")
        lacking = sorted(set(queries) - {i.query_id for i in bank.items})
        if lacking:
            logger.warning("%s: %d query(ies) have no test items and get no grades: %s", path, len(lacking),
                           ", ".join(lacking[:10]) + (" ..." if len(lacking) > 10 else ""))
    return bank


def read_banks(paths: dict[str, str], problems: Problems, queries: dict[str, str] | None = None,
               queries_source: str = "the queries file") -> dict[str, Bank]:
    """Every configured bank by name (see :func:`read_bank_for_queries`)."""
    return {name: read_bank_for_queries(path, problems, queries, queries_source) for name, path in paths.items()}
