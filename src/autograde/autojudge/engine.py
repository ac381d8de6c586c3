"""autograde's workflow stages for the TREC AutoJudge judge, in this process: the runner's reports and topics as
autograde inputs, an experiment config beside them, then ingest, pool, grading (cache first), qrels, evaluation,
cover and nugget scores, each as the Snakemake workflow runs it (one grading shard per grader), and every leaderboard
of the experiment as one long table.

The folder the judge works in::

    <work>/data/topics.jsonl        the runner's topics (the track's requests file)
    <work>/data/reports.jsonl       the runner's reports (the track's report format), empty ones left out
    <work>/data/nugget_banks/       the runner's nugget banks (TREC AutoJudge NuggetBank JSONL, and as a bank)
    <work>/experiment.yaml          the experiment (``snakemake --config experiment=<work>/experiment.yaml`` runs the
                                    same one)
    <work>/results/                 its results, in the workflow's layout
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import yaml

from autograde.core.errors import InputError, Problem, Problems
from autograde.core.layout import HUMAN, Layout, Leaderboard, QrelsVariant
from autograde.core.log import logger
from autograde.core.tables import read_table
from autograde.core.text import atomic_write_text
from autograde.io.reports import is_report, parse_report, write_reports
from autograde.io.track_checks import check_report_files
from autograde.io.track_specs import get_spec
from autograde.pipeline.feature import COVER_MEASURES

if TYPE_CHECKING:
    from autograde.config.model import Config

@dataclass(frozen=True)
class JudgeInputs:
    """Where the judge wrote the runner's inputs, and what it left out."""

    topics: Path
    reports: Path
    dropped: dict[str, int]
    """Why reports were left out -> how many (empty reports, topics not in the topics file)."""


def write_judge_inputs(work: Path, topics: Iterable[Mapping[str, Any]], reports: Iterable[Mapping[str, Any]]
                 ) -> JudgeInputs:
    """Write the runner's topics and reports (JSON objects as the track's models dump them) into ``work/data``.

    A report without text, or on a topic the topics file lacks, is left out with a warning (the track accepts empty
    answers; autograde grades text): its run then scores 0 on that topic, as the track counts a missing one."""
    data = work / "data"
    topic_rows = [dict(t) for t in topics]
    known = {str(t.get("request_id")) for t in topic_rows}
    kept: list[dict[str, Any]] = []
    dropped = {"empty": 0, "unknown topic": 0}
    probs = Problems()
    for n, rec in enumerate(reports, start=1):
        rep = parse_report(dict(rec), "reports", n, probs) if is_report(rec) else None
        if rep is None:
            continue
        if not rep.text.strip():
            dropped["empty"] += 1
        elif rep.query_id not in known:
            dropped["unknown topic"] += 1
        else:
            kept.append(dict(rec))
    probs.raise_if_any()
    for why, n in dropped.items():
        if n:
            logger.warning("autojudge: %d report(s) left out (%s)", n, why)
    write_reports(data / "topics.jsonl", topic_rows)
    write_reports(data / "reports.jsonl", kept)
    return JudgeInputs(data / "topics.jsonl", data / "reports.jsonl", dropped)


def check_track(inputs: JudgeInputs, track: str) -> None:
    """The track's report checks on the written reports: errors raise, smells are logged."""
    from autograde.io.queries import read_requests

    problems = Problems()
    requests = read_requests(inputs.topics, problems)
    findings = check_report_files([inputs.reports], get_spec(track), requests, problems)
    for f in findings:
        if f.severity == "warning":
            logger.warning("%s:%s: %s (smell of %s; fix: %s)", f.path, f.line, f.message, track, f.fix)
    problems.raise_if_any()


def write_experiment(work: Path, sections: dict[str, Any], inputs: JudgeInputs, cache_dir: str | Path) -> Path:
    """The experiment config of the judge (sections + its inputs, results and cache) as ``work/experiment.yaml``."""
    raw = {**sections, "data": {"queries": str(inputs.topics), "answers": [str(inputs.reports)]},
           "results_dir": str(work / "results")}
    raw["grading"] = {**dict(sections.get("grading") or {}), "cache_dir": str(cache_dir)}
    raw.setdefault("reports", {"enabled": False})
    path = work / "experiment.yaml"
    atomic_write_text(path, yaml.safe_dump(raw, sort_keys=False))
    return path


def _grade(config: Config, name: str, lay: Layout) -> dict[str, Any]:
    """One grader over the whole pool as one shard, then the merge (the workflow's files and bytes)."""
    from autograde.pipeline.jobs import run_model_job
    from autograde.pipeline.stages import run_grade, run_merge

    g, shard = config.grader(name), "1-of-1"
    out = [lay.grade_shard(name, shard, s) for s in (".parquet", ".stats.json", ".failures.jsonl")]
    command = ["grade", "--grader", name, "--pool", lay.pool, "--queries", lay.ingest("queries"), "--out", out[0],
               "--stats", out[1], "--failures", out[2], "--shard", shard]
    run_model_job(g, f"grader {name}", lambda: run_grade(config, name, lay.pool, lay.ingest("queries"), out[0], out[1],
                                                          out[2], shard=shard), command, config.model_dump(mode="json"))
    run_merge([out[0]], [out[1]], [out[2]], lay.grades(name), lay.grades(name, ".stats.json"),
              lay.grades(name, ".failures.jsonl"))
    return json.loads(Path(lay.grades(name, ".stats.json")).read_text(encoding="utf-8"))


def run_stages(config: Config) -> dict[str, dict[str, Any]]:
    """Every stage the experiment's leaderboards need, in this process; returns each grader's grading stats (how many
    pairs came from the cache, how many were computed)."""
    from autograde.pipeline.stages import run_cover, run_evaluate, run_ingest, run_pool, run_qrels

    lay = Layout.of(config.results_dir)
    run_ingest(config, lay.ingest_dir)
    run_pool(config, lay.ingest_dir, lay.pool, [])
    stats: dict[str, dict[str, Any]] = {}
    for g in config.graders:
        stats[g.name] = _grade(config, g.name, lay)
        for name in config.qrels_variants_of(g.name):
            v = QrelsVariant.parse(name)
            run_qrels(lay.grades(g.name), v.mode, v.tau, lay.qrels(g.name, v))
            run_evaluate(config, lay.qrels(g.name, v), lay.ingest("rankings"), v.level, lay.evaluation(g.name, v))
        for tau in config.cover_thresholds_of(g.name):
            run_cover(config, lay.grades(g.name), lay.ingest("rankings"), tau, lay.cover(g.name, tau),
                      lay.leaderboard(g.name, f"cover-{tau}", "cover"), lay.leaderboard(g.name, f"cover-{tau}", "ncover"))
    if config.data.qrels:
        run_evaluate(config, config.data.qrels, lay.ingest("rankings"), config.evaluation.relevance_level,
                     lay.evaluation(HUMAN))
    if config.nuggets is not None:
        from autograde.nuggets.stages import run_nuggets

        run_nuggets(config)
    return stats


def leaderboard_name(lb: Leaderboard) -> str:
    """A leaderboard's measure name in the track's leaderboard: ``<grader>/<qrels>/<measure>``."""
    return f"{lb.grader}/{lb.qrels}/{lb.measure}"


def judged_values(lb: Leaderboard) -> pd.DataFrame:
    """One leaderboard's per-query values and each run's ``all`` value (columns run, query_id, value), exactly as
    autograde computed them (a cover leaderboard, whose table has no ``all`` rows, its mean as its leaderboard file
    has it, unrounded)."""
    from autograde.pipeline.leaderboard import leaderboard_values

    rows = leaderboard_values(lb)
    if lb.column in COVER_MEASURES:
        from autograde.pipeline.cover import cover_leaderboard

        means = cover_leaderboard(read_table(lb.per_query), lb.column)  # type: ignore[arg-type]
        rows = pd.concat([rows, means[["run", "score"]].rename(columns={"score": "value"}).assign(query_id="all")],
                         ignore_index=True)
    return rows[["run", "query_id", "value"]].reset_index(drop=True)


def leaderboards_table(config: Config, names: list[str] | None = None) -> pd.DataFrame:
    """Every leaderboard of the experiment (the workflow's one list; or those of ``names``) as one long table: run,
    query_id, measure (:func:`leaderboard_name`), value."""
    from autograde.workflow.leaderboards import leaderboards

    every = {leaderboard_name(lb): lb for lb in leaderboards(config)}
    unknown = sorted(set(names or ()) - set(every))
    if unknown:
        raise InputError([Problem("settings", None, f"leaderboards {unknown} are not made by this experiment",
                                  f"name some of {', '.join(every)}")])
    frames = [judged_values(lb).assign(measure=name) for name, lb in every.items() if not names or name in names]
    return pd.concat(frames, ignore_index=True)[["run", "query_id", "measure", "value"]]


def qrels_path(config: Config, which: str | None) -> tuple[str, str]:
    """(``<grader>/<variant>``, the qrels file) of the qrels named ``which`` (default: the first grader's first)."""
    lay = Layout.of(config.results_dir)
    known = {f"{g.name}/{v}": lay.qrels(g.name, v) for g in config.graders for v in config.qrels_variants_of(g.name)}
    name = which or next(iter(known))
    if name not in known:
        raise InputError([Problem("settings", None, f"qrels {name!r} are not made by this experiment",
                                  f"name one of {', '.join(known)}")])
    return name, known[name]
