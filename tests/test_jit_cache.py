"""The compiled loops' machine code is cached in a per-user folder, never inside the package
(a cache inside an installed package outlives its uninstall and shadows the next install)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import rfexplain
from rfexplain.core import jit


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
