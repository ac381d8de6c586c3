"""Every bad input is caught before any work starts: one case per kind of problem, with the expected message.

Each case breaks one file (or config value) of the tiny dataset and runs ``autograde validate`` (the same checks
the workflow runs when it builds its DAG): exit status 2, the message names the file (and line where there is
one) and the fix, and nothing is graded. A few cases also go through a real ``autograde`` process and a real
``snakemake`` run to show there is no traceback and no job starts.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.helpers import REPO, run_workflow
from support.mini import Mutation, assert_refused_before_any_work, both, edit_config, replace, write

from autograde.cli import main

CUSTOM_PROMPT = """- name: MyRating
  version: v1
  kind: rating
  item_kind: question
  template: "Rate {question} given {context} and {bogus}"
  labels: {"0": 0, "1": 1}
"""
NO_LABELS = """- name: MyRating
  version: v1
  kind: rating
  item_kind: question
  template: "Rate {question} given {context}"
"""
LLM_GRADER = {"name": "llm", "backend": "openai", "bank": "questions", "model": "m",
              "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices",
              "options": {"base_url": "http://127.0.0.1:9/v1"}}

# (case id, mutation, expected text in the message)
CASES: list[tuple[str, Mutation, str]] = [
    # item 3: everything a run will read
    ("corpus: pooled doc without text", replace("data/corpus.jsonl", '{"doc_id": "d2c"', '{"doc_id": "zzz"'),
     "passage(s) in the top-20 of the runs have no text, e.g. q2/d2c"),
    ("corpus: duplicate id", write("data/corpus.jsonl", '{"doc_id": "d1a", "text": "other text"}\n', "a"),
     "corpus.jsonl:13: document 'd1a' appears twice with different text"),
    ("corpus: empty text", replace("data/corpus.jsonl",
                                   "Bees collect flower nectar, store it in their honey stomach and pass it to hive bees.",
                                   " "),
     "document 'd1a' has empty text"),
    ("corpus: TSV row without a tab",
     both(write("data/corpus.tsv", "d1a\tBees.\nd1b Hive bees fan nectar\n"), edit_config(data__corpus=["data/corpus.tsv"])),
     "corpus.tsv:2: expected 'doc_id<TAB>text'"),
    ("prompts: unknown placeholder",
     both(write("prompts.yaml", CUSTOM_PROMPT), edit_config(graders=[LLM_GRADER | {"prompt_class": "MyRating",
                                                                                   "options": {"custom_prompts": "prompts.yaml", "base_url": "http://127.0.0.1:9/v1"}}])),
     "uses unknown field(s) {bogus}"),
    ("prompts: missing labels",
     both(write("prompts.yaml", NO_LABELS), edit_config(graders=[LLM_GRADER | {"prompt_class": "MyRating",
                                                                              "options": {"custom_prompts": "prompts.yaml", "base_url": "http://127.0.0.1:9/v1"}}])),
     "rating prompts need labels"),
    ("prompts: unknown prompt_class", edit_config(graders=[LLM_GRADER | {"prompt_class": "QuestionSelfRated"}]),
     "graders[0].prompt_class"),
    ("prompts: labels vs thresholds", edit_config(graders=[LLM_GRADER | {"bank": "direct", "prompt_class": "FagB"}]),
     "thresholds [3] of grader 'llm' (qrels.thresholds) are outside its grade range 0..1"),
    ("generation data", both(write("data/gen.jsonl", '{"golden_answers": ["x"], "pred_answer": 5}\n'),
                             edit_config(data__generation="data/gen.jsonl")), "gen.jsonl:1"),
    ("measures: unknown trec_eval name", edit_config(evaluation__measures=["ndcg@10"]), "unknown trec_eval measure 'ndcg@10'"),
    ("baseline: not a system", edit_config(metrics__significance__baseline="medium"),
     "metrics.significance.baseline 'medium' is not a system"),
    ("thresholds: above the grade range", edit_config(qrels__thresholds=[9]),
     "thresholds [9] of grader 'sim' (qrels.thresholds) are outside its grade range 0..5"),
    ("thresholds: negative", edit_config(qrels__thresholds=[-1]), "grade thresholds must be >= 1"),
    ("cache_dir is a file", both(write("cachefile", "x"), edit_config(grading__cache_dir="cachefile")),
     "grading.cache_dir 'cachefile' is a file, not a folder"),
    ("model path does not exist", edit_config(graders=[{"name": "llm", "backend": "hf", "bank": "questions",
                                                         "model": "models/nope.gguf",
                                                         "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices"}]),
     "graders[0].model: 'models/nope.gguf' does not exist"),
    ("glob matches nothing", edit_config(data__runs=["data/runz/*.run"]), "the pattern 'data/runz/*.run' matches no file"),
    # item 4: malformed values are refused, not silently accepted
    ("run: NaN score", write("data/runs/good.run", "q1 Q0 d1a 1 nan good\n", "a"), "good.run:13: score 'nan' is not a finite number"),
    ("run: inf score", write("data/runs/good.run", "q1 Q0 dx 1 inf good\n", "a"), "score 'inf' is not a finite number"),
    ("run: fractional rank", write("data/runs/good.run", "q1 Q0 dx 1.5 0.1 good\n", "a"), "good.run:13: rank '1.5' is not an integer"),
    ("qrels: fractional grade", write("data/qrels.txt", "q1 0 dx 1.5\n", "a"), "qrels.txt:13: relevance grade '1.5' is not an integer"),
    ("leaderboard: boolean rank", write("data/official.json", '{"good": true, "gen": 2, "bad": 3}'), "rank of 'good' is not a number"),
    ("JSON: duplicate key", write("data/official.json", '{"good": 1, "good": 2, "bad": 3}'), "key 'good' appears twice"),
    ("JSONL: duplicate key", write("data/answers.jsonl", '{"query_id": "q3", "run": "gen", "text": "a", "text": "b"}\n', "a"),
     "answers.jsonl:3: key 'text' appears twice"),
    ("YAML: key given twice", write("config.yaml", "data:\n  queries: x.tsv\n", "a"), "key 'data' given twice"),
    ("bank: gold_answers not a list", replace("data/questions.jsonl", '"question_text": "Where do bees store nectar while foraging?"',
                                              '"question_text": "Where do bees store nectar while foraging?", "gold_answers": 5'),
     "questions.jsonl:1: gold_answers of item 0 of query 'q1' must be a list of strings"),
    # the last mile (issue 17): silently accepted before
    ("answers: citation outside the references",
     write("data/answers.jsonl", '{"run_id": "gen", "topic_id": "q3", "references": ["d3a"], '
           '"answer": [{"text": "Wild yeast.", "citations": [0, 4]}]}\n', "a"),
     "answers.jsonl:3: citation 4 of answer[0] (run 'gen', topic 'q3') is not a position in its 1 references"),
    ("run file missing: named by its config key and line", edit_config(data__runs=["data/runs/nope.run"]),
     "config.yaml:6: data.runs[0]: 'data/runs/nope.run' does not exist"),
    ("answers: citations not a list", write("data/answers.jsonl", '{"run_id": "gen", "topic_id": "q3", "references": '
                                            '["d3a"], "answer": [{"text": "Wild yeast.", "citations": 3}]}\n', "a"),
     "answers.jsonl:3: 'citations' of answer[0] (run 'gen', topic 'q3') is 3 (a number), not citations"),
    ("answers: references not a list of doc ids", write("data/answers.jsonl", '{"run_id": "gen", "topic_id": "q3", '
                                                         '"references": "d3a", "answer": [{"text": "Wild yeast.", '
                                                         '"citations": [0]}]}\n', "a"),
     "answers.jsonl:3: 'references' must be a list of doc ids (strings), got d3a"),
    ("cache_dir is a file while answers cite documents",
     both(write("cachefile", "x"), edit_config(grading__cache_dir="cachefile"),
          write("data/answers.jsonl", '{"run_id": "gen", "topic_id": "q3", "references": ["d3a"], '
                '"answer": [{"text": "Wild yeast.", "citations": [0]}]}\n', "a")),
     "grading.cache_dir 'cachefile' is a file, not a folder"),
    ("official leaderboard: fewer than 3 shared systems", write("data/official.json", '{"good": 1, "x": 2, "y": 3}'),
     "official.json: the official leaderboard shares 1 system(s) with the experiment (good;"),
    ("embedded: model given", edit_config(graders__0__model="google/flan-t5-large"),
     "graders[0] (sim): model: is not used by backend embedded"),
    ("embedded: prompt_class typo", edit_config(graders__0__prompt_class="QuestionSelfRatedUnanswerablePrompt"),
     "graders[0].prompt_class: unknown prompt class 'QuestionSelfRatedUnanswerablePrompt'; did you "
     "mean 'QuestionSelfRatedUnanswerablePromptWithChoices'?"),
    ("prompts: labels outside the grade scale",
     both(write("prompts.yaml", CUSTOM_PROMPT.replace("{bogus}", "{question}").replace('"0": 0, "1": 1', '"0": -7, "1": 99')),
          edit_config(graders=[LLM_GRADER | {"prompt_class": "MyRating", "thresholds": [1],
                                             "options": {"custom_prompts": "prompts.yaml", "base_url": "http://127.0.0.1:9/v1"}}])),
     "labels '0' -> -7, '1' -> 99 map outside the grade scale 0..5"),
    ("bank: no gold answers for an answer-key grader",
     edit_config(graders=[LLM_GRADER | {"prompt_class": "QuestionCompleteConcisePromptWithAnswerKey2", "scoring": "generate",
                                        "thresholds": [1]}]),
     "questions.jsonl:1: item q1/"),
    ("queries: id with a space", write("data/queries.tsv", "q 4\twhat is a query\n", "a"),
     "queries.tsv:4: query id 'q 4' contains whitespace"),
    ("hf: model neither local nor in the HF cache",
     edit_config(graders=[{"name": "llm", "backend": "hf", "bank": "questions", "model": "nobody/no-such-model",
                           "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices"}]),
     "graders[0].model: 'nobody/no-such-model' is neither a local folder nor in the local "
     "Hugging Face cache"),
    ("thresholds: the fix names the key that holds them",
     both(edit_config(graders=[LLM_GRADER | {"bank": "direct", "prompt_class": "FagB"}]), edit_config(qrels__thresholds=[3, 6])),
     "in qrels.thresholds, or give this grader its own: graders[0].thresholds: [1]"),
    ("unknown bank: no pydantic prefix", edit_config(graders__0__bank="questionz"),
     "graders.0.bank: grader 'sim' uses bank 'questionz', which is not under 'banks:' (did you mean "
     "'questions'?"),
    ("answers: bare string segment", write("data/answers.jsonl", '{"run_id": "rag", "topic_id": "q3", "answer": ["plain text"]}\n', "a"),
     "answers.jsonl:3: answer[0] is not an object with a string 'text' (got str)"),
]


@pytest.mark.parametrize(("case", "mutate", "expected"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_reported_before_any_work(mini: Path, messages: io.StringIO, case: str, mutate: Mutation,
                                               expected: str) -> None:
    assert_refused_before_any_work(mini, messages, mutate, expected, case)


def test_warnings_for_partial_inputs(mini: Path, messages: io.StringIO) -> None:
    """A bank without items for a query, a leaderboard naming a system the experiment lacks, citations of doc ids
    without corpus text and generation items without gold answers are warnings naming the file and what is left out,
    not errors."""
    bank = mini.parent / "data/questions.jsonl"
    bank.write_text("".join(line + "\n" for line in bank.read_text().splitlines() if '"q3"' not in line))
    (mini.parent / "data/official.json").write_text(json.dumps({"good": 1, "gen": 2, "bad": 3, "gone": 4}))
    with (mini.parent / "data/answers.jsonl").open("a") as fh:
        fh.write(json.dumps({"run_id": "gen", "topic_id": "q3", "references": ["d3a", "nowhere"],
                             "answer": [{"text": "Wild yeast.", "citations": [0, 1]}]}) + "\n")
    (mini.parent / "data/gen.jsonl").write_text(json.dumps({"golden_answers": ["honey"], "pred_answer": "honey"}) + "\n"
                                                + json.dumps({"golden_answers": [], "pred_answer": "tides"}) + "\n")
    cfg = yaml.safe_load(mini.read_text())
    cfg["data"]["generation"] = "data/gen.jsonl"
    cfg["reports"] = {"enabled": True, "spurious_judgments": [0, 3]}  # the mini qrels judge 0, 1 and 2
    mini.write_text(yaml.safe_dump(cfg, sort_keys=False))
    assert main(["validate", "--config", str(mini)]) == 0
    text = messages.getvalue()
    assert ("1 item(s) have an empty 'golden_answers' list and score 0 in every generation metric: "
            "data/gen.jsonl:2") in text
    assert "1 query(ies) have no test items and get no grades: q3" in text
    assert ("reports.spurious_judgments [0, 3]: no judgment of data/qrels.txt has level 3, so no passage counts for "
            "spurious entries at it (judged levels: 0, 1, 2") in text
    assert ("official.json: 1 system(s) of the official leaderboard are not in the experiment and are left out of "
            "the correlation: gone") in text
    assert "answers.jsonl:3: 1 cited doc id(s) are not in the corpus (data/corpus.jsonl): nowhere" in text


def test_config_problems_name_the_line_of_their_key(mini: Path, messages: io.StringIO) -> None:
    """A problem about a config key names the line of that key in the config file."""
    text = mini.read_text()
    text = text.replace("    bank: questions\n", "    bank: questionz\n    model: x/y\n")
    mini.write_text(text)
    lines = text.splitlines()
    bank_line = next(i for i, line in enumerate(lines, 1) if "questionz" in line)
    assert main(["validate", "--config", str(mini)]) == 2
    out = messages.getvalue()
    assert f"config.yaml:{bank_line}: graders.0.bank: grader 'sim' uses bank 'questionz'" in out
    assert "Value error" not in out and "(top level)" not in out
    mini.write_text(text.replace("questionz", "questions"))
    assert main(["validate", "--config", str(mini)]) == 2
    assert f"config.yaml:{bank_line + 1}: graders[0] (sim): model: is not used by backend embedded" in messages.getvalue()


def test_bom_is_dropped_and_absolute_globs_work(mini: Path, messages: io.StringIO) -> None:
    q = mini.parent / "data/queries.tsv"
    q.write_bytes("\ufeff".encode() + q.read_bytes())
    edit_config(data__runs=[str(mini.parent / "data/runs/*.run")])(mini.parent)
    assert main(["validate", "--config", str(mini)]) == 0, messages.getvalue()


def test_cli_process_exits_2_without_traceback(mini: Path) -> None:
    edit_config(qrels__thresholds=[9])(mini.parent)
    res = subprocess.run([sys.executable, "-m", "autograde.cli", "validate", "--config", str(mini)],
                         capture_output=True, text=True, cwd=mini.parent, timeout=120)
    assert res.returncode == 2 and "outside its grade range" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.workflow
def test_snakemake_stops_at_dag_build_before_any_job(mini: Path) -> None:
    write("data/runs/good.run", "q1 Q0 d1a 1 nan good\n", "a")(mini.parent)
    res = run_workflow(mini.parent, config=mini, cores=1, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "good.run:13: score 'nan' is not a finite number" in out
    assert "Traceback" not in out and not (mini.parent / "results").exists()


def test_commands_refuse_a_missing_results_folder(tmp_path: Path, messages: io.StringIO) -> None:
    assert main(["site", "--results", str(tmp_path / "nonexistent")]) == 2
    assert "nonexistent: no such results folder (fix: run the workflow first" in messages.getvalue()


def test_a_missing_rubric_table_is_file_not_found(tmp_path: Path, messages: io.StringIO) -> None:
    """A rubric table that does not exist is 'file not found' (not 'missing columns (columns: none)')."""
    rubric = REPO / "config/rubric/dialogue.yaml"
    assert main(["rubric", "evaluate", "--rubric", str(rubric), "--llm", str(tmp_path / "llm.tsv"),
                 "--human", str(tmp_path / "human.tsv"), "--out", str(tmp_path / "e.json"), "--quiet"]) == 2
    text = messages.getvalue()
    assert "llm.tsv: file not found" in text and "columns: none" not in text


def test_a_bank_edit_checks_the_banks_again_not_the_runs(mini: Path) -> None:
    """The workflow remembers a successful check in two parts: after a hand edit of a bank only the banks are
    read and checked again (the runs, qrels and corpus keep their stamp), a bad bank edit is still caught, and a
    changed run file checks the runs again."""
    import os

    from autograde.config.experiment import load_config
    from autograde.core.errors import InputError
    from autograde.workflow.checks import check_experiment

    config = load_config(mini)
    first = check_experiment(config, mini, cached=True)
    assert not first.from_stamp and first.inputs is not None
    assert check_experiment(config, mini, cached=True).from_stamp
    bank = mini.parent / "data" / "questions.jsonl"
    bank.write_text(bank.read_text(encoding="utf-8").replace("?", " today?", 1), encoding="utf-8")
    edited = check_experiment(config, mini, cached=True)
    assert not edited.from_stamp and edited.inputs is None  # the runs were not read again
    assert edited.counts == first.counts
    assert check_experiment(config, mini, cached=True).from_stamp
    good = bank.read_text(encoding="utf-8")
    bank.write_text(good + "{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match="questions.jsonl"):
        check_experiment(config, mini, cached=True)
    bank.write_text(good, encoding="utf-8")
    run = mini.parent / "data" / "runs" / "good.run"
    run.write_text(run.read_text(encoding="utf-8"), encoding="utf-8")
    os.utime(run, ns=(1, 1))
    assert check_experiment(config, mini, cached=True).inputs is not None
