"""A query of the prefilter decided as a heaviest clique among the reachable leaves' boxes.

Axis-parallel boxes have the Helly property: boxes that meet pairwise share a point (intervals do,
feature by feature). A point reaches exactly one leaf per tree, and leaves of one tree are
disjoint, so the sets of leaves some point reaches are exactly the maximal cliques of the graph
whose vertices are the reachable leaves and whose edges join leaves whose boxes meet on every
free feature. A query "can some challenger ``d`` beat ``c``?" adds, per tree, the score
difference of the leaf reached (:meth:`~rfexplain.sat.prefilter.LeafTable.margins`); less each
tree's smallest difference, every leaf weighs at least zero, so the largest margin is the trees'
smallest differences plus the weight of a heaviest clique, and the query holds iff some clique
beats ``penalty - baseline`` (with the prefilter's tolerance for soft-vote near ties). This is the
maximum-clique view of tree-ensemble verification (Kantchelian, Tygar and Joseph (2016) [KTJ16]
state it as a MILP; Chen et al. (2019) [Che19] bound it with cliques of trees); here it is
searched exactly by a colouring branch and bound (:mod:`.clique_kernels`), whose colour classes
may gather leaves of many trees that miss each other, where the per-tree bound of the box search
lets every tree take its best leaf.

On the slowest unsatisfiable steps of scikit-learn's default forests, hard vote (CPU s, the box
search then the clique search alone on the same query): ring, 100 trees, 13 free features 14.3
-> 0.12 and 12.8 -> 0.08; two steps the box search left open after 7.7 and 19.6 s, 1.25 and
0.54; ionosphere, 500 trees, 22 free features, 29.6 -> 0.58 (with the smallest-last order; in
degree order 54 s).

The search is exact for any such weights and conditions that are one comparison per challenger
("not ``c``": one search per challenger, in order; "predicts ``c``" with two classes), but it is
used only where it is strong: the hard vote between two classes, where every leaf of the
challenger weighs the same and the others nothing (:meth:`CliqueSearch.applies`).

[KTJ16] Kantchelian, Tygar and Joseph, "Evasion and Hardening of Tree Ensemble Classifiers",
ICML 2016. [Che19] Chen, Zhang, Si, Li, Boning and Hsieh, "Robustness Verification of Tree-based
Models", NeurIPS 2019.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfexplain.sat import clique_kernels as kernels

__all__ = ["MAX_VERTICES", "CliqueSearch", "search_levels"]

#: Most vertices (reachable leaves of positive weight) a clique search takes on: its levels hold
#: one colour order per vertex of the clique (8 bytes per vertex and level, twice).
MAX_VERTICES = 20_000


class CliqueSearch:
    """The clique search of one query, over the box search's arguments (those of
    :func:`.box_kernels.search`: the reachable leaves' boxes on the free features, their trees,
    margins and penalties, the allowed states, the class and condition, the near-tie tolerance),
    run in slices like the box search: :meth:`step` answers with a status of
    :mod:`.clique_kernels`, and a found clique's :attr:`witness` is a point of the free features
    that reaches all its leaves (the caller confirms it with the forest's exact vote)."""

    def __init__(self, arguments: tuple[Any, ...]) -> None:
        low, high, trees, margins, penalty = arguments[:5]
        allowed, allowed_at = arguments[6], arguments[7]
        self.near_tie = float(arguments[11])
        n_free = low.shape[1]
        self.allowed = [allowed[allowed_at[j] : allowed_at[j + 1]] for j in range(n_free)]
        # leaf intervals over the allowed states (a leaf with none on some feature is never reached)
        first = np.empty(low.shape, dtype=np.int64)
        last = np.empty(high.shape, dtype=np.int64)
        for j, states in enumerate(self.allowed):
            first[:, j] = np.searchsorted(states, low[:, j], side="left")
            last[:, j] = np.searchsorted(states, high[:, j], side="right") - 1
        self.first, self.last = first, last
        reached = np.all(first <= last, axis=1) if n_free else np.ones(len(low), dtype=bool)
        self.reached = reached
        self.trees = np.asarray(trees)
        self.margins = np.asarray(margins)
        self.penalty = np.asarray(penalty)
        #: the challengers (columns of the margins) left to search, in order
        self.challengers = list(range(self.margins.shape[1]))
        self.witness = np.zeros(n_free, dtype=np.int64)
        #: units of work (:func:`.clique_kernels.search`) the last :meth:`step` did
        self.examined = 0
        self._graph: tuple[Any, ...] | None = None

    @staticmethod
    def applies(arguments: tuple[Any, ...]) -> bool:
        """Whether the box search's ``arguments`` are a hard-vote query between two classes (one
        challenger, whose leaves all weigh the same: the maximum clique problem, where the
        colouring bounds are strong) over few enough leaves to search as a graph.

        With more classes a leaf of a third class weighs half a challenger's leaf, and the
        weighted colourings bound poorly: on scikit-learn's default forest of 500 trees on
        waveform-21 (3 classes) a step the box search settles in 3.4 s was not settled in 60 s;
        under the soft vote almost every leaf weighs something (see :mod:`.prefilter`)."""
        margins, soft = arguments[3], arguments[10]
        return not soft and margins.shape[1] == 1 and 0 < len(margins) <= MAX_VERTICES

    def step(self, node_limit: int) -> int:
        """Search for about ``node_limit`` units of work: :data:`.clique_kernels.FOUND` (a witness),
        ``EXHAUSTED`` (no challenger can win) or ``SLICED``."""
        self.examined = 0
        while self.challengers:
            if self._graph is None:
                self._graph = self._build(self.challengers[0])
                if self._graph is None:  # the challenger cannot win: no search needed
                    self.challengers.pop(0)
                    continue
            adj, weights, goal, vertices, levels = self._graph
            status, examined = kernels.search(*(adj, weights, goal, *levels, node_limit - self.examined))
            self.examined += examined
            if status == kernels.FOUND:
                chosen, state = levels[5], levels[6]
                self._meet(vertices[chosen[: state[kernels.DEPTH]]])
                return kernels.FOUND
            if status == kernels.SLICED:
                return kernels.SLICED
            self.challengers.pop(0)
            self._graph = None
            if self.examined >= node_limit:
                return kernels.SLICED if self.challengers else kernels.EXHAUSTED
        return kernels.EXHAUSTED

    def _build(self, d: int) -> tuple[Any, ...] | None:
        """The graph of challenger ``d``: adjacency (vertices in smallest-last order), weights,
        goal, the table rows of the vertices and the search's level arrays; ``None`` when no
        clique can beat the goal."""
        margin = self.margins[:, d]
        starts = np.flatnonzero(np.r_[True, self.trees[1:] != self.trees[:-1]])
        floor = np.minimum.reduceat(margin, starts)
        baseline = float(floor.sum())
        weights = margin - np.repeat(floor, np.diff(np.r_[starts, len(margin)]))
        goal = float(self.penalty[d]) - baseline - self.near_tie
        if float(np.maximum.reduceat(weights, starts).sum()) <= goal:
            return None
        vertices = np.flatnonzero(self.reached & (weights > 0))
        adj = kernels.intersection_graph(self.first[vertices], self.last[vertices])
        order = kernels.smallest_last(adj)
        adj = kernels.permute(adj, order)
        vertices = vertices[order]
        n = len(vertices)
        levels = search_levels(n, adj.shape[1], min(n, len(starts)) + 1)
        return adj, np.ascontiguousarray(weights[vertices]), goal, vertices, levels

    def _meet(self, rows: np.ndarray) -> None:
        """Set :attr:`witness` to a point of the boxes of the table rows ``rows`` (they meet):
        per free feature, the least allowed state of their intervals' intersection."""
        for j, states in enumerate(self.allowed):
            at = int(self.first[rows, j].max()) if len(rows) else 0
            self.witness[j] = states[at]


def search_levels(n: int, words: int, depth: int) -> tuple[np.ndarray, ...]:
    """Fresh state arrays of :func:`.clique_kernels.search` for ``n`` vertices (``words`` words a
    row) and cliques of at most ``depth - 1`` vertices: candidates, colour orders, bounds,
    positions, weights gained, chosen vertices and the level counters."""
    return (
        np.zeros((depth, words), np.uint64),
        np.zeros((depth, n), np.int64),
        np.zeros((depth, n)),
        np.zeros(depth, np.int64),
        np.zeros(depth),
        np.zeros(depth, np.int64),
        np.asarray([-1, 0], dtype=np.int64),
    )
