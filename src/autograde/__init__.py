"""autograde: evaluate retrieval and RAG systems with LLM autograding (Rubric / EXAM++ / LLM-RUBRIC).

Every stage is a plain typed function over files or dataframes; the Snakemake workflow and the
``autograde`` CLI are thin wrappers around them. The package is in layers (:data:`LAYERS`, lowest first): a module
imports only its own layer and those below (``tests/test_structure.py`` keeps it so; docs/architecture.md is the map).
"""

__version__ = "0.1.0"

LAYERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("foundations", ("core",),
     "errors, ids and hashing, logging and progress, threads and GPUs, statistics, tables, text and YAML files, "
     "the results and cache layouts"),
    ("sources", ("io", "corpus"), "readers and writers of every input format, test bank files, the corpus index, "
     "ir_datasets"),
    ("pipeline stages", ("grading", "metrics", "pipeline"),
     "grading (backends, prompts, cache, model spec), measures and metrics, ingest / pool / qrels / cover / "
     "leaderboards, the scaffolding of model jobs"),
    ("config and checks", ("config",), "the experiment config (one model per section), loading, checks before work"),
    ("features", ("banks", "nuggets", "reports", "rubric", "calibrated", "reproduce", "audit", "refdata", "ppi"),
     "test-bank generation, nugget scores, verification reports and the site, LLM-RUBRIC, calibrated qrels, "
     "the papers' tables, the judge audit, the reference data, estimates with intervals from a human sample"),
    ("application", ("workflow", "autojudge", "cli"),
     "what the Snakefile builds and checks, pre-flight checks, autograde as a TREC AutoJudge judge, the commands"),
)
"""(layer, its packages, what it holds), lowest first."""
