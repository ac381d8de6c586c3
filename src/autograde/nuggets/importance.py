"""Importance per nugget: the bank's own (``info.importance`` of an item, set by hand, by import or by
``autograde bank set-importance``), else a model's label (the ``NuggetImportance`` prompt, cached like every grade),
else the ``missing_importance`` policy. Hand-set importance always wins: the model is asked only about nuggets the
bank leaves open.

>>> from autograde.io.banks.read import Bank, BankItem
>>> bank = Bank([BankItem("q/1", "q", "nugget", "a", info={"importance": "vital"}), BankItem("q/2", "q", "nugget", "b")])
>>> given_importance(bank, "bank.jsonl", Problems())
{'q/1': 'vital', 'q/2': None}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from autograde.core.errors import InvalidValueError, Problems
from autograde.core.log import logger
from autograde.grading.nugget_labels import IMPORTANCE_LABELS, importance_of_grade

if TYPE_CHECKING:
    from autograde.config.model import Config, GraderConfig
    from autograde.config.nuggets import ImportanceConfig, NuggetsConfig
    from autograde.grading.base import GradeRequest
    from autograde.io.banks.model import Bank, BankItem

IMPORTANCE_COLUMNS = ["query_id", "item_id", "text", "importance", "source", "p_vital"]
"""The importance table: one row per nugget; source is ``bank``, ``model`` or ``default``."""
IMPORTANCE_FIX = 'set "info": {"importance": "vital"} (or "okay") on the item, or: autograde bank set-importance'


def given_importance(bank: Bank, path: str, problems: Problems) -> dict[str, str | None]:
    """item id -> the importance the bank gives (None where it gives none); a value other than vital / okay is a
    problem naming the bank file and the query's line."""
    out: dict[str, str | None] = {}
    for it in bank.items:
        value = (it.info or {}).get("importance")
        if value is not None and value not in IMPORTANCE_LABELS:
            problems.add(path, bank.lines.get(it.query_id), f"nugget {it.item_id} ({it.text[:50]!r}) has importance "
                         f"{value!r}; valid: {', '.join(IMPORTANCE_LABELS)}", IMPORTANCE_FIX)
            value = None
        out[it.item_id] = value
    return out


def missing_problems(bank: Bank, given: dict[str, str | None], path: str, problems: Problems) -> None:
    """Every nugget without importance, when there is neither a model nor a default for it."""
    for it in bank.items:
        if given.get(it.item_id) is None:
            problems.add(path, bank.lines.get(it.query_id), f"nugget {it.item_id} ({it.text[:50]!r}) has no "
                         "importance", f"{IMPORTANCE_FIX}; or configure nuggets.importance (a model labels it) or "
                         "nuggets.missing_importance: okay")


def importance_model(config: Config) -> ImportanceConfig | None:
    """The importance model of the experiment's ``nuggets:`` section (None: importance comes from the bank only)."""
    n = config.nuggets
    return n.importance if n is not None else None


def importance_grader_config(n: NuggetsConfig) -> GraderConfig:
    """The grader identity of the importance model (its cache keys are grades' keys)."""
    from autograde.config.model import GraderConfig

    assert n.importance is not None
    imp = n.importance
    return GraderConfig(name="nugget-importance", backend=imp.backend, bank=n.bank, prompt_class=imp.prompt_class,
                        model=imp.model, scoring=imp.scoring, options=dict(imp.options))


def importance_requests(items: list[BankItem], queries: dict[str, str]) -> list[GradeRequest]:
    """One request per nugget: the nugget and its query, no passage."""
    from autograde.grading.base import GradeRequest

    return [GradeRequest(it.query_id, queries.get(it.query_id, ""), "", "", it.item_id, it.kind, it.text)
            for it in items]


def model_importance(config: Config, items: list[BankItem], queries: dict[str, str]) -> tuple[pd.DataFrame, dict]:
    """The importance model's grades of ``items`` through the grade cache (only new nuggets reach the model)."""
    from autograde.grading.registry import make_grader
    from autograde.grading.shard import grade_requests
    from autograde.pipeline.stages import check_failures

    n = config.nuggets
    assert n is not None
    cfg = importance_grader_config(n)
    grader = make_grader(cfg)
    try:
        outcome = grade_requests(importance_requests(items, queries), grader, cfg, config.grading.cache_dir,
                                 config.grading.batch_size)
    finally:
        grader.close()
    check_failures(outcome.stats, outcome.failures, config.grading.allow_failures, cfg.name, "")
    return outcome.grades, outcome.stats


def importance_table(config: Config, bank: Bank, bank_path: str, queries: dict[str, str]) -> tuple[pd.DataFrame, dict]:
    """Every nugget's importance and where it came from, and stats; raises when a nugget is left without one."""
    import json

    n = config.nuggets
    assert n is not None
    problems = Problems()
    given = given_importance(bank, bank_path, problems)
    problems.raise_if_any()
    open_items = [it for it in bank.items if given[it.item_id] is None]
    labels: dict[str, tuple[str, str, float | None]] = {
        it.item_id: (str(given[it.item_id]), "bank", None) for it in bank.items if given[it.item_id] is not None}
    stats: dict[str, Any] = {"nuggets": len(bank.items), "from_bank": len(labels)}
    if open_items and n.importance is not None:
        grades, model_stats = model_importance(config, open_items, queries)
        stats["model"] = model_stats
        for r in grades.itertuples(index=False):
            if r.parse_status != "ok" or pd.isna(r.grade):
                continue
            probs = json.loads(r.grade_probs) if isinstance(r.grade_probs, str) else {}
            labels[r.item_id] = (importance_of_grade(int(r.grade)), "model", probs.get("vital"))
    left = [it for it in open_items if it.item_id not in labels]
    if left and n.missing_importance == "error":
        missing_problems(bank, {it.item_id: labels.get(it.item_id, (None,))[0] for it in bank.items}, bank_path,
                         problems)
        problems.raise_if_any()
    for it in left:
        labels[it.item_id] = (n.missing_importance, "default", None)
    stats["from_model"] = sum(1 for v in labels.values() if v[1] == "model")
    stats["default"] = len(left)
    stats.update({f"n_{k}": sum(1 for v in labels.values() if v[0] == k) for k in IMPORTANCE_LABELS})
    rows = [(it.query_id, it.item_id, it.text, *labels[it.item_id]) for it in bank.items]
    if left:
        logger.warning("%d nugget(s) without importance count as %s (nuggets.missing_importance)", len(left),
                       n.missing_importance)
    return pd.DataFrame(rows, columns=IMPORTANCE_COLUMNS), stats


def require_importance(table: pd.DataFrame, item_ids: set[str]) -> dict[str, str]:
    """item id -> importance for ``item_ids`` (every one must be in the table: the stages agree on the bank)."""
    imp = dict(zip(table["item_id"], table["importance"], strict=True))
    missing = sorted(item_ids - set(imp))
    if missing:
        raise InvalidValueError(f"{len(missing)} nugget(s) have no importance row, e.g. {missing[0]} (fix: rerun the "
                            "nugget_importance step: snakemake -R nugget_importance)")
    return {i: imp[i] for i in item_ids}
