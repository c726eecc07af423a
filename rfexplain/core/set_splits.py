"""Set splits as chains of threshold tests on a categorical feature's state index (docs/design.md,
section 1).

A categorical feature is one feature whose states are its categories (:attr:`Forest.categories
<rfexplain.core.forest.Forest.categories>`): its value is the state index, with thresholds ``0.5,
1.5, ...`` so that every category is its own state. A model's *set split* sends a set of the
feature's states left (a pipeline's test on an encoded column, :mod:`rfexplain.pipelines`; a
boosted model's native categorical split, :mod:`rfexplain.core.boosted_nodes`); the forests'
trees test thresholds only. :func:`chain_set_splits` rewrites a tree's set splits as small chains
of threshold tests ``state <= j``, each routing a run of consecutive states: below a chain node
the split is read again with the states still possible on the path, and a subtree is copied
where the chain needs it, pruned by those states (a split whose possible states all go one way
is its child on that side). Every other split is kept as it is.

:data:`OTHER` and :data:`MISSING` are the labels of the states of unknown categories and of
missing values, for the pipelines' and the boosted models' categorical features alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rfexplain.core.errors import InvalidInstanceError, UnsupportedModelError

__all__ = [
    "OTHER",
    "MISSING",
    "SetSplit",
    "ChainedTree",
    "chain_set_splits",
    "category_thresholds",
    "category_values",
]

#: The label of the state of categories the model did not see in training (when it admits them).
OTHER = "(other)"
#: The label of the state of missing values of a categorical feature.
MISSING = "(missing)"


@dataclass(frozen=True)
class SetSplit:
    """A split sending the states ``left`` of categorical feature ``feature`` left."""

    feature: int
    left: frozenset[int]


@dataclass
class ChainedTree:
    """A tree in preorder, the root first: per node the input node it copies (``source``: the leaf
    at a leaf, the split at a kept split or a chain node), its children (``-1`` at a leaf) and,
    at a chain node, the categorical ``feature`` and ``cut`` ``j`` of its test ``state <= j``
    (``-1`` both at a leaf or a kept split)."""

    source: list[int] = field(default_factory=list)
    left: list[int] = field(default_factory=list)
    right: list[int] = field(default_factory=list)
    feature: list[int] = field(default_factory=list)
    cut: list[int] = field(default_factory=list)

    def _add(self, source: int, feature: int = -1, cut: int = -1) -> int:
        self.source.append(source)
        self.left.append(-1)
        self.right.append(-1)
        self.feature.append(feature)
        self.cut.append(cut)
        return len(self.source) - 1


def chain_set_splits(
    children: Callable[[int], tuple[int, int] | None],
    test: Callable[[int], SetSplit | bool | None],
    n_states: Sequence[int],
    max_nodes: int,
    too_big: str,
) -> ChainedTree:
    """The tree whose root is node 0, its set splits rewritten as chains of threshold tests
    (module docstring).

    ``children(node)`` is the pair ``(left, right)``, ``None`` at a leaf; ``test(node)`` at a split
    is a :class:`SetSplit`, a constant direction (``True``: every input goes left; the split is
    its child on that side) or ``None`` for a split kept as it is. ``n_states[f]`` is the number
    of states of categorical feature ``f``. A tree past ``max_nodes`` nodes raises
    :class:`UnsupportedModelError` with the message ``too_big``."""
    out = ChainedTree()

    def add(source: int, feature: int = -1, cut: int = -1) -> int:
        if len(out.source) >= max_nodes:
            raise UnsupportedModelError(too_big)
        return out._add(source, feature, cut)

    def emit(node: int, allowed: dict[int, frozenset[int]]) -> int:
        while True:
            pair = children(node)
            if pair is None:
                return add(node)
            split = test(node)
            if isinstance(split, bool):
                node = pair[0] if split else pair[1]
                continue
            if split is None:
                me = add(node)
                out.left[me] = emit(pair[0], allowed)
                out.right[me] = emit(pair[1], allowed)
                return me
            f = split.feature
            possible = allowed.get(f, frozenset(range(n_states[f])))
            if not possible & split.left:
                node = pair[1]
            elif possible <= split.left:
                node = pair[0]
            else:
                break
        ordered = sorted(possible)
        first = ordered[0] in split.left
        cut = max(s for s in ordered if s < next(s for s in ordered if (s in split.left) != first))
        me = add(node, f, cut)
        out.left[me] = emit(node, {**allowed, f: frozenset(s for s in possible if s <= cut)})
        out.right[me] = emit(node, {**allowed, f: frozenset(s for s in possible if s > cut)})
        return me

    emit(0, {})
    return out


def category_thresholds(n_labels: int, missing: bool) -> tuple[float, ...]:
    """The thresholds of a categorical feature of ``n_labels`` states: ``0.5, 1.5, ...``, and
    ``+inf`` last when it may be missing (its last state, above ``+inf``)."""
    return (*(k + 0.5 for k in range(n_labels - 1 - missing)), *((math.inf,) if missing else ()))


def category_values(column: np.ndarray, labels: Sequence[str], other: int, name: str) -> np.ndarray:
    """The float32 values ``column`` (float64, NaN for missing) of the categorical feature
    ``name`` whose states are ``labels``, ``other`` the index of its last state but the missing
    one: a value that is not an integer is refused (:class:`InvalidInstanceError`), and when that
    state is :data:`OTHER`, a negative value is made that state's (a code the model does not
    know; one beyond the states already falls in it)."""
    number = ~np.isnan(column)
    fraction = number & (column != np.floor(column))
    if fraction.any():
        row = int(np.flatnonzero(fraction)[0])
        raise InvalidInstanceError(
            f"instance {row} has {name} = {float(column[row])!r}; a categorical feature's value is an integer "
            "(a category code or a state index)"
        )
    if labels[other] != OTHER:
        return column.astype(np.float32)
    return np.where(number & (column < 0), other, column).astype(np.float32)
