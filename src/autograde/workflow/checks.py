"""Check everything a run will read, before any job starts (``autograde validate`` and the workflow's DAG build).

The config model already checked the keys and value types; here the checks that need files or the prompt
registry: queries, runs, answers, qrels, the official leaderboard, banks, the corpus text of every pooled
passage, custom prompt files and prompt classes, generation data, grade thresholds against each grader's grade
range, the significance baseline, the cache folder, local model paths, a calibrated-qrels model folder and its
sources, and globs that match nothing. Every problem is collected and raised together as one
:class:`~autograde.core.errors.InputError` (``file:line: problem (fix: ...)``).

The workflow runs the same checks when it builds its DAG. A successful check of the same config and unchanged
input files (path, size, modification time) is remembered under ``<cache_dir>/checks/``, so a rerun does not
read a large corpus again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.config.checks import check_config, check_files_exist, grade_range
from autograde.config.experiment import ConfigSource
from autograde.core.errors import AutogradeError, Problems
from autograde.core.ids import content_hash
from autograde.core.layout import CacheLayout
from autograde.core.log import logger
from autograde.core.paths import expand_globs

if TYPE_CHECKING:
    from autograde.config.model import Config
    from autograde.core.feature import CheckContext
    from autograde.io.banks.model import Bank
    from autograde.pipeline.ingest import Inputs

MIN_SHARED_SYSTEMS = 3
"""Fewest systems the official leaderboard and the experiment must share for a rank correlation."""

__all__ = ["CheckReport", "check_experiment", "grade_range"]


@dataclass
class CheckReport:
    """What the checks read: counts for ``autograde validate`` (and whether they came from the stamp)."""

    counts: dict[str, int] = field(default_factory=dict)
    from_stamp: bool = False
    inputs: Inputs | None = None
    """The checked inputs (not when the result came from the stamp)."""
    dataset: dict[str, Any] | None = None
    """``data.dataset``: its counts and whether its files are local (:func:`autograde.io.irds.dataset_report`)."""


def check_baseline(config: Config, inputs: Inputs | None, src: ConfigSource, problems: Problems) -> None:
    """The significance baseline is one of the systems."""
    baseline = config.metrics.significance.baseline
    if not baseline or inputs is None or inputs.rankings.empty:
        return
    systems = set(inputs.rankings["run"].unique())
    if baseline not in systems:
        import difflib

        close = difflib.get_close_matches(baseline, sorted(systems), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        problems.add(*src.locate(("metrics", "significance", "baseline")),
                     f"metrics.significance.baseline {baseline!r} is not a system",
                     f"{hint}name one of {', '.join(sorted(systems)[:10])}{' ...' if len(systems) > 10 else ''}, "
                     "or null for no p-values")


def resolve_dataset_at(config: Config, source: str | ConfigSource, download: bool = True) -> Config:
    """:func:`autograde.io.irds.resolve_dataset`, with a problem of ``data.dataset`` (an unknown id, a download that
    failed) named by the config file and the line of its key. A dataset that is not local where downloads are not
    allowed (``download=False``) still raises :class:`~autograde.io.irds.DatasetNotLocalError`."""
    from autograde.config.experiment import located
    from autograde.io.irds import DatasetNotLocalError, resolve_dataset

    try:
        return resolve_dataset(config, download=download)
    except DatasetNotLocalError:
        raise
    except AutogradeError as exc:
        raise located(source, ("data", "dataset"), exc) from None


def check_pool_text(config: Config, inputs: Inputs, problems: Problems) -> int:
    """Every passage the pool will grade has text (the corpus is read for exactly those ids). Returns the pool size."""
    from autograde.core.errors import InputError
    from autograde.io.irds import DatasetNotLocalError
    from autograde.pipeline.pool import build_pool

    try:
        pool = build_pool(config, inputs.rankings, inputs.judgments, inputs.answer_passages, download=False)
    except InputError as exc:
        problems.items.extend(exc.problems)
        return 0
    except DatasetNotLocalError as exc:
        logger.warning("%s: the pooled passages' texts are not checked", exc)
        return 0
    return len(pool)


def check_track_reports(config: Config, problems: Problems) -> None:
    """With ``data.answers_track``, every report of ``data.answers`` checked against the track's spec as its verifier
    checks it: errors with file, line and fix; warnings logged (they do not stop a run)."""
    if not config.data.answers_track:
        return
    from autograde.io.queries import read_requests
    from autograde.io.track_checks import check_report_files
    from autograde.io.track_specs import get_spec

    queries = config.data.queries_file
    requests = read_requests(queries, Problems()) if queries.endswith(".jsonl") else None
    found = check_report_files(expand_globs(config.data.answers), get_spec(config.data.answers_track), requests,
                               problems)
    for f in found:
        if f.severity != "error":
            logger.warning("%s:%s: %s (%s)", f.path, f.line or "?", f.message, f.fix)


def check_generation(config: Config, problems: Problems) -> None:
    """The generation-metrics data file reads."""
    if not config.data.generation:
        return
    from autograde.metrics.generation import read_generation_data

    g = config.metrics.generation
    try:
        data = read_generation_data(config.data.generation, g.gold_key, g.pred_key)
    except AutogradeError as exc:
        problems.items.extend(getattr(exc, "problems", []))
        return
    empty = [where for where, golds in zip(data.where, data.golds, strict=True) if not golds]
    if empty:  # the reference server scores them 0 in every metric: said before any work, not only in the job's log
        logger.warning("%d item(s) have an empty %r list and score 0 in every generation metric: %s%s (fix: give each "
                       "item its gold answers, or remove it)", len(empty), g.gold_key, ", ".join(empty[:10]),
                       " ..." if len(empty) > 10 else "")


def check_official_leaderboard(config: Config, inputs: Inputs, src: ConfigSource, problems: Problems) -> None:
    """The official leaderboard shares at least :data:`MIN_SHARED_SYSTEMS` systems with the experiment; systems
    on one side only are named in a warning (they take no part in the correlation)."""
    path = config.data.official_leaderboard
    if not path or inputs.rankings.empty:
        return
    from autograde.pipeline.ingest import read_official_leaderboard

    official = read_official_leaderboard(path, Problems())  # its format problems come from ingest
    if not official:
        return
    systems = set(inputs.rankings["run"].unique())
    shared = systems & set(official)
    if len(shared) < MIN_SHARED_SYSTEMS:
        problems.add(path, None, f"the official leaderboard shares {len(shared)} system(s) with the experiment "
                     f"({', '.join(sorted(shared)) or 'none'}; it names {', '.join(sorted(official)[:6])}"
                     f"{' ...' if len(official) > 6 else ''}; the experiment has {', '.join(sorted(systems)[:6])}"
                     f"{' ...' if len(systems) > 6 else ''}); a rank correlation needs at least {MIN_SHARED_SYSTEMS}",
                     "name the systems by their run tags in the leaderboard, or remove data.official_leaderboard")
        return
    only_official = sorted(set(official) - systems)
    only_ours = sorted(systems - set(official))
    if only_official:
        logger.warning("%s: %d system(s) of the official leaderboard are not in the experiment and are left out "
                       "of the correlation: %s", path, len(only_official), ", ".join(only_official[:10]))
    if only_ours:
        logger.warning("%s: %d system(s) of the experiment are not on the official leaderboard and are left out "
                       "of the correlation: %s", path, len(only_ours), ", ".join(only_ours[:10]))


def check_gold_answers(config: Config, banks: dict[str, Bank], src: ConfigSource, problems: Problems) -> None:
    """A grader whose prompt checks answers against the answer key has gold answers for every item."""
    from autograde.grading.prompts import get_prompt
    from autograde.grading.registry import backend

    for g in config.graders:
        if not backend(g.backend).language_model or not g.prompt_class or g.bank not in banks:
            continue
        try:
            prompt = get_prompt(g.prompt_class)
        except AutogradeError:
            continue  # reported by the prompt checks
        if prompt.answer_check != "answer_key" and prompt.kind != "verification":
            continue
        bank = banks[g.bank]
        lacking = [it for it in bank.items if not it.gold_answers]
        for it in lacking[:20]:
            problems.add(config.banks[g.bank], bank.lines.get(it.query_id), f"item {it.item_id} of query "
                         f"{it.query_id!r} has no gold answers, but grader {g.name!r} ({prompt.config_name}) grades "
                         "against the answer key", "give the item \"gold_answers\": [...], remove it, or grade this "
                         "bank with a prompt without an answer key")
        if len(lacking) > 20:
            problems.add(config.banks[g.bank], None, f"... and {len(lacking) - 20} more items without gold answers")


def check_citations(config: Config, problems: Problems) -> None:
    """Citations of generated answers point into their references, and the cited doc ids have corpus text.

    Citations are not graded (the answer text is): an unknown cited doc id is a warning naming the file and line.
    """
    from autograde.io.answers import answer_citations

    cited: dict[str, tuple[str, int]] = {}
    for path in expand_globs(config.data.answers):
        for doc_id, line in answer_citations(path, problems).items():
            cited.setdefault(doc_id, (path, line))
    cache = Path(config.grading.cache_dir)
    if not cited or not (config.data.corpus or config.data.dataset) or (cache.exists() and not cache.is_dir()):
        return  # an unusable cache folder is reported by the config checks; the corpus index lives there
    from autograde.corpus.passages import lookup_passages, passage_source
    from autograde.io.irds import DatasetNotLocalError

    try:
        found = lookup_passages(config, set(cited), Problems(), download=False)  # by id: never a scan
    except DatasetNotLocalError:
        return
    missing = sorted(set(cited) - set(found))
    by_file: dict[str, list[str]] = {}
    for doc_id in missing:
        by_file.setdefault(cited[doc_id][0], []).append(doc_id)
    for path, ids in by_file.items():
        lines = sorted({cited[d][1] for d in ids})
        logger.warning("%s:%d: %d cited doc id(s) are not in the corpus (%s): %s%s; citations are not graded (the "
                       "answer text is), so they are only reported", path, lines[0], len(ids),
                       passage_source(config), ", ".join(ids[:10]), " ..." if len(ids) > 10 else "")


def input_files(config: Config) -> list[str]:
    """Every file a run reads (for the check stamp)."""
    files = [*([config.data.queries] if config.data.queries else []), *expand_globs(config.data.runs), *expand_globs(config.data.answers),
             *expand_globs(config.data.corpus), *config.banks.values()]
    files += [p for p in (config.data.qrels, config.data.official_leaderboard, config.data.generation) if p]
    files += [str(g.options["custom_prompts"]) for g in config.graders if g.options.get("custom_prompts")]
    from autograde.workflow.features import FEATURES

    files += [f for feature in FEATURES for f in feature.input_files_of(config)]
    return files


def _stamp_path(config: Config, part: str) -> Path:
    """The stamp of one part of the checks: ``all`` (every input file) or ``inputs`` (every file but the banks,
    so that a hand edit of a bank checks the banks again, not the runs, qrels and corpus)."""
    def stat(p: str) -> Any:
        try:
            st = Path(p).stat()
            return [p, st.st_size, st.st_mtime_ns]
        except OSError:
            return [p, None, None]

    banks = set(config.banks.values()) if part == "inputs" else set()
    files = [stat(p) for p in input_files(config) if p not in banks]
    key = content_hash({"config": config.model_dump(mode="json"), "files": files, "cwd": os.getcwd(), "part": part}, 32)
    return Path(CacheLayout.of(config.grading.cache_dir).check_stamp(key))


def _read_stamp(stamp: Path | None) -> dict[str, int] | None:
    if stamp is None or not stamp.is_file():
        return None
    try:
        return dict(json.loads(stamp.read_text()))
    except (OSError, ValueError):
        return None


def _write_stamp(stamp: Path | None, counts: dict[str, int]) -> None:
    if stamp is None:
        return
    try:
        from autograde.core.text import atomic_write_text

        atomic_write_text(stamp, json.dumps(counts, sort_keys=True) + "\n")
    except OSError as exc:  # a read-only cache only costs the next run the checks again
        logger.debug("could not write the check stamp %s: %s", stamp, exc)


def check_experiment(config: Config, source: str | ConfigSource = "config", cached: bool = False,
                     models: bool = True) -> CheckReport:
    """Run every check; raise one :class:`InputError` with all problems. ``cached``: skip when unchanged.

    ``source`` is the config file (or its :class:`~autograde.config.experiment.ConfigSource`), so that problems of
    config keys name their line.
    """
    src = ConfigSource.of(source)
    stamp = _stamp_path(config, "all") if cached else None
    stamped = _read_stamp(stamp)
    if stamped is not None:
        return CheckReport(stamped, from_stamp=True)
    from autograde.io.banks.read import read_banks
    from autograde.io.queries import read_queries
    from autograde.pipeline.ingest import ingest

    dataset = None
    if config.data.dataset:
        from autograde.config.experiment import located
        from autograde.io.irds import DatasetNotLocalError, dataset_report

        try:
            dataset = dataset_report(config.data)
        except AutogradeError as exc:
            raise located(src, ("data", "dataset"), exc) from None
        try:
            config = resolve_dataset_at(config, src, download=False)
        except DatasetNotLocalError as exc:
            from autograde.io.irds import not_local_summary

            logger.warning("%s: %s; validate checked the config only (run it again once the files are local: %s)",
                           src.path, not_local_summary(config.data) or exc, exc)
            return CheckReport({}, dataset=dataset)
    problems = Problems()
    check_config(config, src, problems, models=models)
    missing = check_files_exist(config, src, problems)
    queries = read_queries(config.data.queries_file, Problems())  # its problems come from ingest below
    from autograde.config.banks import banks_read_at_parse_time
    from autograde.core.feature import CheckContext
    from autograde.workflow.features import FEATURES

    banks = read_banks(banks_read_at_parse_time(config), problems, queries or None, config.data.queries_file)
    check_gold_answers(config, banks, src, problems)
    ctx = CheckContext(config, src, problems, queries, banks)
    for feature in FEATURES:  # each feature's checks of its section (bank generation, nugget prompts, ...)
        if feature.check_config is not None:
            feature.check_config(ctx)
    inputs_stamp = _stamp_path(config, "inputs") if cached and config.banks else None
    counts = _read_stamp(inputs_stamp)  # after a bank edit: the runs, qrels and corpus were checked already
    inputs = None
    if counts is None:
        inputs = ingest(config, problems)
        ctx.inputs = inputs
        counts = check_data_inputs(ctx)
    # a configured file that is missing is named once, by its config key (not again by its reader)
    problems.items = [p for p in problems.items if not (p.path in missing and p.message.endswith("not found"))]
    problems.raise_if_any()
    _write_stamp(inputs_stamp, counts)
    counts = {**counts, **{f"bank_{k}": len(b.items) for k, b in banks.items()}}
    _write_stamp(stamp, counts)
    logger.info("%s: every input checked (%s)", src.path, ", ".join(f"{k} {v}" for k, v in counts.items()))
    return CheckReport(counts, inputs=inputs, dataset=dataset)


def check_data_inputs(ctx: CheckContext) -> dict[str, int]:
    """The checks of everything but the banks (runs, answers, qrels, leaderboard, generation data, citations, every
    feature's inputs, the corpus text of the pool); returns their counts."""
    from autograde.workflow.features import FEATURES

    config, inputs, src, problems = ctx.config, ctx.inputs, ctx.src, ctx.problems
    assert inputs is not None
    check_baseline(config, inputs, src, problems)
    check_official_leaderboard(config, inputs, src, problems)
    check_generation(config, problems)
    check_citations(config, problems)
    check_track_reports(config, problems)
    for feature in FEATURES:  # each feature's checks of its inputs (the calibrated model folder, ...)
        if feature.check_inputs is not None:
            feature.check_inputs(ctx)
    pool = check_pool_text(config, inputs, problems) if not problems else 0
    return {"queries": len(inputs.queries), "systems": int(inputs.rankings["run"].nunique()),
            "ranked_passages": len(inputs.rankings), "judgments": len(inputs.judgments), "pool_passages": pool}
