"""Sets of small integers (features, states, variables) as Python integer bit masks.

Bit ``i`` of a mask is set when ``i`` is in the set. These are the package's only helpers for
reading such masks; the population count is the builtin ``int.bit_count()``.

>>> bits_of(0b1011)
(0, 1, 3)
>>> mask_of([3, 0, 1])
11
>>> lowest_bit(0b1100)
2
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

__all__ = ["bits_of", "mask_of", "lowest_bit"]


@lru_cache(maxsize=1 << 20)
def bits_of(mask: int) -> tuple[int, ...]:
    """Positions of the set bits of ``mask``, increasing.

    Cached (bounded LRU): decision-graph Apply asks for the same few masks millions of times."""
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def mask_of(positions: Iterable[int]) -> int:
    """The mask with the bits at ``positions`` set."""
    mask = 0
    for i in positions:
        mask |= 1 << i
    return mask


def lowest_bit(mask: int) -> int:
    """Position of the lowest set bit of a non-zero ``mask``."""
    return (mask & -mask).bit_length() - 1
