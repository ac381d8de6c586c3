"""UMBRELA's answer parsers as selectable modes (``options.umbrela_parser``), each exactly its own: ``pypi-0.0.7``
against the PyPI package umbrela 0.0.7 run in its environment, ``repository`` against castorini/umbrela's parser at
commit 16cba3eb (its grades recorded in the table below: the repository is not a package); on a table of 62 replies.
Also: the mode through a grader on a real OpenAI-compatible server (the system message UMBRELA's GPT judge sends, the
fallback to 0 counted), and the set-ups it refuses."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from support.loopback_server import FixedChat, LoopbackServer
from support.reference_envs import UMBRELA_VENV, run_reference

from autograde.core.errors import GraderSetupError
from autograde.grading.base import GradeRequest
from autograde.grading.parse import parse_response, parse_umbrela
from autograde.grading.prompts import UMBRELA_SYSTEM_MESSAGE, get_prompt

REPLIES: list[tuple[str, tuple[int, int], tuple[int, int]]] = [
    ("{\"M\": 2, \"T\": 1, \"O\": 3}", (3, 1), (3, 1)),
    ("{\"o\": 0, \"m\": 1}", (0, 1), (0, 1)),
    ("{\"O\": 2}", (2, 1), (2, 1)),
    ("{\"overall\": 1}", (1, 1), (1, 1)),
    ("\"final score\": 2", (2, 1), (2, 1)),
    ("{\"final_score\": 3}", (3, 1), (3, 1)),
    ("{\"score\": 1}", (1, 1), (1, 1)),
    ("{\"o_score\": 2}", (2, 1), (2, 1)),
    ("{\"overall_score\": 0}", (0, 1), (0, 1)),
    ("{\"overall score\": 3}", (3, 1), (3, 1)),
    ("Final score: 3", (0, 0), (3, 1)),
    ("O: 2", (0, 0), (2, 1)),
    ("##final score: 2", (0, 0), (2, 1)),
    ("## Final Score: 1", (0, 0), (1, 1)),
    ("final score = 2", (0, 0), (2, 1)),
    ("final score is 3", (0, 0), (3, 1)),
    ("The final score is 1.", (0, 0), (1, 1)),
    ("M: 3\nT: 1\nO: 2", (0, 0), (2, 1)),
    ("The relevance category is 2", (0, 0), (2, 1)),
    ("relevance category: 3", (0, 0), (3, 1)),
    ("relevance category:1", (0, 0), (1, 1)),
    ("It falls into the category 0", (0, 0), (0, 1)),
    ("category 2", (0, 0), (2, 1)),
    ("Category: 3", (0, 0), (3, 1)),
    ("output score is 1", (0, 0), (1, 1)),
    ("score is 2", (0, 0), (2, 1)),
    ("The passage is 3 ", (0, 0), (3, 1)),
    ("3", (0, 0), (3, 1)),
    ("\n2", (0, 0), (2, 1)),
    ("0", (0, 0), (0, 1)),
    ("no idea", (0, 0), (0, 0)),
    ("", (0, 0), (0, 0)),
    ("   ", (0, 0), (0, 0)),
    ("{\"O\": 4}", (0, 0), (0, 0)),
    ("{\"O\": 5, \"M\": 2}", (0, 0), (2, 1)),
    ("{\"o\": 1, \"O\": 3}", (1, 1), (3, 1)),
    ("{\"M\": 3, \"T\": 2, \"O\": 1}", (1, 1), (1, 1)),
    ("{\"O\":2}", (0, 0), (2, 1)),
    ("{\"O\" : 2}", (0, 0), (2, 1)),
    ("{'O': 2}", (0, 0), (2, 1)),
    ("{'o': 3}", (0, 0), (3, 1)),
    ("\"O\": 2, \"O\": 3", (2, 1), (3, 1)),
    ("final score: 2\nfinal score: 3", (0, 0), (3, 1)),
    ("{\"score\": 2, \"final score\": 1}", (1, 1), (1, 1)),
    ("{\"final_score\": 2, \"score\": 3}", (2, 1), (2, 1)),
    ("Answer: 2", (0, 0), (2, 1)),
    ("The answer is two", (0, 0), (0, 0)),
    ("Relevance: 2", (0, 0), (2, 1)),
    ("**O**: 3", (0, 0), (3, 1)),
    ("O = 1", (0, 0), (1, 1)),
    ("o-2", (0, 0), (2, 1)),
    ("Overall: 2", (0, 0), (2, 1)),
    ("{\n  \"M\": 2,\n  \"T\": 2,\n  \"O\": 2\n}", (2, 1), (2, 1)),
    ("```json\n{\"M\": 1, \"T\": 0, \"O\": 1}\n```", (1, 1), (1, 1)),
    ("score: 10", (0, 0), (0, 1)),
    ("I would rate it 3 out of 3.", (0, 0), (3, 1)),
    ("The document is relevant (2).", (0, 0), (2, 1)),
    ("Final score - 2", (0, 0), (2, 1)),
    ("{\"final score\": 3}", (3, 1), (3, 1)),
    ("Scores: M=2, T=1, O=2", (0, 0), (2, 1)),
    ("{\"M\": 2, \"T\": 3, \"O\": 0}\n##final score: 2", (0, 1), (0, 1)),
    ("M=1, T=3, O=3. Final score: 3", (0, 0), (3, 1)),
]
"""(reply, (grade, valid) of umbrela 0.0.7, (grade, valid) of the repository's parser at commit 16cba3eb): valid 0 is
the parsers' fallback to grade 0 (no pattern matched)."""

LABELS = {str(i): i for i in range(4)}
PARSE_SCRIPT = """
import contextlib, io, json, sys
from importlib.metadata import version
from umbrela.utils.common_utils import parse_fewshot_response
out = []
for reply in json.load(sys.stdin):
    with contextlib.redirect_stdout(io.StringIO()):  # it prints every reply it cannot parse
        out.append(list(parse_fewshot_response(reply, "p", "q")))
print(json.dumps({"version": version("umbrela"), "parsed": out}))
"""


def test_the_table_is_large_and_the_parsers_disagree_on_it() -> None:
    assert len(REPLIES) >= 50
    assert sum(p != r for _, p, r in REPLIES) >= 30  # the forms the issue names among them
    assert {t: (p[0], r[0]) for t, p, r in REPLIES if t in ("Final score: 3", "O: 2", "##final score: 2")} == {
        "Final score: 3": (0, 3), "O: 2": (0, 2), "##final score: 2": (0, 2)}


def test_pypi_mode_equals_umbrela_0_0_7() -> None:
    ref = run_reference(UMBRELA_VENV, "umbrela-env", PARSE_SCRIPT, [t for t, _, _ in REPLIES])
    assert ref["version"] == "0.0.7"
    for (text, recorded, _), live in zip(REPLIES, ref["parsed"], strict=True):
        parsed = parse_umbrela(text, LABELS, "pypi-0.0.7")
        assert tuple(live) == recorded, text
        assert (parsed.grade, 0 if parsed.fallback else 1) == recorded, text


@pytest.mark.parametrize(("text", "repository"), [(t, r) for t, _, r in REPLIES])
def test_repository_mode_equals_the_repositorys_parser(text: str, repository: tuple[int, int]) -> None:
    parsed = parse_umbrela(text, LABELS, "repository")
    assert (parsed.grade, 0 if parsed.fallback else 1) == repository
    assert parse_response(get_prompt("UMBRELA"), text, legacy=True).grade == repository[0]  # legacy_parse: the same


def test_the_mode_through_parse_response_only_for_prompts_with_an_answer_form() -> None:
    assert parse_response(get_prompt("UMBRELA@pypi-0.0.7"), "Final score: 3").grade == 3  # autograde's own parser
    assert parse_response(get_prompt("UMBRELA@pypi-0.0.7"), "Final score: 3", umbrela_parser="pypi-0.0.7").grade == 0
    assert parse_response(get_prompt("Thomas"), "2", umbrela_parser="pypi-0.0.7").grade == 2  # not an UMBRELA prompt


class RecordingChat(FixedChat):
    """A model that answers every prompt the same and keeps the messages it was sent."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.sent: list[list[dict[str, str]]] = []
        self.lock = threading.Lock()

    def complete(self, messages: list[dict[str, str]], max_tokens: int, top_logprobs: int | None) -> dict[str, Any]:
        with self.lock:
            self.sent.append(messages)
        return super().complete(messages, max_tokens, top_logprobs)


REQ = GradeRequest("q1", "what causes ocean tides", "p1", "The moon's gravity pulls the oceans.", "q1/query", "query",
                   "what causes ocean tides")


def _grader(base_url: str, **options: Any) -> Any:
    from autograde.config.model import GraderConfig
    from autograde.grading.registry import make_grader

    cfg = GraderConfig(name="umbrela", backend="openai", bank="direct", prompt_class="UMBRELA@pypi-0.0.7",
                       model="m", scoring="generate", options={"base_url": base_url, "max_retries": 0, **options})
    return make_grader(cfg)


@pytest.mark.parametrize(("reply", "parser", "grade", "fallback"), [
    ("Final score: 3", "pypi-0.0.7", 0, True), ("Final score: 3", "repository", 3, False),
    ('{"M": 1, "T": 1, "O": 2}', "pypi-0.0.7", 2, False), ("Final score: 3", None, 3, False)])
def test_a_grader_on_a_real_server_sends_the_system_message_and_parses_in_the_mode(
        reply: str, parser: str | None, grade: int, fallback: bool) -> None:
    chat = RecordingChat(reply)
    with LoopbackServer(chat) as srv:  # type: ignore[arg-type] - any object with complete() serves
        g = _grader(srv.base_url, **({"umbrela_parser": parser} if parser else {}))
        try:
            res = g.grade_batch([REQ])[0]
            ident = g.identity()
        finally:
            g.close()
    assert chat.sent[0][0] == {"role": "system", "content": UMBRELA_SYSTEM_MESSAGE}
    assert chat.sent[0][1]["role"] == "user" and chat.sent[0][1]["content"].startswith("Given a query and a passage")
    assert res.grade == grade and bool(res.extra.get("legacy_fallback")) == fallback
    assert ident["system_prompt"] == UMBRELA_SYSTEM_MESSAGE and ident.get("umbrela_parser") == parser
    assert json.dumps(ident)  # no secret, serializable


def test_an_own_system_prompt_wins() -> None:
    chat = RecordingChat('{"O": 1}')
    with LoopbackServer(chat) as srv:  # type: ignore[arg-type]
        g = _grader(srv.base_url, system_prompt="Judge relevance.")
        try:
            g.grade_batch([REQ])
        finally:
            g.close()
    assert chat.sent[0][0] == {"role": "system", "content": "Judge relevance."}


def test_the_mode_refuses_what_it_cannot_parse() -> None:
    from autograde.config.model import GraderConfig
    from autograde.grading.registry import make_grader

    for prompt, scoring in (("Thomas", "generate"), ("UMBRELA", "logits")):
        cfg = GraderConfig(name="u", backend="openai", bank="direct", prompt_class=prompt, model="m", scoring=scoring,
                           options={"base_url": "http://127.0.0.1:9/v1", "umbrela_parser": "pypi-0.0.7"})
        with pytest.raises(GraderSetupError, match="umbrela_parser"):
            make_grader(cfg)
