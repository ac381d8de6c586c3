# Parse-time setup and named input/params functions (no lambdas in rules).
import sys
from pathlib import Path

sys.path.insert(
    0, str(Path(workflow.basedir) / "src")
)  # also works in conda envs without the package

from autograde.core.errors import AutogradeError
from autograde.core.layout import VARIANT_PATTERN, Layout
from autograde.pipeline.jobs import ModelJobs
from autograde.workflow.context import WorkflowContext

# The experiment: --config experiment=PATH, $AUTOGRADE_EXPERIMENT, or config/experiments/example.yaml (or a
# complete --configfile). Validated once; every input checked before any job starts (main process only).
try:
    CTX = WorkflowContext.from_snakemake_config(
        config,
        check_inputs=workflow.is_main_process,
        configfiles=workflow.config_settings.configfiles,
        command_line=dict(workflow.config_settings.config),
    )
except AutogradeError as exc:
    # the message names file, line and fix: print it as it is and stop (a WorkflowError would wrap it in "in
    # file rules/common.smk, line N", which reads like a bug of the workflow)
    sys.stderr.write(f"autograde: the experiment cannot start\n{exc}\n")
    raise SystemExit(1) from None
RESULTS = CTX.results
LAYOUT = Layout.of(
    RESULTS
)  # every results path (autograde.core.layout): rules pass wildcards as the names


def ingest_inputs(wildcards):
    out = {
        "queries": CTX.config.data.queries,
        "runs": CTX.run_files(),
        "answers": CTX.answer_files(),
    }
    if CTX.config.data.qrels:
        out["qrels"] = CTX.config.data.qrels
    return out


def corpus_files(wildcards):
    return CTX.corpus_files()


def bank_of_grader(wildcards):
    # ancient(): a bank edit must not rerun every shard; the shard digest (params) decides. A generated bank
    # (made by the merge_bank rule) is not ancient: it is rewritten only when regenerated, and then every shard reruns.
    if CTX.bank_is_generated(wildcards.grader):
        return CTX.bank_file(wildcards.grader)
    return [ancient(p) for p in CTX.bank_file(wildcards.grader)]


def get_shard_digest(wildcards):
    return CTX.shard_digest(wildcards.grader, wildcards.scatteritem)


def get_shard_digests(wildcards):
    # every shard's digest at the scatter count in use (--set-scatter respected): merge_grades reruns on any
    # bank/grader change and refuses a shard whose output is older than its digest
    return {
        item: CTX.shard_digest(wildcards.grader, item)
        for item in scatter.grade("{scatteritem}")
    }


def grader_spec(wildcards):
    return CTX.config.grader(wildcards.grader)


GRADE_JOBS = ModelJobs(
    "grade", grader_spec
)  # resources and conda env per backend (autograde.pipeline.jobs)


def human_qrels(wildcards):
    return CTX.config.data.qrels


def get_qrels_variant(wildcards):
    return CTX.qrels_variant(wildcards.grader, wildcards.variant)


def get_qrels_level(wildcards):
    return CTX.qrels_variant(wildcards.grader, wildcards.variant)["level"]


def get_grader_measures(wildcards):
    return CTX.measures()


def get_leaderboard_table(wildcards):
    return CTX.leaderboard_table()


def print_outputs(ctx):
    """At the end of a successful run: where the main results are (autograde outputs says the same)."""
    from autograde.workflow.outputs import outputs_summary

    sys.stderr.write(outputs_summary(ctx.config, ctx.source) + "\n")
