"""The package's shape: no import circles among autograde modules, and no oversized module mixing concerns.

Imports are read with the standard library's ``ast`` (module level and inside functions; imports under
``if TYPE_CHECKING:`` are annotations only and do not count).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

from support.helpers import REPO

from autograde import LAYERS

PACKAGE = REPO / "src" / "autograde"
MAX_LINES = 450
ONE_CONCERN_BUT_LONG = {
    "autograde.grading.prompts": "the prompt texts of the papers and the workbench (data), plus their registry",
}
"""Modules allowed over MAX_LINES because they hold one concern whose size is data, with the reason."""


@functools.cache
def parse(path: Path) -> ast.Module:
    """The syntax tree of one file, parsed once per test session (every structure test reads the same files)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def _walked(tree: ast.AST) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(tree))


def walk(tree: ast.AST) -> tuple[ast.AST, ...]:
    """``ast.walk(tree)`` as a tuple, computed once per tree (the trees come from :func:`parse`)."""
    return _walked(tree)


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
    tree = parse(path)
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


@functools.cache
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


RANK = {pkg: i for i, (_, pkgs, _) in enumerate(LAYERS) for pkg in pkgs}
"""Layer of each package (:data:`autograde.LAYERS`, lowest first: a module imports at run time only its own layer and
those below; a new package joins a layer there)."""


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_module_is_in_a_layer() -> None:
    """No module at the package root (but ``__init__``); every package belongs to one layer."""
    root = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert not root, f"modules at the package root have no layer; move them into a package: {root}"
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert not packages - set(RANK), f"put these packages into a layer of LAYERS: {sorted(packages - set(RANK))}"


def test_layer_order() -> None:
    """Foundations, sources, pipeline stages, config and checks, features, application: imports only go down."""
    up = [f"{a} -> {b}" for a, bs in graph().items() for b in bs
          if package_of(b) in RANK and package_of(a) in RANK and RANK[package_of(b)] > RANK[package_of(a)]]
    assert not up, "imports from a higher layer (move the code down, or pass the value in): " + "; ".join(sorted(up))


def test_no_package_cycles() -> None:
    """Packages of one layer may import each other in one direction only."""
    edges: dict[str, set[str]] = {}
    for a, bs in graph().items():
        for b in bs:
            if package_of(a) != package_of(b):
                edges.setdefault(package_of(a), set()).add(package_of(b))
    cycle = find_cycle(edges)
    assert cycle is None, "package cycle: " + " -> ".join(cycle or [])


def _defined_names(path: Path) -> set[str]:
    """Names a module defines at its top level (functions, classes, assignments, also under if/try)."""
    tree = parse(path)
    names: set[str] = set()

    def targets(node: ast.AST) -> None:
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Tuple | ast.List):
            for elt in node.elts:
                targets(elt)

    for top in tree.body:
        for node in ([top] if not isinstance(top, ast.If | ast.Try) else list(walk(top))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    targets(t)
            elif isinstance(node, ast.AnnAssign):
                targets(node.target)
    return names


def test_one_import_path_per_public_name() -> None:
    """A name is imported from the module that defines it, never through another module that imports it."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    defined = {m: _defined_names(p) for m, p in modules.items()}
    bad = []
    for root in (PACKAGE, REPO / "tests", REPO / "scripts", REPO / "benchmarks", REPO / "tools"):
        for p in root.rglob("*.py"):
            for node in walk(parse(p)):
                if isinstance(node, ast.ImportFrom) and not node.level and node.module in defined:
                    bad += [f"{p.relative_to(REPO)}:{node.lineno}: {a.name} from {node.module}" for a in node.names
                            if a.name not in defined[node.module] and f"{node.module}.{a.name}" not in modules]
    assert not bad, "import these from the module that defines them: " + "; ".join(bad)


PROTOCOL_NAMES = {
    "Options": "every backend module's options model (grading/registry.py loads it by module)",
    "make_grader": "every backend module's factory (and the registry's dispatcher)",
    "make_backend": "every LLM backend module's factory (and the registry's dispatcher)",
    "register": "every CLI module adds its commands (cli/__init__.py lists the modules)",
    "main": "entry points of modules run as programs",
    "T": "a TypeVar",
    "FEATURE": "every feature package's record (autograde.workflow.features registers each)",
}
"""Public names that several modules define on purpose: a protocol each of them implements."""
PROTOCOL_PREFIXES = ("cmd_", "run_")
"""CLI command handlers (``cmd_<command>``) and stage functions over files (``run_<stage>``) of each feature."""


def test_one_definition_per_public_name() -> None:
    """A public name is defined once in the package (two definitions are two copies of a concept that drift), unless
    it is a protocol several modules implement."""
    where: dict[str, list[str]] = {}
    for p in PACKAGE.rglob("*.py"):
        for name in _defined_names(p):
            if not name.startswith("_") and name != "__all__":
                where.setdefault(name, []).append(module_name(p))
    twice = {n: ms for n, ms in where.items() if len(ms) > 1 and n not in PROTOCOL_NAMES
             and not n.startswith(PROTOCOL_PREFIXES)}
    assert not twice, f"defined in several modules (keep one, import it elsewhere): {twice}"


def test_no_oversized_module() -> None:
    big = {module_name(p): len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.rglob("*.py")}
    over = {m: n for m, n in big.items() if n > MAX_LINES and m not in ONE_CONCERN_BUT_LONG}
    assert not over, f"split these modules by concern (or justify them in ONE_CONCERN_BUT_LONG): {over}"


PROGRAMMING_ERRORS = {
    ("autograde.core.agreement", "confusion_matrix"): "two label sequences of different length: a caller's bug",
    ("autograde.core.agreement", "cohen_kappa"): "an unknown weights argument from code, not from a user",
    ("autograde.config.reference", "replace_between_markers"): "README markers missing: a maintainer's edit",
    ("autograde.banks.parse", "_literal"): "internal signal of the literal parser, caught in the same module",
}
"""``raise ValueError/KeyError`` allowed outside pydantic validators: (module, function) -> why it is not user input."""
VALIDATOR_DECORATORS = {"field_validator", "model_validator", "validator", "root_validator"}


def _plain_raises(path: Path) -> list[tuple[str, int]]:
    """(function, line) of every ``raise ValueError(...)`` / ``raise KeyError(...)`` outside a pydantic validator."""
    tree = parse(path)
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


@functools.cache
def _modules() -> dict[str, ast.Module]:
    return {module_name(p): parse(p) for p in PACKAGE.rglob("*.py")}


def _imported(tree: ast.Module) -> set[str]:
    out: set[str] = set()
    for node in walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_config_never_imports_a_backend_module() -> None:
    """Validating a config needs no torch, vLLM or openai: the config layer reaches backends through the registry."""
    from autograde.grading.registry import BACKENDS

    backend_modules = {b.module for b in BACKENDS.values()}
    bad = {m: _imported(t) & backend_modules for m, t in _modules().items() if m.startswith("autograde.config")}
    assert not {m: b for m, b in bad.items() if b}, bad


def _backend_literals(tree: ast.Module) -> list[int]:
    """Lines comparing a value with a backend name, or declaring a set/Literal of backend names."""
    from autograde.grading.registry import BACKEND_NAMES

    names = set(BACKEND_NAMES)

    def is_name(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return bool(node.elts) and all(is_name(e) for e in node.elts)
        return False

    out = []
    for node in walk(tree):
        if isinstance(node, ast.Compare) and any(is_name(c) for c in [node.left, *node.comparators]):
            out.append(node.lineno)
        elif isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == "Literal" and is_name(node.slice):
            out.append(node.lineno)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("frozenset", "set") and node.args \
                and is_name(node.args[0]):
            out.append(node.lineno)
    return out


def test_backend_names_only_in_the_registry() -> None:
    """Code asks the registry what a backend can do (``backend(name).gpu``); only the registry (and each backend
    module, about itself) names them."""
    from autograde.grading.registry import BACKENDS

    allowed = {"autograde.grading.registry"} | {b.module for b in BACKENDS.values()}
    bad = {m: lines for m, t in _modules().items() if m not in allowed and (lines := _backend_literals(t))}
    for script in (REPO / "scripts").glob("*.py"):
        if lines := _backend_literals(parse(script)):
            bad[str(script.relative_to(REPO))] = lines
    assert not bad, f"compare with the registry's capabilities instead of backend names: {bad}"


STATISTICS_LIBRARIES = ("scipy.stats", "scipy", "sklearn.metrics", "krippendorff", "ppi_py", "statsmodels")
"""Where statistics come from; imported by :mod:`autograde.core.stats` only (``scipy`` counts as ``from scipy import
stats``; other scipy modules are not statistics)."""


def test_statistics_only_in_stats() -> None:
    bad = {}
    for m, tree in _modules().items():
        if m == "autograde.core.stats":
            continue
        hits = set()
        for node in walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in STATISTICS_LIBRARIES:
                if node.module != "scipy" or any(a.name == "stats" for a in node.names):
                    hits.add(node.module)
            elif isinstance(node, ast.Import):
                hits.update(a.name for a in node.names if a.name in STATISTICS_LIBRARIES and a.name != "scipy")
        if hits:
            bad[m] = sorted(hits)
    assert not bad, f"put the statistic into autograde.core.stats (with its reference in a test): {bad}"


def test_threads_only_in_runtime() -> None:
    """One thread control (:mod:`autograde.core.runtime`): torch, OpenMP and BLAS threads are set nowhere else."""
    bad = []
    for p in PACKAGE.rglob("*.py"):
        if module_name(p) == "autograde.core.runtime":
            continue
        text = p.read_text(encoding="utf-8")
        bad += [f"{module_name(p)}: {s}" for s in ("set_num_threads(", "threadpoolctl", "OMP_NUM_THREADS",
                                                    "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS") if s in text]
    assert not bad, bad


LAYOUT_FOLDERS = {"ingest", "pool", "grades", "qrels", "eval", "leaderboards", "cover", "metrics", "reports", "site",
                  "banks", "rubric", "calibrated_qrels", "reproduction", "nuggets", "corpus-index", "generations",
                  "checks", "datasets"}
"""Folder names of the results and cache layouts (:mod:`autograde.core.layout`)."""


def _path_literals(tree: ast.Module) -> list[str]:
    """``x / "grades"`` joins with a layout folder, and literal paths under results/ or cache/ (messages, which
    hold spaces, and docstrings are text, not paths)."""
    docstrings = {id(n.body[0].value) for n in walk(tree)
                  if isinstance(n, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out = []
    for node in walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) \
                and node.right.value in LAYOUT_FOLDERS:
            out.append(f"line {node.lineno}: / {node.right.value!r}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                and " " not in node.value and node.value.startswith(("results/", "cache/")):
            out.append(f"line {node.lineno}: {node.value!r}")
    return out


def test_no_results_or_cache_paths_outside_the_layout() -> None:
    """Every path under results/ and cache/ comes from :class:`autograde.core.layout.Layout` or
    :class:`~autograde.core.layout.CacheLayout`."""
    bad = {m: lines for m, t in _modules().items() if m != "autograde.core.layout" and (lines := _path_literals(t))}
    assert not bad, f"build these paths with autograde.core.layout: {bad}"


def test_cache_folders_are_the_layouts() -> None:
    """The cache's folders are those :data:`autograde.core.layout.CACHE_FOLDERS` documents (and says what deleting
    each costs)."""
    from autograde.core.layout import CACHE_FOLDERS

    names = [f.name for f in CACHE_FOLDERS]
    assert len(names) == len(set(names)) and all(f.holds and f.delete for f in CACHE_FOLDERS)
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert all(f"`{n}/`" in text for n in names), "docs/architecture.md lists every cache folder"


def _smk_rules() -> dict[str, str]:
    """rule name -> its text, from rules/*.smk."""
    import re

    out = {}
    for p in (REPO / "rules").glob("*.smk"):
        for m in re.finditer(r"^ *rule (\w+):\n((?:(?: {4,}.*)?\n)*)", p.read_text(encoding="utf-8"), re.M):
            out[m.group(1)] = m.group(2)
    return out


def test_every_model_job_goes_through_the_scaffolding() -> None:
    """A rule that runs a model takes its resources from :class:`autograde.pipeline.jobs.ModelJobs` (never a
    hand-written ``gpu=``), and its script runs through :func:`autograde.pipeline.jobs.run_model_job` (GPU guard,
    vLLM environment); nothing else starts the vLLM environment."""
    import re

    rules = _smk_rules()
    model_rules = {r: body for r, body in rules.items() if ".resources()" in body}
    assert {"grade", "generate_bank", "nugget_importance", "assign_nuggets"} <= set(model_rules)
    hand = [r for r, body in rules.items() if re.search(r"^\s+gpu\s*=", body, re.M)]
    assert not hand, f"rules that size GPU jobs by hand (use ModelJobs): {hand}"
    for rule, body in model_rules.items():
        script = re.search(r'"\.\./scripts/(\w+\.py)"', body)
        assert script, rule
        assert "run_model_job(" in (REPO / "scripts" / script.group(1)).read_text(encoding="utf-8"), rule
    starters = {m for m, t in _modules().items() if {"autograde.grading.vllm_env.run_cli_in_vllm_env",
                                                       "autograde.grading.vllm_env.run_in_vllm_env"} & _imported(t)}
    assert starters <= {"autograde.pipeline.jobs"}, starters


INTERNAL_WORDS = (r"(?i)\bseed 00[0-9]\b", r"shared/seeds", r"(?i)\bissue #?[0-9]+", r"\bTODO\b", r"\bFIXME\b",
                  r"\bXXX\b")
"""Words of our development, not of the user's world: never in docstrings, help or messages (regular expressions)."""


def test_no_internal_names_in_user_text() -> None:
    import re

    bad = []
    for p in [*PACKAGE.rglob("*.py"), *(REPO / "scripts").glob("*.py"), *(REPO / "rules").glob("*.smk"),
              *(REPO / "config").rglob("*.yaml")]:
        text = p.read_text(encoding="utf-8")
        bad += [f"{p.relative_to(REPO)}: {m.group(0)!r}" for w in INTERNAL_WORDS for m in re.finditer(w, text)]
    assert not bad, bad


SHARED_OPTIONS = ("--config", "--threads", "--shard", "--digest")


def test_shared_cli_options_are_defined_once() -> None:
    """Options every command group shares are declared in autograde/cli/common.py, with one meaning each."""
    bad = []
    for p in (PACKAGE / "cli").glob("*.py"):
        if p.name == "common.py":
            continue
        text = p.read_text(encoding="utf-8")
        bad += [f"{p.name}: {o}" for o in SHARED_OPTIONS if f'add_argument("{o}"' in text]
    assert not bad, f"use add_config_option / add_threads_option / add_shard_options: {bad}"


def test_the_architecture_map_is_current() -> None:
    """docs/architecture.md (layers, the one place of each concept, every module, the cache and results layouts)
    is what tools/architecture.py generates from the package today."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, str(REPO / "tools" / "architecture.py"), "--check"], capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr


TEST_ROOT_FILES = {"conftest.py", "test_structure.py", "test_readme.py"}
"""Files at the top of tests/: the shared fixtures and the two checks of the repository as a whole."""
TEST_FOLDERS_BEYOND_THE_PACKAGE = {"support": "code the tests share (helpers, servers, fixture data)",
                                   "data": "small fixture files"}


def test_test_layout_mirrors_the_package() -> None:
    """tests/<package>/ holds the tests of autograde/<package>/ (every package has its folder, no other folder
    exists but the shared code and data), test files only (shared code goes to tests/support/), and no __init__.py
    (pytest imports test files by path: the same file name may appear in several folders)."""
    tests = REPO / "tests"
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert folders - packages <= set(TEST_FOLDERS_BEYOND_THE_PACKAGE), (
        f"test folders that mirror no package: {sorted(folders - packages - set(TEST_FOLDERS_BEYOND_THE_PACKAGE))}")
    assert packages <= folders, f"packages without a test folder: {sorted(packages - folders)}"
    root = {p.name for p in tests.glob("*.py")}
    assert root <= TEST_ROOT_FILES, f"move these into tests/<package>/ or tests/support/: {sorted(root - TEST_ROOT_FILES)}"
    for pkg in packages:
        stray = [p.name for p in (tests / pkg).glob("*.py") if not p.name.startswith("test_") and p.name != "conftest.py"]
        assert not stray, f"tests/{pkg}/ holds non-test modules (move them to tests/support/): {stray}"
    assert not list(tests.rglob("__init__.py")), "test folders are not packages (pytest's importlib import mode)"


TIER_CALLS = {"run_workflow": "workflow", "workflow_command": "workflow"}
TIER_FIXTURES = {"example_run": "workflow", "mini_run": "workflow", "nuggets_run": "workflow", "bank_run": "workflow"}


def test_every_test_is_in_its_tier() -> None:
    """A test that runs the workflow (directly, through a helper of its module, or by a shared finished run) is
    marked ``workflow`` (or ``cluster``), so `make test-fast` leaves it out."""
    bad = []
    for p in (REPO / "tests").rglob("test_*.py"):
        tree = parse(p)
        module_marks = {getattr(getattr(e, "attr", None), "__str__", lambda: "")() for e in walk(tree)
                        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Attribute)
                        and getattr(e.value, "attr", "") == "mark"}
        helpers = {f.name for f in tree.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("test_")
                   and any(isinstance(n, ast.Call) and getattr(n.func, "id", "") in TIER_CALLS for n in walk(f))}
        for fn in tree.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_")):
                continue
            marks = {d.attr for d in fn.decorator_list if isinstance(d, ast.Attribute)}
            calls = {getattr(n.func, "id", "") for n in walk(fn) if isinstance(n, ast.Call)}
            args = {a.arg for a in fn.args.args}
            needs = {TIER_CALLS[c] for c in calls & set(TIER_CALLS)} | {TIER_FIXTURES[a] for a in args & set(TIER_FIXTURES)}
            if calls & helpers:
                needs.add("workflow")
            if needs and not (needs & marks or "cluster" in marks or needs & module_marks):
                bad.append(f"{p.relative_to(REPO)}::{fn.name} (mark: {', '.join(sorted(needs))})")
    assert not bad, f"tests outside their tier: {bad}"


FEATURE_HUBS = ("autograde.workflow.context", "autograde.workflow.plan", "autograde.workflow.checks",
                "autograde.workflow.outputs", "autograde.workflow.leaderboards", "autograde.cli",
                "autograde.reports.site")
"""The hubs every feature plugs into: they loop over :data:`autograde.workflow.features.FEATURES` (the review site,
the reports feature's own hub, gets the features' hooks from autograde.workflow.site)."""


def _feature_packages() -> set[str]:
    return {pkg for layer, pkgs, _ in LAYERS if layer == "features" for pkg in pkgs}


def test_every_feature_package_is_registered() -> None:
    """Each package of the features layer defines one record (``<package>.feature.FEATURE``), registered once in
    the one list."""
    from autograde.workflow.features import FEATURES

    registered = {f.name for f in FEATURES}
    assert len(registered) == len(FEATURES), "two features share a name"
    missing = []
    for pkg in sorted(_feature_packages()):
        module = f"autograde.{pkg}.feature"
        assert (PACKAGE / pkg / "feature.py").is_file(), f"{pkg}: define its record in {pkg}/feature.py"
        import importlib

        record = importlib.import_module(module).FEATURE
        if record not in FEATURES:
            missing.append(pkg)
    assert not missing, f"register these features in autograde/workflow/features.py: {missing}"


def test_no_hub_names_a_feature() -> None:
    """A hub reaches features only through the one list: it imports no module of a feature package (the one list,
    autograde.workflow.features, is the only module that imports the records)."""
    features = _feature_packages()
    bad = {}
    for hub in FEATURE_HUBS:
        path = PACKAGE / Path(*hub.split(".")[1:])
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        named = sorted(m for m in runtime_imports(path) if package_of(m) in features and package_of(m) != package_of(hub))
        if named:
            bad[hub] = named
    assert not bad, f"hubs that name a feature (add a hook to autograde.core.feature.Feature instead): {bad}"


def test_every_model_rule_has_a_model_stage() -> None:
    """A rule sized by ModelJobs (its jobs run a model) is the rule of a registered model stage, so `autograde
    plan` plans it; every stage names a rule that exists."""
    from autograde.workflow.features import model_stages

    rules = _smk_rules()
    model_rules = {r for r, body in rules.items() if ".resources()" in body}
    stages = {s.rule for s in model_stages()}
    assert model_rules == stages, f"model rules without a stage: {sorted(model_rules - stages)}; stages without a " \
                                  f"rule: {sorted(stages - model_rules)}"


def test_the_site_reads_leaderboards_from_the_one_list() -> None:
    """The review site never looks for leaderboard files in folders: it takes the one list."""
    text = (PACKAGE / "reports" / "site.py").read_text(encoding="utf-8")
    assert "leaderboards_dir" not in text and "discover_assessors" not in text


def test_no_config_section_is_read_by_getattr() -> None:
    """A section is ``config.<section>`` (typed, checked by mypy), never ``getattr(config, "<section>", ...)``."""
    from autograde.config.model import Config

    sections = set(Config.model_fields)
    bad = []
    for m, tree in _modules().items():
        for node in walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr" and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant) and node.args[1].value in sections:
                bad.append(f"{m}:{node.lineno}")
    assert not bad, bad


def test_one_strict_base() -> None:
    """Every validated record derives from autograde.core.schema.Strict; nothing else forbids extra keys itself."""
    bad = [module_name(p) for p in PACKAGE.rglob("*.py") if module_name(p) != "autograde.core.schema"
           and 'extra="forbid"' in p.read_text(encoding="utf-8")]
    assert not bad, f"derive from autograde.core.schema.Strict instead: {bad}"


def test_rules_are_defined_unconditionally() -> None:
    """Every rule is defined whatever the config (its inputs come from the feature's functions); no private
    Snakemake API."""
    import re

    bad = []
    for p in (REPO / "rules").glob("*.smk"):
        text = p.read_text(encoding="utf-8")
        bad += [f"{p.name}: {m.group(0).strip()}" for m in re.finditer(r"^ +(rule|ruleorder)\b.*$", text, re.M)]
        if "rules._rules" in text or "workflow._rules" in text:
            bad.append(f"{p.name}: private Snakemake API")
    assert not bad, bad


def test_features_own_their_config_types() -> None:
    """No feature module types the experiment config as Any (mypy follows ``config.<section>``)."""
    features = _feature_packages() | {"workflow"}
    bad = [f"{module_name(p)}:{i}" for p in PACKAGE.rglob("*.py") if package_of(module_name(p)) in features
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "config: Any" in line]
    assert not bad, bad
