"""The package's import layers, read from the source with :mod:`ast` (no import is executed).

The layers (``docs/architecture.md`` draws them; every module of the package belongs to one, and
every layer has a row in :data:`ALLOWED`):

- ``core`` (forest, reasons, budgets, errors, query table, batch records) imports nothing else of
  the package;
- ``engines`` (the interface and the registry) imports only ``core``;
- the SAT engine (``sat``), the circuit engine (``circuit``) and the oracle (``oracle``) import
  only ``core`` and ``engines``, never each other: their agreement is evidence only because they
  are independent; inside the circuit engine, its compilers import neither its algorithms
  (``circuit.logic``) nor its engine module, and the algorithms not the engine module;
- the comparators (``comparators``) may use the circuit engine's compilers, nothing else;
- the verifier imports only ``core`` and its own compiled search (``verify_kernels``, which
  imports only the ``@kernel`` decorator, ``core.jit``): it checks engines, so it must not share
  their code;
- the pipeline reader (``pipelines``) imports only ``core``: it builds a Forest, engines never
  see a pipeline;
- the progress bar (``progress``) and the dataset loader (``datasets``) import only ``core``;
- the pictures, report and frames (``viz``) use the core (batch records included), the verifier
  and the progress bar but never the facade, which delegates to them (``Decision.plot``,
  ``Explainer.report``); the core reaches its renderers through ``core.display``'s registry, never
  by importing ``viz``;
- the facade (``decision``, then ``batch``, then ``explainer``, each importing only those before
  it) and the front ends (``cli``, ``demo``, ``pipeline_demo``, ``__main__``, the package's
  ``__init__``) use ``core``, ``engines``, ``pipelines``, the verifier, the progress bar and
  ``viz``, and reach the engines through the registry, never by importing ``sat``, ``circuit``,
  ``oracle`` or ``comparators``; the warm-up command (``warmup``) compiles every engine's loops
  and may import anything;
- nothing imports ``experiments``;
- no import cycle, counting the imports deferred into functions and the package ``__init__``
  modules that an import loads on the way.
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


def _loaded(module: str) -> set[str]:
    """What importing ``module``'s imports loads: each imported module and the package
    ``__init__`` modules above it (``import rfexplain.viz.plot`` runs ``rfexplain/viz/__init__.py``
    first), except the packages ``module`` itself sits in, which Python has loaded before it."""
    own = {module.rsplit(".", k)[0] for k in range(module.count(".") + 1)}
    found: set[str] = set()
    for imported in _imports(module) & set(MODULES):
        parts = imported.split(".")
        found.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
    return {name for name in found if name in MODULES} - own


ENGINE_LAYERS = {"sat", "circuit", "oracle"}
#: What the facade and the front ends use: engines only through ``engines`` (the registry).
FACADE_USES = {"core", "engines", "pipelines", "verify", "progress", "viz"}
FACADE = {"decision", "batch", "explainer"}
#: Per layer (a subpackage, or a top-level module), the layers (or single modules, by their full
#: name) it may import; every layer imports its own modules.
ALLOWED: dict[str, set[str]] = {
    "core": {"core"},
    "engines": {"core", "engines"},
    "sat": {"core", "engines", "sat"},
    "circuit": {"core", "engines", "circuit"},
    "oracle": {"core", "engines", "oracle"},
    "comparators": {"core", "circuit", "comparators"},
    "verify": {"core", "verify_kernels"},
    # the verifier's compiled search: only the decorator that compiles it
    "verify_kernels": {"rfexplain.core.jit"},
    # pipelines read scikit-learn preprocessing into a Forest: the core only, no engine
    "pipelines": {"core", "pipelines"},
    "progress": {"core"},
    "datasets": {"core"},
    # plots, report, frames: the core (batch records are core values), the verifier and the
    # progress bar, never the facade (the facade delegates to them)
    "viz": {"core", "verify", "progress", "viz"},
    # the facade, in order: a Decision, the batch runner (which makes Decisions), the Explainer
    "decision": FACADE_USES | {"decision"},
    "batch": FACADE_USES | {"decision", "batch"},
    "explainer": FACADE_USES | {"decision", "batch", "explainer"},
    # the regression facade: a band's classifier explained by the classification facade
    "regression": FACADE_USES | FACADE | {"regression"},
    # front ends
    "__init__": FACADE_USES | FACADE | {"regression"},
    "demo": FACADE_USES | FACADE | {"datasets", "demo"},
    "pipeline_demo": FACADE_USES | FACADE | {"datasets", "pipeline_demo"},
    "cli": FACADE_USES | FACADE | {"datasets", "demo", "pipeline_demo", "warmup", "cli", "regression"},
    "__main__": {"cli"},
    # compiles every engine's loops into the cache (``rfexplain warmup``): anything
    "warmup": {_layer(m) for m in MODULES},
}


def _allowed(module: str, imported: str) -> bool:
    allowed = ALLOWED[_layer(module)]
    return _layer(imported) in allowed or imported in allowed


def test_every_module_has_a_row() -> None:
    """A new top-level module or subpackage must be placed in the layers before it can import."""
    assert {_layer(m) for m in MODULES} - set(ALLOWED) == set()


def test_every_module_respects_its_layer() -> None:
    wrong = []
    for module in MODULES:
        for imported in _imports(module):
            if imported.split(".")[0] == "experiments" or not _allowed(module, imported):
                wrong.append((module, imported))
    assert wrong == []


def test_the_circuit_engine_is_layered() -> None:
    """Compilers, then the algorithms on their circuits, then the engine module."""
    below = {"rfexplain.circuit.compilers": ("rfexplain.circuit.logic", "rfexplain.circuit.engine")}
    below["rfexplain.circuit.logic"] = ("rfexplain.circuit.engine",)
    wrong = [
        (module, imported)
        for module in MODULES
        for part, above in below.items()
        if module.startswith(part + ".")
        for imported in _imports(module)
        if imported.startswith(above)
    ]
    assert wrong == []


def test_the_sat_engine_is_layered() -> None:
    """The deciders, then the schedulers that ask them (the race, then the portfolio), then the
    search, then the engine module: no decider imports a scheduler or another decider
    (``leaves``, what they all read, and ``base``, what they answer, are shared; the climb reads
    the reduced CNF's cell ranges); the one loop (``scheduler``) knows no decider; the race
    knows the deciders it races and not the portfolio; and none of them imports the search or
    the engine."""
    deciders = "rfexplain.sat.deciders."
    shared = {deciders + name for name in ("base", "leaves")} | {deciders[:-1]}
    racing = {deciders + name for name in ("boxes", "cliques", "climb", "scheduler")}
    allowed = {
        deciders + "climb": {deciders + "reduced_cnf"},
        deciders + "scheduler": set(),
        deciders + "race": racing,
    }
    wrong = []
    for module in MODULES:
        if not module.startswith(deciders) or module == deciders + "portfolio":
            continue
        for imported in _imports(module):
            if imported.startswith(("rfexplain.sat.search", "rfexplain.sat.engine")):
                wrong.append((module, imported))
            elif imported.startswith(deciders) and imported not in shared | allowed.get(module, set()) | {module}:
                wrong.append((module, imported))
    assert wrong == []


#: Inside the batch runner and the command line, per module, the modules of its own package it
#: may import (the package ``__init__`` and ``__main__`` re-export and run them, and may import any).
INSIDE: dict[str, dict[str, set[str]]] = {
    "rfexplain.batch": {
        # a worker's task, then the pool that runs the tasks and the checks before any work
        "worker": set(),
        "pool": {"worker"},
        "plan": {"worker"},
        "runner": {"plan", "pool", "worker"},
        # records as text, then the resumable output file that streams them
        "formats": set(),
        "streaming": {"formats"},
    },
    "rfexplain.cli": {
        "parser": set(),
        "options": set(),
        "inputs": {"options"},
        "models": {"inputs", "options"},
        "commands": {"models", "options", "regression_command"},
        "regression_command": {"options"},
        "batch_command": {"models", "options", "regression_command"},
        "dispatch": {"parser", "commands", "batch_command"},
    },
}


def test_the_batch_runner_and_the_command_line_are_layered() -> None:
    """Every module of ``batch`` and ``cli`` has a row of :data:`INSIDE` and imports only the
    modules of its package its row names: a worker's task knows nothing of the pool that runs it,
    the output formats nothing of the runner, each command module nothing of the others."""
    wrong = []
    for package, rows in INSIDE.items():
        own = {m for m in MODULES if m.startswith(package + ".")} - {package + ".__main__"}
        assert {m.rpartition(".")[2] for m in own} == set(rows), package
        for module in own:
            allowed = {f"{package}.{name}" for name in rows[module.rpartition(".")[2]]} | {module}
            for imported in _imports(module):
                if (imported == package or imported.startswith(package + ".")) and imported not in allowed:
                    wrong.append((module, imported))
    assert wrong == []


def test_the_engines_do_not_import_each_other() -> None:
    """Stated on its own, since it is the point of having two engines and an oracle."""
    for module in MODULES:
        layer = _layer(module)
        if layer in ENGINE_LAYERS:
            others = {_layer(imported) for imported in _imports(module)} & (ENGINE_LAYERS - {layer})
            assert others == set(), module


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """A cycle of ``graph`` (its modules in order, the first repeated at the end), or ``[]``."""
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
    return cycle


def test_no_import_cycle() -> None:
    # an import loads the package __init__ modules above the imported module too (the edges a
    # deferred import into ``rfexplain.viz.plot`` adds to ``rfexplain.viz`` and everything its
    # __init__ imports); the packages a module sits in were loaded before it, which is how Python
    # loads a package, not a cycle of the code
    assert _cycle({module: _loaded(module) for module in MODULES}) == []


def test_the_cycle_check_sees_package_inits() -> None:
    """A loop closed only through a package's ``__init__`` (as decision -> viz.plot, then
    viz/__init__ -> viz.frames -> batch -> decision was) is found."""
    assert "rfexplain.viz" in _loaded("rfexplain.decision")
    assert "rfexplain.viz.plot" in _loaded("rfexplain.decision")
    assert "rfexplain.sat" not in _loaded("rfexplain.sat.engine")
    graph = {module: _loaded(module) for module in MODULES}
    graph["rfexplain.viz.frames"] = graph["rfexplain.viz.frames"] | {"rfexplain.batch"}
    assert {"rfexplain.decision", "rfexplain.viz", "rfexplain.viz.frames", "rfexplain.batch"} <= set(_cycle(graph))


def test_the_layer_check_can_fail() -> None:
    """The checker sees relative, absolute and deferred imports (so a clean result means something)."""
    assert "rfexplain.core.forest" in _imports("rfexplain.explainer")
    assert "rfexplain.engines.base" in _imports("rfexplain.sat.engine")
    assert any(_layer(m) == "circuit" for m in _imports("rfexplain.comparators.sdd"))


def test_no_module_passes_800_lines() -> None:
    """Small modules with one job: no module of the package is longer than 800 lines."""
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > 800}
    assert not long, f"modules over 800 lines: {long}"
