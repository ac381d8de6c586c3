"""The newer features' inputs are checked before any job, like the older ones (tests/workflow/test_checks.py): the
human sample's judgments and files, the audit's robustness system, a prompt whose label follows an answer prefix
under logits scoring on a chat API, calibrated-qrels sources whose names collide, reference data that is not
downloaded yet. Each case breaks one thing of the tiny dataset and runs ``autograde validate``: exit status 2, the
message names the file and line and the fix, nothing is written. An identical repeated judgment is a warning."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.helpers import REPO
from support.mini import Mutation, assert_refused_before_any_work, both, edit_config, write

from autograde.cli import main

SAMPLE = {"qrels": "data/sample.qrels", "predictions": [{"name": "sim", "grader": "sim", "variant": "max-3"}]}
"""A human sample of the tiny dataset: a simple random sample (no design) judged in data/sample.qrels."""
GOOD_JUDGMENTS = "q1 0 d1a 2\nq1 0 d1d 0\nq2 0 d2b 3\nq3 0 d3c 1\n"
OPENAI = {"name": "llm", "backend": "openai", "bank": "direct", "model": "m", "thresholds": [2],
          "options": {"base_url": "http://127.0.0.1:9/v1"}}


def sample(judgments: str, **section: object) -> Mutation:
    """The human sample with these judgments (``section`` overrides its keys)."""
    return both(write("data/sample.qrels", judgments), edit_config(human_sample=SAMPLE | section))


def line_of(root: Path, key: str) -> int:
    """The line of ``key:`` in the tiny dataset's config (the first such key)."""
    lines = (root / "config.yaml").read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if text.strip().startswith(f"{key}:"))


CASES: list[tuple[str, Mutation, str]] = [
    ("human sample: empty judgments file", sample(""),
     "data/sample.qrels: the file holds no judgment: estimates from no human label would be certain of nothing"),
    ("human sample: unknown query", sample(GOOD_JUDGMENTS + "q9 0 d1a 1\n"),
     "data/sample.qrels:5: query 'q9' is not a query of the experiment (data.queries)"),
    ("human sample: passage outside the pool", sample(GOOD_JUDGMENTS + "q1 0 d2a 1\n"),
     "data/sample.qrels:5: query 'q1' passage 'd2a' is not in the pool, so no design could have drawn it"),
    ("human sample: conflicting grades", sample(GOOD_JUDGMENTS + "q1 0 d1a 1\n"),
     "data/sample.qrels:5: query 'q1' passage 'd1a' is judged 1 here and 2 on line 1"),
    ("human sample: grade outside the scale", sample(GOOD_JUDGMENTS + "q1 0 d1b 7\n"),
     "data/sample.qrels:5: grade 7 is not one of human_sample.levels [0, 1, 2, 3]"),
    ("human sample: a CSV instead of qrels", sample("query_id,passage_id,grade\nq1,d1a,2\n"),
     "data/sample.qrels:1: this is comma-separated text, not a TREC qrels file"),
    ("human sample: a malformed line", sample(GOOD_JUDGMENTS + "q1 d1b 2\n"),
     "data/sample.qrels:5: qrels line has 3 columns, expected 4"),
    ("human sample: qrels file missing", edit_config(human_sample=SAMPLE | {"qrels": "data/nope.qrels"}),
     "human_sample.qrels: 'data/nope.qrels' does not exist"),
    ("human sample: design file missing", sample(GOOD_JUDGMENTS, design="data/nope-design.tsv"),
     "human_sample.design: 'data/nope-design.tsv' does not exist"),
    ("audit: unknown robustness system", edit_config(audit={"robustness": {"system": "goood"}}),
     "audit.robustness.system 'goood' is not a system of the experiment (systems: bad, gen, good) (fix: did you "
     "mean 'good'?"),
    ("UMBRELA: logits scoring on the openai backend", edit_config(graders=[OPENAI | {"prompt_class": "UMBRELA"}]),
     "graders[0] (llm): logits scoring of UMBRELA@v1 reads the label after '##final score:' appended to the prompt, "
     "which backend openai (a chat API that answers in a new turn) cannot continue"),
    ("UMBRELA few-shot: logits scoring on the openai backend",
     edit_config(graders=[OPENAI | {"prompt_class": "UMBRELA_few", "scoring": "logits"}]),
     "logits scoring of UMBRELA_few@v1 reads the label after '##final score:'"),
    ("calibrated: two sources named like the workflow's own qrels",
     edit_config(graders=[{"name": "sim", "backend": "embedded", "bank": "questions"},
                          {"name": "strict", "backend": "embedded", "bank": "questions"}],
                 calibrated_qrels={"sources": ["results/qrels/sim/max-3.qrels", "results/qrels/strict/max-3.qrels"],
                                   "judgments": "data/qrels.txt"}),
     "calibrated_qrels.sources[1] (results/qrels/strict/max-3.qrels) and sources[0] (results/qrels/sim/max-3.qrels) "
     "are both named 'max-3'"),
    ("calibrated: a user's qrels file named like a workflow qrels",
     both(write("data/max-3.qrels", "q1 0 d1a 2\n"),
          edit_config(calibrated_qrels={"sources": ["data/max-3.qrels", "results/qrels/sim/max-3.qrels"],
                                        "judgments": "data/qrels.txt"})),
     "are both named 'max-3'"),
    ("calibrated: its own output as a source",
     edit_config(calibrated_qrels={"sources": ["results/grades/sim.parquet", "results/qrels/calibrated/threshold-2.qrels"],
                                   "judgments": "data/qrels.txt"}),
     "calibrated_qrels.sources[1]: 'results/qrels/calibrated/threshold-2.qrels' is the calibrated qrels this section "
     "makes"),
    ("reference data not downloaded", edit_config(data__qrels="../shared/data/dl20/not-downloaded.txt"),
     "data.qrels: '../shared/data/dl20/not-downloaded.txt' does not exist"),
]


@pytest.mark.parametrize(("case", "mutate", "expected"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_of_the_newer_features_is_reported_before_any_work(mini: Path, messages: io.StringIO, case: str,
                                                                      mutate: Mutation, expected: str) -> None:
    assert_refused_before_any_work(mini, messages, mutate, expected, case)


def test_missing_files_are_named_by_their_config_key_and_line(mini: Path, messages: io.StringIO) -> None:
    root = mini.parent
    sample("q1 0 d1a 2\n", design="data/nope-design.tsv")(root)
    assert main(["validate", "--config", str(mini)]) == 2
    assert (f"config.yaml:{line_of(root, 'design')}: human_sample.design: 'data/nope-design.tsv' does not exist "
            f"(working directory {root}), but the judgments of data/sample.qrels need its inclusion probabilities "
            "(fix: correct the path, or draw the design with 'autograde sample draw'") in messages.getvalue()
    edit_config(human_sample=SAMPLE | {"qrels": "data/nope.qrels"})(root)
    assert main(["validate", "--config", str(mini)]) == 2
    qrels_lines = [i for i, t in enumerate((root / "config.yaml").read_text().splitlines(), 1)
                   if t.strip() == "qrels: data/nope.qrels"]
    assert f"config.yaml:{qrels_lines[0]}: human_sample.qrels: 'data/nope.qrels' does not exist" in messages.getvalue()
    assert "set human_sample.qrels: null (the judging page exports the file)" in messages.getvalue()
    edit_config(data__qrels="../shared/data/dl20/not-downloaded.txt", human_sample=None)(root)
    assert main(["validate", "--config", str(mini)]) == 2
    assert "(fix: it is reference data: run `make data`" in messages.getvalue()


def test_a_repeated_identical_judgment_is_a_warning_and_a_clean_sample_validates(mini: Path,
                                                                                  messages: io.StringIO) -> None:
    """A judgment repeated with the same grade (a judging page's export appended twice) says nothing new: a warning
    naming the lines, counted once. Judgments that are clean validate without a word about them."""
    root = mini.parent
    sample(GOOD_JUDGMENTS)(root)
    assert main(["validate", "--config", str(mini)]) == 0, messages.getvalue()
    assert "sample.qrels" not in messages.getvalue()
    sample(GOOD_JUDGMENTS + "q2 0 d2b 3\n")(root)
    assert main(["validate", "--config", str(mini)]) == 0, messages.getvalue()
    assert ("data/sample.qrels: 1 judgment(s) repeated with the same grade, counted once: line 5 repeats line 3 "
            "(fix: remove the repeated lines)") in messages.getvalue()
    edit_config(human_sample=SAMPLE | {"qrels": None, "design": "data/drawn-later.tsv"})(root)  # nothing judged yet
    assert main(["validate", "--config", str(mini)]) == 0, messages.getvalue()


def test_many_bad_lines_are_summarised(mini: Path, messages: io.StringIO) -> None:
    """Every problem of a large bad file is counted, 20 lines per kind are shown."""
    sample("".join(f"q1 0 x{i} 1\n" for i in range(50)))(mini.parent)
    assert main(["validate", "--config", str(mini)]) == 2
    text = messages.getvalue()
    assert text.count("is not in the pool") == 20 and "... and 30 more line(s) with a passage outside the pool" in text


def test_the_design_is_checked_against_the_pool_and_the_judgments(mini: Path, messages: io.StringIO) -> None:
    """A design file whose round is only partly judged is refused at validate (it was refused by the estimates job
    only, after grading): the same check the job runs (autograde.ppi.sample.design_rounds)."""
    from autograde.config.experiment import load_config
    from autograde.core.errors import Problems
    from autograde.pipeline.ingest import ingest
    from autograde.pipeline.pool import pool_counts
    from autograde.ppi.design import Design, write_design
    from autograde.ppi.pool import pool_order

    root = mini.parent
    config = load_config(mini)
    inputs = ingest(config, Problems())
    keys_df, _ = pool_counts(config, inputs.rankings, inputs.judgments)
    keys = pool_order(list(zip(keys_df["query_id"], keys_df["passage_id"], strict=True)))
    design = Design(keys, rounds=[{"design": "simple_random", "weight": 1.0}])
    drawn = np.array([k in {("q1", "d1a"), ("q1", "d1d"), ("q2", "d2b"), ("q3", "d3c"), ("q3", "d3a")}
                      for k in keys])
    design.pi, design.drawn = [np.full(len(keys), 0.4)], [drawn]
    write_design(root / "data/design.tsv", design)
    sample(GOOD_JUDGMENTS, design="data/design.tsv")(root)
    assert main(["validate", "--config", str(mini)]) == 2
    assert "round 1 drew query 'q3' passage 'd3a' but data/sample.qrels has no judgment of it" in messages.getvalue()
    sample(GOOD_JUDGMENTS + "q3 0 d3a 2\n", design="data/design.tsv")(root)
    assert main(["validate", "--config", str(mini)]) == 0, messages.getvalue()
    sample(GOOD_JUDGMENTS + "q3 0 d3a 2\nq2 0 d2a 1\n", design="data/design.tsv")(root)
    assert main(["validate", "--config", str(mini)]) == 2
    assert ("data/sample.qrels:6: query 'q2' passage 'd2a' is judged but the design (data/design.tsv) did not draw it"
            in messages.getvalue())


def test_a_changed_judgments_file_is_checked_again_by_the_workflow(mini: Path) -> None:
    """The workflow remembers a successful check by its input files; the human sample's files are among them, so a
    judgment added after a clean check is checked at the next DAG build."""
    from autograde.config.experiment import load_config
    from autograde.core.errors import InputError
    from autograde.workflow.checks import check_experiment

    root = mini.parent
    sample(GOOD_JUDGMENTS)(root)
    assert not check_experiment(load_config(mini), str(mini), cached=True).from_stamp
    assert check_experiment(load_config(mini), str(mini), cached=True).from_stamp
    with (root / "data/sample.qrels").open("a") as fh:
        fh.write("q1 0 d1a 0\n")
    with pytest.raises(InputError, match="is judged 0 here and 2 on line 1"):
        check_experiment(load_config(mini), str(mini), cached=True)


def test_validate_process_names_file_and_line_without_traceback(mini: Path) -> None:
    sample(GOOD_JUDGMENTS + "q1 0 d1a 1\n")(mini.parent)
    res = subprocess.run([sys.executable, "-m", "autograde.cli", "validate", "--config", str(mini)],
                         capture_output=True, text=True, cwd=mini.parent, timeout=120)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "data/sample.qrels:5: query 'q1' passage 'd1a' is judged 1 here and 2 on line 1" in res.stderr



def test_answer_prefix_prompts_validate_where_the_model_continues_the_prompt(mini: Path, messages: io.StringIO) -> None:
    """UMBRELA on the openai backend with scoring: generate (the final score is parsed) validates; on hf, a seq2seq
    model (its config.json says encoder-decoder) is refused under logits scoring, a causal one is not."""
    root = mini.parent
    edit_config(graders=[OPENAI | {"prompt_class": "UMBRELA", "scoring": "generate"}])(root)
    assert main(["validate", "--config", str(mini)]) == 0, messages.getvalue()
    for kind, encoder_decoder in (("t5", True), ("causal", False)):
        folder = root / "models" / kind
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(f'{{"is_encoder_decoder": {str(encoder_decoder).lower()}}}')
    hf = {"name": "hf", "backend": "hf", "bank": "direct", "prompt_class": "UMBRELA", "thresholds": [2]}
    edit_config(graders=[hf | {"model": "models/t5"}])(root)
    assert main(["validate", "--config", str(mini)]) == 2
    assert ("logits scoring of UMBRELA@v1 reads the label after '##final score:' appended to the prompt, which the "
            "seq2seq model models/t5 (its decoder starts from its start token, not from the prompt) cannot continue"
            in messages.getvalue())
    edit_config(graders=[hf | {"model": "models/causal"}])(root)
    assert main(["validate", "--config", str(mini)]) == 0, messages.getvalue()


def test_track_reports_are_checked_before_any_job(tmp_path: Path) -> None:
    """``data.answers_track`` checks every report against the track's spec as its verifier does: a citation outside
    the report's references is an error naming the file and line; an unknown track is a config error."""
    import json

    from autograde.config.model import Config
    from autograde.core.errors import Problems
    from autograde.workflow.checks import check_track_reports

    fixture = REPO / "tests" / "data" / "autojudge" / "rag24"
    good = (fixture / "runs" / "good.jsonl").read_text(encoding="utf-8").splitlines()
    bad = json.loads(good[1])
    bad["answer"][0]["citations"] = [7]  # the report has two references
    run = tmp_path / "bad.jsonl"
    run.write_text("\n".join([good[0], json.dumps(bad), *good[2:]]) + "\n", encoding="utf-8")
    data = {"queries": str(fixture / "topics.jsonl"), "answers": [str(run)]}
    problems = Problems()
    check_track_reports(Config.model_validate({"data": {**data, "answers_track": "rag25"}}), problems)
    assert [(p.path, p.line) for p in problems.items] == [(str(run), 2)], problems.items
    clean = Problems()
    check_track_reports(Config.model_validate({"data": {**data, "answers": [str(fixture / "runs" / "good.jsonl")],
                                                        "answers_track": "rag25"}}), clean)
    assert not clean.items, clean.items
    with pytest.raises(ValueError, match="unknown track 'rag205'; did you mean"):
        Config.model_validate({"data": {**data, "answers_track": "rag205"}})
