"""Rule audit_robustness: one grader's perturbed copies graded through its cache, shifts, lifts and ranks."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.audit.stages import run_robustness
    from autograde.pipeline.jobs import run_model_job

    grader = config.grader(sm.wildcards.grader)
    outputs = dict(sm.output.items())
    command = ["audit", "robustness", "--grader", grader.name,
               *(x for k, v in outputs.items() for x in (f"--{k.replace('_', '-')}-out", v))]
    run_model_job(grader, f"robustness audit of {grader.name}",
                  lambda: run_robustness(config, grader.name, outputs, threads=sm.threads),
                  command, dict(sm.config), sm.threads)


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
