"""The embedded grader's stored text vectors (autograde.grading.vectors): after a bank edit only the new item is
encoded, the grades equal a fresh grader's bit for bit, a torn record is ignored, and the plan counts what is left."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograde.config.model import GraderConfig
from autograde.grading.base import GradeRequest
from autograde.grading.registry import make_grader
from autograde.grading.shard import grade_requests

PASSAGES = {"p1": "Honey bees store nectar in their honey stomach while foraging.",
            "p2": "The stock market fell sharply on Monday.",
            "p3": "Bees turn nectar into honey inside the hive."}
CFG = GraderConfig(name="minilm", backend="embedded", prompt_class="QuestionSelfRatedUnanswerablePromptWithChoices")


def requests(question: str, qid: str = "q1") -> list[GradeRequest]:
    return [GradeRequest(qid, "bees", pid, text, "i1", "question", question) for pid, text in PASSAGES.items()]


def tokens_of(text: str) -> int:
    """The tokens the encoder reads for one text (a request whose item and passage are that text)."""
    return make_grader(CFG).count_tokens([GradeRequest("q", "q", "p", text, "i", "question", text)]).input_tokens


def rows(outcome) -> list[tuple]:  # type: ignore[no-untyped-def]
    return sorted(outcome.grades[["passage_id", "grade", "expected_grade", "raw"]].itertuples(index=False))


@pytest.mark.model
def test_a_bank_edit_encodes_only_the_new_item(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = grade_requests(requests("Where do bees store nectar?"), make_grader(CFG), CFG, cache)
    assert first.stats["computed"] == 3 and first.stats["input_tokens"] > 0
    segments = list((cache / "embeddings").rglob("seg-*.bin"))
    assert len(segments) == 1 and segments[0].stat().st_size == 4 * (16 + 4 * 384)  # 3 passages + 1 item

    edited = requests("Where do honey bees keep nectar?")
    planner = make_grader(CFG)
    planner.use_cache(cache, readonly=True)
    fresh_count = make_grader(CFG).count_tokens(edited).input_tokens
    item_count = tokens_of("Where do honey bees keep nectar?")
    planned = planner.count_tokens(edited).input_tokens
    assert planned == item_count < fresh_count  # the plan counts the new item only

    with_store = grade_requests(edited, make_grader(CFG), CFG, cache)
    assert with_store.stats["computed"] == 3 and with_store.stats["input_tokens"] == planned
    without = grade_requests(edited, make_grader(CFG), CFG, tmp_path / "empty-cache")
    assert rows(with_store) == rows(without)  # a stored vector grades exactly as a fresh encoding
    assert without.stats["input_tokens"] == fresh_count

    with segments[0].open("ab") as fh:  # a writer killed mid-record leaves a partial last record
        fh.write(b"\x00" * 100)
    again = grade_requests(requests("Where are the bees?", "q1"), make_grader(CFG), CFG, cache)
    assert again.stats["input_tokens"] == tokens_of("Where are the bees?")
    q2 = requests("Which insects make honey?", "q2")
    other_query = grade_requests(q2, make_grader(CFG), CFG, cache)
    assert other_query.stats["input_tokens"] == make_grader(CFG).count_tokens(q2).input_tokens  # kept per query
