"""The package's import layers, read from the source with :mod:`ast` (no import is executed).

The layers (``docs/architecture.md`` draws them):

- ``core`` (forest, reasons, budgets, errors, query table) imports nothing else of the package;
- ``engines`` (the interface and the registry) imports only ``core``;
- the SAT engine (``sat``), the circuit engine (``circuit``) and the oracle (``oracle``) import
  only ``core`` and ``engines``, never each other: their agreement is evidence only because they
  are independent;
- the comparators (``comparators``) may use the circuit engine's compilers, nothing else;
- the verifier imports only ``core`` and its own compiled search (``verify_kernels``, which
  imports nothing of the package): it checks engines, so it must not share their code;
- the pipeline reader (``pipelines``) imports only ``core``: it builds a Forest, engines never
  see a pipeline;
- the pictures, report and frames (``viz``) use the core, the verifier, the progress bar and batch
  records but never the facade, which delegates to them (``Decision.plot``, ``Explainer.report``);
  the core reaches its renderers through ``core.display``'s registry, never by importing ``viz``;
- the facade and front ends may use anything, and nothing imports ``experiments``;
- no import cycle, counting the imports deferred into functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

import rfexplain

ROOT = Path(rfexplain.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in ROOT.rglob("*.py")}


def _imports(module: str) -> set[str]:
    """Every module of the package (or ``experiments``) that ``module`` imports, anywhere in it."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.add(full if full in MODULES else target)
    return {name for name in found if name in MODULES or name.split(".")[0] == "experiments"}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


ENGINE_LAYERS = {"sat", "circuit", "oracle"}
ALLOWED: dict[str, set[str]] = {
    "core": {"core"},
    "engines": {"core", "engines"},
    "sat": {"core", "engines", "sat"},
    "circuit": {"core", "engines", "circuit"},
    "oracle": {"core", "engines", "oracle"},
    "comparators": {"core", "circuit", "comparators"},
    "verify": {"core", "verify_kernels"},
    # the verifier's compiled search: nothing of the package
    "verify_kernels": set(),
    # pipelines read scikit-learn preprocessing into a Forest: the core only, no engine
    "pipelines": {"core", "pipelines"},
    # front ends (plots, report, frames): may use the verifier, the progress bar and batch
    # records, never the facade (the facade delegates to them)
    "viz": {"core", "engines", "verify", "progress", "batch", "viz"},
}


def test_every_module_respects_its_layer() -> None:
    wrong = []
    for module in MODULES:
        allowed = ALLOWED.get(_layer(module))
        for imported in _imports(module):
            if imported.split(".")[0] == "experiments":
                wrong.append((module, imported))
            elif allowed is not None and _layer(imported) not in allowed:
                wrong.append((module, imported))
    assert wrong == []


def test_the_engines_do_not_import_each_other() -> None:
    """Stated on its own, since it is the point of having two engines and an oracle."""
    for module in MODULES:
        layer = _layer(module)
        if layer in ENGINE_LAYERS:
            others = {_layer(imported) for imported in _imports(module)} & (ENGINE_LAYERS - {layer})
            assert others == set(), module


def test_no_import_cycle() -> None:
    graph = {module: _imports(module) & set(MODULES) for module in MODULES}
    # a package's __init__ is imported before its submodules: an edge from a submodule to its
    # own ancestor package is how Python loads it, not a cycle of the code
    for module, targets in graph.items():
        targets -= {t for t in targets if module.startswith(t + ".")}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(module: str, stack: list[str]) -> bool:
        state[module] = 1
        stack.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycle.extend(stack[stack.index(target) :] + [target])
                return True
            if target not in state and visit(target, stack):
                return True
        stack.pop()
        state[module] = 2
        return False

    for module in sorted(graph):
        if module not in state and visit(module, []):
            break
    assert cycle == []


def test_the_layer_check_can_fail() -> None:
    """The checker sees relative, absolute and deferred imports (so a clean result means something)."""
    assert "rfexplain.core.forest" in _imports("rfexplain.explainer")
    assert "rfexplain.engines.base" in _imports("rfexplain.sat.engine")
    assert any(_layer(m) == "circuit" for m in _imports("rfexplain.comparators.sdd"))
