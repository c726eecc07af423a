"""The package's compiled loops: one decorator, :func:`kernel`, and where their machine code is cached.

Every compiled loop of rfexplain is a numba function (Lam, Pitrou and Seibert (2015), "Numba: a
LLVM-based Python JIT compiler" [Lam15]) declared with ``@kernel``. Numba compiles a function the
first time it is called with a new combination of argument types and, with caching on, writes the
machine code to disk so that the next process loads it in milliseconds instead of compiling it
again. By default numba writes that cache into a ``__pycache__`` folder *beside the source*, which
for an installed package is inside ``site-packages/rfexplain``: files pip does not know about, left
behind on uninstall (an install that is replaced then leaves a folder that shadows the new one).
So the package never lets numba choose: the cache lives in a per-user folder,

- ``$RFEXPLAIN_CACHE_DIR`` when it is set;
- else the platform's cache folder: ``$XDG_CACHE_HOME/rfexplain`` or ``~/.cache/rfexplain`` on
  Linux, ``~/Library/Caches/rfexplain`` on macOS, ``%LOCALAPPDATA%\\rfexplain\\Cache`` on Windows;

with one sub-folder per source folder (numba's own naming), so that two installs of the package
(a regular one and an editable checkout, say) never read each other's code. When that folder cannot
be created or written, the loops are compiled in memory in every process (correct, only slower to
start) and a warning says why once.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numba

__all__ = ["kernel", "cache_dir", "CACHE_ENV"]

#: the environment variable that overrides the cache folder
CACHE_ENV = "RFEXPLAIN_CACHE_DIR"

F = TypeVar("F", bound=Callable[..., Any])
_unusable: list[str] = []


def cache_dir() -> Path:
    """The folder that holds rfexplain's compiled-code cache (module docstring)."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    home = Path.home()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
        return base / "rfexplain" / "Cache"
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / "rfexplain"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else home / ".cache") / "rfexplain"


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def kernel(function: F) -> F:
    """Compile ``function`` with numba (``nopython`` mode, the GIL released) and cache its machine
    code in :func:`cache_dir`, never inside the installed package."""
    dispatcher = numba.njit(nogil=True)(function)
    folder = cache_dir() / "numba"
    if not _writable(folder):
        if str(folder) not in _unusable:
            _unusable.append(str(folder))
            warnings.warn(
                f"rfexplain cannot write its compiled-code cache to {folder}; the compiled loops are "
                f"compiled again in every process (set ${CACHE_ENV} to a writable folder)",
                RuntimeWarning,
                stacklevel=2,
            )
        return dispatcher  # type: ignore[no-any-return]
    # numba picks the cache's locator when caching is enabled: with ``config.CACHE_DIR`` set, its
    # user-provided locator is the first that applies, so the cache goes there and nowhere else
    previous = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = str(folder)
    try:
        dispatcher.enable_caching()
    finally:
        numba.config.CACHE_DIR = previous
    return dispatcher  # type: ignore[no-any-return]
