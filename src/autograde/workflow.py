"""Everything the Snakefile needs at parse time, and the setup shared by the rule scripts.

The Snakefile stays a table of contents: it builds one :class:`WorkflowContext` (config validated
once; queries and banks read and checked, so bad input fails before any job starts) and the rules
call its methods through the named input functions in ``rules/common.smk``.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograde.config import Config, expand_globs, validate_config
from autograde.errors import Problems
from autograde.ingest import read_banks
from autograde.io.bank import BankItem
from autograde.io.queries import read_queries
from autograde.log import logger, setup_logging

GPU_BACKENDS = {"hf", "vllm"}
ENVS_DIR = Path(__file__).resolve().parents[2] / "envs"
"""The workflow's conda environment files (``--sdm conda``)."""


@dataclass
class WorkflowContext:
    config: Config
    queries: dict[str, str]
    items: dict[str, dict[str, list[BankItem]]] = field(default_factory=dict)
    """grader name -> query -> items."""

    @classmethod
    def from_snakemake_config(cls, raw: dict[str, Any], source: str = "config/config.yaml") -> WorkflowContext:
        config = validate_config(raw, source)
        probs = Problems()
        queries = read_queries(config.data.queries, probs)
        banks = read_banks(config, probs, queries)
        probs.raise_if_any()
        from autograde.grading.shard import direct_items

        items = {g.name: (direct_items(queries) if g.bank == "direct" else banks[g.bank].by_query())
                 for g in config.graders}
        return cls(config, queries, items)

    @property
    def results(self) -> str:
        return self.config.results_dir

    def grader_names(self) -> list[str]:
        return [g.name for g in self.config.graders]

    def qrels_variants(self) -> list[str]:
        return [f"{m}-{t}" for m in self.config.qrels.modes for t in self.config.qrels.thresholds]

    def cover_thresholds(self) -> list[int]:
        c = self.config.cover
        return [] if not c.enabled else list(c.thresholds if c.thresholds is not None else self.config.qrels.thresholds)

    def measures(self) -> list[str]:
        return list(self.config.evaluation.measures)

    def run_files(self) -> list[str]:
        return expand_globs(self.config.data.runs)

    def answer_files(self) -> list[str]:
        return expand_globs(self.config.data.answers)

    def bank_file(self, grader: str) -> list[str]:
        g = self.config.grader(grader)
        return [] if g.bank == "direct" else [self.config.banks[g.bank]]

    def shard_digest(self, grader: str, scatteritem: str) -> str:
        from autograde.stages import shard_digest

        return shard_digest(self.config, grader, scatteritem, self.queries, self.items[grader])

    def grader_resources(self, grader: str) -> dict[str, Any]:
        """Per-job resources of a grading job (rule ``grade``), by backend.

        hf/vllm graders (unless ``options.device: cpu``) ask for one GPU (``gpu=1`` becomes ``--gpus=1`` with the
        SLURM executor; ``gpu_model`` from ``$AUTOGRADE_GPU_MODEL`` makes it ``--gpus=<model>:1``), host memory
        for loading the weights and a long runtime (minutes). The embedded CPU grader and the openai backend
        (network-bound) ask for no GPU. CPUs come from the rule's threads (``--cpus-per-task``). Override any of
        them per run with ``--set-resources grade:mem_mb=...``. ``conda_env`` is the software environment of the
        job under ``--sdm conda``: ``envs/vllm.yaml`` for vllm, ``envs/hf.yaml`` (torch, transformers, openai)
        for the other backends.
        """
        from autograde.doctor import needs_gpu

        g = self.config.grader(grader)
        env = ENVS_DIR / ("vllm.yaml" if g.backend == "vllm" else "hf.yaml")
        conda_env = str(env) if env.exists() else None
        if needs_gpu(g):
            return {"gpu": 1, "gpu_model": os.environ.get("AUTOGRADE_GPU_MODEL") or None, "mem_mb": 32000,
                    "runtime": 240, "conda_env": conda_env}
        if g.backend == "openai":
            return {"gpu": 0, "gpu_model": None, "mem_mb": 2000, "runtime": 240, "conda_env": conda_env}
        return {"gpu": 0, "gpu_model": None, "mem_mb": 4000, "runtime": 60, "conda_env": conda_env}

    def leaderboard_files(self) -> list[str]:
        r = self.results
        out = [f"{r}/leaderboards/{g}/{v}/{m}.tsv" for g in self.grader_names() for v in self.qrels_variants()
               for m in self.measures()]
        out += [f"{r}/leaderboards/{g}/cover-{t}/{m}.tsv" for g in self.grader_names()
                for t in self.cover_thresholds() for m in ("cover", "ncover")]
        if self.config.data.qrels:
            out += [f"{r}/leaderboards/human/{m}.tsv" for m in self.measures()]
        return out

    def final_outputs(self) -> list[str]:
        r = self.results
        out = [f"{r}/pool/pool.parquet"]
        for g in self.grader_names():
            out += [f"{r}/grades/{g}.parquet", f"{r}/grades/{g}.stats.json"]
            out += [f"{r}/qrels/{g}/{v}.qrels" for v in self.qrels_variants()]
        out += self.leaderboard_files()
        if self.config.data.official_leaderboard:
            out.append(f"{r}/correlation.tsv")
        if self.config.data.qrels:
            out.append(f"{r}/metrics/retrieval.json")
        if self.config.data.generation:
            out.append(f"{r}/metrics/generation.json")
        return out


def script_setup(snakemake: Any) -> Config:
    """Common start of every rule script: log to the rule's log file, validate the config."""
    setup_logging()
    if getattr(snakemake, "log", None):
        Path(snakemake.log[0]).parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(snakemake.log[0], mode="w", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
    threads = getattr(snakemake, "threads", None)
    if threads:
        os.environ["AUTOGRADE_THREADS"] = str(threads)
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return validate_config(dict(snakemake.config))
