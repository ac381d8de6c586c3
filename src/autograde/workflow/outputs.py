"""Where a run's main results are, for a person to open next: `autograde outputs`, the end of a workflow run and
of `make reproduce` print it. Each feature names its own (:attr:`autograde.core.feature.Feature.outputs`); only the
files there now are listed.

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


def output_rows(config: Config, results: str | Path | None = None) -> list[tuple[str, str]]:
    """(what, path) of the main results of every feature that exist under ``results`` now (a folder: with the count
    of its files)."""
    from autograde.workflow.features import FEATURES

    root = str(results or config.results_dir)
    cfg = config if root == config.results_dir else config.model_copy(update={"results_dir": root})
    rows = []
    for what, path in (row for f in FEATURES for row in f.outputs_of(cfg)):
        p = Path(path)
        if p.is_dir():
            files = [f for f in p.rglob("*") if f.is_file()]
            if files:
                rows.append((what, f"{path.rstrip('/')}/ ({len(files)} files)"))
        elif p.exists():
            rows.append((what, path))
    return rows


def outputs_summary(config: Config, source: str = "", results: str | Path | None = None) -> str:
    """The lines `autograde outputs` prints: what each main result is and where (only the files there now)."""
    root = str(results or config.results_dir)
    rows = output_rows(config, root)
    if not rows:
        return f"no results under {Layout.of(root).root}/ yet: run the workflow (snakemake -c2, or make example)"
    width = max(len(w) for w, _ in rows)
    head = f"results of {source}:" if source else "results:"
    return "\n".join([head, *(f"  {what.ljust(width)}  {path}" for what, path in rows)])
