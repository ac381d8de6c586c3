"""``autograde export-workbench`` and ``import-workbench``: grades in the Rubric-Grading Workbench's graded
``jsonl.gz`` format (``[query_id, [FullParagraphData, ...]]`` with ``exam_grades`` / ``grades``).

Examples::

    autograde export-workbench --pool results/pool/pool.parquet --grades results/grades/flan.parquet --out graded.jsonl.gz
    autograde import-workbench --input graded.jsonl.gz --out-dir imported/
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from autograde.cli.common import DEFAULT_LAYOUT


def cmd_export_workbench(args: argparse.Namespace) -> int:
    """Write grades (and the pool's text, rankings and judgments) in the workbench's graded format."""
    import pandas as pd

    from autograde.core.tables import read_table
    from autograde.grading.interchange import export_workbench

    ingest = Path(args.ingest)  # a folder written by 'autograde ingest' (the workflow's results/ingest)
    grades = pd.concat([read_table(g) for g in args.grades], ignore_index=True)
    export_workbench(args.out, read_table(args.pool), grades, read_table(ingest / "rankings.parquet"),
                     read_table(ingest / "judgments.parquet"), args.min_correct)
    return 0


def cmd_import_workbench(args: argparse.Namespace) -> int:
    """Read a workbench graded file into a pool table and a grades table."""
    from autograde.core.tables import write_table
    from autograde.grading.interchange import import_workbench

    pool, grades = import_workbench(args.input)
    out = Path(args.out_dir)
    write_table(out / "pool.parquet", pool, ["query_id", "passage_id"])
    write_table(out / "grades.parquet", grades, ["grader", "query_id", "passage_id", "item_id"])
    print(json.dumps({"passages": len(pool), "grades": len(grades), "graders": sorted(grades["grader"].unique())}))
    return 0


def register(sub: Any) -> None:
    """Add ``export-workbench`` and ``import-workbench`` to the ``autograde`` CLI."""
    p = sub.add_parser("export-workbench", help="write grades in the workbench's graded jsonl.gz format",
                       description=cmd_export_workbench.__doc__)
    p.add_argument("--pool", required=True, help="pool parquet (passage texts)")
    p.add_argument("--grades", action="append", required=True, help="grades parquet (repeatable: one per grader)")
    p.add_argument("--ingest", default=DEFAULT_LAYOUT.ingest_dir,
                   help="folder written by ingest (rankings and judgments; default: %(default)s)")
    p.add_argument("--min-correct", type=int, default=1,
                   help="an answer counts as correct in exam_grades from this grade up (default: %(default)s)")
    p.add_argument("--out", required=True, help="output .jsonl.gz")
    p.set_defaults(func=cmd_export_workbench)
    p = sub.add_parser("import-workbench", help="read a workbench graded jsonl.gz into pool + grades tables",
                       description=cmd_import_workbench.__doc__)
    p.add_argument("--input", required=True, help="a workbench graded .jsonl(.gz) file")
    p.add_argument("--out-dir", required=True, help="folder for pool.parquet and grades.parquet")
    p.set_defaults(func=cmd_import_workbench)
