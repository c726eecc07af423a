"""Progress bars for long runs: :mod:`tqdm` (``tqdm.auto``: a terminal bar, or a widget in notebooks).

The library never prints; a bar is shown only when a caller asked for progress, or when
``enabled=None`` and the stream is a terminal.

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

import sys
from typing import IO

from tqdm.auto import tqdm  # type: ignore[import-untyped]

__all__ = ["Progress"]


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
        is_tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = is_tty if enabled is None else bool(enabled)
        self.done = 0
        self.failed = 0
        self._bar = tqdm(
            total=self.total,
            desc=description or None,
            file=self.stream,
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
