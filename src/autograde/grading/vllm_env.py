"""Running ``vllm`` grading in the vLLM environment from another Python (workflow jobs, tests, the benchmark).

vLLM pins its own torch and transformers, so it lives in an environment of its own: ``.venv-vllm`` (``make
vllm-env``, vLLM's CPU build) or a conda env from ``envs/vllm.yaml`` on GPU clusters. The workflow's ``grade``
rule runs in the project's main environment and hands a ``vllm`` grader's shard to :func:`grade_shard`, which
runs ``python -m autograde.cli grade ...`` with that environment's Python. The command is the same one a user
runs by hand, so the cache, identities, stats and failure files are exactly those of the other backends, and it
is ``__main__``-guarded, which vLLM's spawned engine processes need (a Snakemake ``script:`` is not).

Which Python: the grader's ``options.python``, else ``$AUTOGRADE_VLLM_PYTHON``, else this Python if it has vLLM
(a job under ``--sdm conda`` with ``envs/vllm.yaml``), else the checkout's ``.venv-vllm/bin/python``. The
checkout's ``src/`` goes first on the child's ``PYTHONPATH``, so the environment needs no autograde install.

The child's output (vLLM's messages included) goes to this process's log as it comes. A user-fixable error in
the child (exit status 2, the ``autograde`` command's convention) comes back as :class:`VLLMEnvError` with the
child's message, printed without a traceback; a crash or a kill names the exit status or signal and the last
lines. If this process dies, the child gets SIGTERM (Linux), so a cancelled job leaves no engine behind.

Tests and the benchmark use the second entry point, which grades given requests with given graders and writes
the results and timings as JSON::

    .venv-vllm/bin/python -m autograde.grading.vllm_env JOB.json OUT.json
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import asdict
from pathlib import Path
from typing import Any

from autograde.core.errors import AutogradeError, GraderSetupError
from autograde.core.log import logger

VLLM_PYTHON_ENV = "AUTOGRADE_VLLM_PYTHON"
"""Environment variable naming the Python of the vLLM environment."""

SRC = Path(__file__).resolve().parents[2]
"""The ``src/`` folder this package was imported from (put first on the child's ``PYTHONPATH``)."""

CHECKOUT_VENV = SRC.parent / ".venv-vllm"
"""The environment ``make vllm-env`` builds in the checkout."""

BUILD_HINT = ("build it with `make vllm-env` (vLLM's CPU build in .venv-vllm), or on a GPU cluster create "
              "envs/vllm.yaml and set AUTOGRADE_VLLM_PYTHON to its python (see docs/vllm.md)")


class VLLMEnvError(AutogradeError, RuntimeError):
    """Grading in the vLLM environment failed; the message carries the child's own error or its exit."""


def find_vllm_python(configured: str | None = None) -> str:
    """The Python of the vLLM environment (see the module docs for the order); raises with the fix if none."""
    for origin, value in (("options.python", configured), (f"${VLLM_PYTHON_ENV}", os.environ.get(VLLM_PYTHON_ENV))):
        if value:
            if not (Path(value).is_file() and os.access(value, os.X_OK)):
                raise GraderSetupError(f"{origin} = {value!r} is not an executable Python (fix: point it at the "
                                       f"vLLM environment's bin/python, or unset it; or {BUILD_HINT})")
            return value
    if importlib.util.find_spec("vllm") is not None:
        return sys.executable
    venv_python = CHECKOUT_VENV / "bin" / "python"
    if venv_python.is_file():
        return str(venv_python)
    raise GraderSetupError(f"no vLLM environment found: none given (options.python, ${VLLM_PYTHON_ENV}), this Python "
                           f"({sys.executable}) has no vLLM, and {venv_python} does not exist (fix: {BUILD_HINT})")


def child_env(threads: int | None = None) -> dict[str, str]:
    """The environment of a child in the vLLM environment: this checkout's code first, passive OpenMP waits."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env["PYTHONUNBUFFERED"] = "1"
    if threads:
        env["AUTOGRADE_THREADS"] = str(threads)
    return env


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _relay(line: str) -> None:
    """Write one line of the child's output to this process's log handlers as it is (stderr if none)."""
    handlers = [h for h in logger.handlers if isinstance(h, logging.StreamHandler)]
    if not handlers:
        sys.stderr.write(line)
        return
    for h in handlers:
        h.acquire()
        try:
            h.stream.write(line)
            h.flush()
        except (ValueError, OSError):  # a handler whose stream was closed (e.g. by a test harness)
            sys.stderr.write(line)
        finally:
            h.release()


def run_in_vllm_env(python: str, args: list[str], what: str, threads: int | None = None) -> None:
    """Run ``python args...`` with :func:`child_env`, relaying its output; raise :class:`VLLMEnvError` on failure."""
    logger.info("%s: running in the vLLM environment (%s)", what, python)
    tail: deque[str] = deque(maxlen=20)
    errors: list[str] = []
    proc = subprocess.Popen([python, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=child_env(threads), preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            _relay(line)
            tail.append(line.rstrip())
            if " ERROR autograde: " in line:
                errors.append(line.split(" ERROR autograde: ", 1)[1].rstrip())
            elif errors and line.startswith("  "):  # continuation lines of a multi-line error (input problems)
                errors[-1] += "\n" + line.rstrip()
        rc = proc.wait()
    except BaseException:
        proc.terminate()
        proc.wait()
        raise
    if rc == 0:
        return
    if rc == 2 and errors:
        raise VLLMEnvError("\n".join(errors))
    how = f"was killed by signal {signal.Signals(-rc).name}" if rc < 0 else f"exited with status {rc}"
    last = "\n  ".join(tail)
    raise VLLMEnvError(f"{what}: the process in the vLLM environment ({python}) {how}; its last lines:\n  {last}\n"
                       "(fix: read the vLLM messages above in this log; grades made before the failure are cached, "
                       "a rerun sends only the rest)")


def run_cli_in_vllm_env(raw_config: dict[str, Any], command: list[str], what: str, threads: int | None = None,
                        python: str | None = None) -> None:
    """Run ``autograde <command> --config CONFIG`` in the vLLM environment, ``raw_config`` (the experiment as a
    mapping, the workflow's resolved config) written to a temporary YAML file for it (its paths are relative to the
    working directory, not to the file)."""
    import yaml

    python = python or find_vllm_python()
    fd, cfg_path = tempfile.mkstemp(prefix="autograde-vllm-job-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            yaml.safe_dump(raw_config, f, sort_keys=False)
        args = ["-m", "autograde.cli", *command, "--config", cfg_path]
        if threads:
            args += ["--threads", str(threads)]
        run_in_vllm_env(python, args, what, threads)
    finally:
        Path(cfg_path).unlink(missing_ok=True)


def grade_shard(raw_config: dict[str, Any], grader: str, pool: str, queries: str, grades: str, stats: str,
                failures: str, *, shard: str = "", threads: int | None = None, digest: str | None = None,
                python: str | None = None) -> dict[str, Any]:
    """Grade one pool shard with a ``vllm`` grader through ``autograde grade`` in the vLLM environment
    (:func:`run_cli_in_vllm_env`). Returns the shard's stats."""
    Path(grades).parent.mkdir(parents=True, exist_ok=True)
    args = ["grade", "--grader", grader, "--pool", str(pool), "--queries", str(queries), "--out", str(grades),
            "--stats", str(stats), "--failures", str(failures)]
    if shard:
        args += ["--shard", shard]
    if digest:
        args += ["--digest", digest]
    run_cli_in_vllm_env(raw_config, args, f"grader {grader}" + (f" shard {shard}" if shard else ""), threads, python)
    return json.loads(Path(stats).read_text(encoding="utf-8"))


# -- the second entry point: grade given requests (tests, benchmark) ----------------------------------------------


def _engine_key(grader: dict[str, Any]) -> str:
    from autograde.grading.vllm_backend import Options, engine_kwargs

    return repr(sorted(engine_kwargs(grader.get("model") or "", Options.model_validate(grader.get("options") or {})).items()))


def grade_requests_job(job: dict[str, Any]) -> dict[str, Any]:
    """Run ``job["runs"]`` in order: each ``{name, grader: GraderSpec fields (other grader keys ignored), requests: [GradeRequest fields],
    repeat}`` grades its requests ``repeat`` times (the last results are kept, every time is reported).

    Consecutive runs with equal engine settings share one engine; a run with other settings first closes the
    open ones. Returns ``{vllm, python, runs: {name: {results, rendered, identity, start_s, seconds}}}``.
    """
    import vllm

    from autograde.grading.base import GradeRequest
    from autograde.grading.registry import make_grader
    from autograde.grading.spec import GraderSpec

    out: dict[str, Any] = {"vllm": vllm.__version__, "python": sys.executable, "runs": {}}
    open_graders: list[tuple[str, Any]] = []
    try:
        for run in job["runs"]:
            key = _engine_key(run["grader"])
            for k, g in [x for x in open_graders if x[0] != key]:
                g.close()
                open_graders.remove((k, g))
            t = time.perf_counter()
            grader = make_grader(GraderSpec.model_validate({k: v for k, v in run["grader"].items()
                                                            if k in GraderSpec.model_fields}))
            start_s = time.perf_counter() - t
            open_graders.append((key, grader))
            reqs = [GradeRequest(**{**r, "gold_answers": tuple(r.get("gold_answers") or ())}) for r in run["requests"]]
            seconds = []
            results: list[Any] = []
            for _ in range(int(run.get("repeat", 1))):
                t = time.perf_counter()
                results = grader.grade_batch(reqs)
                seconds.append(time.perf_counter() - t)
            out["runs"][run["name"]] = {
                "results": [asdict(r) for r in results], "rendered": [grader.render(r) for r in reqs],
                "identity": grader.identity(), "start_s": start_s, "seconds": seconds,
            }
            logger.info("run %s: %d requests, start %.1fs, grading %s s", run["name"], len(reqs), start_s,
                        ", ".join(f"{s:.2f}" for s in seconds))
    finally:
        for _, g in open_graders:
            g.close()
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m autograde.grading.vllm_env JOB.json OUT.json`` (in the vLLM environment)."""
    from autograde.core.log import setup_logging

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m autograde.grading.vllm_env JOB.json OUT.json", file=sys.stderr)
        return 2
    setup_logging()
    try:
        result = grade_requests_job(json.loads(Path(args[0]).read_text(encoding="utf-8")))
    except AutogradeError as exc:
        logger.error("%s", exc)
        return 2
    Path(args[1]).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
