# LLM-RUBRIC (Hashemi et al., ACL 2024): the judge-personalized calibration network (fit, cross-validated evaluation,
# predictions for new texts). Logic: autograde.rubric (stage functions in autograde.rubric.stages; what the rules
# read from the config in autograde.rubric.workflow, which loads no training code at parse time).
# The config sections travel as params, so editing one reruns exactly the rules that read it.
# Networks are tiny: one thread per job keeps the numbers identical from run to run and machine to machine.
from autograde.rubric.workflow import RubricRules

RUBRIC_RULES = RubricRules(CTX.config)


rule rubric_fit:
    input:
        unpack(RUBRIC_RULES.inputs),
    output:
        model=RUBRIC_RULES.files["model"],
        report=RUBRIC_RULES.files["fit"],
    log:
        "logs/rubric/fit.log",
    benchmark:
        "logs/benchmarks/rubric/fit.tsv"
    conda:
        "../envs/hf.yaml"
    threads: 1
    params:
        rubric=RUBRIC_RULES.params,
    script:
        "../scripts/rubric_fit.py"


rule rubric_evaluate:
    input:
        unpack(RUBRIC_RULES.inputs),
    output:
        report=RUBRIC_RULES.files["evaluation"],
        md=RUBRIC_RULES.files["evaluation_md"],
        tex=RUBRIC_RULES.files["evaluation_tex"],
        predictions=RUBRIC_RULES.files["cv_predictions"],
        svg=RUBRIC_RULES.files["reliability"],
    log:
        "logs/rubric/evaluate.log",
    benchmark:
        "logs/benchmarks/rubric/evaluate.tsv"
    conda:
        "../envs/hf.yaml"
    threads: 1
    params:
        rubric=RUBRIC_RULES.params,
    script:
        "../scripts/rubric_evaluate.py"


rule rubric_transfer:
    input:
        unpack(RUBRIC_RULES.transfer_inputs),
    output:
        report=RUBRIC_RULES.files["transfer"],
        md=RUBRIC_RULES.files["transfer_md"],
        tex=RUBRIC_RULES.files["transfer_tex"],
    log:
        "logs/rubric/transfer.log",
    benchmark:
        "logs/benchmarks/rubric/transfer.tsv"
    conda:
        "../envs/hf.yaml"
    threads: 1
    params:
        rubric=RUBRIC_RULES.params,
    script:
        "../scripts/rubric_transfer.py"


rule rubric_predict:
    input:
        unpack(RUBRIC_RULES.predict_inputs),
    output:
        predictions=RUBRIC_RULES.files["predictions"],
    log:
        "logs/rubric/predict/{name}.log",
    wildcard_constraints:
        name=RUBRIC_RULES.name_constraint(),
    conda:
        "../envs/hf.yaml"
    threads: 1
    params:
        llm_format=RUBRIC_RULES.llm_format,
    script:
        "../scripts/rubric_predict.py"
