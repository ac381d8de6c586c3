"""Checks of the ``human_sample:`` section before any job (``autograde validate`` and the workflow's DAG build):
the files it names exist, and the human judgments can be estimated from.

``human_sample.qrels`` must exist when it is set (the estimates read it; null means "no judgments yet", and only
the judging page is built); ``human_sample.design`` must exist when there are judgments to weight by it (before
the first judgment it may name the file ``autograde sample draw`` will write). Each missing file is named by its
config key and line, with the fix.

The judgments are read as the estimates read them (:func:`autograde.ppi.judgments.read_human_judgments`), against the experiment's queries,
the pool as validate builds it (:func:`autograde.pipeline.pool.pool_counts`: every passage some system ranks in its
top ``pool.depth``, and the judged ones) and ``human_sample.levels``. Errors, each with file, line and fix: a file
with no judgment (an estimate from no human label would claim certainty it does not have), a file that is not
TREC qrels (a CSV export), a query the experiment does not have, a passage outside the pool, a grade outside the
scale, two different grades for one passage. A judgment repeated with the same grade is a warning, not an error:
the repeat says nothing new (a judging page exported twice and concatenated), so it counts once. Where the
judgments are clean and a design file exists, the design is read against the pool and the judgments
(:func:`autograde.ppi.sample.design_rounds`: a round judged only in part, a judgment the design did not draw) as
the estimates job reads it; with ``pool.missing_text: skip`` the pool's passages without text are only known to the
pool job, so that part is left to the job.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.errors import AutogradeError, InputError, Problems
from autograde.core.ids import PairKey
from autograde.ppi.judgments import Judgment, read_human_judgments

if TYPE_CHECKING:

    from autograde.config.experiment import ConfigSource
    from autograde.config.model import Config
    from autograde.pipeline.ingest import Inputs

__all__ = ["Judgment", "check_human_sample", "human_sample_files", "read_human_judgments"]

def human_sample_files(config: Config) -> list[str]:
    """The files of ``human_sample:`` the checks read (the judgments, the design): a change of either checks them
    again (the workflow remembers a successful check by its input files)."""
    h = config.human_sample
    return [] if h is None else [p for p in (h.qrels, h.design) if p]


def _check_files(h: Any, src: ConfigSource, problems: Problems) -> bool:
    """The named files exist (qrels whenever set; the design when there are judgments to weight). Returns whether
    the judgments can be read."""
    cwd = os.getcwd()
    if h.qrels and not Path(h.qrels).is_file():
        problems.add(*src.locate(("human_sample", "qrels")), f"human_sample.qrels: {h.qrels!r} does not exist "
                     f"(working directory {cwd})", "correct the path; before any judgment, set human_sample.qrels: "
                     "null (the judging page exports the file)")
        return False
    if h.qrels and h.design and not Path(h.design).is_file():
        problems.add(*src.locate(("human_sample", "design")), f"human_sample.design: {h.design!r} does not exist "
                     f"(working directory {cwd}), but the judgments of {h.qrels} need its inclusion probabilities",
                     "correct the path, or draw the design with 'autograde sample draw' before judging; for a simple "
                     "random sample set human_sample.design: null")
        return False
    return bool(h.qrels)


def check_human_sample(config: Config, inputs: Inputs, src: ConfigSource, problems: Problems) -> None:
    """Every check of the ``human_sample:`` section (module doc); nothing without the section."""
    h = config.human_sample
    if h is None or not _check_files(h, src, problems) or h.qrels is None:
        return
    from autograde.pipeline.pool import pool_counts

    keys, _ = pool_counts(config, inputs.rankings, inputs.judgments)
    pool = set(zip(keys["query_id"].astype(str), keys["passage_id"].astype(str), strict=True))
    queries = set(inputs.queries["query_id"].astype(str))
    own = Problems()
    judged = read_human_judgments(h.qrels, own, h.levels, queries, pool)
    problems.extend(own)
    if own or not h.design or config.pool.missing_text != "error":
        return
    _check_design(h.qrels, h.design, sorted(pool), judged, problems)


def _check_design(qrels: str, design_path: str, pool: list[PairKey], judged: dict[PairKey, Judgment],
                  problems: Problems) -> None:
    """The design against the pool and the judgments, as the estimates job reads them."""
    import numpy as np

    from autograde.ppi.design import read_design
    from autograde.ppi.pool import pool_order
    from autograde.ppi.sample import design_rounds

    keys = pool_order(pool)
    index = {k: i for i, k in enumerate(keys)}
    grades = np.full(len(keys), np.nan)
    for k, j in judged.items():
        grades[index[k]] = j.grade
    try:
        design_rounds(read_design(design_path, keys), grades, {k: j.line for k, j in judged.items()}, qrels,
                      design_path)
    except InputError as exc:
        problems.items.extend(exc.problems)
    except AutogradeError as exc:
        problems.add(design_path, None, str(exc))
