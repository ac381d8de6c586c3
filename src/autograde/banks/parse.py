"""Reading test items out of an LLM's answer: strict about what is kept, forgiving about how it is written.

Accepted, in this order of preference:

1. JSON, in or out of a code fence, with prose around it or not: ``{"questions": [...]}`` (the key the prompt
   asks for, or another one of ``questions`` / ``nuggets`` / ``items``, or an object's only list), a bare list,
   and the published set-like shape ``{"questions": {"a", "b"}}`` (read with Python's parser, which keeps the
   order), single quotes and a missing closing brace at the very end (the published nugget instruction lacks
   one). Items may be strings or objects with a text field (``question``, ``nugget``, ``text``, ...).
2. As a fallback, list lines of plain text: ``1. ...``, ``2) ...``, ``- ...``, ``* ...``, ``Question: ...``,
   ``Q3: ...``, ``Nugget 2: ...``.

Everything else is a problem with a one-line reason, which the generator shows the model in its repair prompt:
no JSON and no list, JSON cut off (e.g. at ``max_new_tokens``), an object without a list of items, non-text
items. The items found are then validated by :class:`GeneratedItems` (pydantic): stripped of list markers and
quotes, non-empty, within the length limits, de-duplicated after normalization (case, punctuation, spacing),
and at least ``min_items`` distinct ones.

>>> extract_items('Sure! ```json\\n{"questions": {"Who?", "When?"}}\\n```', "questions").items
['Who?', 'When?']
>>> extract_items("1. Who sang it?\\n2. When?", "questions").how
'list lines'
>>> extract_items('{"questions": ["Who is', "questions").problem[:38]
'the JSON is incomplete or invalid (it '
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationInfo, field_validator

from autograde.core.schema import Strict

FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.S)
LIST_LINE_RE = re.compile(
    r"^\s*(?:\(?\d{1,3}[.):]|[-*\u2022]|(?:question|nugget|key fact|fact|q|n)\s*\d{0,3}\s*[:.)-])\s+(?P<text>\S.*)$",
    re.I,
)
MARKER_RE = re.compile(r"^\s*(?:\(?\d{1,3}[.):]|[-*\u2022])\s+")
ITEM_TEXT_KEYS = ("question", "nugget", "text", "question_text", "nugget_text", "claim", "fact", "item")
LIST_KEYS = ("questions", "nuggets", "items", "key_facts", "facts")
MAX_PARSE_CHARS = 200_000
"""Longer answers are not parsed (a runaway generation; the limit keeps the parser's work bounded)."""


@dataclass
class Extracted:
    """What :func:`extract_items` found: the raw items and how they were written, or the problem."""

    items: list[Any] | None = None
    how: str = ""
    problem: str | None = None
    notes: list[str] = field(default_factory=list)


def _literal(node: ast.AST) -> Any:
    """A JSON-like value from a Python expression node (sets become lists in their written order)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int | float | bool | type(None)):
        return node.value
    if isinstance(node, ast.Name) and node.id in ("true", "false", "null", "True", "False", "None"):
        return {"true": True, "True": True, "false": False, "False": False}.get(node.id)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                raise ValueError("dict unpacking")
            out[str(_literal(k))] = _literal(v)
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value  # type: ignore[operator]
    raise ValueError(f"not a literal: {type(node).__name__}")


def _close_brackets(text: str) -> str | None:
    """``text`` with its unclosed brackets closed, when it stops right after a closing bracket; else None.

    Accepts the published nugget instruction's shape (``{"nuggets": {"a", "b"}``) but never an answer cut inside
    a string or after a comma (a truncated list stays a problem).
    """
    stack: list[str] = []
    in_str: str | None = None
    escaped = False
    for ch in text:
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == in_str:
                in_str = None
            continue
        if ch in "\"'":
            in_str = ch
        elif ch in "[{":
            stack.append("]" if ch == "[" else "}")
        elif ch in "]}":
            if not stack or stack.pop() != ch:
                return None
    stripped = text.rstrip()
    if in_str or not stack or not stripped or stripped[-1] not in "]}":
        return None
    return stripped + "".join(reversed(stack))


def _loads(text: str) -> tuple[Any, str | None]:
    """(value, None) if ``text`` reads as JSON or a JSON-like Python literal, else (None, the JSON error)."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        error = f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
    except RecursionError:
        return None, "nested too deeply"
    for candidate in (text, _close_brackets(text)):
        if candidate is None:
            continue
        try:
            return _literal(ast.parse(candidate.strip(), mode="eval").body), None
        except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
            continue
    return None, error


def _candidates(text: str) -> list[tuple[str, str]]:
    """(label, text) of the spans that may hold the JSON: code fences, the whole answer, the outermost brackets."""
    out: list[tuple[str, str]] = []
    for m in FENCE_RE.finditer(text):
        body = m.group(2).strip()
        if body:
            out.append(("JSON in a code fence", body))
    out.append(("JSON", text.strip()))
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if starts:
        start = min(starts)
        end = max(text.rfind("}"), text.rfind("]"))
        out.append(("JSON with text around it", text[start: end + 1] if end > start else text[start:]))
    seen: set[str] = set()
    return [(label, c) for label, c in out if not (c in seen or seen.add(c))]  # type: ignore[func-returns-value]


def _items_of(value: Any, field_name: str) -> tuple[list[Any] | None, str | None]:
    """The item list inside a parsed JSON value, or the problem."""
    if isinstance(value, list):
        return value, None
    if isinstance(value, dict):
        lowered = {str(k).lower(): v for k, v in value.items()}
        for key in (field_name, *LIST_KEYS):
            v = lowered.get(key)
            if isinstance(v, list):
                return v, None
            if isinstance(v, dict) and v:  # {"questions": {"1": "...", "2": "..."}}
                return list(v.values()), None
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            return lists[0], None
        keys = ", ".join(sorted(map(str, value))[:8]) or "none"
        return None, f'the JSON object has no "{field_name}" list (its keys: {keys})'
    return None, f'the JSON is a {type(value).__name__}, not an object with a "{field_name}" list'


def _list_lines(text: str) -> list[str]:
    return [m.group("text").strip() for line in text.splitlines() if (m := LIST_LINE_RE.match(line))]


def extract_items(text: str, field_name: str = "questions") -> Extracted:
    """The raw items of an answer (see the module docstring), or the problem with them."""
    if not text or not text.strip():
        return Extracted(problem="the answer is empty")
    if len(text) > MAX_PARSE_CHARS:
        return Extracted(problem=f"the answer has {len(text)} characters (more than {MAX_PARSE_CHARS}); "
                         "give a short list")
    first_error: str | None = None
    bad_shape: str | None = None
    for label, candidate in _candidates(text):
        value, error = _loads(candidate)
        if error is not None:
            first_error = first_error or error
            continue
        items, problem = _items_of(value, field_name)
        if items is not None:
            return Extracted(items=items, how=label)
        bad_shape = bad_shape or problem
    if bad_shape:
        return Extracted(problem=bad_shape)
    lines = _list_lines(text)
    if lines:
        notes = []
        ends = [ln.rstrip()[-1:] in ("?", ".", "!", ")", '"') for ln in lines]
        if len(lines) >= 2 and not ends[-1] and all(ends[:-1]):
            lines = lines[:-1]
            notes.append("the last list line looks cut off and was left out")
        return Extracted(items=lines, how="list lines", notes=notes)
    if "{" in text or "[" in text:
        return Extracted(problem=f"the JSON is incomplete or invalid (it may have been cut off at the token limit): "
                         f"{first_error}")
    return Extracted(problem=f'the answer holds no JSON and no numbered list; answer with {{"{field_name}": [...]}}')


# --------------------------------------------------------------------------------------------------------------
# Validation.


def clean_item(text: str) -> str:
    """An item as kept: list markers, surrounding quotes and spacing removed."""
    t = MARKER_RE.sub("", text.strip())
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        t = t[1:-1]
    return re.sub(r"\s+", " ", t).strip()


def normalize_item(text: str) -> str:
    """The form two items are compared in (case, punctuation and spacing ignored).

    >>> normalize_item("When did  Rock'n'Roll begin?") == normalize_item("when did rock n roll begin")
    True
    """
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


@dataclass(frozen=True)
class ItemLimits:
    """What makes a list of generated items acceptable."""

    min_items: int = 1
    max_item_words: int = 40
    max_item_chars: int = 400


class GeneratedItems(Strict):
    """The validated items of one answer (pass ``context={"limits": ItemLimits(...)}`` to ``model_validate``).

    >>> GeneratedItems.model_validate({"items": ["Who?", " who ", "2. When?"]}).items
    ['Who?', 'When?']
    """

    items: list[str]
    dropped: list[str] = []
    """What was left out and why (duplicates, empty items), one line each."""

    @field_validator("items", mode="before")
    @classmethod
    def _texts(cls, v: Any) -> Any:
        if not isinstance(v, list):
            raise ValueError(f"expected a list of items, got {type(v).__name__}")
        out = []
        for i, item in enumerate(v, start=1):
            if isinstance(item, dict):
                key = next((k for k in ITEM_TEXT_KEYS if isinstance(item.get(k), str)), None)
                if key is None:
                    raise ValueError(f"item {i} is an object without a text field ({', '.join(ITEM_TEXT_KEYS[:3])}, ...)")
                item = item[key]
            if not isinstance(item, str):
                raise ValueError(f"item {i} is {type(item).__name__} {item!r:.40}, not text")
            out.append(item)
        return out

    @field_validator("items")
    @classmethod
    def _limits(cls, v: list[str], info: ValidationInfo) -> list[str]:
        limits: ItemLimits = (info.context or {}).get("limits") or ItemLimits()
        kept: list[str] = []
        seen: dict[str, int] = {}
        for i, raw in enumerate(v, start=1):
            text = clean_item(raw)
            if not text:
                continue
            words = len(text.split())
            if words > limits.max_item_words:
                raise ValueError(f"item {i} has {words} words (limit {limits.max_item_words}): {text[:60]!r}...; "
                                 "give short items")
            if len(text) > limits.max_item_chars:
                raise ValueError(f"item {i} has {len(text)} characters (limit {limits.max_item_chars}); "
                                 "give short items")
            key = normalize_item(text)
            if not key:
                continue
            if key in seen:
                continue
            seen[key] = i
            kept.append(text)
        if not kept:
            raise ValueError("the list of items is empty")
        if len(kept) < limits.min_items:
            raise ValueError(f"only {len(kept)} distinct item(s) of {len(v)} given (at least {limits.min_items} "
                             "needed); give different items")
        return kept

    @classmethod
    def from_raw(cls, raw: list[Any], limits: ItemLimits) -> GeneratedItems:
        """Validate raw items; the ``dropped`` notes say what cleaning left out."""
        model = cls.model_validate({"items": raw}, context={"limits": limits})
        texts = [clean_item(x) if isinstance(x, str) else None for x in raw]
        n_empty = sum(1 for t in texts if t is not None and not normalize_item(t))
        n_dupes = len([t for t in texts if t is not None and normalize_item(t)]) - len(model.items)
        dropped = []
        if n_dupes > 0:
            dropped.append(f"{n_dupes} duplicate item(s) (same text after normalization)")
        if n_empty:
            dropped.append(f"{n_empty} empty item(s)")
        return model.model_copy(update={"dropped": dropped})


def validation_problem(exc: Exception) -> str:
    """One line from a pydantic ValidationError (or any exception) for the repair prompt and the failure record."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        msgs = [str(e.get("msg", "")).removeprefix("Value error, ") for e in errors()]
        return "; ".join(m for m in msgs if m) or str(exc)
    return str(exc)
