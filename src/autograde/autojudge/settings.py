"""What the TREC AutoJudge runner hands autograde's judge, as an autograde experiment: the ``settings`` of the
track's ``workflow.yml`` (checked here, every unknown key named with the valid ones), the runner's LLM config (its
model, endpoint and key become a grader's backend), and the reports and topics written as autograde inputs.

>>> s = JudgeSettings.model_validate({"backend": "embedded", "filebase": "default", "outdir": "out"})
>>> [g["name"] for g in default_graders(s, LlmConfig("m"))], s.work_dir_for("out", "default").name
(['minilm'], 'default.autograde')
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from autograde.core.errors import ConfigError
from autograde.core.schema import Strict
from autograde.core.yamlfile import read_yaml
from autograde.grading.registry import BACKEND_NAMES, backend

SECTIONS = ("banks", "pool", "answers", "grading", "graders", "qrels", "evaluation", "cover", "nuggets",
            "bank_generation", "metrics")
"""The experiment sections a judge may take from its settings (or an experiment file); data and results are its own."""
KEY_ENV = "AUTOGRADE_AUTOJUDGE_API_KEY"
"""Where the runner's API key is put for the ``openai`` backend when it is not in the named variable already (the key
stays in the process environment, never in a file)."""


class JudgeSettings(Strict):
    """The ``settings:`` (and ``judge_settings`` / ``qrels_settings`` / ``nugget_settings``) of the track's
    ``workflow.yml`` for autograde's judge."""

    experiment: str | None = Field(default=None, description="an autograde experiment config whose sections (graders, "
                                   "banks, qrels, evaluation, cover, nuggets, ...) the judge uses; its data is "
                                   "replaced by the runner's reports and topics")
    autograde: dict[str, Any] = Field(default_factory=dict, description="experiment sections given inline (over "
                                      "those of 'experiment')")
    backend: str = Field(default="openai", description="the backend the runner's LLM config becomes: openai (its "
                         "endpoint and model), vllm or hf (its model), embedded (no LLM)")
    track: str | None = Field(default=None, description="check the reports against this track's format first "
                              "(rag25, rag26, ragtime26, ...; errors stop the judge, smells are logged)")
    nugget_bank: str = Field(default="nuggets", description="the bank name under which the runner's nugget banks "
                             "are graded (graders with bank: <this name>)")
    qrels: str | None = Field(default=None, description="which qrels create_qrels returns, <grader>/<variant> "
                              "(default: the first grader's first variant)")
    leaderboards: list[str] | None = Field(default=None, description="the leaderboards judge returns as measures, "
                                           "<grader>/<qrels>/<measure> (default: every leaderboard)")
    cache_dir: str | None = Field(default=None, description="the grade cache (default: the LLM config's cache_dir, "
                                  "else <outdir>/autograde-cache)")
    work_dir: str | None = Field(default=None, description="autograde's inputs, config and results (default: "
                                 "<outdir>/<filebase>.autograde)")
    description: str | None = Field(default=None, description="free text (the runner records it)")
    filebase: str | None = Field(default=None, description="set by the runner")
    outdir: str | None = Field(default=None, description="set by the runner")

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, v: str) -> str:
        if v not in BACKEND_NAMES:
            raise ValueError(f"unknown backend {v!r}; known: {', '.join(BACKEND_NAMES)}")
        return v

    @field_validator("autograde")
    @classmethod
    def _sections(cls, v: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(v) - set(SECTIONS))
        if unknown:
            raise ValueError(f"unknown section(s) {unknown}; the judge takes {', '.join(SECTIONS)} (data and "
                             "results_dir are its own)")
        return v

    def work_dir_for(self, outdir: str | Path | None, filebase: str | None) -> Path:
        """The judge's working folder: ``work_dir``, else ``<outdir>/<name of filebase>.autograde``."""
        if self.work_dir:
            return Path(self.work_dir)
        return Path(outdir or ".") / f"{Path(filebase or 'autograde').name}.autograde"


def parse_settings(kwargs: dict[str, Any], where: str = "workflow.yml settings") -> JudgeSettings:
    """The runner's keyword settings as :class:`JudgeSettings`; every problem (an unknown key lists the valid ones)
    in one :class:`ConfigError`."""
    values = {k: (str(v) if k in ("outdir", "filebase") and v is not None else v) for k, v in kwargs.items()}
    try:
        return JudgeSettings.model_validate(values)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden":
                msg = f"unknown setting; valid: {', '.join(JudgeSettings.model_fields)}"
            lines.append(f"  - {key}: {msg}")
        raise ConfigError(f"{where}: {len(lines)} problem(s) in autograde's judge settings:\n" + "\n".join(lines)
                          + "\n(fix: correct the settings above; docs/autojudge.md lists them)") from None


@dataclass(frozen=True)
class LlmConfig:
    """The part of the runner's LLM config autograde uses (its ``LlmConfigBase``: model, endpoint, key, cache)."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    cache_dir: str | None = None

    @classmethod
    def of(cls, llm_config: Any) -> LlmConfig:
        """From any object with the runner's LLM config attributes (absent ones are None)."""
        cache = getattr(llm_config, "cache_dir", None)
        return cls(str(getattr(llm_config, "model", "") or ""), getattr(llm_config, "base_url", None),
                   getattr(llm_config, "api_key", None), str(cache) if cache else None)


def llm_fields(backend_name: str, llm: LlmConfig, given: dict[str, Any]) -> dict[str, Any]:
    """A grader's model fields filled from the runner's LLM config where the grader leaves them out: ``model`` for
    every language-model backend, and for an endpoint backend its ``base_url`` and API key."""
    b = backend(backend_name)
    if not b.language_model:
        return dict(given)
    out = dict(given)
    if not out.get("model") and llm.model:
        out["model"] = llm.model
    if not b.local_model:
        options = dict(out.get("options") or {})
        if llm.base_url and not options.get("base_url"):
            options["base_url"] = llm.base_url
        env = str(options.get("api_key_env") or "OPENAI_API_KEY")
        if llm.api_key and os.environ.get(env) != llm.api_key:
            os.environ[KEY_ENV] = llm.api_key
            options["api_key_env"] = KEY_ENV
        out["options"] = options
    return out


def default_graders(settings: JudgeSettings, llm: LlmConfig) -> list[dict[str, Any]]:
    """The grader of a judge whose settings name none: UMBRELA as the PyPI package runs it (its prompt; on an
    endpoint its generated answers parsed by its own parser, locally the probabilities of its labels) on the
    runner's LLM, relevant from grade 2; with the embedded backend, the similarity grader of the query."""
    b = backend(settings.backend)
    if not b.language_model:
        return [{"name": "minilm", "backend": settings.backend, "bank": "direct"}]
    grader: dict[str, Any] = {"name": "umbrela", "backend": settings.backend, "bank": "direct",
                              "prompt_class": "UMBRELA@pypi-0.0.7", "thresholds": [2]}
    if b.local_model:
        grader["scoring"] = "logits"
    else:
        grader.update(scoring="generate", options={"umbrela_parser": "pypi-0.0.7", "max_new_tokens": 100})
    return [llm_fields(settings.backend, llm, grader)]


def experiment_sections(settings: JudgeSettings, llm: LlmConfig) -> dict[str, Any]:
    """The experiment sections of the judge: those of ``experiment``, then the inline ones, graders and generated
    banks filled from the LLM config (no grader: the default grader)."""
    sections: dict[str, Any] = {}
    if settings.experiment:
        raw = read_yaml(settings.experiment, "experiment config") or {}
        if not isinstance(raw, dict):
            raise ConfigError(f"{settings.experiment}: expected a mapping of config sections")
        sections.update({k: v for k, v in raw.items() if k in SECTIONS})
    sections.update(settings.autograde)
    generation = sections.get("bank_generation") or {}
    if isinstance(generation, dict):  # generated banks run on the runner's LLM too (their backend: openai by default)
        sections["bank_generation"] = {n: llm_fields(str(b.get("backend") or "openai"), llm, b) if isinstance(b, dict)
                                       else b for n, b in generation.items()}
    graders = sections.get("graders") or []
    if graders:
        sections["graders"] = [llm_fields(str(g.get("backend") or "embedded"), llm, g) if isinstance(g, dict) else g
                               for g in graders]
    else:
        sections["graders"] = default_graders(settings, llm)
    return sections
