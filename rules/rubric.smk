# LLM-RUBRIC (Hashemi et al., ACL 2024): the judge-personalized calibration network (fit, cross-validated evaluation,
# predictions for new texts). Logic: autograde.rubric (stage functions in autograde.rubric.stages; what the rules
# read from the config in autograde.rubric.workflow, which loads no training code at parse time).
# The config sections travel as params, so editing one reruns exactly the rules that read it.
# Networks are tiny: one thread per job keeps the numbers identical from run to run and machine to machine.
from autograde.rubric.workflow import (
    rubric_files,
    rubric_inputs,
    rubric_predict_input,
    rubric_predict_sources,
    rubric_section,
)

RUBRIC = rubric_section(CTX.config)


if RUBRIC is not None:
    RUBRIC_FILES = rubric_files(RESULTS, RUBRIC)

    rule rubric_fit:
        input:
            **rubric_inputs(RUBRIC),
        output:
            model=RUBRIC_FILES["model"],
            report=RUBRIC_FILES["fit"],
        log:
            "logs/rubric/fit.log",
        benchmark:
            "logs/benchmarks/rubric/fit.tsv"
        conda:
            "../envs/hf.yaml"
        threads: 1
        params:
            rubric=RUBRIC.model_dump(),
        script:
            "../scripts/rubric_fit.py"

    rule rubric_evaluate:
        input:
            **rubric_inputs(RUBRIC),
        output:
            report=RUBRIC_FILES["evaluation"],
            md=RUBRIC_FILES["evaluation_md"],
            tex=RUBRIC_FILES["evaluation_tex"],
            predictions=RUBRIC_FILES["cv_predictions"],
            svg=RUBRIC_FILES["reliability"],
        log:
            "logs/rubric/evaluate.log",
        benchmark:
            "logs/benchmarks/rubric/evaluate.tsv"
        conda:
            "../envs/hf.yaml"
        threads: 1
        params:
            rubric=RUBRIC.model_dump(),
        script:
            "../scripts/rubric_evaluate.py"

    if RUBRIC.test is not None:

        rule rubric_transfer:
            input:
                **rubric_inputs(RUBRIC, with_test=True),
            output:
                report=RUBRIC_FILES["transfer"],
                md=RUBRIC_FILES["transfer_md"],
                tex=RUBRIC_FILES["transfer_tex"],
            log:
                "logs/rubric/transfer.log",
            benchmark:
                "logs/benchmarks/rubric/transfer.tsv"
            conda:
                "../envs/hf.yaml"
            threads: 1
            params:
                rubric=RUBRIC.model_dump(),
            script:
                "../scripts/rubric_transfer.py"

    rule rubric_predict:
        input:
            model=RUBRIC_FILES["model"],
            rubric=RUBRIC.rubric,
            llm=rubric_predict_input(RUBRIC),
        output:
            predictions=LAYOUT.rubric("predictions/{name}.parquet"),
        log:
            "logs/rubric/predict/{name}.log",
        wildcard_constraints:
            name="|".join(sorted(rubric_predict_sources(RUBRIC))) or "NO_PREDICT",
        conda:
            "../envs/hf.yaml"
        threads: 1
        params:
            llm_format=RUBRIC.llm_format,
        script:
            "../scripts/rubric_predict.py"
