"""The one strict base of every validated record (config sections, model specs, backend options, manifests).

>>> class Section(Strict):
...     depth: int = 20
>>> Section.model_validate({"depht": 5})  # doctest: +ELLIPSIS
Traceback (most recent call last):
pydantic_core._pydantic_core.ValidationError: 1 validation error for Section
...
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Unknown keys are errors (a typo is never silently ignored) and values are immutable (a validated record
    cannot drift after its checks)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


S = TypeVar("S")


def enabled(section: S | None) -> S | None:
    """A config section when the experiment has it and it is on (``enabled: false`` turns a section off), else None:
    the one way a feature asks whether it runs.

    >>> class Section(Strict):
    ...     enabled: bool = True
    >>> enabled(Section()) is not None, enabled(Section(enabled=False)), enabled(None)
    (True, None, None)
    """
    return section if section is not None and getattr(section, "enabled", True) else None


def required(section: S | None, key: str, fix: str) -> S:
    """A config section a stage cannot run without: a :class:`~autograde.core.errors.ConfigError` naming the key and
    the fix when the experiment lacks it (or turns it off)."""
    from autograde.core.errors import ConfigError

    found = enabled(section)
    if found is None:
        raise ConfigError(f"the experiment has no {key}: section, or it is off (fix: {fix})")
    return found
