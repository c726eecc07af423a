"""Arrays that grow in place, for the compact core's largest arrays (:mod:`.dd_core`).

A numpy array grows by allocating a larger one and copying: while it copies, the old and the new
array are both resident, which for the largest pools of a vote graph is gigabytes more at the
moment it doubles. :class:`GrowableArray` keeps its rows in an anonymous private memory map
instead and grows it with ``mmap.resize``, which on Linux is ``mremap``: the pages stay where they
are, nothing is copied, peak resident memory does not change, and the new rows read as zeros.
Where memory maps cannot be remapped (or the platform has no anonymous private maps) it falls
back to a grown copy.
"""

from __future__ import annotations

import mmap

import numpy as np

__all__ = ["GrowableArray"]


def _anonymous_map(nbytes: int) -> mmap.mmap | None:
    flags = getattr(mmap, "MAP_PRIVATE", None), getattr(mmap, "MAP_ANONYMOUS", None)
    if None in flags:
        return None
    try:
        mapped = mmap.mmap(-1, nbytes, flags=flags[0] | flags[1])  # type: ignore[operator]
    except (OSError, ValueError):
        return None
    _huge_pages(mapped)
    return mapped


def _huge_pages(mapped: mmap.mmap) -> None:
    """Ask for transparent huge pages, as numpy does for its large arrays: the product reads its
    arrays at random, and 4 KiB pages cost it TLB misses."""
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is not None:
        try:
            mapped.madvise(advice)
        except OSError:  # the kernel has no transparent huge pages
            pass


class GrowableArray:
    """``rows`` rows of ``cols`` items (a 1-d array when ``cols`` is 0) of ``dtype``, zeros at
    first, grown by :meth:`grow` without a copy where the platform allows (``in_place``).

    :meth:`view` gives the rows as a numpy array; every view must be dropped before :meth:`grow`
    (a mapped buffer cannot be resized while views of it exist: it would then be copied)."""

    def __init__(self, dtype: type | np.dtype, rows: int, cols: int = 0, *, in_place: bool = True) -> None:
        self.dtype = np.dtype(dtype)
        self.cols = cols
        self.rows = rows
        #: growths done by remapping (the others copied)
        self.remapped = 0
        self._map = _anonymous_map(self._nbytes(rows)) if in_place else None
        self._array = None if self._map is not None else np.zeros(self._shape(rows), self.dtype)

    def _shape(self, rows: int) -> tuple[int, ...]:
        return (rows, self.cols) if self.cols else (rows,)

    def _nbytes(self, rows: int) -> int:
        return rows * max(self.cols, 1) * self.dtype.itemsize

    @property
    def row_bytes(self) -> int:
        """Bytes of one row."""
        return max(self.cols, 1) * self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of every row it has room for (its capacity: rows not yet written count too)."""
        return self._nbytes(self.rows)

    def view(self) -> np.ndarray:
        if self._map is None:
            assert self._array is not None
            return self._array
        flat = np.frombuffer(self._map, self.dtype, count=self.rows * max(self.cols, 1))
        return flat.reshape(self._shape(self.rows))

    def grow(self, rows: int, at_most: int | None = None) -> None:
        """At least ``rows`` rows (the row count doubles until it has them, but stops at
        ``at_most`` rows when that is given and not below ``rows``); the old rows keep their
        values, the new ones are zeros."""
        new = self.rows
        while new < rows:
            new *= 2
        if at_most is not None and new > at_most:
            new = max(rows, at_most)
        if new <= self.rows:
            return
        if self._map is not None:
            try:
                self._map.resize(self._nbytes(new))
            except (OSError, SystemError, ValueError, BufferError):  # no remapping here: copy
                self._array = self.view().copy()
                self._map = None
            else:
                _huge_pages(self._map)
                self.rows = new
                self.remapped += 1
                return
        assert self._array is not None
        bigger = np.zeros(self._shape(new), self.dtype)
        bigger[: self.rows] = self._array
        self._array = bigger
        self.rows = new
