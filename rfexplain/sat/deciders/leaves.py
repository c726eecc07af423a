"""The reachable leaves of a forest seen from one instance: what every decider reads.

A question of the SAT engine fixes some features at the explained instance's states. A leaf is
*reachable* iff its box contains the instance's state on every fixed feature (every path
inconsistent with the fixed features is dead: the per-instance simplification of the abductive
reasoning of Izza and Marques-Silva (2021), Section 4 [IM21]). :class:`LeafTable` holds every
feasible leaf of a forest as a box of states with its score vector (built once per forest);
:class:`InstanceLeaves` specialises it to one instance: the reachable leaves of a set of fixed
features, the free features' boxes and *cells* (states no reachable leaf tells apart), and the
forest's exact vote on points of the free features, which confirms every counterexample a
decider other than the full CNF proposes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rfexplain.core.vote import NEAR_TIE
from rfexplain.sat.deciders.base import Answer
from rfexplain.sat.encodings import ForestEncoding
from rfexplain.sat.encodings.softvote import soft_winner
from rfexplain.sat.tuning import DEFAULT_TUNING, SatTuning

__all__ = ["LeafTable", "InstanceLeaves", "BoxCapacity", "pack_bits", "warm_up", "ALLOWED_CACHE"]

#: The most sets of free features whose allowed states a :class:`LeafTable` keeps
#: (:meth:`LeafTable.allowed_of`; an enumeration asks many).
ALLOWED_CACHE = 4096


def warm_up(box_dtype: np.dtype, *, cliques: bool = True) -> None:
    """Load (or compile, on a machine's first run) the deciders' compiled loops: the box search's
    for leaf boxes of ``box_dtype`` (:func:`.box_kernels.warm_up`), the climb's
    (:func:`.climb_kernels.warm_up`) and, with ``cliques``, the clique search's
    (:func:`.clique_kernels.warm_up`): a one-off cost of the process that would otherwise land
    inside the first query. Already-loaded loops cost nothing more."""
    from rfexplain.sat import box_kernels, climb_kernels, clique_kernels

    box_kernels.warm_up(box_dtype)
    climb_kernels.warm_up(box_dtype)
    if cliques:
        clique_kernels.warm_up()


class BoxCapacity:
    """The box stack and row pool (rows per table row) a leaf table's box searches
    (:class:`.boxes.BoxSearch`) start with:
    the tuning's ``bnb_stack`` and ``bnb_pool`` at first, then the largest any search of the
    table grew to, up to :attr:`MAX_STACK` and :attr:`MAX_PER_ROW`, so that the next searches
    do not grow again (each growth is a copy and a kernel call more)."""

    MAX_STACK = 4096
    MAX_PER_ROW = 64

    def __init__(self, tuning: SatTuning) -> None:
        self.stack = tuning.bnb_stack
        self.per_row = tuning.bnb_pool

    def grown(self, stack: int, per_row: int) -> None:
        """A search's stack now holds ``stack`` boxes and its pool ``per_row`` rows per row."""
        self.stack = max(self.stack, min(stack, self.MAX_STACK))
        self.per_row = max(self.per_row, min(per_row, self.MAX_PER_ROW))


class LeafTable:
    """Every feasible leaf of a forest as a box of states with its score vector (built once per
    forest from its SAT encoding; :class:`InstanceLeaves` specialises it to one instance).

    Small boxes never use, as witnesses, the states the encoding excludes (no float32 value in
    them); soft-vote near-ties are decided with the encoding's exact leaf weights.
    """

    def __init__(self, encoding: ForestEncoding, tuning: SatTuning = DEFAULT_TUNING) -> None:
        #: The engine's tuning, read by every decider of the instances of this table.
        self.tuning = tuning
        forest = encoding.forest
        self.forest = forest
        self.n_states = forest.states_per_feature
        self.soft = encoding.soft
        first_nodes = forest.flat.first_nodes
        nodes, low, high = forest.flat.leaf_boxes()
        #: Tree of every row; rows are grouped by tree.
        self.tree = np.searchsorted(first_nodes, nodes, side="right") - 1
        local = nodes - first_nodes[self.tree]
        #: Table row of every (feasible) leaf, by its position among all trees' nodes
        #: (:attr:`~rfexplain.core.forest.Forest.flat`).
        self.row_of_node = np.full(sum(tree.n_nodes for tree in forest.trees), -1, dtype=np.int64)
        self.row_of_node[nodes] = np.arange(len(nodes))
        self.low, self.high = low, high
        #: Exact integer score vectors (soft vote only), to settle float64 near-ties.
        self.exact: list[tuple[int, ...]] = []
        if self.soft:
            weights = encoding.weights
            self.exact = [weights[k][leaf] for k, leaf in zip(self.tree.tolist(), local.tolist())]
            # the vote's float64 vectors: an additive vote's are scaled (as its integer weights)
            self.score = forest.flat.scores[nodes].reshape(len(nodes), forest.n_classes)
        else:
            labels = forest.flat.label[nodes]  # one whole vote each (a lone tree's vectors may be impure)
            self.score = np.zeros((len(nodes), forest.n_classes), dtype=np.float64)
            self.score[np.arange(len(nodes)), labels] = 1.0
        #: The deepest tree's depth (the number of steps of a walk down every tree).
        self.depth = max((tree.depth() for tree in forest.trees), default=0)
        #: The states of each feature a witness may use (the encoding excludes the others: no
        #: float32 value lies in them), sorted.
        self.allowed = [
            np.asarray([s for s in range(k) if s not in set(encoding.empty_states.get(f, ()))], dtype=np.int64)
            for f, k in enumerate(self.n_states)
        ]
        #: Whether each leaf is impure (soft vote: its vector is not one whole vote for one class,
        #: one-hot of weight ``2**E``; under an additive vote nearly every leaf).
        whole = 1 << forest.aggregation.integer_weights()[0] if self.soft else 1
        self.impure = np.asarray(
            [sorted(weights)[-1:] != [whole] or sum(1 for w in weights if w) > 1 for weights in self.exact], dtype=bool
        )
        #: The lattice decider's tables by ``(kind, cls, bits)`` (:func:`.lattice.lattice_table`),
        #: built on first use and shared by every instance.
        self.lattices: dict[tuple[str, int, int], LeafTable] = {}
        self._margins: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
        self._allowed_of: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
        #: The sizes the box searches on this table start their arrays at.
        self.box_capacity = BoxCapacity(tuning)
        # the compiled loops, loaded with the table rather than in a query
        warm_up(self.low.dtype, cliques=forest.n_classes == 2)  # CliqueSearch.applies: hard vote or lattices

    def margins(self, kind: str, cls: int) -> tuple[np.ndarray, np.ndarray]:
        """Per leaf, its score difference against every other class ``d`` (``d`` against ``cls``
        for ``"not"``, ``cls`` against ``d`` for ``"predicts"``; one column per ``d`` in order),
        and per ``d`` what a win must exceed besides (under the hard vote half a vote where the
        tie goes the wrong way, else 0): the inputs of :func:`.bound_kernels.bound`, cached per condition."""
        key = (kind, cls)
        if key not in self._margins:
            others = [d for d in range(self.score.shape[1]) if d != cls]
            own = self.score[:, [cls]]
            diff = self.score[:, others] - own if kind == "not" else own - self.score[:, others]
            ids = np.asarray(others, dtype=np.int64)
            penalty = np.zeros(len(others)) if self.soft else 0.5 * (ids > cls if kind == "not" else ids < cls)
            self._margins[key] = (np.ascontiguousarray(diff), penalty)
        return self._margins[key]

    def allowed_of(self, free: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The :attr:`allowed` states of the features ``free`` end to end, and where each one's
        start (and the last one's end): the box search's ``allowed`` and ``allowed_at``
        (:func:`.box_kernels.search`), cached per ``free`` (at most :data:`ALLOWED_CACHE` sets);
        shared, so never written to."""
        key = tuple(free)
        found = self._allowed_of.get(key)
        if found is None:
            allowed = [self.allowed[f] for f in key]
            states = np.concatenate(allowed).astype(np.int64) if allowed else np.zeros(0, dtype=np.int64)
            starts = np.concatenate(([0], np.cumsum([len(a) for a in allowed]))).astype(np.int64)
            if len(self._allowed_of) >= ALLOWED_CACHE:
                self._allowed_of.clear()
            found = self._allowed_of[key] = (states, starts)
        return found


class InstanceLeaves:
    """The leaf table seen from one instance: which leaves each fixed feature rules out."""

    def __init__(self, table: LeafTable, states: Sequence[int], *, tuning: SatTuning | None = None) -> None:
        """``tuning``: the deciders' tuning for this instance (default: the table's)."""
        self.table = table
        self.tuning = tuning if tuning is not None else table.tuning
        self.states = np.asarray(states, dtype=np.int64)
        #: ``outside[leaf, f]``: the instance's state of ``f`` is outside the leaf's box.
        self.outside = (self.states < table.low) | (self.states > table.high)
        #: The same, packed: bit ``f % 64`` of word ``f // 64`` of a leaf's row (one vectorised
        #: ``and`` per query in :meth:`reachable`, cheaper than a column selection of ``outside``);
        #: with at most 64 features, the one word of every row as a contiguous vector.
        self._outside_bits = pack_bits(self.outside)
        self._outside_word = (
            np.ascontiguousarray(self._outside_bits[:, 0]) if self._outside_bits.shape[1] == 1 else None
        )
        #: The latest counterexamples found (full state vectors, at most the tuning's ``warm_starts``, the
        #: latest first): the climbs start from them (:meth:`starts`).
        self._found: list[tuple[int, ...]] = []

    def reachable(self, fixed: Sequence[int]) -> np.ndarray:
        """The table rows of the leaves a point agreeing with the instance on ``fixed`` can reach."""
        words = [0] * self._outside_bits.shape[1]
        for f in fixed:
            words[f >> 6] |= 1 << (int(f) & 63)
        if self._outside_word is not None:
            return np.flatnonzero((self._outside_word & np.uint64(words[0])) == 0)
        misses = self._outside_bits & np.asarray(words, dtype=np.uint64)
        return np.flatnonzero(~misses.any(axis=1))

    def reachable_in_box(
        self, intervals: Mapping[int, tuple[int, int]]
    ) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
        """A box question (every feature free, those of ``intervals`` within ``low..high``):
        the features with several states, the table rows of the leaves whose boxes meet the
        intervals, and those boxes clipped to them, one column per feature:
        ``(free, rows, lows, highs)``."""
        table = self.table
        n_states = table.n_states
        free = [f for f in range(len(n_states)) if n_states[f] > 1]
        meets = np.ones(len(table.low), dtype=bool)
        for f, (low, high) in intervals.items():
            meets &= (table.low[:, f] <= high) & (table.high[:, f] >= low)
        rows = np.flatnonzero(meets)
        columns = np.asarray(free, dtype=np.int64)
        lows = table.low.take(rows, axis=0).take(columns, axis=1)
        highs = table.high.take(rows, axis=0).take(columns, axis=1)
        for j, f in enumerate(free):
            if f in intervals:
                low, high = intervals[f]
                np.maximum(lows[:, j], low, out=lows[:, j])
                np.minimum(highs[:, j], high, out=highs[:, j])
        return free, rows, lows, highs

    def free_boxes(self, fixed: Sequence[int], rows: np.ndarray) -> tuple[list[int], np.ndarray, np.ndarray]:
        """The free features (those not in ``fixed`` with several states) and the boxes of the
        leaves ``rows`` on them: ``(free, lows, highs)``, one column per free feature."""
        n_states = self.table.n_states
        fixed_set = set(fixed)
        free = [f for f in range(len(n_states)) if f not in fixed_set and n_states[f] > 1]
        columns = np.asarray(free, dtype=np.int64)
        # rows then columns (cheaper than one ``np.ix_`` selection)
        low = self.table.low.take(rows, axis=0).take(columns, axis=1)
        return free, low, self.table.high.take(rows, axis=0).take(columns, axis=1)

    # ------------------------------------------------------------------ evaluating points
    def cells(self, f: int, lows: np.ndarray, highs: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """One state of ``f`` per cell of ``lo..hi`` cut by the leaf boxes ``lows..highs`` (on
        ``f``) of the leaves a point can reach: states in one cell send every point, whatever its
        other states, to the same leaves, so one state per cell decides them all. The state is the
        cell's first one the encoding allows; a cell with none is left out."""
        bounds = np.concatenate((lows, highs + 1, [lo]))
        starts = np.unique(bounds[(bounds >= lo) & (bounds <= hi)])
        ends = np.append(starts[1:] - 1, hi)
        allowed = self.table.allowed[f]
        at = np.searchsorted(allowed, starts)
        picked = allowed[np.minimum(at, len(allowed) - 1)]
        return picked[(at < len(allowed)) & (picked <= ends)]

    def evaluate(
        self, points: np.ndarray, free: list[int], rows: np.ndarray, kind: str, cls: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """For state rows ``points`` (the free features' states, the instance's elsewhere; every
        leaf they reach among ``rows``): whether the condition holds exactly, and its float64
        margin (positive when it holds).

        The leaves reached are found by testing every point against the boxes of ``rows`` when
        there are few of them (most features fixed), else by walking the trees."""
        table = self.table
        forest = table.forest
        if len(rows) * max(len(free), 1) <= 2 * forest.n_trees * max(table.depth, 1):
            inside = np.ones((len(points), len(rows)), dtype=bool)
            for j, f in enumerate(free):
                column = points[:, j : j + 1]
                inside &= (column >= table.low[rows, f]) & (column <= table.high[rows, f])
            sums = inside.astype(np.float64) @ table.score[rows]

            def reached(p: int) -> np.ndarray:
                return rows[inside[p]]
        else:
            full = np.broadcast_to(self.states, (len(points), len(self.states))).copy()
            full[:, free] = points
            leaves = table.row_of_node[forest.flat.tree_leaves(full) + forest.flat.first_nodes]  # (points, trees)
            sums = table.score[leaves].sum(axis=1)

            def reached(p: int) -> np.ndarray:
                return leaves[p]

        winners = np.argmax(sums, axis=1)
        if table.soft and sums.shape[1] > 1:
            top_two = np.sort(sums, axis=1)[:, -2:]
            for p in np.flatnonzero(top_two[:, 1] - top_two[:, 0] <= NEAR_TIE):
                winners[p] = self.exact_winner(reached(int(p)))
        others = sums.copy()
        others[:, cls] = -np.inf
        if kind == "not":
            return winners != cls, others.max(axis=1) - sums[:, cls]
        return winners == cls, sums[:, cls] - others.max(axis=1)

    def witness(self, free: list[int], point: np.ndarray) -> Answer:
        witness = self.states.copy()
        witness[free] = point
        found = tuple(witness.tolist())
        self._found = [found, *(w for w in self._found if w != found)][: self.tuning.warm_starts]
        return Answer(True, found)

    def starts(self, free: list[int], cells: Sequence[np.ndarray]) -> np.ndarray:
        """The latest counterexamples found, on the free features ``free``, as the indices of
        their cells, whose sorted first states are ``cells[j]`` (a state is in the last cell
        starting at or below it): starting points of a climb."""
        found = np.asarray(self._found, dtype=np.int64).reshape(len(self._found), len(self.states))
        starts = np.zeros((len(found), len(free)), dtype=np.int64)
        for j, (f, reps) in enumerate(zip(free, cells)):
            starts[:, j] = np.maximum(np.searchsorted(reps, found[:, f], side="right") - 1, 0)
        return starts

    def decide_ties(
        self, free: list[int], points: np.ndarray, rows: np.ndarray, kind: str, cls: int, overflow: bool
    ) -> Answer | None:
        """After a branch and bound found no witness: the soft-vote near-tie ``points`` it set
        aside, decided exactly (the first where the condition holds is the witness); ``None``
        when more were set aside than kept (``overflow``) and none of those holds."""
        if len(points):
            holds, _ = self.evaluate(points, free, rows, kind, cls)
            hits = np.flatnonzero(holds)
            if len(hits):
                return self.witness(free, points[hits[0]])
        return None if overflow else Answer(False)

    def exact_winner(self, leaves: np.ndarray) -> int:
        return soft_winner([sum(column) for column in zip(*(self.table.exact[i] for i in leaves))])


def pack_bits(flags: np.ndarray) -> np.ndarray:
    """A boolean matrix's rows as 64-bit words: bit ``j % 64`` of word ``j // 64`` is column ``j``."""
    words = (flags.shape[1] + 63) // 64
    padded = np.zeros((flags.shape[0], 64 * words), dtype=bool)
    padded[:, : flags.shape[1]] = flags
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").astype(np.uint64)
