"""Canned test-bank generation answers for the loopback OpenAI-compatible server (not a test module).

:class:`CannedChat` stands in for the model behind ``tests/loopback_server.py``: it answers a chat request by
looking for a query's text in the prompt and returning that query's canned answer, a good one or one of the
malformed kinds a real model produces. It counts the requests it answered (per query), so tests can check that a
rerun makes no call. A repair prompt (it contains "could not be used") gets the query's repair answer.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

TEN = [f"What is aspect number {i} of the topic?" for i in range(1, 11)]
LONG_ITEM = " ".join(["word"] * 2000)

# query id -> (query text, first answer, answer to a repair prompt)
CANNED: dict[str, tuple[str, str, str]] = {
    # the published set-like shape, as the paper's instruction asks for it
    "q1": ("how do bees make honey",
           '{ "questions" : {"Where do bees store nectar while foraging?", "How do bees remove water from nectar?", '
           '"Which enzyme do bees add to nectar?", "Why do bees fan their wings in the hive?"} }', ""),
    # JSON in a code fence with prose around it, one duplicate to drop
    "q2": ("what causes ocean tides",
           "Here are the questions:\n```json\n" + json.dumps({"questions": [
               "Which celestial bodies cause tides?", "When do spring tides occur?", "What is a neap tide?",
               "Why are there two high tides a day?", "which celestial bodies cause tides"]}) + "\n```\nHope this helps!",
           ""),
    # a numbered plain-text list (no JSON at all)
    "q3": ("how to bake sourdough bread",
           "1. What makes sourdough bread rise?\n2. At what temperature is sourdough baked?\n"
           "3. How long should the dough ferment?\n4. What is a levain?", ""),
    # no JSON first; the repair prompt gets a valid answer
    "q4": ("why is the sky blue", "The sky is blue because of Rayleigh scattering.",
           json.dumps({"questions": ["What is Rayleigh scattering?", "Why does blue light scatter more than red?",
                                     "Why are sunsets red?", "Does the sky look blue from the moon?"]})),
    # malformed every time: no JSON, truncated JSON, an empty list, duplicates, a 2,000-word item
    "q5": ("what is the capital of peru", "I am sorry, but I cannot answer that.", "I still cannot answer that."),
    "q6": ("how do vaccines work", '{"questions": ["How do vaccines train the immune system?", "What is an adjuv',
           '{"questions": ["How do vaccines train the', ),
    "q7": ("who invented the telephone", '{"questions": []}', '{"questions": []}'),
    "q8": ("what is photosynthesis", json.dumps({"questions": ["What is light?", "what is light", "WHAT IS LIGHT?!",
                                                               "What is light ?"]}),
           json.dumps({"questions": ["What is light?", "What is light?"]})),
    "q9": ("how far is the moon", json.dumps({"questions": ["How far is the moon?", LONG_ITEM, "When was it measured?",
                                                            "How was it measured?", "Does it change?"]}),
           json.dumps({"questions": [LONG_ITEM]})),
}
GOOD = ("q1", "q2", "q3", "q4")
BAD = ("q5", "q6", "q7", "q8", "q9")


class CannedChat:
    """The model of the loopback server, answering from :data:`CANNED` (thread-safe)."""

    def __init__(self, canned: dict[str, tuple[str, str, str]] | None = None) -> None:
        self.canned = canned or CANNED
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()

    @property
    def total(self) -> int:
        return sum(self.calls.values())

    def answer(self, content: str) -> tuple[str, str]:
        """(query id, answer) for a prompt."""
        matches = [q for q, (text, _, _) in self.canned.items() if f"'{text}'" in content]
        if len(matches) != 1:
            return "?", "no canned answer for this prompt"
        q = matches[0]
        _, first, repair = self.canned[q]
        return q, (repair if "could not be used" in content else first)

    def complete(self, messages: list[dict[str, str]], max_tokens: int, top_logprobs: int | None) -> dict[str, Any]:
        content = "\n".join(str(m.get("content", "")) for m in messages)
        q, text = self.answer(content)
        with self.lock:
            self.calls[q] += 1
        return {"text": text, "finish_reason": "stop", "prompt_tokens": len(content.split()),
                "completion_tokens": len(text.split()),
                "first": {"token": text[:1], "logprob": 0.0, "top": [(text[:1], 0.0)]}}


def queries_tsv() -> str:
    """The canned queries as a queries file."""
    return "".join(f"{q}\t{text}\n" for q, (text, _, _) in CANNED.items())
