"""Test-bank generation prompts in the prompt registry: the seed's Table 1 texts, {n_items}, listing, custom YAML."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from support.helpers import shared_seed

from autograde.cli.prompts import register
from autograde.grading.prompts import (
    NUGGET_JSON_INSTRUCTION,
    QUESTION_JSON_INSTRUCTION,
    get_prompt,
    load_custom_prompts,
    render_generation,
    render_repair,
)

TABLE_1 = {  # name: (item kind, query fields)
    "QuestionGenerationDL": ("question", {"query_text", "n_items", "instruction"}),
    "NuggetGenerationDL": ("nugget", {"query_text", "n_items", "instruction"}),
    "QuestionGenerationCAR": ("question", {"query_title", "query_subtopic", "instruction"}),
    "NuggetGenerationCAR": ("nugget", {"query_title", "query_subtopic", "instruction"}),
}


def _norm(text: str) -> str:
    text = re.sub(r"</?pre>", " ", text.replace("\\_", "_"))
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture(scope="module")
def table_1() -> str:
    return _norm(shared_seed("000_b65f1a0c5146dcad.txt").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(TABLE_1))
def test_v1_is_table_1_with_the_instruction_appended(name: str, table_1: str) -> None:
    p = get_prompt(name)
    kind, fields = TABLE_1[name]
    assert (p.config_name, p.kind, p.item_kind) == (f"{name}@v1", "generation", kind)
    assert set(re.findall(r"\{(\w+)\}", p.template)) == fields
    assert p.template.endswith(" {instruction}")  # "The instruction to respond in valid JSON is appended."
    # the prompt cell of Table 1 (the DL prompts say "10" where we have {n_items}) and the instruction cell
    assert _norm(p.template.replace("{n_items}", "10")) in table_1
    assert _norm(p.instruction or "") in table_1
    assert p.instruction == (NUGGET_JSON_INSTRUCTION if kind == "nugget" else QUESTION_JSON_INSTRUCTION)
    assert get_prompt(f"{name}@wb1").kind == "generation"  # the workbench's own strings, for reproduction


def test_the_number_of_items_is_a_parameter() -> None:
    p = get_prompt("QuestionGenerationDL")
    q = "when did rock n roll begin?"
    assert "Generate 10 concise insightful questions" in render_generation(p, query_text=q, n_items=10)
    text = render_generation(p, query_text=q, n_items=4)
    assert "Generate 4 concise insightful questions" in text and text.count(f"'{q}'") == 2
    assert text.endswith('{ "questions" : {question_text_1, question_text_2, ... } }\n```')
    car = render_generation(get_prompt("NuggetGenerationCAR"), query_text="Rock / Origins", n_items=3,
                            query_title="Rock", query_subtopic="Origins")
    assert car.startswith("Explore the connection between 'Rock' with a specific focus on the subtopic 'Origins'.")
    wb = render_generation(get_prompt("QuestionGenerationDL@wb1"), query_text=q, n_items=10)
    assert wb.endswith("Keep the questions short.\nGive the question set in the following JSON format:\n```json\n"
                       '{ "questions": [question_text_1, question_text_2, ... ] }\n```')


def test_repair_prompt_shows_the_answer_and_the_problem() -> None:
    p = get_prompt("NuggetGenerationDL")
    first = render_generation(p, query_text="q", n_items=10)
    repair = render_repair(p, first, "x" * 5000, "the list of items is empty")
    assert repair.startswith(first) and "It could not be used: the list of items is empty" in repair
    assert "x" * 1000 + " [...]" in repair and "x" * 1001 not in repair


def test_grading_prompt_digests_are_unchanged() -> None:
    """Adding generation fields to the registry must not invalidate cached grades (digest measured before)."""
    assert get_prompt("FagB").digest() == "9f612997fe74d036"


CUSTOM = """
- name: MyQuestionGen
  version: v1
  kind: generation
  item_kind: question
  template: "List {n_items} exam questions about '{query_text}'. {instruction}"
  instruction: 'Answer as JSON: {"questions": ["..."]}'
- name: BadGen
  version: v1
  kind: generation
  item_kind: query
  template: "Questions about {query} please {instruction}"
  repair_template: "{prompt} try again"
"""


def test_custom_generation_prompts_from_yaml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "gen.yaml"
    f.write_text(CUSTOM.split("- name: BadGen")[0], encoding="utf-8")
    (p,) = load_custom_prompts(f)
    assert p.kind == "generation" and p.repair_template and "{problem}" in p.repair_template
    assert render_generation(p, query_text="bees", n_items=3) == (
        'List 3 exam questions about \'bees\'. Answer as JSON: {"questions": ["..."]}')
    parser = argparse.ArgumentParser(prog="autograde")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["prompts", "--kind", "generation", "--custom", str(f)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert re.search(r"^MyQuestionGen@v1\s+v1\*\s+generation\s+question\s+questions \(JSON list\)", out, re.M)
    for name in TABLE_1:
        assert re.search(rf"^{name}@v1\s+v1\*\s+generation\s", out, re.M) and f"{name}@wb1" in out
    assert "FagB" not in out
    args = parser.parse_args(["prompts", "--show", "NuggetGenerationDL"])
    assert args.func(args) == 0
    shown = capsys.readouterr().out
    assert "## instruction" in shown and "Give the nugget set in the following JSON format:" in shown

    f.write_text(CUSTOM, encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_custom_prompts(f)
    msg = str(err.value)
    assert "prompt #2 (BadGen)" in msg and "item_kind 'query' must be question or nugget" in msg
    assert "unknown field(s) {query}" in msg and "template lacks the query" in msg
    assert "has no instruction" in msg and "repair_template lacks {problem}" in msg
