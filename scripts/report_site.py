"""Rule site: the static review site under results/site."""
from autograde.workflow.context import run_rule


def stage(config, sm):
    from autograde.workflow.site import build_experiment_site

    build_experiment_site(config, sm.output[0], graders=list(sm.params.graders), official=sm.params.official,
                          relevance_level=int(sm.params.relevant_level))


run_rule(snakemake, stage)  # noqa: F821 - injected by Snakemake
