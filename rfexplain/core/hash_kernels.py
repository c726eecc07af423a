"""Compiled helpers of the open-addressing hash tables the compact cores keep (numba [Lam15]):
the circuit engine's vote-graph core (:mod:`rfexplain.circuit.compilers.dd_kernels`) and the ADD
store (:mod:`rfexplain.comparators.add_kernels`). A table is an integer array whose size is a
power of two, ``-1`` in empty slots, probed linearly."""

from __future__ import annotations

from rfexplain.core.jit import kernel

__all__ = ["spread", "place"]


@kernel
def spread(h):
    """Spread the high bits of a 64-bit hash into the low bits the tables index by."""
    h ^= (h >> 31) & 0x1FFFFFFFF
    h *= -7046029254386353131
    h ^= (h >> 29) & 0x7FFFFFFFF
    return h


@kernel
def place(table, h, key_id):
    """Write ``key_id`` into the first empty slot at or after ``h`` (a key known to be absent)."""
    mask = table.shape[0] - 1
    i = h & mask
    while table[i] >= 0:
        i = (i + 1) & mask
    table[i] = key_id
