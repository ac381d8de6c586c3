"""Where a run's main results are, for a person to open next: `autograde outputs`, the end of a workflow run and
of `make reproduce` print it.

>>> from autograde.config.model import Config
>>> print(outputs_summary(Config.model_validate({"data": {"queries": "q.tsv"}, "results_dir": "/nonexistent"})))
no results under /nonexistent/ yet: run the workflow (snakemake -c2, or make example)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autograde.core.layout import Layout

if TYPE_CHECKING:
    from autograde.config.model import Config


def output_rows(results: str | Path) -> list[tuple[str, str]]:
    """(what, path) of the main results that exist under ``results`` now."""
    lay = Layout.of(results)
    board_dir = Path(lay.leaderboards_dir())
    boards = sorted(board_dir.rglob("*.tsv")) if board_dir.is_dir() else []
    rows = [("leaderboards", f"{board_dir}/ ({len(boards)} TSV files: <grader>/<qrels>/<measure>.tsv)"
             if boards else ""),
            ("correlation with the official leaderboard", lay.correlation),
            ("correlation report with bootstrap intervals", lay.reports("correlation.tsv")),
            ("retrieval metrics under the human qrels", lay.metrics("retrieval", ".md")),
            ("the papers' tables next to the published values", lay.reproduction("index.md")),
            ("review site (open in a browser)", f"{lay.site}/index.html")]
    return [(what, path) for what, path in rows if path and Path(path.split(" ")[0]).exists()]


def outputs_summary(config: Config, source: str = "", results: str | Path | None = None) -> str:
    """The lines `autograde outputs` prints: what each main result is and where (only the files there now)."""
    root = str(results or config.results_dir)
    rows = output_rows(root)
    if not rows:
        return f"no results under {Layout.of(root).root}/ yet: run the workflow (snakemake -c2, or make example)"
    width = max(len(w) for w, _ in rows)
    head = f"results of {source}:" if source else "results:"
    return "\n".join([head, *(f"  {what.ljust(width)}  {path}" for what, path in rows)])
