# Calibrated qrels (beyond the papers): relevance labels from several graders' outputs, fitted on the judged
# passages (LLM-RUBRIC's idea applied to relevance). Logic: autograde.calibrated (stage functions in
# autograde.calibrated.stages; what the rules read from the config in autograde.calibrated.workflow, which loads
# no training code at parse time). The section travels as params, so editing it reruns exactly these rules.
# The calibrated qrels sit beside the graders' qrels variants (results/qrels/calibrated/<variant>.qrels) so that
# evaluate / leaderboards / correlation take them like any other variant. calibrated_qrels makes them: trained on
# this experiment's judgments (cross-validated by query), or applied from a model folder fitted elsewhere
# (calibrated_qrels.model); rubric_fit_calibrated_qrels fits a model folder on all of them.
from autograde.calibrated.workflow import CalibratedRules

CALIBRATED_RULES = CalibratedRules(CTX.config)


ruleorder: calibrated_qrels > rubric_qrels


rule calibrated_qrels:
    input:
        unpack(CALIBRATED_RULES.inputs),
    output:
        qrels=CALIBRATED_RULES.files["qrels"],
        report=CALIBRATED_RULES.files["report"],
        md=CALIBRATED_RULES.files["report_md"],
        table=CALIBRATED_RULES.files["table"],
    log:
        "logs/rubric/calibrated_qrels.log",
    benchmark:
        "logs/benchmarks/rubric/calibrated_qrels.tsv"
    conda:
        "../envs/hf.yaml"
    threads: 1
    params:
        calibrated=CALIBRATED_RULES.params,
    script:
        "../scripts/calibrated_qrels.py"


rule rubric_fit_calibrated_qrels:
    input:
        unpack(CALIBRATED_RULES.inputs),
    output:
        model=directory(CALIBRATED_RULES.files["model"]),
    log:
        "logs/rubric/fit_calibrated_qrels.log",
    benchmark:
        "logs/benchmarks/rubric/fit_calibrated_qrels.tsv"
    conda:
        "../envs/hf.yaml"
    threads: 1
    params:
        calibrated=CALIBRATED_RULES.params,
    script:
        "../scripts/rubric_calibrated_fit.py"
