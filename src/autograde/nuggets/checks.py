"""Checks of the ``nuggets:`` section that need the prompt registry or the bank, run before any job starts
(``autograde validate`` and the workflow's DAG build, through :func:`autograde.workflow.checks.check_experiment`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.core.errors import Problems

if TYPE_CHECKING:
    from autograde.config.experiment import ConfigSource
    from autograde.config.model import Config
    from autograde.config.nuggets import AssessorConfig
    from autograde.core.feature import CheckContext
    from autograde.io.banks.model import Bank


def check_nugget_prompts(config: Config, src: ConfigSource, problems: Problems) -> None:
    """Assessors name prompts that grade nuggets against passages (with thresholds inside their grade range);
    the importance model names an importance prompt. Each problem names the config line of its key."""
    from autograde.grading.prompts import get_prompt
    from autograde.grading.registry import backend

    n = config.nuggets
    if n is None:
        return
    for k, a in enumerate(n.assessors):
        where = f"nuggets.assessors[{k}] ({a.name})"
        at = src.locate(("nuggets", "assessors", k, "prompt_class"))
        if a.mode == "mapped" and a.grader in {g.name for g in config.graders}:
            _check_mapped_thresholds(config, k, a, src, problems)
        if a.mode != "whole_answer" or a.backend is None or not backend(a.backend).language_model:
            continue
        try:
            prompt = get_prompt(a.prompt_class)
        except KeyError as exc:
            problems.add(*at, f"{where}.prompt_class: {exc}", "pick one from 'autograde prompts'")
            continue
        if prompt.kind not in ("assignment", "rating") or prompt.item_kind not in ("nugget", "question"):
            problems.add(*at, f"{where}: {prompt.config_name} is a {prompt.kind} prompt of "
                         f"{prompt.item_kind}s", "use NuggetAssignment, or a 0-5 rating prompt "
                         "(NuggetSelfRatedPrompt) with thresholds")
        elif prompt.kind != "assignment" and a.thresholds is None:
            problems.add(*src.locate(("nuggets", "assessors", k)), f"{where}: {prompt.config_name} grades 0-{prompt.max_grade}, not the three "
                         "assignment labels", "give thresholds: [partial_support, support], e.g. [3, 4]")
        elif a.thresholds is not None and a.thresholds[1] > prompt.max_grade:
            problems.add(*src.locate(("nuggets", "assessors", k, "thresholds")), f"{where}: thresholds {list(a.thresholds)} lie above the grades of "
                         f"{prompt.config_name} (0-{prompt.max_grade})", f"use thresholds up to {prompt.max_grade}")
    if n.importance is not None:
        try:
            prompt = get_prompt(n.importance.prompt_class)
        except KeyError as exc:
            problems.add(*src.locate(("nuggets", "importance", "prompt_class")), f"nuggets.importance.prompt_class: {exc}",
                         "use NuggetImportance ('autograde prompts --kind importance')")
            return
        if prompt.kind != "importance":
            problems.add(*src.locate(("nuggets", "importance", "prompt_class")), f"nuggets.importance: {prompt.config_name} is a {prompt.kind} prompt",
                         "use NuggetImportance ('autograde prompts --kind importance')")


def _check_mapped_thresholds(config: Config, k: int, a: AssessorConfig, src: ConfigSource, problems: Problems) -> None:
    """A mapped assessor's thresholds lie within its grader's grades (above them, no answer could be "support")."""
    from autograde.config.checks import grade_range

    rng = grade_range(config.grader(str(a.grader)))
    if rng is None or a.thresholds is None:
        return
    lo, hi = rng
    if a.thresholds[1] > hi:
        problems.add(*src.locate(("nuggets", "assessors", k, "thresholds")),
                     f"nuggets.assessors[{k}] ({a.name}): thresholds {list(a.thresholds)} lie above the grades of "
                     f"grader {a.grader!r} ({lo}-{hi}): no answer could ever be 'support'",
                     f"use thresholds up to {hi}")


def check_nugget_bank(config: Config, banks: dict[str, Bank], problems: Problems) -> None:
    """Importance values in the nugget bank are vital or okay; without an importance model or a default, every
    nugget has one (each problem names the bank file and line)."""
    from autograde.nuggets.importance import given_importance, missing_problems

    n = config.nuggets
    if n is None or n.bank not in banks:
        return
    path = config.banks[n.bank]
    given = given_importance(banks[n.bank], path, problems)
    if n.importance is None and n.missing_importance == "error":
        missing_problems(banks[n.bank], given, path, problems)


def check_nuggets(config: Config, banks: dict[str, Bank], src: ConfigSource, problems: Problems) -> None:
    """Every check of the ``nuggets:`` section."""
    check_nugget_prompts(config, src, problems)
    check_nugget_bank(config, banks, problems)


def check_nugget_baseline(ctx: CheckContext) -> None:
    """``nuggets.baseline`` is one of the RAG runs (found before any job, not at the last one after all grading)."""
    config, inputs, src, problems = ctx.config, ctx.inputs, ctx.src, ctx.problems
    baseline = config.nuggets.baseline if config.nuggets is not None else None
    if not baseline or inputs is None or inputs.answer_passages.empty:
        return
    answer_ids = set(inputs.answer_passages["passage_id"])  # the answers' passages are ranked by their run
    runs = sorted(set(inputs.rankings.loc[inputs.rankings["passage_id"].isin(answer_ids), "run"]))
    if baseline not in runs:
        import difflib

        close = difflib.get_close_matches(baseline, runs, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        problems.add(*src.locate(("nuggets", "baseline")), f"nuggets.baseline {baseline!r} is not a RAG run of "
                     "data.answers", f"{hint}name one of {', '.join(runs[:10])}{' ...' if len(runs) > 10 else ''}, "
                     "or null for no p-values")
