"""A probe of every workflow job's start-up, work and peak memory, for benchmarks/rag_scale.py.

Python imports ``sitecustomize`` at start-up from the first folder of ``sys.path`` that has one: the benchmark puts
this folder first in ``PYTHONPATH`` of the Snakemake it runs, with ``AUTOGRADE_JOBPROBE`` naming a JSONL file. Every
Python process Snakemake starts then appends one line when it exits: its rule (jobs of ``script:`` rules), the wall
and CPU seconds from interpreter start to the end of the config load every rule script does first
(:func:`autograde.workflow.context.script_setup`: Snakemake's script preamble, the imports, the config models) and
from there to the exit (the rule's own work), and its peak resident memory (``VmHWM``). Nothing is recorded without
the variable, and nothing the job computes changes (the probe only reads clocks). With ``AUTOGRADE_JOBPROBE_PROFILE``
naming a folder, each job's work (after its config load) also runs under cProfile, written to
``<folder>/<rule>-<pid>.prof`` (``python -m pstats`` reads it).
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.util
import json
import os
import resource
import sys
import time

_OUT = os.environ.get("AUTOGRADE_JOBPROBE")
_PROFILE = os.environ.get("AUTOGRADE_JOBPROBE_PROFILE")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _started() -> float:
    """The process's start time (seconds since the epoch), from /proc (the interpreter's own start-up included)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as fh:
            uptime = float(fh.read().split()[0])
        return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.time()


def _peak_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


_REC: dict = {}


def _wrap(module: object) -> None:
    setup = module.script_setup  # type: ignore[attr-defined]

    def script_setup(snakemake: object) -> object:
        config = setup(snakemake)
        _REC.update(rule=getattr(snakemake, "rule", None), wildcards=dict(getattr(snakemake, "wildcards", {}) or {}),
                    setup_end=time.time(), setup_cpu=_cpu())
        if _PROFILE:
            import cProfile

            _REC["profile"] = cProfile.Profile()
            _REC["profile"].enable()
        return config

    module.script_setup = script_setup  # type: ignore[attr-defined]


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        if name != "autograde.workflow.context":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module: object) -> None:
            run(module)  # type: ignore[arg-type]
            _wrap(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _write() -> None:
    if "rule" not in _REC:
        return  # not a rule job (Snakemake itself, a helper process)
    end, cpu = time.time(), _cpu()
    if "profile" in _REC:
        _REC["profile"].disable()
        os.makedirs(_PROFILE, exist_ok=True)  # type: ignore[arg-type]
        _REC["profile"].dump_stats(os.path.join(_PROFILE, f"{_REC['rule']}-{os.getpid()}.prof"))  # type: ignore[arg-type]
    start = _started()
    rec = {"rule": _REC["rule"], "wildcards": _REC["wildcards"], "pid": os.getpid(),
           "startup_seconds": round(_REC["setup_end"] - start, 3), "startup_cpu": round(_REC["setup_cpu"], 3),
           "work_seconds": round(end - _REC["setup_end"], 3), "work_cpu": round(cpu - _REC["setup_cpu"], 3),
           "peak_rss_mb": round(_peak_mb(), 1), "end": round(end, 3)}
    with open(_OUT, "a", encoding="utf-8") as fh:  # type: ignore[arg-type]
        fh.write(json.dumps(rec) + "\n")


if _OUT:
    sys.meta_path.insert(0, _Finder())
    atexit.register(_write)
