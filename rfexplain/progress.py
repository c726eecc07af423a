"""Progress bars for long runs: :mod:`tqdm`, a text bar, or a widget in a Jupyter notebook.

The library never prints; a bar is shown only when a caller asked for progress, or when
``enabled=None`` and the stream is a terminal or a Jupyter notebook's stderr (:func:`in_notebook`).
In a notebook with ``ipywidgets`` the bar is tqdm's widget; without it, tqdm's text bar, which the
notebook shows as output. tqdm is imported when a bar is made, never at import, and never through
``tqdm.auto``, which warns ``TqdmWarning: IProgress not found`` in a notebook without ipywidgets.

:class:`Progress` counts the instances of a batch; :class:`StepProgress` follows the steps one
long query reports through its :class:`~rfexplain.core.budget.Budget` (the features the SAT
engine's deletion loop has decided), and appears only once the query has run
:data:`STEP_BAR_DELAY` seconds, so quick queries print nothing.

Example
-------
>>> import io
>>> out = io.StringIO()
>>> with Progress(3, "explaining", enabled=True, stream=out) as bar:
...     for _ in range(3):
...         bar.update()
>>> "3/3" in out.getvalue()
True
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from rfexplain.core.budget import Budget

__all__ = ["Progress", "StepProgress", "STEP_BAR_DELAY", "in_notebook"]

#: Seconds a query runs before its step bar appears.
STEP_BAR_DELAY = 1.0


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (JupyterLab, Notebook, VS Code, Colab), where
    stderr is not a terminal but its output is shown; not a Qt console or Spyder, as tqdm decides."""
    if "ipykernel.zmqshell" not in sys.modules:
        return False
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    name = type(shell).__name__.lower()
    return shell is not None and "qt" not in name and "spyder" not in name


def _shown(stream: IO[str], enabled: bool | None) -> bool:
    """Whether a bar is drawn: as asked, or (``None``) when ``stream`` is a terminal, or is stderr
    in a Jupyter notebook."""
    if enabled is not None:
        return bool(enabled)
    return bool(getattr(stream, "isatty", lambda: False)()) or (stream is sys.stderr and in_notebook())


def _bar(stream: IO[str], **options: Any) -> Any:
    """A tqdm bar on ``stream``: the notebook widget for stderr in a notebook with ipywidgets,
    the text bar otherwise (no warning either way)."""
    if stream is sys.stderr and in_notebook():
        try:
            importlib.import_module("ipywidgets")
        except ImportError:
            pass
        else:
            from tqdm.notebook import tqdm as notebook_tqdm  # type: ignore[import-untyped]

            return notebook_tqdm(**options)
    from tqdm.std import tqdm  # type: ignore[import-untyped]

    return tqdm(file=stream, **options)


class Progress:
    """Counts finished items out of ``total`` (and failed ones) on a tqdm bar.

    Parameters
    ----------
    total : int
        Number of items.
    description : str
        Label shown before the bar.
    enabled : bool or None
        ``True`` always shows it, ``False`` never, ``None`` only when ``stream`` is a terminal.
    stream : file-like, optional
        Where to write (default ``sys.stderr``).
    """

    def __init__(
        self, total: int, description: str = "", *, enabled: bool | None = None, stream: IO[str] | None = None
    ) -> None:
        self.total = int(total)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _shown(self.stream, enabled)
        self.done = 0
        self.failed = 0
        self._bar = _bar(
            self.stream,
            total=self.total,
            desc=description or None,
            disable=not self.enabled,
            unit="instance",
            dynamic_ncols=True,
        )

    def update(self, n: int = 1, *, failed: int = 0) -> None:
        """Record ``n`` more finished items (``failed`` of them with an error)."""
        self.done += n
        self.failed += failed
        if failed:
            self._bar.set_postfix(failed=self.failed, refresh=False)
        self._bar.update(n)

    def close(self) -> None:
        """Finish the bar."""
        self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StepProgress:
    """A bar over the steps a long query reports (:meth:`~rfexplain.core.budget.Budget.step`),
    drawn from the first step after ``delay`` seconds on.

    Parameters
    ----------
    description : str
        Label shown before the bar (the query and engine).
    enabled : bool or None
        ``True`` always draws it once ``delay`` has passed, ``False`` never, ``None`` only when
        ``stream`` is a terminal.
    stream : file-like, optional
        Where to write (default ``sys.stderr``).
    delay : float, optional
        Seconds before the bar appears (default :data:`STEP_BAR_DELAY`).
    """

    def __init__(
        self,
        description: str,
        *,
        enabled: bool | None = None,
        stream: IO[str] | None = None,
        delay: float | None = None,
    ) -> None:
        self.description = description
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _shown(self.stream, enabled)
        self.delay = STEP_BAR_DELAY if delay is None else delay
        self.started = time.monotonic()
        self._bar: Any = None

    def step(self, done: int, total: int) -> None:
        """Show ``done`` of ``total`` steps (a bar is made once ``delay`` has passed)."""
        if not self.enabled:
            return
        if self._bar is None:
            if time.monotonic() - self.started < self.delay:
                return
            self._bar = _bar(self.stream, total=total, desc=self.description, unit="feature", dynamic_ncols=True)
        self._bar.total = total
        self._bar.n = done
        self._bar.refresh()

    def close(self) -> None:
        """Finish the bar, if one was drawn."""
        if self._bar is not None:
            self._bar.close()

    @contextmanager
    def following(self, budget: Budget) -> Iterator[StepProgress]:
        """Follow the steps reported to ``budget`` inside the block, then close the bar."""
        budget.on_step = self.step
        try:
            yield self
        finally:
            budget.on_step = None
            self.close()
