"""The package's shape: no import circles among autograde modules, and no oversized module mixing concerns.

Imports are read with the standard library's ``ast`` (module level and inside functions; imports under
``if TYPE_CHECKING:`` are annotations only and do not count).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from helpers import REPO

PACKAGE = REPO / "src" / "autograde"
MAX_LINES = 450
ONE_CONCERN_BUT_LONG = {
    "autograde.grading.prompts": "the prompt texts of the papers and the workbench (data), plus their registry",
}
"""Modules allowed over MAX_LINES because they hold one concern whose size is data, with the reason."""


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def runtime_imports(path: Path) -> set[str]:
    """autograde modules imported by ``path`` at run time."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path)
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("autograde"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                base = me.split(".")[: -node.level] if path.name != "__init__.py" else me.split(".")[: len(me.split(".")) - node.level + 1]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            if mod.startswith("autograde"):
                out.add(mod)
                out.update(f"{mod}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges[name] = {m for m in runtime_imports(path) if m in modules and m != name}
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if state.get(m) is None:
                found = dfs(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(edges):
        if state.get(n) is None:
            found = dfs(n)
            if found:
                return found
    return None


def test_no_import_cycle_among_autograde_modules() -> None:
    edges = graph()
    assert len(edges) > 30  # the walk sees the package
    # __init__ modules re-export their children; a child importing its package's __init__ is not a cycle of logic
    for name in list(edges):
        if name.count("."):
            edges[name] = {m for m in edges[name] if not name.startswith(m + ".")}
    cycle = find_cycle(edges)
    assert cycle is None, " -> ".join(cycle or [])


def test_config_never_imports_the_backends() -> None:
    assert not {m for m in runtime_imports(PACKAGE / "config.py") if m.startswith("autograde.grading")}


def test_no_oversized_module() -> None:
    big = {module_name(p): len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.rglob("*.py")}
    over = {m: n for m, n in big.items() if n > MAX_LINES and m not in ONE_CONCERN_BUT_LONG}
    assert not over, f"split these modules by concern (or justify them in ONE_CONCERN_BUT_LONG): {over}"


PROGRAMMING_ERRORS = {
    ("autograde.core.stats", "confusion_matrix"): "two label sequences of different length: a caller's bug",
    ("autograde.core.stats", "cohen_kappa"): "an unknown weights argument from code, not from a user",
    ("autograde.config.reference", "replace_between_markers"): "README markers missing: a maintainer's edit",
    ("autograde.banks.parse", "_literal"): "internal signal of the literal parser, caught in the same module",
}
"""``raise ValueError/KeyError`` allowed outside pydantic validators: (module, function) -> why it is not user input."""
VALIDATOR_DECORATORS = {"field_validator", "model_validator", "validator", "root_validator"}


def _plain_raises(path: Path) -> list[tuple[str, int]]:
    """(function, line) of every ``raise ValueError(...)`` / ``raise KeyError(...)`` outside a pydantic validator."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, int]] = []

    def decorated_as_validator(fn: ast.AST) -> bool:
        for d in getattr(fn, "decorator_list", []):
            target = d.func if isinstance(d, ast.Call) else d
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name in VALIDATOR_DECORATORS:
                return True
        return False

    def visit(node: ast.AST, fn: str, in_validator: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            fn, in_validator = node.name, in_validator or decorated_as_validator(node)
        if isinstance(node, ast.Raise) and node.exc is not None and not in_validator:
            call = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(call, ast.Name) and call.id in {"ValueError", "KeyError"}:
                found.append((fn, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, fn, in_validator)

    visit(tree, "<module>", False)
    return found


def test_user_errors_are_autograde_errors() -> None:
    """User input problems raise AutogradeError subclasses at the source (one handler in the CLI prints them);
    a plain ValueError/KeyError is allowed only inside pydantic validators and for listed programming errors."""
    bad = []
    for p in PACKAGE.rglob("*.py"):
        mod = module_name(p)
        bad += [f"{mod}.{fn}:{line}" for fn, line in _plain_raises(p) if (mod, fn) not in PROGRAMMING_ERRORS]
    assert not bad, f"raise an autograde.core.errors type instead (or list a true programming error): {bad}"


def test_one_yaml_reader() -> None:
    """Every YAML file is read by autograde.core.yamlfile (strict: duplicate keys are errors with their line)."""
    offenders = [module_name(p) for p in PACKAGE.rglob("*.py")
                 if module_name(p) != "autograde.core.yamlfile"
                 and any(s in p.read_text(encoding="utf-8") for s in ("yaml.safe_load(", "yaml.load("))]
    assert not offenders, f"read YAML with autograde.core.yamlfile.read_yaml: {offenders}"


def test_cli_is_one_package() -> None:
    assert not list(PACKAGE.glob("cli*.py")), "CLI modules belong in autograde/cli/"
    from autograde.cli import GROUPS

    modules = {p.stem for p in (PACKAGE / "cli").glob("*.py")} - {"__init__", "__main__", "common"}
    assert modules == {g.__name__.rsplit(".", 1)[1] for g in GROUPS}, "register every command module in GROUPS"


def _walk_parsers(parser: Any, path: str = "autograde") -> list[tuple[str, Any]]:
    import argparse

    out = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _walk_parsers(sub, f"{path} {name}")
    return out


def test_every_cli_option_has_help_and_no_markup() -> None:
    import argparse

    from autograde.cli import build_parser

    missing, markup, no_description = [], [], []
    for path, parser in _walk_parsers(build_parser()):
        if path != "autograde" and not parser.description:
            no_description.append(path)
        texts = [parser.description or ""]
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            name = "/".join(action.option_strings) or action.dest
            if not action.help:
                missing.append(f"{path} {name}")
            texts.append(action.help or "")
        markup += [path for t in texts if "``" in t or ":func:" in t or ":class:" in t]
    assert not missing, f"options without help text: {missing}"
    assert not no_description, f"commands without a description: {no_description}"
    assert not markup, f"reStructuredText in --help: {sorted(set(markup))}"
