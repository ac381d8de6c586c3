"""Bad test banks and bad bank_generation config: each problem named with its file, line and fix, before any job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from autograde.cli import main
from autograde.config.experiment import load_config
from autograde.core.errors import InputError, Problems
from autograde.io.banks.read import read_bank, read_bank_for_queries

GOOD_LINE = {"query_id": "q1", "items": [{"question_text": "Where do bees store nectar while foraging?"}]}


def _bank(tmp_path: Path, second_line: dict | str) -> Path:
    p = tmp_path / "bank.jsonl"
    line = second_line if isinstance(second_line, str) else json.dumps(second_line)
    p.write_text(json.dumps(GOOD_LINE) + "\n" + line + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize(("line", "message", "fix"), [
    ({"query_id": ["q2"], "items": []}, "query_id must be a string, got list", 'write the query id as a string'),
    ({"query_id": "q2", "items": {"question_text": "x"}}, "'items' must be a list, got dict", 'write "items": ['),
    ({"query_id": "q2", "items": [{"question_text": 42}]}, "item 0 of query 'q2': question_text must be a string, got int",
     'write "question_text": "..." in quotes'),
    ({"query_id": "q2"}, "the line has no items", 'write {"query_id": "...", "items": ['),
    ({"query_id": "q2", "items": [{"nugget_text": "  "}]}, "item 0 of query 'q2' has empty text",
     "remove the item or give it text"),
    ({"query_id": "q2", "items": [{"question_text": "When do spring tides occur?"},
                                  {"question_text": " When do spring tides occur? "}]},
     "item 1 repeats the text of an earlier item of query 'q2'", "remove the duplicate item"),
    ({"query_id": "q2", "items": [{"query_id": "q3", "question_text": "Which celestial bodies cause tides?"}]},
     "item 0 names query 'q3' but is on the line of query 'q2'", "move it to the line of query 'q3'"),
    ({"query_id": "q1", "items": [{"question_text": "Another question?"}]}, "query 'q1' appears on two lines "
     "(first on line 1)", "merge its items into one line"),
])
def test_bad_bank_lines(tmp_path: Path, line: dict, message: str, fix: str) -> None:
    p = _bank(tmp_path, line)
    with pytest.raises(InputError) as err:
        read_bank(p)
    text = str(err.value)
    assert f"{p}:2: {message}" in text and f"(fix: {fix}" in text, text


def test_unknown_query_is_an_error_and_a_query_without_items_a_warning(tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    p = _bank(tmp_path, {"query_id": "q9", "items": [{"question_text": "Who?"}]})
    problems = Problems()
    with caplog.at_level("WARNING", logger="autograde"):
        read_bank_for_queries(p, problems, {"q1": "bees", "q2": "tides"}, "data/queries.tsv")
    (problem,) = problems.items
    assert str(problem) == (f"{p}:2: test bank has items for query 'q9', which is not in data/queries.tsv "
                            "(fix: fix the query id or add the query)")
    assert "1 query(ies) have no test items and get no grades: q2" in caplog.text


def _experiment(mini: Path, **bank_generation: dict) -> None:
    raw = yaml.safe_load(mini.read_text())
    raw["bank_generation"] = bank_generation
    mini.write_text(yaml.safe_dump(raw))


def test_edited_bank_is_checked_before_any_job(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A generated bank graded through its edited copy: the copy is read and checked like any hand-made bank."""
    raw = yaml.safe_load(mini.read_text())
    del raw["banks"]
    raw["bank_generation"] = {"questions": {"backend": "openai", "model": "m", "grade_with": "edited",
                                            "edited": "data/questions.jsonl", "options": {"base_url": "http://x/v1"}}}
    mini.write_text(yaml.safe_dump(raw))
    assert main(["validate", "--config", str(mini)]) == 0
    bank = mini.parent / "data/questions.jsonl"
    lines = bank.read_text().splitlines()
    lines[1] = lines[1].replace("Which celestial bodies cause tides?", "When do spring tides occur?")
    lines.append(json.dumps({"query_id": "q9", "items": [{"question_text": ""}, {"question_text": "Who?"}]}))
    bank.write_text("\n".join(lines) + "\n")
    assert main(["validate", "--config", str(mini)]) == 2
    err = capsys.readouterr().err
    assert "data/questions.jsonl:2: item 1 repeats the text of an earlier item of query 'q2'" in err
    assert "data/questions.jsonl:4: item 0 of query 'q9' has empty text (fix: remove the item or give it text)" in err
    assert "data/questions.jsonl:4: test bank has items for query 'q9', which is not in data/queries.tsv" in err


def test_bank_generation_config_problems(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = yaml.safe_load(mini.read_text())
    raw["bank_generation"] = {
        "drafts": {"backend": "openai", "model": "m", "prompt_class": "FagB", "options": {"base_url": "u", "concurency": 2}},
        "nuggets": {"backend": "hf", "model": "/no/such/model.gguf", "prompt_class": "NuggetGenerationDL",
                    "grade_with": "edited"},
    }
    raw["graders"].append({"name": "wrong", "backend": "openai", "bank": "questions", "model": "m",
                           "prompt_class": "QuestionGenerationDL", "scoring": "generate", "thresholds": [1]})
    mini.write_text(yaml.safe_dump(raw))
    assert main(["validate", "--config", str(mini)]) == 2  # backend options are checked when the config loads
    assert "bank_generation.drafts.options.concurency: unknown key; did you mean 'concurrency'?" in capsys.readouterr().err
    del raw["bank_generation"]["drafts"]["options"]["concurency"]
    mini.write_text(yaml.safe_dump(raw))
    assert main(["validate", "--config", str(mini)]) == 2
    err = capsys.readouterr().err
    assert "bank_generation.drafts.prompt_class: FagB@v1 is a direct (grading) prompt" in err
    assert "bank_generation.nuggets.model: '/no/such/model.gguf' does not exist" in err
    assert ("banks/nuggets.edited.jsonl: the edited copy of generated bank 'nuggets' does not exist "
            "(bank_generation.nuggets.grade_with: edited) (fix: create it from the generated bank: autograde bank "
            "init-edit --config CONFIG --bank nuggets") in err
    assert "graders[1] (wrong): QuestionGenerationDL@v1 is a test-bank generation prompt, not a grading prompt" in err


def test_bank_generation_schema_errors(mini: Path) -> None:
    raw = yaml.safe_load(mini.read_text())
    raw["bank_generation"] = {"questions": {"model": "m", "itmes_per_query": 3, "min_items": 20},
                              "bad name!": {"model": "m"}}
    mini.write_text(yaml.safe_dump(raw))
    with pytest.raises(Exception) as err:
        load_config(mini)
    assert "bank name 'bad name!' must match" in str(err.value)
    del raw["bank_generation"]["bad name!"]
    mini.write_text(yaml.safe_dump(raw))
    with pytest.raises(Exception) as err:
        load_config(mini)
    msg = str(err.value)
    assert "bank 'questions' is both under banks: (data/questions.jsonl) and under bank_generation:" in msg
    del raw["banks"]
    mini.write_text(yaml.safe_dump(raw))
    with pytest.raises(Exception) as err:
        load_config(mini)
    assert "bank_generation.questions.itmes_per_query: unknown key; did you mean 'items_per_query'?" in str(err.value)
    del raw["bank_generation"]["questions"]["itmes_per_query"]
    mini.write_text(yaml.safe_dump(raw))
    with pytest.raises(Exception, match="min_items \\(20\\) is larger than items_per_query \\(10\\)"):
        load_config(mini)


def test_bank_stats_refuses_a_malformed_bank_like_the_workflow(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One reader: a query split over two lines, gold answers given as a string and a facet that is an object are
    refused by ``autograde bank stats`` with the same problems (file, line, fix) as by the workflow's checks."""
    bank = mini.parent / "data/questions.jsonl"
    lines = bank.read_text().splitlines()
    first = json.loads(lines[0])
    first["items"][0]["gold_answers"] = "in the honey stomach"
    first["items"][1]["facet_id"] = {"id": 3}
    lines[0] = json.dumps(first)
    lines.append(json.dumps({"query_id": "q2", "items": [{"question_text": "What is a neap tide?"}]}))
    bank.write_text("\n".join(lines) + "\n")

    def problems(err: str) -> list[str]:
        return sorted(x.strip() for x in err.splitlines() if x.strip().startswith("- ") and "questions.jsonl" in x)

    assert main(["validate", "--config", str(mini)]) == 2
    from_workflow = problems(capsys.readouterr().err)
    assert main(["bank", "stats", "data/questions.jsonl"]) == 2  # the path as the config names it
    from_tool = problems(capsys.readouterr().err)
    assert from_workflow == from_tool and len(from_tool) == 3, (from_workflow, from_tool)
    text = "\n".join(from_tool)
    assert "questions.jsonl:1: gold_answers of item 0 of query 'q1' must be a list of strings, got str" in text
    assert "questions.jsonl:1: facet_id of item 1 of query 'q1' must be a string" in text
    assert "questions.jsonl:4: query 'q2' appears on two lines (first on line 2) (fix: merge its items into one line)" \
        in text
    # the conversion command stays lenient: it reads what it can and reports the rest
    assert main(["bank", "import", str(bank), "--out", str(mini.parent / "fixed.jsonl")]) == 0
    assert main(["bank", "stats", str(mini.parent / "fixed.jsonl")]) == 0
