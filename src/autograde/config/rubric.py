"""The ``rubric:`` and ``calibrated_qrels:`` sections of the experiment config.

>>> cfg = RubricConfig.model_validate({"llm": "llm.tsv", "human": "human.tsv"})
>>> cfg.enabled, cfg.network.hidden1, cfg.evaluation.folds, len(cfg.evaluation.seeds)
(True, 25, 5, 10)

Defaults are the choices measured on LLM-RUBRIC's synthetic data (docs/rubric.md): the paper's network
with scaled initialization, judge-specific weights starting at zero with a small L2 penalty, early stopping
on held-out texts and an ensemble over the inner folds, which makes the result robust to the seed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from autograde.core.schema import Strict

__all__ = ["TRAINING_KEYS", "CalibratedQrelsConfig", "EvaluationSettings", "Hyperparameters", "RubricConfig",
           "SelectionSettings", "HeldOutSet"]




class Hyperparameters(Strict):
    """The calibration network and its training (paper section 3, equations 3-5)."""

    hidden1: int = Field(default=25, ge=1, description="h1: size of the first hidden layer")
    hidden2: int = Field(default=25, ge=1, description="h2: size of the second hidden layer (shared by all heads)")
    learning_rate: float = Field(default=0.01, gt=0, description="Adam learning rate (both phases)")
    batch_size: int = Field(default=64, ge=1, description="annotations per optimizer step")
    pretrain_epochs: int = Field(default=200, ge=0, description="most epochs of multi-task pre-training on all "
                                 "questions (early stopping usually ends it sooner); 0 skips pre-training")
    finetune_epochs: int = Field(default=200, ge=0, description="most epochs of fine-tuning on the main question; "
                                 "0 skips fine-tuning")
    patience: int = Field(default=10, ge=1, description="early stopping: epochs without a better held-out loss "
                          "before a phase ends (the best epoch's weights are kept)")
    early_stopping: bool = Field(default=True, description="stop each phase when the held-out loss stops improving "
                                 "(false: train on every row for exactly the epochs given, as the released code)")
    validation_fraction: float = Field(default=0.2, gt=0, lt=1, description="share of training groups (texts) held "
                                       "out for early stopping when members = 1")
    members: int = Field(default=5, ge=1, description="ensemble size: each member holds out a different inner fold "
                         "of groups for early stopping; predictions average the members' distributions")
    judge_l2: float = Field(default=1e-3, ge=0, description="L2 penalty on the judge-specific weights (pulls each "
                            "judge towards the judge-independent network; 0 = the paper's plain likelihood)")
    init: Literal["scaled", "paper"] = Field(default="scaled", description="scaled: shared weights N(0, 1/fan_in), "
                                             "judge-specific weights 0; paper: every weight N(0, 1) as the "
                                             "released code")
    personalized: bool = Field(default=True, description="use judge-specific weights (false: the judge-independent "
                               "ablation)")
    seeds: int = Field(default=1, ge=1, description="seed ensemble: fit the members with this many consecutive seeds "
                       "(seed, seed + 1, ...; each its own inner folds) and average all their distributions")


class SelectionSettings(Strict):
    """Hyperparameter selection by k-fold cross-validation grouped by text (criterion: main-task log-loss)."""

    enabled: bool = Field(default=False, description="select from the grid below before fitting (otherwise the "
                          "'network' values are used as given)")
    folds: int = Field(default=5, ge=2, description="k of the grouped cross-validation")
    hidden: list[int] = Field(default_factory=lambda: [10, 25, 50], description="values tried for h1 = h2")
    learning_rate: list[float] = Field(default_factory=lambda: [0.005, 0.01, 0.02],
                                       description="Adam learning rates tried")
    judge_l2: list[float] = Field(default_factory=lambda: [1e-3], description="judge-specific L2 penalties tried")


class EvaluationSettings(Strict):
    """Cross-validated evaluation against the judges (paper section 4), repeated over seeds."""

    folds: int = Field(default=5, ge=2, description="outer folds, grouped by text (the CV group)")
    seeds: list[int] = Field(default_factory=lambda: list(range(10)), min_length=1,
                             description="one full cross-validation per seed (fold assignment and training)")
    permutation_resamples: int = Field(default=10000, ge=100, description="sign-flip resamples of the paired "
                                       "permutation test, network vs the best baseline")
    permutation_seed: int = Field(default=0, description="seed of the permutation test")
    calibration_bins: int = Field(default=10, ge=2, description="bins of the binned ECE shown beside smooth ECE")
    table1: bool = Field(default=True, description="also fit the networks of the paper's Table 1 rows (calibrated "
                         "LLM Q0; the oracle with the judge's own answers to the other questions, without LLM "
                         "probabilities, without personalized calibration) and report the table")


class HeldOutSet(Strict):
    """Annotations to evaluate on after training on all of the experiment's (the paper's real-dialogue protocol)."""

    llm: str = Field(description="LLM answer distributions of the test texts (same rubric; any format 'llm' takes)")
    llm_format: Literal["auto", "synthetic", "long", "grades"] = Field(default="auto", description="format of 'llm'")
    human: str = Field(description="the test texts' human answers; judges are matched to the training judges by id "
                       "(an unseen judge gets the judge-independent prediction, counted in the report)")
    human_format: Literal["auto", "synthetic", "long"] = Field(default="auto", description="format of 'human'")
    texts: str | None = Field(default=None, description="optional file with a text_id column: only these test texts")


class RubricConfig(Strict):
    """LLM-RUBRIC: judge-personalized calibration of an LLM's rubric answers (Hashemi et al., ACL 2024)."""

    enabled: bool = Field(default=True, description="build the rubric targets in 'rule all'")
    rubric: str | None = Field(default=None, description="rubric YAML (questions, options, main task, NA); not "
                               "given: LLM-RUBRIC's dialogue rubric bundled with autograde")
    llm: str = Field(default="", description="LLM answer distributions: LLM-RUBRIC's TSV, our long table or a "
                     "grades parquet")
    llm_format: Literal["auto", "synthetic", "long", "grades"] = Field(default="auto", description="format of 'llm' "
                                                                       "(auto: by its columns)")
    human: str = Field(default="", description="human answers: LLM-RUBRIC's wide TSV or our long table")
    human_format: Literal["auto", "synthetic", "long"] = Field(default="auto", description="format of 'human'")
    texts: str | None = Field(default=None, description="optional file with a text_id column: only these texts are "
                              "used (LLM-RUBRIC's synth_dialogue_ids.tsv)")
    predict: list[str] = Field(default_factory=list, description="LLM tables of new texts to predict every judge's "
                               "answers for (same format as 'llm')")
    seed: int = Field(default=0, description="seed of the final fit (initialization, batches, inner folds)")
    network: Hyperparameters = Field(default_factory=Hyperparameters, description="network and training")
    selection: SelectionSettings = Field(default_factory=SelectionSettings, description="hyperparameter selection")
    evaluation: EvaluationSettings = Field(default_factory=EvaluationSettings, description="cross-validated "
                                           "evaluation")
    test: HeldOutSet | None = Field(default=None, description="a test set: 'autograde rubric evaluate' (and the "
                                 "rubric_transfer rule) train on every annotation above and evaluate on these "
                                 "(null: cross-validation only)")

    @model_validator(mode="after")
    def _inputs_given(self) -> RubricConfig:
        if self.enabled and (not self.llm or not self.human):
            raise ValueError("rubric.llm and rubric.human are required when rubric.enabled is true")
        return self


TRAINING_KEYS: tuple[str, ...] = ("levels", "features", "count_threshold", "folds", "seed",
                                   "network", "estimators", "ensemble_size", "logistic_c", "selection_folds")
"""Settings of fitting: taken from the model (and not allowed) when ``calibrated_qrels.model`` is given."""


EstimatorKind = Literal["network", "ensemble", "logistic", "ordinal_logistic"]


def _default_estimators() -> list[EstimatorKind]:
    # no seed ensemble: the deployed network already averages its fold models (members x folds networks)
    return ["logistic", "ordinal_logistic", "network"]


def _default_relevance_network() -> Hyperparameters:
    # one question (the level): pre-training on every question would train the same objective twice
    return Hyperparameters(members=3, judge_l2=0.0, patience=5, batch_size=128, personalized=False,
                           pretrain_epochs=0)


class CalibratedQrelsConfig(Strict):
    """Calibrated relevance labels: an estimator over several graders' labels, trained on judged passages, or a
    saved model (``model``) applied to a collection without judgments."""

    enabled: bool = Field(default=True, description="build calibrated qrels in 'rule all'")
    model: str | None = Field(default=None, description="a model folder written by 'autograde rubric calibrate-qrels "
                              "fit' (or by another experiment's workflow): label this experiment's sources with it "
                              "instead of training (sources matched by name; judgments optional, for the report)")
    sources: list[str] = Field(default_factory=list, description="graders' outputs: TREC qrels files (integer "
                               "labels) and/or grades parquet files (direct prompts: their grade and distribution; "
                               "banks: max and count of the item grades)")
    judgments: str = Field(default="", description="human qrels the estimators learn (the relevance level); with "
                           "'model', only scored against")
    levels: list[int] = Field(default_factory=lambda: [0, 1, 2, 3], min_length=2,
                              description="relevance levels of the human qrels (the options of the main task)")
    relevance_level: int | None = Field(default=None, description="human level >= this counts as relevant (null: "
                                        "evaluation.relevance_level; with 'model', the model's level)")
    features: Literal["onehot", "ordinal", "both"] = Field(default="onehot", description="integer labels as one-hot "
                                                           "or thermometer (label >= k) features")
    count_threshold: int = Field(default=4, description="bank graders: an item counts when its grade >= this")
    folds: int = Field(default=5, ge=2, description="outer cross-validation folds of the training collection's "
                       "labels and report, grouped by query")
    seed: int = Field(default=0, description="seed of the fold assignment and the networks")
    output: Literal["expected", "threshold", "probability"] = Field(
        default="threshold", description="exported label: threshold: the highest level L with P(level >= L) >= "
        "tau_L (one threshold per level, tuned on held-out training predictions and moved where the deployed "
        "model's labels of the training passages leave a level's share band); expected: round(expected level); "
        "probability: round(100 * P(level >= relevance_level))")
    estimators: list[EstimatorKind] = Field(
        default_factory=_default_estimators, min_length=1,
        description="candidate estimators, each fitted on selection_folds folds of the training passages grouped "
        "by query; the deployed model is the mean of their probabilities, equal weight per kind (one candidate: "
        "itself): network: LLM-RUBRIC's "
        "network; ensemble: the mean of ensemble_size networks with consecutive seeds; logistic / "
        "ordinal_logistic: L2-regularized multinomial / cumulative (level >= L) logistic regression, one "
        "candidate per C of logistic_c")
    ensemble_size: int = Field(default=5, ge=2, description="networks (seeds) in the 'ensemble' estimator")
    logistic_c: list[float] = Field(default_factory=lambda: [1.0], min_length=1,
                                    description="inverse L2 strengths C of the logistic regressions (one candidate "
                                    "each)")
    selection_folds: int = Field(default=5, ge=2, description="folds (grouped by query) of the training passages: "
                                 "every candidate is fitted once per fold; the held-out predictions score the "
                                 "candidates and tune the thresholds; the deployed model averages its fold models")
    network: Hyperparameters = Field(
        default_factory=_default_relevance_network,
        description="network and training (one judge, the assessor: no judge-specific weights; one question, the "
        "level: no pre-training phase)")

    @property
    def level(self) -> int:
        """The relevant human level (``relevance_level``, filled by ``evaluation.relevance_level`` within an
        experiment; alone: DL practice, 2)."""
        from autograde.config.reports import DEFAULT_RELEVANCE_LEVEL

        return self.relevance_level if self.relevance_level is not None else DEFAULT_RELEVANCE_LEVEL

    @field_validator("levels")
    @classmethod
    def _sorted(cls, v: list[int]) -> list[int]:
        if sorted(set(v)) != v:
            raise ValueError(f"levels must be increasing and distinct, got {v}")
        return v

    @model_validator(mode="after")
    def _inputs_given(self) -> CalibratedQrelsConfig:
        if self.model is not None:
            fields = type(self).model_fields
            given = sorted(k for k in TRAINING_KEYS if k in self.model_fields_set
                           and getattr(self, k) != fields[k].get_default(call_default_factory=True))
            if given:
                raise ValueError(f"with 'model' the fitting settings come from the model; remove {', '.join(given)} "
                                 "(or remove 'model' to train)")
            if self.enabled and not self.sources:
                raise ValueError("calibrated_qrels.sources (the new collection's graders' outputs) are required with "
                                 "'model'")
            return self
        if self.level not in self.levels[1:]:
            raise ValueError(f"relevance_level {self.level} must be one of the levels above the lowest "
                             f"({', '.join(map(str, self.levels[1:]))})")
        if self.enabled and (not self.sources or not self.judgments):
            raise ValueError("calibrated_qrels.sources and calibrated_qrels.judgments are required when enabled "
                             "(or give 'model' to apply a fitted model)")
        return self
