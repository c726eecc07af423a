"""A question decided as a heaviest clique among the reachable leaves' boxes (the search itself).

Axis-parallel boxes have the Helly property: boxes that meet pairwise share a point (intervals do,
feature by feature). A point reaches exactly one leaf per tree, and leaves of one tree are
disjoint, so the sets of leaves some point reaches are exactly the maximal cliques of the graph
whose vertices are the reachable leaves and whose edges join leaves whose boxes meet on every
free feature. A query "can some challenger ``d`` beat ``c``?" adds, per tree, the score
difference of the leaf reached (:meth:`~rfexplain.sat.deciders.leaves.LeafTable.margins`); less each
tree's smallest difference, every leaf weighs at least zero, so the largest margin is the trees'
smallest differences plus the weight of a heaviest clique, and the query holds iff some clique
beats ``penalty - baseline`` (with the tolerance for soft-vote near ties,
:data:`~rfexplain.core.vote.NEAR_TIE`; on a hard-vote table's integer margins, half a unit). This
is the
maximum-clique view of tree-ensemble verification (Kantchelian, Tygar and Joseph (2016) [KTJ16]
state it as a MILP; Chen et al. (2019) [Che19] bound it with cliques of trees); here it is
searched exactly by a colouring branch and bound (:mod:`.clique_kernels`), whose colour classes
may gather leaves of many trees that miss each other, where the per-tree bound of the box search
lets every tree take its best leaf. The vertices are taken in smallest-last order.

The search is exact for any such weights and conditions that are one comparison per challenger
("not ``c``": one search per challenger, in order; "predicts ``c``" with two classes), but it is
used only where it is strong: the hard vote between two classes, where every leaf of the
challenger weighs the same and the others nothing (:meth:`CliqueSearch.applies`).

[KTJ16] Kantchelian, Tygar and Joseph, "Evasion and Hardening of Tree Ensemble Classifiers",
ICML 2016. [Che19] Chen, Zhang, Si, Li, Boning and Hsieh, "Robustness Verification of Tree-based
Models", NeurIPS 2019.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rfexplain.sat import clique_kernels as kernels
from rfexplain.sat.tuning import DEFAULT_TUNING, SatTuning

__all__ = ["CliqueSearch", "search_levels"]


@dataclass
class _Cube:
    """A part of the query's box: per free feature the last of its allowed-state indices (its
    first is below every end of its vertices' intervals, which all meet it), the vertices of
    the challenger's graph whose intervals meet it, and how many splits made it."""

    hi: np.ndarray
    members: np.ndarray
    splits: int


class CliqueSearch:
    """The clique search of one query, over the box search's arguments (those of
    :func:`.box_kernels.search`: the reachable leaves' boxes on the free features, their trees,
    margins and penalties, the allowed states, the class and condition, the near-tie tolerance),
    run in slices like the box search: :meth:`step` answers with a status of
    :mod:`.clique_kernels`, and a found clique's :attr:`witness` is a point of the free features
    that reaches all its leaves (the caller confirms it with the forest's exact vote).

    **Cubes.** A large graph is not searched at once: the query's box is halved (:meth:`_split`)
    up to ``cube_depth`` times, while a part still meets ``cube_vertices`` leaves or more, and each
    part (a *cube*) is searched as the
    clique problem of the leaves that meet it, in its own smallest-last order. A point lies in
    one cube and every leaf it reaches meets that cube, so the cubes together decide the query;
    two leaves that meet each other and a cube meet inside it (Helly, for intervals), so a
    cube's graph is the induced subgraph. This is the cube-and-conquer scheme of SAT solving
    (Heule, Kullmann, Wieringa and Biere, 2011 [HKWB11]) over the input space. The gain is the
    order: each cube's own smallest-last order bounds far better than the whole graph's order
    restricted to the cube. The halves are cut where the larger holds the fewest leaves.

    [HKWB11] Heule, Kullmann, Wieringa and Biere, "Cube and Conquer: Guiding CDCL SAT Solvers by
    Lookaheads", HVC 2011."""

    def __init__(
        self,
        arguments: tuple[Any, ...],
        *,
        tuning: SatTuning = DEFAULT_TUNING,
    ) -> None:
        """``tuning``: the cube splitting's limits (``cube_depth``, ``cube_vertices``,
        ``max_vertices``), the unit of work (``clique_work_unit``) and the failed literals of
        MaxCLQ's bound (``clique_failed_literals``)."""
        low, high, trees, margins, penalty = arguments[:5]
        allowed, allowed_at = arguments[6], arguments[7]
        # how far below the goal a clique's weight may fall and still win: soft-vote float64 sums
        # within ``near_tie`` are near ties; a hard-vote table's margins are integers (the hard
        # vote's, and the lattices' of :mod:`rfexplain.sat.deciders.lattice`), which half a unit
        # tells from a tie at any magnitude, where ``near_tie`` is lost in rounding large sums
        self.tolerance = float(arguments[11]) if arguments[10] else 0.5
        self.cube_depth = tuning.cube_depth
        self.cube_vertices = tuning.cube_vertices
        self.max_vertices = tuning.max_vertices
        self.work_unit = tuning.clique_work_unit
        self.failed_literals = tuning.clique_failed_literals
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
        self._cubes: list[_Cube] = []
        #: the cube being searched: its graph, vertex weights, table rows and level arrays
        self._search: tuple[Any, ...] | None = None

    @staticmethod
    def applies(arguments: tuple[Any, ...], *, max_leaves: int = DEFAULT_TUNING.max_leaves) -> bool:
        """Whether the box search's ``arguments`` are a hard-vote query between two classes (one
        challenger, whose leaves all weigh the same: the maximum clique problem, where the
        colouring bounds are strong) over at most ``max_leaves`` reachable leaves (a query
        with more than ``max_vertices`` is searched in cubes).

        With more classes a leaf of a third class weighs half a challenger's leaf, and the
        weighted colourings bound poorly; under the soft vote almost every leaf weighs something
        (see :mod:`rfexplain.sat.deciders.cliques`)."""
        margins, soft = arguments[3], arguments[10]
        return not soft and margins.shape[1] == 1 and 0 < len(margins) <= max_leaves

    def step(self, node_limit: int) -> int:
        """Search for about ``node_limit`` units of work: :data:`.clique_kernels.FOUND` (a witness),
        ``EXHAUSTED`` (no challenger can win) or ``SLICED``."""
        self.examined = 0
        while self.challengers:
            if self.examined >= node_limit:
                return kernels.SLICED
            if self._graph is None:
                self._graph = self._build(self.challengers[0])
                if self._graph is None:  # the challenger cannot win: no search needed
                    self.challengers.pop(0)
                    continue
                whole = np.asarray([len(states) - 1 for states in self.allowed], dtype=np.int64)
                self._cubes = [_Cube(whole, np.arange(len(self._graph[3])), 0)]
            if self._search is None:
                if not self._cubes:
                    self.challengers.pop(0)
                    self._graph = None
                    continue
                self._search = self._next_cube()
                continue
            adj, weights, rows, levels = self._search
            goal = self._graph[2]
            unit, failed = self.work_unit, self.failed_literals
            status, examined = kernels.search(*(adj, weights, goal, *levels, unit, failed, node_limit - self.examined))
            self.examined += examined
            if status == kernels.FOUND:
                chosen, state = levels[5], levels[6]
                self._meet(rows[chosen[: state[kernels.DEPTH]]])
                return kernels.FOUND
            if status == kernels.SLICED:
                return kernels.SLICED
            self._search = None
        return kernels.EXHAUSTED

    def _next_cube(self) -> tuple[Any, ...] | None:
        """Take the next cube off the stack: ruled out by its trees' best leaves (``None``), split
        in two (``None``: its halves pushed), or its search's graph, weights, table rows and
        level arrays. Its costs are counted in :attr:`examined`."""
        adj, weights, goal, vertices, levels = self._graph  # type: ignore[misc]
        cube = self._cubes.pop()
        members = cube.members
        self.examined += 1 + len(members) * len(members) // self.work_unit
        best = np.zeros(int(self.trees.max()) + 1)
        np.maximum.at(best, self.trees[vertices[members]], weights[members])
        if float(best.sum()) <= goal:
            return None
        splittable = cube.splits < self.cube_depth and len(members) >= self.cube_vertices
        too_large = adj is None and len(members) > self.max_vertices
        if splittable or too_large:
            halves = self._split(cube)
            if halves is not None:
                self._cubes.extend(halves)
                return None
        if adj is not None and cube.splits == 0:
            return adj, weights, vertices, levels  # the whole graph, in its own order
        if adj is not None:
            graph = kernels.permute(adj, members)
        else:  # no whole graph: the cube's own, from its leaves' intervals
            graph = kernels.intersection_graph(self.first[vertices[members]], self.last[vertices[members]])
        order = kernels.smallest_last(graph)
        own = kernels.permute(graph, order)
        members = members[order]
        trees_in = len(np.unique(self.trees[vertices[members]]))
        own_levels = search_levels(len(members), own.shape[1], min(len(members), trees_in) + 1)
        return own, np.ascontiguousarray(weights[members]), vertices[members], own_levels

    def _split(self, cube: _Cube) -> list[_Cube] | None:
        """The halves of ``cube`` at the leaf end (of its vertices' intervals, on any free
        feature) that leaves the larger half the fewest vertices, the larger half last (searched
        first); ``None`` when no interval ends inside. A vertex whose interval spans the cut is in
        both halves."""
        rows = self._graph[3][cube.members]  # type: ignore[index]
        first, last = self.first[rows], self.last[rows]
        n = len(rows)
        best: tuple[int, int, int] | None = None
        for j in range(first.shape[1]):
            cuts = np.unique(last[last[:, j] < cube.hi[j], j])
            if not len(cuts):
                continue
            left = np.searchsorted(np.sort(first[:, j]), cuts, side="right")
            right = n - np.searchsorted(np.sort(last[:, j]), cuts, side="right")
            larger = np.maximum(left, right)
            k = int(np.argmin(larger))
            if best is None or larger[k] < best[0]:
                best = (int(larger[k]), j, int(cuts[k]))
        if best is None or best[0] >= n:  # no cut leaves out any vertex
            return None
        _, j, cut = best
        left_hi = cube.hi.copy()
        left_hi[j] = cut
        low_half = _Cube(left_hi, cube.members[first[:, j] <= cut], cube.splits + 1)
        high_half = _Cube(cube.hi, cube.members[last[:, j] > cut], cube.splits + 1)
        if len(low_half.members) <= len(high_half.members):
            return [low_half, high_half]
        return [high_half, low_half]

    def _build(self, d: int) -> tuple[Any, ...] | None:
        """The graph of challenger ``d``: adjacency (vertices in smallest-last order), weights,
        goal, the table rows of the vertices and the search's level arrays; ``None`` when no
        clique can beat the goal. A graph of more than ``max_vertices`` vertices has neither
        adjacency nor levels (nor order): each of its cubes builds its own."""
        margin = self.margins[:, d]
        starts = np.flatnonzero(np.r_[True, self.trees[1:] != self.trees[:-1]])
        floor = np.minimum.reduceat(margin, starts)
        baseline = float(floor.sum())
        weights = margin - np.repeat(floor, np.diff(np.r_[starts, len(margin)]))
        goal = float(self.penalty[d]) - baseline - self.tolerance
        if float(np.maximum.reduceat(weights, starts).sum()) <= goal:
            return None
        vertices = np.flatnonzero(self.reached & (weights > 0))
        if len(vertices) > self.max_vertices:  # searched in cubes alone (:meth:`_next_cube`)
            return None, np.ascontiguousarray(weights[vertices]), goal, vertices, None
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
