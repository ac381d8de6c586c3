"""The cache of test-bank generation answers: the grade cache itself, rooted at ``<cache_dir>/generations/``.

:class:`~autograde.grading.cache.GradeCache` does the work (one folder per generator identity: backend and
model, decoding, prompt class and digest; append-only JSONL segments written with one ``write`` + ``fsync`` per
backend call; torn last lines skipped), so the answers sit under ``<cache_dir>/generations/grades/<identity>/``.
A record holds the raw answer text keyed by the content of the model input (:func:`~autograde.grading.cache.
cache_key`). Answers are cached whether or not they parse (the model's answer to the same input is the same
answer); endpoint failures are never cached. So a rerun makes no model call, and a killed job resumes with the
answers it already had. (Generation does not claim keys: two workflows generating the same bank at the same
moment may both ask; both store the same content.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autograde.core.layout import CacheLayout
from autograde.grading.base import GradeResult
from autograde.grading.cache import GradeCache


class GenerationCache:
    """The answers of one generator identity."""

    def __init__(self, cache_dir: str | Path, identity: dict[str, Any], readonly: bool = False) -> None:
        """``readonly``: creates nothing (``autograde plan``) and refuses appends."""
        self.cache = GradeCache(CacheLayout.of(cache_dir).generations(), identity, readonly=readonly)

    @property
    def folder(self) -> Path:
        return self.cache.folder

    def texts(self, keys: set[str]) -> dict[str, str]:
        """The stored answer text of each of ``keys`` that is in the cache."""
        return {k: rec["raw"] for k, rec in self.cache.load(keys).items() if isinstance(rec.get("raw"), str)}

    def put_texts(self, answers: list[tuple[str, str]]) -> int:
        """Store answer texts (one write); returns how many were stored."""
        return self.cache.append([(key, GradeResult(grade=None, parse_status="ok", raw=text)) for key, text in answers])

    def close(self) -> None:
        self.cache.close()
