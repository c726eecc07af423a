"""A dependency-free progress bar for long runs, written to stderr.

The library never prints; this helper writes to a stream (``sys.stderr`` by default) only when a
caller asked for progress, or when ``enabled=None`` and the stream is a terminal. It redraws one
line with ``\\r`` on a terminal and writes plain lines (at most about every 10%) elsewhere, so
logs of batch jobs stay readable.

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
import time
from typing import IO, Any

__all__ = ["Progress"]


class Progress:
    """Counts finished items out of ``total`` and shows rate and ETA.

    Parameters
    ----------
    total : int
        Number of items.
    description : str
        Label shown before the counter.
    enabled : bool or None
        ``True`` always shows it, ``False`` never, ``None`` only when ``stream`` is a terminal.
    stream : file-like, optional
        Where to write (default ``sys.stderr``).
    """

    def __init__(self, total: int, description: str = "", *, enabled: bool | None = None, stream: IO[str] | None = None) -> None:
        self.total = int(total)
        self.description = description
        self.stream = stream if stream is not None else sys.stderr
        self.is_tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = self.is_tty if enabled is None else bool(enabled)
        self.done = 0
        self.failed = 0
        self.started = time.monotonic()
        self._last_draw = 0.0
        self._last_decile = -1

    def update(self, n: int = 1, *, failed: int = 0) -> None:
        """Record ``n`` more finished items (``failed`` of them with an error)."""
        self.done += n
        self.failed += failed
        if not self.enabled:
            return
        now = time.monotonic()
        if self.is_tty:
            if now - self._last_draw >= 0.1 or self.done >= self.total:
                self._last_draw = now
                self.stream.write("\r" + self.line())
                self.stream.flush()
        else:
            decile = (10 * self.done) // max(self.total, 1)
            if decile != self._last_decile:
                self._last_decile = decile
                self.stream.write(self.line() + "\n")
                self.stream.flush()

    def line(self) -> str:
        """The current status line."""
        elapsed = time.monotonic() - self.started
        width = 24
        filled = width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (width - filled)
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        failed = f", {self.failed} failed" if self.failed else ""
        label = f"{self.description}: " if self.description else ""
        return (
            f"{label}[{bar}] {self.done}/{self.total}{failed} "
            f"{elapsed:.1f}s elapsed, {rate:.1f}/s, eta {eta:.0f}s"
        )

    def close(self) -> None:
        """Finish the line (on a terminal)."""
        if self.enabled and self.is_tty:
            self.stream.write("\r" + self.line() + "\n")
            self.stream.flush()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
