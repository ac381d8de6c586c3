"""The prompt registry: required classes, exact seed texts, rendering, custom YAML prompts, the CLI listing."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from support.helpers import shared_seed

from autograde.cli.prompts import register
from autograde.grading.base import GradeRequest
from autograde.grading.prompts import (
    PromptClass,
    get_prompt,
    list_prompts,
    load_custom_prompts,
    register_prompt,
    render,
)

REQUIRED = {
    # name: (kind, item_kind, labels)
    "QuestionSelfRatedUnanswerablePromptWithChoices": ("rating", "question", [str(i) for i in range(6)]),
    "NuggetSelfRatedPrompt": ("rating", "nugget", [str(i) for i in range(6)]),
    "QuestionCompleteConciseUnanswerablePromptWithChoices": ("extraction", "question", []),
    "NuggetExtractionPrompt": ("extraction", "nugget", []),
    "QuestionCompleteConcisePromptWithAnswerKey2": ("extraction", "question", []),
    "QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2": ("verification", "question", ["yes", "no"]),
    "FagB": ("direct", "query", ["yes", "no"]),
    "FagB_few": ("direct", "query", ["yes", "no"]),
    "HELM": ("direct", "query", ["yes", "no"]),
    "Sun": ("direct", "query", ["yes", "no"]),
    "Sun_few": ("direct", "query", ["yes", "no"]),
    "Thomas": ("direct", "query", ["0", "1", "2"]),
}

REQ = GradeRequest(
    query_id="940547",
    query_text="when did rock n roll begin?",
    passage_id="6938106",
    passage_text="1951: Ike Turner & His Kings of Rhythm recorded the first rock and roll single.",
    item_id="940547/a4c82219840e6d197d185ed1eda27c61",
    item_kind="question",
    item_text="Which musicians or bands are considered pioneers of rock n roll?",
    gold_answers=("Ike Turner",),
)


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_required_prompt_classes(name: str) -> None:
    kind, item_kind, labels = REQUIRED[name]
    p = get_prompt(name)
    assert (p.name, p.version, p.kind, p.item_kind, list(p.labels)) == (name, "v1", kind, item_kind, labels)
    assert get_prompt(f"{name}@v1") is p
    assert get_prompt(f"{name}@wb1").kind == kind  # the workbench's own strings, for reproduction
    assert p.passage_first_template is not None


def test_grades_per_label() -> None:
    assert dict(get_prompt("NuggetSelfRatedPrompt").labels) == {str(i): i for i in range(6)}
    assert dict(get_prompt("Sun").labels) == {"yes": 1, "no": 0}
    assert dict(get_prompt("Thomas").labels) == {"0": 0, "1": 1, "2": 2}
    assert get_prompt("QuestionCompleteConcisePromptWithAnswerKey2").answer_check == "answer_key"
    assert get_prompt("NuggetExtractionPrompt").answer_check == "unanswerable"
    assert get_prompt("QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2").answer_prompt == (
        "QuestionCompleteConcisePromptWithAnswerKey2@v1"
    )


def _norm(text: str) -> str:
    """Whitespace-insensitive form; the seeds' markdown escapes and field names mapped to ours."""
    text = text.replace("\\_", "_").replace("{query_title}", "{query}").replace("{query title}", "{query}")
    text = text.replace("{correct_answer}", "{gold}")
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture(scope="module")
def seed_text() -> str:
    files = [shared_seed("000_b65f1a0c5146dcad.txt"), shared_seed("002_8c225ea109d97904.txt")]
    missing = [str(f) for f in files if not f.is_file()]
    assert not missing, f"seed files missing (../shared must sit beside the checkout): {missing}"
    return "\n".join(_norm(f.read_text(encoding="utf-8")) for f in files)


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_v1_texts_are_the_seed_texts(name: str, seed_text: str) -> None:
    """Every exact v1 template occurs verbatim (up to whitespace) in a seed; the one reconstruction is marked."""
    p = get_prompt(name)
    if p.exact:
        assert _norm(p.template) in seed_text, f"{p.config_name} differs from the seed text"
    else:
        assert name == "Sun_few" and "RECONSTRUCTED" in p.source
        # its parts are seed text: Sun's instruction and FaggioliB_few's examples
        instruction, _, rest = p.template.partition("\n\n")
        assert _norm(instruction) in seed_text
        examples = rest.rsplit("\n\nQuestion: {query}", 1)[0]
        assert _norm(examples) in seed_text


def test_passage_first_variants_put_the_passage_before_the_item() -> None:
    for name, (_, item_kind, _) in REQUIRED.items():
        p = get_prompt(name)
        item = "{" + item_kind + "}"
        if p.kind == "verification":
            assert p.passage_first_template == p.template  # no passage in it
            continue
        q, pf = p.template, p.passage_first_template
        assert q.rindex(item) < q.rindex("{context}"), name
        assert pf.rindex("{context}") < pf.rindex(item), name
        assert sorted(re.findall(r"\{\w+\}", q)) == sorted(re.findall(r"\{\w+\}", pf)), name


def test_render_fills_fields_in_both_orders() -> None:
    p = get_prompt("QuestionSelfRatedUnanswerablePromptWithChoices")
    q = render(p, REQ)
    assert q.startswith("Can the question be answered based on the available context? choose one:\n- 5: ")
    assert q.endswith(f"Question: {REQ.item_text}\nContext: {REQ.passage_text}")
    pf = render(p, REQ, "passage_first")
    assert pf.endswith(f"Context: {REQ.passage_text}\nQuestion: {REQ.item_text}")
    direct = render(get_prompt("FagB"), REQ)
    assert f"Question: {REQ.query_text}\nPassage: {REQ.passage_text}\nAnswer:" in direct
    v = render(get_prompt("QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2"), REQ, answer="Ike", gold="Ike Turner")
    assert v == (
        f'For the question "{REQ.item_text}" the correct answer is "Ike Turner". '
        'Is "Ike" an equally correct response to this question? Answer yes or no.'
    )
    # braces that are not fields stay; a truncated context replaces the passage
    custom = PromptClass("T", "v1", "rating", "question", '{"q": "{question}"} {context}', {"0": 0, "1": 1})
    assert render(custom, REQ, context="cut") == f'{{"q": "{REQ.item_text}"}} cut'


def test_lookup_errors_name_the_fix() -> None:
    with pytest.raises(KeyError, match="did you mean 'FagB'"):
        get_prompt("FagX")
    with pytest.raises(KeyError, match="versions: v1, wb1"):
        get_prompt("FagB@v9")
    with pytest.raises(ValueError, match="no passage_first variant"):
        get_prompt("FagB@wb1").template_for("passage_first")
    names = {p.config_name for p in list_prompts()}
    assert {f"{n}@v1" for n in REQUIRED} <= names


CUSTOM_OK = """
- name: MyRelevance
  version: v1
  kind: direct
  item_kind: query
  template: "Is this passage relevant to '{query}'? Passage: {context} Answer yes or no."
  labels: {"yes": 1, "no": 0}
- name: MyRubric
  version: v2
  kind: rating
  item_kind: question
  template: "Rate 1-4 how well the text answers {question}. Text: {context}"
  passage_first_template: "Text: {context} Rate 1-4 how well the text answers {question}."
  labels: {1: 1, 2: 2, 3: 3, 4: 4}
"""

CUSTOM_BAD = """
- name: Broken
  version: v1
  kind: rating
  item_kind: question
  template: "Rate {question} on {scale}"
- name: NoTemplate
  version: v1
  kind: direct
  item_kind: query
  labelz: {yes: 1}
"""


def test_custom_prompts_from_yaml(tmp_path: Path) -> None:
    f = tmp_path / "prompts.yaml"
    f.write_text(CUSTOM_OK, encoding="utf-8")
    loaded = load_custom_prompts(f)
    assert [p.config_name for p in loaded] == ["MyRelevance@v1", "MyRubric@v2"]
    rubric = get_prompt("MyRubric")
    assert dict(rubric.labels) == {"1": 1, "2": 2, "3": 3, "4": 4} and rubric.source == f"custom: {f}"
    assert render(rubric, REQ, "passage_first").startswith(f"Text: {REQ.passage_text} Rate 1-4")
    load_custom_prompts(f)  # loading the same file again is fine
    f.write_text(CUSTOM_OK.replace("Answer yes or no.", "Reply yes/no."), encoding="utf-8")
    with pytest.raises(ValueError, match="already registered with a different text"):
        load_custom_prompts(f)


def test_custom_prompt_errors_name_the_file_and_every_problem(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(CUSTOM_BAD, encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_custom_prompts(f)
    msg = str(err.value)
    assert str(f) in msg
    assert "prompt #1 (Broken)" in msg and "unknown field(s) {scale}" in msg and "lacks field(s) {context}" in msg
    assert "rating prompts need labels" in msg
    assert "prompt #2 (NoTemplate)" in msg and "unknown key(s) labelz" in msg and "missing key(s) template" in msg
    f.write_text("- name: [unclosed", encoding="utf-8")
    with pytest.raises(ValueError, match=f"{re.escape(str(f))}:1: not valid YAML"):
        load_custom_prompts(f)
    f.write_text(
        "- {name: FagB, version: v1, kind: direct, item_kind: query, template: '{query} {context}', labels: {yes: 1, no: 0}}",
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="is a built-in prompt"):
        load_custom_prompts(f)
    with pytest.raises(ValueError, match="custom prompts file not found"):
        load_custom_prompts(tmp_path / "missing.yaml")


def test_register_rejects_invalid_definitions() -> None:
    with pytest.raises(ValueError, match="extraction prompts need answer_check"):
        register_prompt(PromptClass("X", "v1", "extraction", "question", "{question} {context}"))
    with pytest.raises(ValueError, match="labels must differ ignoring case"):
        register_prompt(PromptClass("X", "v1", "direct", "query", "{query} {context}", {"Yes": 1, "yes": 0}))


def test_cli_lists_every_prompt_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "prompts.yaml"
    f.write_text(CUSTOM_OK.replace("MyRelevance", "CliRelevance").replace("MyRubric", "CliRubric"), encoding="utf-8")
    parser = argparse.ArgumentParser(prog="autograde")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["prompts", "--custom", str(f)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    for name in REQUIRED:
        assert re.search(rf"^{name}@v1\s+v1\*\s+{REQUIRED[name][0]}\s+{REQUIRED[name][1]}\s", out, re.M), name
    assert re.search(r"^CliRubric@v2\s+v2\*\s+rating\s+question\s+1/2/3/4\s", out, re.M)
    assert "Sun_few@v1" in out and "[reconstructed]" in out
    args = parser.parse_args(["prompts", "--show", "Thomas"])
    assert args.func(args) == 0
    assert "2 = highly relevant, very helpful for this query" in capsys.readouterr().out
    from autograde.cli import main

    assert main(["prompts", "--show", "Nope"]) == 2
    assert "unknown prompt class 'Nope'" in capsys.readouterr().err
