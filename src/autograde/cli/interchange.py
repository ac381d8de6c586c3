"""``autograde export-workbench`` and ``import-workbench``: grades in the Rubric-Grading Workbench's graded
``jsonl.gz`` format (``[query_id, [FullParagraphData, ...]]`` with ``exam_grades`` / ``grades``).

Examples::

    autograde export-workbench --pool results/pool/pool.parquet --grades results/grades/flan.parquet --out graded.jsonl.gz
    autograde import-workbench --input graded.jsonl.gz --out-dir imported/
    autograde export-workbench --pool imported/pool.parquet --grades imported/grades.parquet --ingest imported \
        --out again.jsonl.gz                      # the same file again (docs/workbench.md)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from autograde.cli.common import DEFAULT_LAYOUT


def _existing(path: str | Path, what: str, fix: str) -> Path:
    """``path`` when it is a file; else a user error naming it, what it should be and the fix."""
    from autograde.core.errors import InvalidValueError

    if not Path(path).is_file():
        raise InvalidValueError(f"{path}: {what} not found (fix: {fix})")
    return Path(path)


def _table(path: Path, what: str, columns: tuple[str, ...], fix: str) -> Any:
    """The parquet table at ``path`` with ``columns``; a file that is not one is a user error naming it."""
    import pyarrow as pa

    from autograde.core.errors import InvalidValueError
    from autograde.core.tables import read_table

    try:
        df = read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise InvalidValueError(f"{path}: not a parquet table ({exc}) (fix: {fix})") from None
    missing = [c for c in columns if c not in df]
    if missing:
        raise InvalidValueError(f"{path}: the {what} has no column {', '.join(missing)} (fix: {fix})")
    return df


def cmd_export_workbench(args: argparse.Namespace) -> int:
    """Write grades (and the pool's text, rankings and judgments) in the workbench's graded format."""
    import pandas as pd

    from autograde.grading.interchange import export_workbench

    ingest = Path(args.ingest)  # a folder written by 'autograde ingest' (the workflow's results/ingest)
    fix = "give --ingest the folder 'autograde ingest' wrote (results/ingest), or the --out-dir of import-workbench"
    rankings = _table(_existing(ingest / "rankings.parquet", "rankings table", fix), "rankings table",
                      ("run", "query_id", "passage_id", "score"), fix)
    judgments = _table(_existing(ingest / "judgments.parquet", "judgments table", fix), "judgments table",
                       ("query_id", "passage_id", "relevance"), fix)
    pool = _table(_existing(args.pool, "pool table", "check the path of --pool"), "pool table",
                  ("query_id", "passage_id", "text"), "give --pool the pool table (results/pool/pool.parquet)")
    grades = pd.concat([_table(_existing(g, "grades table", "check the paths of --grades"), "grades table",
                               ("query_id", "passage_id", "item_id", "grader", "grade", "prompt_class", "model"),
                               "give --grades a grades table (results/grades/<grader>.parquet)")
                        for g in args.grades], ignore_index=True)
    wrote = export_workbench(args.out, pool, grades, rankings, judgments, args.min_correct)
    print(json.dumps(wrote))
    return 0


def cmd_import_workbench(args: argparse.Namespace) -> int:
    """Read a workbench graded file into pool, grades, judgments and rankings tables (the folder works as
    export-workbench's --ingest: exporting it again gives the same file)."""
    from autograde.core.tables import write_table
    from autograde.grading.interchange import import_workbench

    tables = import_workbench(_existing(args.input, "workbench graded file", "check the path of --input"))
    out = Path(args.out_dir)
    write_table(out / "pool.parquet", tables.pool, ["query_id", "passage_id"])
    write_table(out / "grades.parquet", tables.grades, ["grader", "query_id", "passage_id", "item_id"])
    write_table(out / "judgments.parquet", tables.judgments, ["query_id", "passage_id"])
    write_table(out / "rankings.parquet", tables.rankings, ["run", "query_id", "rank", "passage_id"])
    print(json.dumps({"passages": len(tables.pool), "grades": len(tables.grades),
                      "graders": sorted(tables.grades["grader"].unique()), "judgments": len(tables.judgments),
                      "runs": sorted(tables.rankings["run"].unique())}))
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
    p.add_argument("--out-dir", required=True, help="folder for pool.parquet, grades.parquet, judgments.parquet and "
                   "rankings.parquet (use it as --ingest of export-workbench)")
    p.set_defaults(func=cmd_import_workbench)
