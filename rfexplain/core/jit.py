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

inside it ``numba/<fingerprint>``, a folder per version of the compiled loops' code (a hash of
every ``*_kernels.py`` module's text, numba's and Python's versions and the package's folder),
with one sub-folder per source folder in it (numba's own naming). So two installs of the package
(a regular one and an editable checkout, say) never read each other's code, and no loop runs
stale code: numba keys its cache on the calling function's own source file only, so a loop
calling a loop of another module would otherwise keep the other module's old code after an edit
or an update of that module. When that folder cannot be created or written, the loops are
compiled in memory in every process (correct, only slower to start) and a warning says why once.

**The first run.** Compiling every loop takes about a minute of CPU, once per install. So that a
fresh install answers at once and no query's budget is spent compiling, queries use the compiled
loops only once they are in the cache (:func:`compiled_loops_ready`): until then the engines take
their uncompiled routes (the same answers; the SAT engine's full formula without its leaf-box
prefilter, the circuit engine's Python vote counter), and :func:`start_background_compilation`
compiles every loop in a separate process (``python -m rfexplain.warmup``, also run by
``rfexplain warmup``), which marks the cache ready when it is done. ``$RFEXPLAIN_JIT=wait`` asks
for the compiled loops at once instead: they are compiled in the process on first use (the
benchmarks and the tests use it, so that their routes never depend on the cache's state).
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numba

__all__ = [
    "kernel",
    "cache_dir",
    "code_cache_dir",
    "kernels_fingerprint",
    "compiled_loops_ready",
    "start_background_compilation",
    "mark_compiled_loops_ready",
    "CompilingInBackgroundWarning",
    "CACHE_ENV",
    "JIT_ENV",
]

#: the environment variable that overrides the cache folder
CACHE_ENV = "RFEXPLAIN_CACHE_DIR"
#: the environment variable that chooses when the compiled loops are used: ``background`` (the
#: default: once compiled by a background process) or ``wait`` (at once, compiled on first use)
JIT_ENV = "RFEXPLAIN_JIT"
JIT_MODES = ("background", "wait")
#: a background compilation whose lock is older than this is taken to have died
_LOCK_STALE_SECONDS = 900.0

F = TypeVar("F", bound=Callable[..., Any])


class CompilingInBackgroundWarning(RuntimeWarning):
    """The compiled loops are not in the cache yet: a background process compiles them, and the
    queries take the uncompiled routes meanwhile (said once per process)."""


_unusable: list[str] = []
_ready: list[bool] = []
_started: list[str] = []


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
    folder = code_cache_dir()
    if not _writable(folder):
        if str(folder) not in _unusable:
            _unusable.append(str(folder))
            warnings.warn(
                f"rfexplain cannot write its compiled-code cache to {folder}; the compiled loops are "
                f"compiled again in every process (set ${CACHE_ENV} to a writable folder)",
                RuntimeWarning,
                stacklevel=2,
            )
        return dispatcher  # type: ignore[return-value]
    # numba picks the cache's locator when caching is enabled: with ``config.CACHE_DIR`` set, its
    # user-provided locator is the first that applies, so the cache goes there and nowhere else
    config: Any = numba.config
    previous = config.CACHE_DIR
    config.CACHE_DIR = str(folder)
    try:
        dispatcher.enable_caching()
    finally:
        config.CACHE_DIR = previous
    return dispatcher  # type: ignore[return-value]


def _jit_mode() -> str:
    mode = os.environ.get(JIT_ENV, "background").strip().lower() or "background"
    if mode not in JIT_MODES:
        raise ValueError(f"${JIT_ENV} must be one of {list(JIT_MODES)}. Got {mode!r} instead.")
    return mode


@functools.lru_cache(maxsize=1)
def _fingerprint() -> str:
    """What the compiled code depends on: numba's and Python's versions, the package's folder and
    the text of every module of compiled loops."""
    return kernels_fingerprint(Path(__file__).resolve().parent.parent)


def kernels_fingerprint(package: Path) -> str:
    """A hash of numba's and Python's versions, ``package``'s folder and the text of every
    ``*_kernels.py`` module under it (the modules that hold the ``@kernel`` loops)."""
    digest = hashlib.sha256("\n".join([numba.__version__, sys.version, str(package)]).encode())
    for source in sorted(package.rglob("*_kernels.py")):
        digest.update(f"\n{source.relative_to(package).as_posix()}\n".encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


def code_cache_dir() -> Path:
    """The folder of this version of the compiled loops' machine code (module docstring)."""
    return cache_dir() / "numba" / _fingerprint()


def _stamp() -> Path:
    return code_cache_dir() / "ready"


def compiled_loops_ready() -> bool:
    """Whether the queries use the compiled loops now: always under ``$RFEXPLAIN_JIT=wait``, else
    once every loop of this install is in the cache (module docstring)."""
    if _ready or _jit_mode() == "wait":
        return True
    if _stamp().exists():
        _ready.append(True)
        return True
    return False


def mark_compiled_loops_ready() -> Path:
    """Record that every compiled loop of this install is in the cache (the background
    compilation's last step); returns the stamp file."""
    stamp = _stamp()
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(f"{time.time()}\n")
    return stamp


def start_background_compilation() -> bool:
    """Start compiling every loop in a separate process, unless they are ready, the cache folder
    is unusable, or a compilation is already running (a lock file in the cache folder; one
    process per install at a time). Returns whether this call started one; the first call of
    the process that starts one says so once, as a :class:`RuntimeWarning`."""
    if compiled_loops_ready() or _started:
        return False
    folder = code_cache_dir()
    if not _writable(folder):
        return False
    lock = folder / "compiling"
    try:
        if time.time() - lock.stat().st_mtime < _LOCK_STALE_SECONDS:
            _started.append(str(lock))
            return False
    except OSError:
        pass
    lock.write_text(f"{os.getpid()}\n")
    log_file = folder / "warmup.log"
    # the child imports this very package, wherever it was imported from
    site = str(Path(__file__).resolve().parent.parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (site, os.environ.get("PYTHONPATH")) if p))
    with open(log_file, "ab") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "rfexplain.warmup", "--lock", str(lock)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            env=env,
        )
    if lock.exists():  # not removed yet by a child already done: name it, for whoever waits or stops it
        lock.write_text(f"{child.pid}\n")
    _started.append(str(lock))
    warnings.warn(
        "rfexplain is compiling its fast loops in the background (once per install, about a minute; "
        f"log: {log_file}); until they are ready, queries take the uncompiled route (same answers, "
        f"slower on large forests). Run `rfexplain warmup` to wait for it, or set ${JIT_ENV}=wait.",
        CompilingInBackgroundWarning,
        stacklevel=2,
    )
    return True
