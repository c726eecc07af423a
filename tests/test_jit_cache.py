"""The compiled loops' machine code is cached in a per-user folder, never inside the package
(a cache inside an installed package outlives its uninstall and shadows the next install)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

import rfexplain
from rfexplain.core import jit
from tests.engine_contract import EngineContract


def _cache_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc")]


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(jit.CACHE_ENV, str(tmp_path / "here"))
    assert jit.cache_dir() == tmp_path / "here"
    monkeypatch.delenv(jit.CACHE_ENV)
    if sys.platform.startswith("linux"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert jit.cache_dir() == tmp_path / "xdg" / "rfexplain"


def test_compiled_code_is_cached_outside_the_package(tmp_path):
    package = Path(rfexplain.__file__).parent
    before = set(_cache_files(package))
    script = (
        "import numpy as np\n"
        "from rfexplain.core.hash_kernels import place\n"
        "table = np.full(8, -1, dtype=np.int64)\n"
        "place(table, 3, 7)\n"
        "assert table[3] == 7\n"
    )
    env = dict(os.environ, **{jit.CACHE_ENV: str(tmp_path / "cache")})
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=tmp_path)
    assert set(_cache_files(package)) == before
    assert _cache_files(tmp_path / "cache"), "the kernel's machine code was not cached in the cache folder"


def test_an_unwritable_cache_folder_compiles_in_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    package = Path(rfexplain.__file__).parent
    before = set(_cache_files(package))
    script = (
        "import warnings, numpy as np\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from rfexplain.core.hash_kernels import place\n"
        "assert any('compiled-code cache' in str(w.message) for w in caught), caught\n"
        "table = np.full(8, -1, dtype=np.int64)\n"
        "place(table, 3, 7)\n"
        "assert table[3] == 7\n"
    )
    env = dict(os.environ, **{jit.CACHE_ENV: str(blocker / "cache")})
    subprocess.run([sys.executable, "-c", script], check=True, env=env, cwd=tmp_path)
    assert set(_cache_files(package)) == before


def _iris_model():
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    data = load_iris()
    return data, RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0).fit(data.data, data.target)


def test_before_the_loops_are_compiled_queries_take_the_uncompiled_route(monkeypatch):
    """A fresh install: no query calls a compiled loop (nothing compiles inside a budget), one
    background compilation is asked for, and the answers are the compiled route's."""
    from rfexplain.sat import engine as sat_engine
    from rfexplain.sat import point_kernels
    from rfexplain.sat.deciders import leaves

    data, model = _iris_model()
    compiled_answers = []
    with_loops = rfexplain.Explainer(model, engine="sat", vote="hard")
    for row in data.data[::30]:
        d = with_loops.explain(row)
        compiled_answers.append((d.sufficient_reason().features, sorted(r.features for r in d.necessary_reasons())))

    monkeypatch.setenv(jit.CACHE_ENV, "/nonexistent-is-never-read")
    monkeypatch.setenv(jit.JIT_ENV, "background")
    monkeypatch.setattr(jit, "_ready", [])
    monkeypatch.setattr(jit, "compiled_loops_ready", lambda: False)
    asked = []
    monkeypatch.setattr(jit, "start_background_compilation", lambda: asked.append(1) or True)

    def refuse(*args, **kwargs):
        raise AssertionError("a compiled loop was called before the loops were ready")

    for module in (leaves, sat_engine):  # the deciders that run compiled loops
        for name in ("warm_up", "InstanceLeaves"):
            monkeypatch.setattr(module, name, refuse)
    for name in ("hard_winner", "reduce_hard_point", "reduce_soft_point"):
        monkeypatch.setattr(point_kernels, name, refuse)
    for vote in ("hard", "soft"):
        explainer = rfexplain.Explainer(model, engine="sat", vote=vote)
        assert not explainer.engine.prefilter
        answers = []
        for row in data.data[::30]:
            d = explainer.explain(row)
            answers.append((d.sufficient_reason().features, sorted(r.features for r in d.necessary_reasons())))
        if vote == "hard":
            assert answers == compiled_answers
    assert asked


def test_circuit_engine_uses_the_python_core_until_the_loops_are_ready(monkeypatch):
    from rfexplain.circuit.engine import CircuitEngine

    _, model = _iris_model()
    forest = rfexplain.Forest.from_sklearn(model, vote="hard")
    monkeypatch.setattr(jit, "compiled_loops_ready", lambda: False)
    monkeypatch.setattr(jit, "start_background_compilation", lambda: True)
    assert CircuitEngine(forest).formulas.core == "python"
    monkeypatch.setattr(jit, "compiled_loops_ready", lambda: True)
    assert CircuitEngine(forest).formulas.core == "compact"


@pytest.mark.slow
def test_the_background_compilation_fills_the_cache_and_marks_it_ready(tmp_path):
    """The real thing, in a fresh cache folder: ``python -m rfexplain.warmup`` compiles every
    loop, then a new process finds them ready (and loads them from the cache)."""
    env = dict(os.environ, **{jit.CACHE_ENV: str(tmp_path / "cache"), jit.JIT_ENV: "background"})
    check = "from rfexplain.core import jit; print(jit.compiled_loops_ready())"
    before = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, check=True)
    assert before.stdout.strip() == "False"
    subprocess.run([sys.executable, "-m", "rfexplain.warmup"], env=env, check=True, capture_output=True)
    after = subprocess.run([sys.executable, "-c", check], env=env, capture_output=True, text=True, check=True)
    assert after.stdout.strip() == "True"
    assert _cache_files(tmp_path / "cache")


def test_rfexplain_warmup_compiles_and_the_background_notice_is_one_line(monkeypatch, capsys):
    import warnings

    import rfexplain.warmup
    from rfexplain import cli

    def fake_compile_all(report):
        warnings.warn("compiling in the background", jit.CompilingInBackgroundWarning, stacklevel=1)
        report("a step", 1.25)
        return 1.25

    monkeypatch.setattr(rfexplain.warmup, "compile_all", fake_compile_all)
    assert cli.main(["warmup"]) == 0
    out, err = capsys.readouterr()
    assert "a step: 1.2 CPU s" in out and "ready (1.2 CPU s)" in out
    assert err == "rfexplain: note: compiling in the background\n"


class _BeforeTheLoopsAreCompiled:
    """A fresh install before its background compilation is done: the SAT engine answers on the
    routes that call no compiled loop (the full formula, the greedy reduction in Python)."""

    @pytest.fixture(autouse=True, scope="class")
    @classmethod
    def _loops_not_compiled(cls):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(jit, "compiled_loops_ready", lambda: False)
            patch.setattr(jit, "start_background_compilation", lambda: False)
            yield


class TestSatEngineBeforeTheLoopsAreCompiled(_BeforeTheLoopsAreCompiled, EngineContract):
    engine = "sat"
    max_examples = 50


class TestSatEngineSoftVoteBeforeTheLoopsAreCompiled(_BeforeTheLoopsAreCompiled, EngineContract):
    engine = "sat"
    vote: ClassVar[str] = "soft"
    max_examples = 40


def _cached_at(package_parent: Path, cache: Path) -> str:
    """Where a kernel that calls kernels of another module (``point_kernels`` calls
    ``bound_kernels``) caches its machine code, in a fresh process importing the package from
    ``package_parent``."""
    script = (
        "from rfexplain.sat import point_kernels\n"
        "print(point_kernels.__file__)\n"
        "print(point_kernels.hard_winner._cache._cache_path)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(package_parent), **{jit.CACHE_ENV: str(cache)})
    done = subprocess.run(
        [sys.executable, "-c", script], check=True, env=env, capture_output=True, text=True, cwd=package_parent
    )
    source, path = done.stdout.split()
    assert source.startswith(str(package_parent)), source  # the copy, not the package under test
    return path


def test_editing_a_called_kernels_module_moves_every_kernels_cache(tmp_path):
    """numba keys a loop's cache on its own source file only: a loop calling a loop of another
    module would keep that module's old machine code after the module changes. The cache folder is
    therefore per version of every kernel module's text (``jit.kernels_fingerprint``)."""
    import shutil

    copy = tmp_path / "site" / "rfexplain"
    shutil.copytree(Path(rfexplain.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = _cached_at(copy.parent, tmp_path / "cache")
    assert before.startswith(str(tmp_path / "cache"))
    assert _cached_at(copy.parent, tmp_path / "cache") == before  # nothing changed: the same code
    callee = copy / "sat" / "bound_kernels.py"
    callee.write_text(callee.read_text() + "\n# edited\n")
    after = _cached_at(copy.parent, tmp_path / "cache")
    assert after != before, "an edit of bound_kernels.py left point_kernels' cache where it was"
    assert jit.kernels_fingerprint(copy) != jit.kernels_fingerprint(Path(rfexplain.__file__).parent)


def test_every_module_with_compiled_loops_is_a_kernels_module():
    """The cache's fingerprint reads the ``*_kernels.py`` modules: every ``@kernel`` is in one."""
    package = Path(rfexplain.__file__).parent
    holders = {p.name for p in package.rglob("*.py") if "@kernel" in p.read_text() and p.name != "jit.py"}
    assert holders and all(name.endswith("_kernels.py") for name in holders), holders
