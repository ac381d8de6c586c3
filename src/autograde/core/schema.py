"""The one strict base of every validated record (config sections, model specs, backend options, manifests).

>>> class Section(Strict):
...     depth: int = 20
>>> Section.model_validate({"depht": 5})  # doctest: +ELLIPSIS
Traceback (most recent call last):
pydantic_core._pydantic_core.ValidationError: 1 validation error for Section
...
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Unknown keys are errors (a typo is never silently ignored) and values are immutable (a validated record
    cannot drift after its checks)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
