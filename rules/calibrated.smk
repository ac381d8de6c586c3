# Calibrated qrels (beyond the papers): relevance labels from several graders' outputs, fitted on the judged
# passages (LLM-RUBRIC's idea applied to relevance). Logic: autograde.calibrated (stage functions in
# autograde.calibrated.stages; what the rules read from the config in autograde.calibrated.workflow, which loads
# no training code at parse time). The section travels as params, so editing it reruns exactly these rules.
from autograde.calibrated.workflow import (
    calibrated_inputs,
    calibrated_qrels_files,
    calibrated_section,
)

CALIBRATED_QRELS = calibrated_section(CTX.config)


if CALIBRATED_QRELS is not None:
    CALIBRATED_FILES = calibrated_qrels_files(RESULTS, CALIBRATED_QRELS)

# the calibrated qrels sit beside the graders' qrels variants (results/qrels/calibrated/<variant>.qrels) so that
# evaluate / leaderboards / correlation take them like any other variant; these rules make them: trained on this
# experiment's judgments (cross-validated by query, plus a model folder fitted on all of them), or applied from
# a model folder fitted elsewhere (calibrated_qrels.model)
if CALIBRATED_QRELS is not None and not CALIBRATED_QRELS.model:
    if (
        "rubric_qrels" in rules._rules
    ):  # absent where rules/evaluate.smk is not included

        ruleorder: rubric_calibrate_qrels > rubric_qrels

    rule rubric_calibrate_qrels:
        input:
            **calibrated_inputs(CALIBRATED_QRELS),
        output:
            qrels=CALIBRATED_FILES["qrels"],
            report=CALIBRATED_FILES["report"],
            md=CALIBRATED_FILES["report_md"],
            table=CALIBRATED_FILES["table"],
        log:
            "logs/rubric/calibrate_qrels.log",
        benchmark:
            "logs/benchmarks/rubric/calibrate_qrels.tsv"
        conda:
            "../envs/hf.yaml"
        threads: 1
        params:
            calibrated=CALIBRATED_QRELS.model_dump(),
        script:
            "../scripts/rubric_calibrate_qrels.py"

    rule rubric_fit_calibrated_qrels:
        input:
            **calibrated_inputs(CALIBRATED_QRELS),
        output:
            model=directory(CALIBRATED_FILES["model"]),
        log:
            "logs/rubric/fit_calibrated_qrels.log",
        benchmark:
            "logs/benchmarks/rubric/fit_calibrated_qrels.tsv"
        conda:
            "../envs/hf.yaml"
        threads: 1
        params:
            calibrated=CALIBRATED_QRELS.model_dump(),
        script:
            "../scripts/rubric_calibrated_fit.py"


if CALIBRATED_QRELS is not None and CALIBRATED_QRELS.model:
    if "rubric_qrels" in rules._rules:

        ruleorder: rubric_apply_calibrated_qrels > rubric_qrels

    rule rubric_apply_calibrated_qrels:
        input:
            **calibrated_inputs(CALIBRATED_QRELS),
        output:
            qrels=CALIBRATED_FILES["qrels"],
            report=CALIBRATED_FILES["report"],
            md=CALIBRATED_FILES["report_md"],
            table=CALIBRATED_FILES["table"],
        log:
            "logs/rubric/apply_calibrated_qrels.log",
        conda:
            "../envs/hf.yaml"
        threads: 1
        params:
            calibrated=CALIBRATED_QRELS.model_dump(),
        script:
            "../scripts/rubric_calibrated_apply.py"
