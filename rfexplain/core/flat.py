"""A forest's trees laid end to end as flat node arrays, for vectorised and compiled walks.

:class:`FlatForest` is derived from a :class:`~rfexplain.core.forest.Forest` (``forest.flat``,
built once per forest on first use): tree ``k``'s node ``i`` is at ``first_nodes[k] + i``,
children are positions in the whole, so numpy walks every tree at once (:meth:`tree_leaves`)
and compiled loops walk them without Python objects. It also gives every feasible leaf's box of
states (:meth:`leaf_boxes`), which the SAT engine's deciders and the verifier read.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from rfexplain.core.tree import Tree
from rfexplain.core.vote import Vote

__all__ = ["FlatForest"]


class FlatForest:
    """The trees of a forest as flat node arrays (see the module docstring).

    Attributes
    ----------
    feature, split, left, right, label : numpy.ndarray
        Per node: the tested feature (-1 at a leaf), the threshold index, the children (positions
        in the whole) and the voted class (-1 at internal nodes).
    first_nodes : numpy.ndarray
        Where each tree's nodes start.
    scores : numpy.ndarray
        Per node, the leaf's score vector under the forest's vote (:meth:`Vote.leaf_scores`:
        one-hot votes or class probabilities; zeros at internal nodes).
    """

    def __init__(self, trees: Sequence[Tree], states_per_feature: Sequence[int], vote: Vote) -> None:
        sizes = [t.n_nodes for t in trees]
        self.first_nodes = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        offset = np.repeat(self.first_nodes, sizes)
        self.feature, self.split, left, right, self.label = (
            np.concatenate([np.asarray(getattr(t, name), dtype=np.int64) for t in trees])
            for name in ("feature", "split", "left", "right", "label")
        )
        self.left, self.right = left + offset, right + offset
        self.states_per_feature = tuple(states_per_feature)
        self._vote = vote
        self._scores: np.ndarray | None = None

    @property
    def scores(self) -> np.ndarray:
        if self._scores is None:
            self._scores = np.concatenate(self._vote.leaf_scores())
        return self._scores

    def walk_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(feature, split, left, right, label, first_nodes)``: what a compiled walk reads."""
        return self.feature, self.split, self.left, self.right, self.label, self.first_nodes

    def tree_leaves(self, S: np.ndarray) -> np.ndarray:
        """The leaf each tree reaches (node index within its tree), for every row of a state
        matrix: shape (rows, trees). All trees walk at once, one step per level of the deepest
        tree, so a call costs a few numpy operations per level, not per tree."""
        S = np.asarray(S, dtype=np.int64)
        if S.ndim == 1:
            S = S[None, :]
        roots = self.first_nodes
        rows = np.arange(S.shape[0])[:, None]
        node = np.broadcast_to(roots, (S.shape[0], len(roots))).copy()
        feature, split, child, depth = self._walk
        for _ in range(depth):
            node = child[node, (S[rows, feature[node]] > split[node]).view(np.int8)]
        return node - roots

    @functools.cached_property
    def _walk(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """What :meth:`tree_leaves` steps with: per node the feature tested and the threshold
        index (a leaf tests feature 0 against the largest index, so never goes right), its two
        children as one ``(nodes, 2)`` array (a leaf's are itself), and the deepest tree's depth,
        the number of steps: a step is a few whole-array operations, with no test for the leaves
        reached."""
        leaf = self.feature < 0
        own = np.arange(len(self.feature), dtype=np.int64)
        feature = np.where(leaf, 0, self.feature)
        split = np.where(leaf, np.iinfo(np.int64).max, self.split)
        child = np.stack((np.where(leaf, own, self.left), np.where(leaf, own, self.right)), axis=1)
        depth = 0
        frontier = self.first_nodes[~leaf[self.first_nodes]]
        while frontier.size:
            depth += 1
            frontier = np.concatenate((self.left[frontier], self.right[frontier]))
            frontier = frontier[~leaf[frontier]]
        return feature, split, child, depth

    def tree_votes(self, S: np.ndarray) -> np.ndarray:
        """Class index each tree votes for, for every row of a state matrix: shape (rows, trees)."""
        return self.label[self.tree_leaves(S) + self.first_nodes]

    def vote_counts(self, S: np.ndarray, n_classes: int) -> np.ndarray:
        """Votes per class for every row of a state matrix: shape (rows, classes)."""
        votes = self.tree_votes(S)
        return np.stack([(votes == c).sum(axis=1) for c in range(n_classes)], axis=1).astype(np.int64)

    def leaf_boxes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every feasible leaf with its box of states: ``(nodes, low, high)``.

        ``nodes`` are the leaves' positions among all trees' nodes (:attr:`first_nodes`), in
        increasing order (so grouped by tree); row ``i`` of ``low`` and ``high`` (shape
        ``(leaves, features)``) bounds, inclusively, the states of each feature that reach leaf
        ``nodes[i]``. A leaf whose box is empty on some feature (no input reaches it) is left out.
        The same boxes as :meth:`Tree.leaf_paths`, computed level by level for all trees at once.
        """
        feature, split, left, right = self.feature, self.split, self.left, self.right
        top = np.asarray(self.states_per_feature, dtype=np.int32) - 1
        low = np.zeros((len(feature), len(top)), dtype=np.int32)
        high = np.broadcast_to(top, low.shape).copy()
        frontier = self.first_nodes
        while frontier.size:
            frontier = frontier[feature[frontier] >= 0]
            f, cut = feature[frontier], split[frontier]
            for children, bounds in ((left[frontier], None), (right[frontier], cut + 1)):
                low[children], high[children] = low[frontier], high[frontier]
                if bounds is None:
                    high[children, f] = np.minimum(high[frontier, f], cut)
                else:
                    low[children, f] = np.maximum(low[frontier, f], bounds)
            frontier = np.concatenate((left[frontier], right[frontier]))
        leaves = np.flatnonzero(feature < 0)
        leaves = leaves[np.all(low[leaves] <= high[leaves], axis=1)]
        return leaves, low[leaves], high[leaves]
