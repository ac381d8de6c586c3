"""autograde as a TREC AutoJudge judge: the class the track's runner loads (``auto-judge run --workflow
workflow.yml`` with ``judge_class: autograde.autojudge.judge.AutogradeJudge``; docs/autojudge.md).

Each of the track's three calls runs autograde's own stages on the runner's reports and topics (the workflow's
inputs, config and results in a folder of the output directory, :mod:`autograde.autojudge.engine`) with the grade
cache, so a second call, or a rerun, grades nothing new:

- ``create_nuggets``: the experiment's generated test banks (``bank_generation``) as the track's NuggetBanks, or the
  given nugget banks as they are;
- ``create_qrels``: one grader's Rubric-Qrels (``settings.qrels``, default the first grader's first variant), doc ids
  the passage ids autograde gives answer paragraphs (the md5 of their text, as the track's ``doc_id_md5``);
- ``judge``: every leaderboard of the experiment as one measure of the track's leaderboard
  (``<grader>/<qrels>/<measure>``), per topic and each run's ``all``, exactly autograde's values.

The track's own package (autojudge-base) is imported only inside these calls, to build the types the runner expects:
autograde itself never needs it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.autojudge.engine import (
    JudgeInputs,
    check_track,
    leaderboards_table,
    qrels_path,
    run_stages,
    write_experiment,
    write_judge_inputs,
)
from autograde.autojudge.formats import leaderboard_entries
from autograde.autojudge.settings import JudgeSettings, LlmConfig, experiment_sections, parse_settings
from autograde.core.log import logger, setup_logging

if TYPE_CHECKING:
    from autograde.config.model import Config


def _dump(obj: Any) -> dict[str, Any]:
    """A runner object (a pydantic model of the track) or a mapping as a JSON-ready dict, empty fields left out."""
    if hasattr(obj, "model_dump"):
        return dict(obj.model_dump(mode="json", exclude_none=True))
    return dict(obj)


@dataclass(frozen=True)
class Prepared:
    """One call's experiment: its settings, working folder, inputs and validated, checked config."""

    settings: JudgeSettings
    work: Path
    inputs: JudgeInputs
    config_path: Path
    config: Config


def _bank_file(work: Path, nugget_banks: Any) -> str:
    """The runner's nugget banks as a workbench bank file (through autograde's AutoJudge NuggetBank reader)."""
    from autograde.core.text import atomic_write_text
    from autograde.io.banks.formats import export_bank, import_bank
    from autograde.io.reports import report_json

    raw = work / "data" / "nugget_banks" / "nuggets.autojudge.jsonl"
    atomic_write_text(raw, "".join(report_json(_dump(b)) + "\n" for b in nugget_banks.banks.values()))
    bank, report = import_bank(raw, "autojudge")
    for d in report.dropped:
        logger.warning("autojudge: nugget bank item dropped: %s", d)
    out = work / "data" / "nugget_banks" / "nuggets.jsonl.gz"
    export_bank(bank, out, "workbench")
    return str(out)


def _without_nugget_bank(sections: dict[str, Any], bank: str, making_nuggets: bool) -> dict[str, Any]:
    """The sections, when the runner passed no nugget banks: the graders of the nugget bank, and nugget scores of it,
    left out while the nuggets are being made; otherwise either is an error naming the fix."""
    if bank in (sections.get("banks") or {}) or bank in (sections.get("bank_generation") or {}):
        return sections
    graders = list(sections.get("graders") or [])
    uses = [f"grader {g.get('name')!r}" for g in graders if isinstance(g, dict) and g.get("bank") == bank]
    nuggets = sections.get("nuggets")
    if isinstance(nuggets, dict) and nuggets.get("bank") == bank:
        uses.append("nuggets")
    if uses and not making_nuggets:
        from autograde.core.errors import ConfigError

        raise ConfigError(f"{uses[0]} grades the runner's nugget banks (bank: {bank}), but the runner passed none "
                          "(fix: create_nuggets: true, or nugget_input, in workflow.yml)")
    out = {**sections, "graders": [g for g in graders if not (isinstance(g, dict) and g.get("bank") == bank)]}
    if "nuggets" in uses:
        out.pop("nuggets")
    return out


def prepare(rag_responses: Iterable[Any], rag_topics: Sequence[Any], llm_config: Any, nugget_banks: Any,
            kwargs: dict[str, Any], making_nuggets: bool = False) -> Prepared:
    """Write the runner's inputs and the experiment, validate and check it as the workflow does (every problem with
    its file, line and fix). While the nuggets are being made, graders of the nugget bank (not there yet) wait."""
    from autograde.config.experiment import load_config
    from autograde.workflow.checks import check_experiment

    setup_logging()  # the runner configures no logging: autograde's lines go to stderr
    settings = parse_settings(kwargs)
    llm = LlmConfig.of(llm_config)
    work = settings.work_dir_for(settings.outdir, settings.filebase)
    inputs = write_judge_inputs(work, [_dump(t) for t in rag_topics], [_dump(r) for r in rag_responses])
    if settings.track:
        check_track(inputs, settings.track)
    sections = experiment_sections(settings, llm)
    if nugget_banks is not None and nugget_banks.banks:
        sections["banks"] = {**dict(sections.get("banks") or {}), settings.nugget_bank: _bank_file(work, nugget_banks)}
    else:
        sections = _without_nugget_bank(sections, settings.nugget_bank, making_nuggets)
    cache = settings.cache_dir or llm.cache_dir or str(Path(settings.outdir or ".") / "autograde-cache")
    path = write_experiment(work, sections, inputs, cache)
    config = load_config(path)
    check_experiment(config, str(path))
    return Prepared(settings, work, inputs, path, config)


def to_leaderboard(table: Any, descriptions: dict[str, str]) -> Any:
    """A long table (run, query_id, measure, value) as the track's ``Leaderboard``."""
    from autojudge_base.leaderboard.leaderboard import Leaderboard, LeaderboardEntry, LeaderboardSpec, MeasureSpec

    entries, measures = leaderboard_entries(table)
    spec = LeaderboardSpec(measures=tuple(MeasureSpec(m, float, descriptions.get(m, "")) for m in measures))
    return Leaderboard(measures=tuple(measures), spec=spec,
                       entries=tuple(LeaderboardEntry(run, topic, values) for run, topic, values in entries))


def to_qrels(path: str | Path) -> Any:
    """An autograde qrels file as the track's ``Qrels``."""
    from autojudge_base.qrels.qrels import QrelRow, Qrels

    from autograde.io.trec import read_qrels

    qrels = read_qrels(path)
    return Qrels(rows=[QrelRow(topic_id=q, doc_id=d, grade=int(g)) for q in sorted(qrels)
                       for d, g in sorted(qrels[q].items())])


def to_nugget_banks(path: str | Path) -> Any:
    """An autograde bank as the track's ``NuggetBanks`` (through autograde's AutoJudge NuggetBank writer)."""
    from autojudge_base.nugget_data import load_nugget_banks_from_file

    from autograde.io.banks.formats import export_bank, import_bank

    bank, _ = import_bank(path)
    out = Path(str(path).removesuffix(".gz").removesuffix(".jsonl") + ".autojudge.jsonl")
    export_bank(bank, out, "autojudge")
    return load_nugget_banks_from_file(out)


class AutogradeJudge:
    """The TREC AutoJudge protocol (``create_nuggets``, ``create_qrels``, ``judge``) backed by autograde."""

    @property
    def nugget_banks_type(self) -> type:
        """The track's NuggetBanks container (the runner reads and writes nugget files with it)."""
        from autojudge_base.nugget_data import NuggetBanks

        return NuggetBanks

    def create_nuggets(self, rag_responses: Iterable[Any] | None, rag_topics: Sequence[Any], llm_config: Any,
                       nugget_banks: Any = None, corpus: str | None = None, **kwargs: Any) -> Any:
        """The experiment's generated banks (``bank_generation``: the first one) as NuggetBanks; without one, the
        given nugget banks unchanged."""
        from autograde.banks.stages import run_generate_bank
        from autograde.config.banks import generated_bank_path

        p = prepare(rag_responses or [], rag_topics, llm_config, nugget_banks, kwargs, making_nuggets=True)
        if not p.config.bank_generation:
            return nugget_banks
        name = next(iter(p.config.bank_generation))
        run_generate_bank(p.config, name)
        return to_nugget_banks(generated_bank_path(p.config.results_dir, name))

    def create_qrels(self, rag_responses: Iterable[Any], rag_topics: Sequence[Any], llm_config: Any,
                     nugget_banks: Any = None, corpus: str | None = None, **kwargs: Any) -> Any:
        """One grader's Rubric-Qrels of the answer passages (``settings.qrels``)."""
        p = prepare(rag_responses, rag_topics, llm_config, nugget_banks, kwargs)
        stats = run_stages(p.config)
        log_stats(stats)
        name, path = qrels_path(p.config, p.settings.qrels)
        logger.info("autojudge: qrels %s (%s)", name, path)
        return to_qrels(path)

    def judge(self, rag_responses: Iterable[Any], rag_topics: Sequence[Any], llm_config: Any,
              nugget_banks: Any = None, qrels: Any = None, corpus: str | None = None, **kwargs: Any) -> Any:
        """Every leaderboard of the experiment (``settings.leaderboards``: some of them) as the track's leaderboard.

        Qrels from the runner are not used: autograde evaluates the runs under its own qrels."""
        p = prepare(rag_responses, rag_topics, llm_config, nugget_banks, kwargs)
        log_stats(run_stages(p.config))
        table = leaderboards_table(p.config, p.settings.leaderboards)
        descriptions = {m: f"autograde {m}: the measure under the grader's qrels variant (docs/autojudge.md)"
                        for m in table["measure"].unique()}
        return to_leaderboard(table, descriptions)


def log_stats(stats: dict[str, dict[str, Any]]) -> None:
    """Each grader's pairs, how many came from the cache and how many were computed."""
    for name, st in stats.items():
        logger.info("autojudge: grader %s: %s pairs, %s from the cache, %s computed, %s unparseable, %s failed", name,
                    st.get("pairs"), st.get("cached"), st.get("computed"), st.get("unparseable"), st.get("failed"))
