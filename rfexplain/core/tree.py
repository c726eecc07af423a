"""One decision tree over discretised features (docs/design.md, section 1).

A :class:`Tree` is a node-array tree as scikit-learn stores it (``tree_.feature``,
``tree_.threshold`` as threshold indices, ``children_left``/``children_right``), with each leaf's
voted class and, when known, its class-probability vector. The forest (:mod:`rfexplain.core.forest`)
holds the thresholds the split indices refer to.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Tree", "leaf_vectors", "proba_array"]


@dataclass(frozen=True)
class Tree:
    """One decision tree over discretised features, as parallel node arrays.

    Node 0 is the root. At an internal node, ``feature[i] >= 0`` is the tested feature and
    ``split[i]`` the index ``j`` of the threshold in the forest's sorted thresholds of that
    feature: states ``<= j`` go to ``left[i]``, the others to ``right[i]``. At a leaf,
    ``feature[i] == -1`` and ``label[i]`` is the class index the tree votes for. ``proba``, when
    known, holds at each leaf its class-probability vector (float64 numbers, as the tree's
    ``predict_proba`` gives them) and ``None`` at internal nodes; the soft vote needs it.
    """

    feature: tuple[int, ...]
    split: tuple[int, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    label: tuple[int, ...]
    proba: tuple[tuple[float, ...] | None, ...] | None = None

    @property
    def n_nodes(self) -> int:
        return len(self.feature)

    @property
    def n_leaves(self) -> int:
        return sum(1 for f in self.feature if f < 0)

    def is_leaf(self, node: int) -> bool:
        return self.feature[node] < 0

    def depth(self) -> int:
        """Length of the longest root-to-leaf path (0 for a single leaf), level by level."""
        feature = np.asarray(self.feature, dtype=np.int64)
        left, right = np.asarray(self.left, dtype=np.int64), np.asarray(self.right, dtype=np.int64)
        level, depth = np.zeros(1, dtype=np.int64), -1
        while level.size:
            depth += 1
            inner = level[feature[level] >= 0]
            level = np.concatenate([left[inner], right[inner]])
        return depth

    def paths(self, n_states: Sequence[int]) -> Iterator[tuple[dict[int, tuple[int, int]], int]]:
        """Yield every *feasible* root-to-leaf path as ``(box, label)``.

        ``box`` maps each feature tested on the path to the inclusive range ``(lo, hi)`` of states
        that follow the path; a path whose range becomes empty on some feature can be reached by
        no input and is not yielded.
        """
        for box, leaf in self.leaf_paths(n_states):
            yield box, self.label[leaf]

    def leaf_paths(self, n_states: Sequence[int]) -> Iterator[tuple[dict[int, tuple[int, int]], int]]:
        """Like :meth:`paths`, yielding ``(box, leaf node)``."""
        stack: list[tuple[int, dict[int, tuple[int, int]]]] = [(0, {})]
        while stack:
            node, box = stack.pop()
            f = self.feature[node]
            if f < 0:
                yield box, node
                continue
            lo, hi = box.get(f, (0, n_states[f] - 1))
            j = self.split[node]
            if lo <= min(hi, j):
                stack.append((self.left[node], {**box, f: (lo, min(hi, j))}))
            if max(lo, j + 1) <= hi:
                stack.append((self.right[node], {**box, f: (max(lo, j + 1), hi)}))


def leaf_vectors(feature: Sequence[int], proba: Sequence[Any]) -> tuple[tuple[float, ...] | None, ...]:
    """Per node: the leaf's probability vector as floats, ``None`` at internal nodes."""
    return tuple(tuple(map(float, v)) if int(f) < 0 else None for f, v in zip(feature, proba))


def proba_array(tree: Tree, n_classes: int) -> np.ndarray:
    """The leaf vectors of a tree as a ``(nodes, classes)`` array (zeros at internal nodes)."""
    out = np.zeros((tree.n_nodes, n_classes), dtype=np.float64)
    assert tree.proba is not None
    for i, vector in enumerate(tree.proba):
        if vector is not None:
            out[i] = vector
    return out
