# Estimates with intervals from human judgments of a sample of the pool (the human_sample: config section;
# docs/human_sample.md). Logic: autograde.ppi (stages in autograde.ppi.stages; what this rule reads from the config
# in autograde.ppi.workflow, which loads no estimation code at parse time). The inputs are the pool, the rankings,
# the judged sample, the design file and every prediction's file, the params every setting of the section: a change
# of any of them, and nothing else, reruns the rule. The judging design itself is drawn by `autograde sample draw`
# (a user's decision, never redrawn by the workflow).
from autograde.ppi.workflow import (
    estimate_inputs,
    estimate_outputs,
    estimate_params,
    judging_inputs,
)


rule human_sample_estimates:
    input:
        **estimate_inputs(CTX.config),
    output:
        list(estimate_outputs(CTX.config).values()),
    log:
        "logs/human_sample/estimates.log",
    benchmark:
        "logs/benchmarks/human_sample/estimates.tsv"
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        outputs=estimate_outputs(CTX.config),
        settings=estimate_params(CTX.config),
    script:
        "../scripts/human_sample_estimates.py"


rule human_sample_judging:
    input:
        **judging_inputs(CTX.config),
    output:
        LAYOUT.human_sample("judging.json"),
    log:
        "logs/human_sample/judging.log",
    group:
        "analysis"
    conda:
        "../envs/analysis.yaml"
    params:
        settings=estimate_params(CTX.config),
    script:
        "../scripts/human_sample_judging.py"
