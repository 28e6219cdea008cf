"""slca's import graph, read from the source (no module is imported): no import circle, and each layer
imports only what the architecture lets it (docs/architecture.md#layers).

Every `import` and `from ... import` counts wherever it stands (a lazy import inside a function closes
a circle as surely as one at the top), except under `if TYPE_CHECKING:`, which never runs. An edge
goes to the most specific slca module named: `from slca.data import io` is an edge to slca.data.io,
`from slca.rewards import RewardRecord` one to the package slca.rewards.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "slca"

# Leaf helpers every layer may use (they import no other layer).
LEAF_HELPERS = ("slca.registry", "slca.lazy", "slca.fileio", "slca.safe_yaml", "slca.signals", "slca.device")
CORE = ("slca.toolcall", "slca.rewards", "slca.algos", "slca.sim", "slca.data")
# What runs stages or commands: none of it may be imported by the layers below.
STAGES_AND_ENTRIES = ("slca.backends", "slca.evaluation", "slca.curate", "slca.runcontext", "slca.pipeline",
                      "slca.report", "slca.tracking", "slca.launch", "slca.app", "slca.cli")
BACKENDS = ("slca.backends.local", "slca.backends.verl", "slca.backends.llamafactory")

# Known upward edges, each with the work that removes it. An entry here permits an edge; it asserts nothing.
ALLOWED: dict[tuple[str, str], str] = {
    # A verl run on SLURM needs verl's batch script: to move behind the backend contract.
    ("slca.launch.ray_job", "slca.backends.verl.slurm"): "issue 27 item 1",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _named(node: ast.AST, package: str) -> Iterator[str]:
    """Every dotted name the imports below `node` ask for, `if TYPE_CHECKING:` bodies left out."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for statement in child.orelse:
                yield from _named_in(statement, package)
            continue
        yield from _named_in(child, package)


def _named_in(node: ast.AST, package: str) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:  # relative: `from . import x` inside package p names p.x
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
    yield from _named(node, package)


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _slca_modules(named: Iterator[str], importer: str) -> set[str]:
    """The slca modules among dotted names (`slca.a.b.Name` -> slca.a.b); names outside slca are left out."""
    found = set()
    for target in named:
        while target and target not in MODULES:
            target = target.rpartition(".")[0]
        if target and target != importer:
            found.add(target)
    return found


NAMED = {name: list(_named(ast.parse(path.read_text(encoding="utf-8")), _package_of(name, path))) for name, path in MODULES.items()}
GRAPH = {name: sorted(_slca_modules(iter(named), name)) for name, named in NAMED.items()}


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _cycle() -> list[str] | None:
    """One import circle as [a, b, ..., a], or None (depth-first search, three colours)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in GRAPH[module]:
            if state.get(target) == 1:
                return [*path[path.index(target):], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[module] = 2
        return None

    for module in GRAPH:
        if module not in state and (found := visit(module)):
            return found
    return None


def _breaking(importers: tuple[str, ...], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{a} imports {b}" for a, targets in GRAPH.items() if _within(a, importers)
                  for b in targets if _within(b, forbidden) and (a, b) not in ALLOWED)


def test_the_reader_counts_imports_inside_functions_and_relative_ones_but_not_those_under_type_checking() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import slca.fileio\n"
        "from . import outputs\n"
        "from slca.rewards import RewardRecord\n"
        "if TYPE_CHECKING:\n    from slca.config.spec import Spec\nelse:\n    import slca.registry\n"
        "def later():\n    class Inner:\n        def method(self):\n            from slca.data import io\n"
    )
    named = _named(ast.parse(source), "slca.data")
    assert _slca_modules(named, "slca.data.prepare") == {"slca.fileio", "slca.data.outputs", "slca.rewards", "slca.registry", "slca.data.io"}
    assert len(MODULES) > 150 and set(GRAPH) == set(MODULES)


def test_no_module_of_slca_imports_itself_back_through_any_chain_of_imports() -> None:
    cycle = _cycle()
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_config_layer_imports_only_itself_and_the_leaf_helpers() -> None:
    outside = sorted(f"{a} imports {b}" for a, targets in GRAPH.items() if _within(a, ("slca.config",))
                     for b in targets if not _within(b, ("slca.config", *LEAF_HELPERS)) and (a, b) not in ALLOWED)
    assert outside == []


def test_the_core_and_the_rollout_loop_import_no_stage_backend_launcher_or_command_line() -> None:
    assert _breaking(CORE, ("slca.rollout", "slca.models", *STAGES_AND_ENTRIES)) == []
    assert _breaking(("slca.rollout",), ("slca.models", *STAGES_AND_ENTRIES)) == []


def test_no_backend_imports_another_backend_evaluation_or_what_runs_it() -> None:
    for backend in BACKENDS:
        others = tuple(b for b in BACKENDS if b != backend)
        assert _breaking((backend,), (*others, "slca.evaluation", "slca.curate", "slca.pipeline", "slca.app",
                                      "slca.cli", "slca.launch")) == []


def test_evaluation_imports_no_backend_and_nothing_that_runs_it() -> None:
    assert _breaking(("slca.evaluation",), ("slca.backends", "slca.pipeline", "slca.app", "slca.cli", "slca.launch")) == []


def test_only_the_command_line_and_the_launched_job_enter_the_application_and_nothing_imports_the_command_line() -> None:
    assert sorted(a for a, targets in GRAPH.items() if "slca.app" in targets and not _within(a, ("slca.cli", "slca.launch"))) == []
    assert sorted(a for a, targets in GRAPH.items() if "slca.cli" in targets) == []


def test_hydra_wandb_verl_and_llamafactory_are_imported_only_where_the_architecture_puts_them() -> None:
    where = {package: sorted(n for n, named in NAMED.items() if any(x == package or x.startswith(package + ".") for x in named))
             for package in ("hydra", "omegaconf", "wandb", "verl", "llamafactory")}
    assert not [n for n in where["hydra"] + where["omegaconf"] + where["wandb"] if _within(n, (*CORE, "slca.rollout"))]
    assert all(_within(n, ("slca.backends.verl",)) for n in where["verl"]) and where["verl"]
    assert all(_within(n, ("slca.backends.llamafactory",)) for n in where["llamafactory"])
