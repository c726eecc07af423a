"""General sufficient and necessary reasons and shortest flips from box questions.

The general reason of a decision and its variable-minimal prime implicants and implicates, the
general sufficient and necessary reasons, are Darwiche and Ji's (2023) [DJ23]; the shortest flips
are the shortest general necessary reasons of Ji and Darwiche (2026), Section 4 [JD26]
(docs/design.md, section 2). Let ``v`` be the instance and ``c`` its decision. The general reason
is locally fixated on ``v`` (every hybrid of a model and ``v`` is a model), which reduces both
kinds to the sufficient and necessary reasons an engine already enumerates:

- **general sufficient reasons (GSR)**: their feature sets are the AXps. For an AXp ``S`` they
  are the maximal boxes ``B`` (a set of states ``B_f`` per feature of ``S``, the other features
  free) that hold ``v`` and no input decided otherwise: a box holding ``v`` lies inside the
  general reason iff every input in it is decided ``c``.
- **general necessary reasons (GNR)**: their feature sets are the CXps. For a CXp ``W``, a
  maximal box disjoint from the general reason never holds ``v_f`` on a feature of ``W`` and,
  ``W`` being subset-minimal, each of its inputs with the other features on ``v``'s states is
  decided otherwise: the GNRs of ``W`` are the maximal such *flip boxes* ``B``, reported as the
  clauses ``OR_{f in W} x_f in D_f \\ B_f``.
- **shortest flips**: the GNRs of the minimum CXps; their flip boxes hold every input decided
  otherwise at minimum Hamming distance from ``v``. The minimum CXps are the minimum hitting
  sets of the AXps (:func:`minimum_flip_sets`).

A box avoids a set of inputs iff each of them has, on some feature ``f``, a state removed from
``B_f``: the maximal boxes are the complements of the minimal hitting sets of the removed states.
:func:`maximal_boxes` enumerates them by implicit hitting-set dualisation [BS05] (as the AXp/CXp
duality of the SAT engine's enumerations [Ign20]): a SAT solver proposes a hitting set of the
*regions* (boxes of inputs to avoid) found so far, shrunk to a minimal one; a box question then
finds an input of the candidate box to avoid, widened to a region, or proves the box good (it is
then maximal, since every larger box meets a region, and is blocked). The states of a feature
are grouped in *blocks* that no input can tell apart (each state alone for a GSR, whose other
features are free; for a GNR, the states between two thresholds that a tree reachable with the
other features on ``v``'s states tests).

Regions: for a GSR, a found input's *cell*, the box of states that reach the same leaf in every
tree (any vote decides a cell alike). For a GNR whose flip boxes span at most ``grid_points``
blocks, the whole grid of blocks is decided at once (:meth:`Forest.predict_states`), candidates
are checked on it and an input is widened to a maximal box of the grid decided like the
instance, a candidate the grid finds good being asked of the engine, so that every answer is the
engine's; on a larger grid, an input is widened by inflation [IISM24] (bisection over the blocks,
:func:`~rfexplain.engines.inflation.inflate`) while the engine finds no input decided otherwise.

Each engine supplies the box questions (:meth:`~rfexplain.engines.base.EngineBase.box_counterexample`
and :meth:`~rfexplain.engines.base.EngineBase.box_example`) and the enumerations of AXps and
CXps; the results are exact, the same sets on every engine, each feature set's boxes in the
order of their state sets.

References
----------
[DJ23] A. Darwiche and C. Ji. A new class of explanations for classifiers with non-binary
features. JELIA 2023.
[JD26] C. Ji and A. Darwiche. Circuit representations of random forests with applications to XAI.
arXiv:2602.08362, 2026.
[BS05] J. Bailey and P. J. Stuckey. Discovery of minimal unsatisfiable subsets of constraints
using hitting set dualization. PADL 2005.
[Ign20] A. Ignatiev, N. Narodytska, N. Asher and J. Marques-Silva. From contrastive to abductive
explanations and back again. AIxIA 2020.
[IISM24] Y. Izza, A. Ignatiev, P. J. Stuckey and J. Marques-Silva. Delivering inflated
explanations. AAAI 2024.
[IPLM15] A. Ignatiev, A. Previti, M. Liffiton and J. Marques-Silva. Smallest MUS extraction with
minimal hitting set dualization. CP 2015.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Protocol

import numpy as np
from pysat.examples.hitman import Hitman
from pysat.solvers import Solver

from rfexplain.core.bits import bits_of, mask_of
from rfexplain.core.budget import Budget
from rfexplain.core.forest import Forest
from rfexplain.core.reasons import Reason, Witness
from rfexplain.engines.inflation import inflate

__all__ = [
    "Box",
    "Cells",
    "maximal_boxes",
    "general_sufficient",
    "general_necessary",
    "minimum_flip_sets",
    "by_runs",
    "interval_runs",
    "interval_parts",
    "GRID_POINTS",
    "RUN_BOXES",
]

#: Feature -> the states a box allows on it.
Box = dict[int, frozenset[int]]
#: Feature -> block indices: a region of inputs to avoid, or a hitting set's removed blocks.
Blocks = dict[int, frozenset[int]]
#: A box question: an input of the box (a state vector) to avoid, or ``None`` when there is none.
Question = Callable[[Box], "tuple[int, ...] | None"]
#: The region of inputs to avoid around an input the box question found.
Widen = Callable[["tuple[int, ...]"], Blocks]

#: The most blocks a GNR's flip boxes may span for the grid of blocks to be decided at once.
GRID_POINTS = 1 << 15
#: The most boxes of intervals :func:`by_runs` splits a box question into.
RUN_BOXES = 16
#: Rows of one :meth:`Forest.predict_states` call over the grid.
_CHUNK = 1 << 14


class Instance(Protocol):
    """What these functions read of an :class:`~rfexplain.engines.base.Instance`."""

    @property
    def values(self) -> tuple[float, ...]: ...
    @property
    def states(self) -> tuple[int, ...]: ...
    @property
    def prediction(self) -> int: ...


class Cells:
    """The cell of an input: per feature, the interval of states for which every tree reaches
    the same leaf (the intersection of the leaves' boxes, :meth:`FlatForest.leaf_boxes`)."""

    def __init__(self, forest: Forest) -> None:
        self.flat = forest.flat
        self.nodes, self.low, self.high = self.flat.leaf_boxes()

    def __call__(self, z: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)``: the cell's inclusive bounds per feature."""
        reached = self.flat.tree_leaves(np.asarray(z, dtype=np.int64))[0] + self.flat.first_nodes
        rows = np.searchsorted(self.nodes, reached)
        return self.low[rows].max(axis=0), self.high[rows].min(axis=0)

    def region(self, blocks: Mapping[int, Sequence[frozenset[int]]], z: Sequence[int]) -> Blocks:
        """The blocks of each feature of ``blocks`` that meet the cell of ``z`` (blocks no input
        tells apart: a block meeting the cell is decided like it)."""
        low, high = self(z)
        return {
            f: frozenset(k for k, block in enumerate(bs) if any(low[f] <= s <= high[f] for s in block))
            for f, bs in blocks.items()
        }


def interval_runs(states: frozenset[int]) -> list[frozenset[int]]:
    """The maximal intervals of consecutive states of a set, in order."""
    ordered = sorted(states)
    starts = [k for k in range(len(ordered)) if k == 0 or ordered[k] != ordered[k - 1] + 1]
    return [frozenset(ordered[a:b]) for a, b in zip(starts, [*starts[1:], len(ordered)])]


def interval_parts(
    box: Mapping[int, frozenset[int]], limit: int, categorical: Callable[[int], bool] = lambda f: False
) -> Iterator[Box] | None:
    """The boxes of intervals that make up ``box``, in order (each set of states of a feature
    not ``categorical`` split in its runs of consecutive states, :func:`interval_runs`; the box
    holds an input iff one of its parts does); ``None`` when they would be more than ``limit``."""
    runs = [[states] if categorical(f) else interval_runs(states) for f, states in box.items()]
    if math.prod(map(len, runs)) > limit:
        return None
    return (dict(zip(box, part)) for part in itertools.product(*runs))


def by_runs(question: Question, categorical: Callable[[int], bool]) -> Question:
    """``question`` asked of a box one box of intervals at a time (:func:`interval_parts` of its
    numeric features), when that makes at most :data:`RUN_BOXES` parts: engines answer boxes of
    intervals fastest (the SAT engine's deciders take them; a set with gaps goes to its full
    formula)."""

    def ask(box: Box) -> tuple[int, ...] | None:
        parts = interval_parts(box, RUN_BOXES, categorical)
        if parts is None:
            return question(box)
        for part in parts:
            z = question(part)
            if z is not None:
                return z
        return None

    return ask


class _Hitting:
    """Minimal hitting sets of regions over (feature, block) elements, one region at a time.

    A region is hit when, on one of its features ``f``, every block of its set ``R_f`` is removed;
    an element's variable says the block is removed. The solver holds the regions (one auxiliary
    variable per alternative of more than one block), the blocked hitting sets and the caller's
    clauses; a model is shrunk to a minimal hitting set by putting back removed blocks in order
    while every region stays hit (the regions are monotone in the removed blocks, the other
    clauses antitone)."""

    def __init__(self, elements: Sequence[tuple[int, int]]) -> None:
        self.var = {element: k + 1 for k, element in enumerate(elements)}
        self.element = {k: element for element, k in self.var.items()}
        self.solver = Solver(name="m22")
        self.top = len(elements)
        #: Blocks per feature (one more than the largest block index among the elements).
        self.n_blocks: dict[int, int] = {}
        for f, b in elements:
            self.n_blocks[f] = max(self.n_blocks.get(f, 0), b + 1)
        #: Per feature, the alternatives of the regions added since :meth:`tables` last ran:
        #: (region index, its blocks on the feature).
        self.alternatives: dict[int, list[tuple[int, frozenset[int]]]] = {f: [] for f in self.n_blocks}
        self.n_regions = 0
        self._tables: dict[int, tuple[np.ndarray, np.ndarray]] = {
            f: (np.zeros(0, dtype=np.int64), np.zeros((0, n), dtype=bool)) for f, n in self.n_blocks.items()
        }

    def add_region(self, region: Blocks) -> None:
        if not region:
            raise RuntimeError("internal error: a box question found an input that no box can avoid")
        clause = []
        for f, ks in sorted(region.items()):
            self.alternatives[f].append((self.n_regions, ks))
            lits = [self.var[(f, b)] for b in sorted(ks)]
            if len(lits) == 1:
                clause.append(lits[0])
                continue
            self.top += 1
            clause.append(self.top)
            for lit in lits:
                self.solver.add_clause([-self.top, lit])
        self.n_regions += 1
        self.solver.add_clause(clause)

    def tables(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Per feature: the regions of its alternatives and their blocks (alternatives x blocks),
        in the order the regions were added (the rows of the regions added since the last call
        appended)."""
        for f, alternatives in self.alternatives.items():
            if not alternatives:
                continue
            members = np.zeros((len(alternatives), self.n_blocks[f]), dtype=bool)
            for row, (_, ks) in enumerate(alternatives):
                members[row, sorted(ks)] = True
            ids = np.asarray([r for r, _ in alternatives], dtype=np.int64)
            old_ids, old_members = self._tables[f]
            self._tables[f] = (np.concatenate((old_ids, ids)), np.concatenate((old_members, members)))
            alternatives.clear()
        return self._tables

    def next(self) -> dict[int, int] | None:
        """A minimal hitting set not blocked yet (feature -> bit set of removed blocks), or None."""
        if not self.solver.solve():
            return None
        model = self.solver.get_model()
        removed = sorted(self.element[lit] for lit in model if 0 < lit <= len(self.element))
        tables = self.tables()
        chosen = {f: np.zeros(n, dtype=bool) for f, n in self.n_blocks.items()}
        for f, b in removed:
            chosen[f][b] = True
        # an alternative is met when every block of it is removed; a region is hit by its met ones
        met: dict[int, np.ndarray] = {f: ~np.any(members & ~chosen[f], axis=1) for f, (_, members) in tables.items()}
        hits = np.zeros(self.n_regions, dtype=np.int64)
        for f, (ids, _) in tables.items():
            hits += np.bincount(ids[met[f]], minlength=self.n_regions)
        for f, b in removed:
            # the alternatives on ``f`` holding ``b`` that are met now break without it (a region
            # has one alternative per feature)
            ids, members = tables[f]
            broken = met[f] & members[:, b]
            regions = ids[broken]
            if np.any(hits[regions] == 1):
                continue
            chosen[f][b] = False
            met[f][broken] = False
            hits[regions] -= 1
        return {f: mask_of(np.flatnonzero(bits).tolist()) for f, bits in chosen.items() if bits.any()}

    def block(self, chosen: Mapping[int, int]) -> None:
        """No later hitting set contains ``chosen``."""
        self.solver.add_clause([-self.var[(f, b)] for f, bits in sorted(chosen.items()) for b in bits_of(bits)])

    def close(self) -> None:
        self.solver.delete()


def maximal_boxes(
    blocks: Mapping[int, Sequence[frozenset[int]]],
    keep: Mapping[int, int],
    question: Question,
    widen: Widen,
    budget: Budget,
    first: Box | None = None,
) -> Iterator[Box]:
    """Every maximal box made of the ``blocks`` of each feature (feature -> its blocks of states)
    that holds the block ``keep[f]`` on each feature of ``keep``, a block on every other feature,
    and no input ``question`` finds, in the order found (``first``, a maximal one found before,
    first).

    Implicit hitting-set dualisation (see the module docstring): each candidate is the complement
    of a minimal hitting set of the regions found so far (``widen`` turns a found input into its
    region); ``question`` proves it good (it is then maximal: a larger box meets a region) or
    finds an input of it to avoid."""
    features = sorted(blocks)
    elements = [(f, k) for f in features for k in range(len(blocks[f])) if keep.get(f) != k]
    hitting = _Hitting(elements)
    try:
        for f in features:
            if f not in keep:
                hitting.solver.add_clause([-hitting.var[(f, k)] for k in range(len(blocks[f]))])
        chosen: dict[int, int] | None = None
        if first is not None:
            chosen = {f: mask_of(k for k, block in enumerate(blocks[f]) if not block <= first[f]) for f in features}
            chosen = {f: bits for f, bits in chosen.items() if bits}
        while True:
            if chosen is None:
                budget.check("enumerating maximal boxes")
                chosen = hitting.next()
                if chosen is None:
                    return
            box = {
                f: frozenset(s for k, block in enumerate(blocks[f]) if not chosen.get(f, 0) >> k & 1 for s in block)
                for f in features
            }
            z = None if box == first else question(box)
            if z is None:
                yield box
                if not chosen:
                    return  # every block: the only maximal box
                hitting.block(chosen)
            else:
                region = widen(z)
                hitting.add_region({f: ks for f, ks in region.items() if not (f in keep and keep[f] in ks)})
            chosen = None
    finally:
        hitting.close()


def _in_order(boxes: Iterable[Box]) -> list[Box]:
    """Boxes sorted by their state sets (bit sets, in feature order)."""
    return sorted(boxes, key=lambda box: tuple(mask_of(box[f]) for f in sorted(box)))


def _grown(
    forest: Forest,
    instance: Instance,
    features: Sequence[int],
    categorical: Callable[[int], bool],
    question: Question,
) -> Box:
    """A maximal box around the instance's states on ``features`` that holds no input ``question``
    finds (an input decided otherwise): the inflated box (:func:`~rfexplain.engines.inflation.inflate`),
    then each state left out of a numeric feature's interval added, in order, when the box stays
    good. An input ``z`` found against state ``s`` refuses at once every state ``s'`` for which
    ``z`` with ``s'`` on that feature is still decided otherwise (it lies in the box with ``s'``).
    A state refused once stays refused as the box grows, so no state can be added at the end."""
    n_states = forest.states_per_feature
    box, _ = inflate(features, instance.states, n_states, categorical, question)
    for f in features:
        if categorical(f):
            continue
        left = [s for s in range(n_states[f]) if s not in box[f]]
        while left:
            s = left.pop(0)
            z = question({**box, f: box[f] | {s}})
            if z is None:
                box[f] = box[f] | {s}
                continue
            moved = np.tile(np.asarray(z, dtype=np.int64), (len(left), 1))
            moved[:, f] = left
            decided = forest.predict_states(moved) if left else np.zeros(0, dtype=np.int64)
            left = [t for t, c in zip(left, decided.tolist()) if c == instance.prediction]
    return box


def general_sufficient(
    forest: Forest, instance: Instance, axps: Iterable[Reason], counterexample: Question, budget: Budget
) -> Iterator[Reason]:
    """The GSRs of ``instance``: for each AXp of ``axps`` in turn, its maximal boxes holding the
    instance and no input ``counterexample`` finds (a state vector of the box, the features off
    the AXp free, decided otherwise), the one grown from the AXp by inflation first (:func:`_grown`,
    a few questions per feature), then the others as :func:`maximal_boxes` finds them. Each
    carries its AXp's witnesses: an input decided otherwise that meets every other literal (they
    hold the instance's states) and breaks the literal of its ``dropped`` feature (it would be in
    the box otherwise)."""
    cells = Cells(forest)
    n_states = forest.states_per_feature
    categorical = partial(_categorical, forest)
    question = by_runs(counterexample, categorical)
    for axp in axps:
        features = sorted(axp.features)
        blocks = {f: [frozenset({s}) for s in range(n_states[f])] for f in features}
        keep = {f: instance.states[f] for f in blocks}
        first = _grown(forest, instance, features, categorical, question)
        for box in maximal_boxes(blocks, keep, question, partial(cells.region, blocks), budget, first):
            yield Reason.of(
                "general_sufficient",
                box,
                space=forest.space,
                instance=instance.values,
                decision=instance.prediction,
                witnesses=axp.witnesses,
            )


def _categorical(forest: Forest, f: int) -> bool:
    return forest.space.category_labels(f) is not None


class _FlipSpace:
    """The inputs of a CXp ``W``'s flip boxes: the features of ``W`` off the instance's states,
    the others on them, in blocks of states no such input tells apart (the cuts of the leaves
    reachable with the other features on the instance's states); with at most ``grid_points``
    blocks in all, the grid of blocks decided at once, True where decided like the instance."""

    def __init__(self, forest: Forest, cells: Cells, instance: Instance, cxp: Iterable[int], grid_points: int) -> None:
        n_states = forest.states_per_feature
        v = instance.states
        self.features = sorted(cxp)
        self.instance = instance
        self.rest: Box = {
            g: frozenset({v[g]}) for g in range(forest.n_features) if g not in self.features and n_states[g] > 1
        }
        reachable = np.ones(len(cells.nodes), dtype=bool)
        for g, (state,) in self.rest.items():
            reachable &= (cells.low[:, g] <= state) & (state <= cells.high[:, g])
        self.blocks: dict[int, list[frozenset[int]]] = {}
        for f in self.features:
            cuts = np.union1d(cells.low[reachable, f], cells.high[reachable, f] + 1)
            edges = [0, *(int(c) for c in cuts if 0 < c < n_states[f]), n_states[f]]
            spans = (frozenset(range(a, b)) - {v[f]} for a, b in zip(edges, edges[1:]))
            self.blocks[f] = [span for span in spans if span]
        self.categorical = partial(_categorical, forest)
        shape = tuple(len(self.blocks[f]) for f in self.features)
        self.same: np.ndarray | None = None
        if math.prod(shape) <= grid_points:
            index = np.indices(shape).reshape(len(shape), -1).T
            points = np.tile(np.asarray(v, dtype=np.int64), (len(index), 1))
            for i, f in enumerate(self.features):
                points[:, f] = np.asarray([min(block) for block in self.blocks[f]], dtype=np.int64)[index[:, i]]
            decided = np.concatenate(
                [forest.predict_states(points[i : i + _CHUNK]) for i in range(0, len(points), _CHUNK)]
            )
            self.same = (decided == instance.prediction).reshape(shape)
        #: Per feature, the block of each state (-1 for the instance's own state).
        self.block_of = {f: np.full(n_states[f], -1, dtype=np.int64) for f in self.features}
        for f in self.features:
            for k, block in enumerate(self.blocks[f]):
                self.block_of[f][sorted(block)] = k

    def question(self, example: Question) -> Question:
        """The box question: the grid first when there is one, then ``example`` (the engine's),
        with the features off ``W`` on the instance's states, one box of intervals at a time."""
        engine = by_runs(partial(_within, example, self.rest), self.categorical)

        def ask(box: Box) -> tuple[int, ...] | None:
            if self.same is not None:
                kept = [sorted(k for k, block in enumerate(self.blocks[f]) if block <= box[f]) for f in self.features]
                hits = np.argwhere(self.same[np.ix_(*kept)])
                if len(hits):
                    z = list(self.instance.states)
                    for i, f in enumerate(self.features):
                        z[f] = min(self.blocks[f][kept[i][hits[0][i]]])
                    return tuple(z)
            return engine(box)

        return ask

    def widen(self, counterexample: Question) -> Widen:
        """The region around an input ``z`` decided like the instance: on the grid, the largest
        box (in feature and block order) decided so; else the box of blocks around ``z``'s
        inflated by :func:`~rfexplain.engines.inflation.inflate` (bisection over numeric blocks,
        categorical ones one by one) while ``counterexample`` (the engine's) finds no input of
        it decided otherwise."""
        if self.same is not None:
            return self._widen_on_grid
        n_blocks = [len(self.blocks.get(f, ())) for f in range(len(self.instance.states))]

        def inside(region: Mapping[int, frozenset[int]]) -> tuple[int, ...] | None:
            # a numeric feature's blocks asked with the instance's state between them: an interval,
            # and a stronger question (its "no input decided otherwise" holds for the blocks too)
            box = {f: self._states(f, ks) for f, ks in region.items()}
            return counterexample({**self.rest, **box})

        def widen(z: tuple[int, ...]) -> Blocks:
            start = [int(self.block_of[f][z[f]]) if f in self.block_of else 0 for f in range(len(z))]
            region, _ = inflate(self.features, start, n_blocks, self.categorical, inside, jumps=False)
            return region

        return widen

    def _states(self, f: int, ks: Iterable[int]) -> frozenset[int]:
        """The states of the blocks ``ks`` of ``f``, with the instance's state when it lies
        between them on a numeric feature."""
        states = frozenset(s for k in ks for s in self.blocks[f][k])
        if not self.categorical(f) and min(states) < self.instance.states[f] < max(states):
            return states | {self.instance.states[f]}
        return states

    def _widen_on_grid(self, z: tuple[int, ...]) -> Blocks:
        assert self.same is not None
        region = [[int(self.block_of[f][z[f]])] for f in self.features]
        if not self.same[tuple(r[0] for r in region)]:
            raise RuntimeError(f"internal error: the engine decides {z} like the instance, the forest does not")
        for i, f in enumerate(self.features):
            for k in range(len(self.blocks[f])):
                if k != region[i][0] and self.same[np.ix_(*region[:i], [k], *region[i + 1 :])].all():
                    region[i].append(k)
        return {f: frozenset(region[i]) for i, f in enumerate(self.features)}


def _within(question: Question, rest: Box, box: Box) -> tuple[int, ...] | None:
    """``question`` about ``box`` with the features of ``rest`` on its states."""
    return question({**rest, **box})


def general_necessary(
    forest: Forest,
    instance: Instance,
    cxps: Iterable[frozenset[int]],
    example: Question,
    counterexample: Question,
    budget: Budget,
    *,
    grid_points: int = GRID_POINTS,
) -> Iterator[Reason]:
    """The GNRs of ``instance`` over the CXps ``cxps`` (feature sets), in turn: the maximal flip
    boxes of each (its features off the instance's states, the other features on them, no input
    ``example`` finds: a state vector of the box decided like the instance), as clauses of the
    states outside the box; ``counterexample`` (an input of a box decided otherwise) widens the
    inputs to avoid off the grid. The witness is the box's input of lowest states, decided
    otherwise."""
    cells = Cells(forest)
    n_states = forest.states_per_feature
    for cxp in cxps:
        space = _FlipSpace(forest, cells, instance, cxp, grid_points)
        boxes = _in_order(maximal_boxes(space.blocks, {}, space.question(example), space.widen(counterexample), budget))
        points = [tuple(min(box[f]) if f in box else s for f, s in enumerate(instance.states)) for box in boxes]
        decided = forest.predict_states(np.asarray(points, dtype=np.int64)).tolist() if points else []
        for box, z, c in zip(boxes, points, decided):
            if c == instance.prediction:
                raise RuntimeError(f"internal error: the flip box {box} holds {z}, decided like the instance")
            yield Reason.of(
                "general_necessary",
                {f: frozenset(range(n_states[f])) - states for f, states in box.items()},
                space=forest.space,
                instance=instance.values,
                decision=instance.prediction,
                witnesses=[Witness(forest.values_for_states(z, instance.values), int(c))],
            )


def minimum_flip_sets(
    instance: Instance,
    n_states: Sequence[int],
    counterexample: Question,
    sufficient: Callable[[Sequence[int]], Reason],
    budget: Budget,
) -> Iterator[frozenset[int]]:
    """Every minimum CXp of ``instance``, by implicit minimum hitting sets of AXps (the smallest-MUS
    scheme of Ignatiev, Previti, Liffiton and Marques-Silva (2015) [IPLM15], on the AXp/CXp
    duality [Ign20]): a minimum hitting set ``H`` of the AXps found so far (RC2 inside python-sat's
    ``Hitman``) is a minimum CXp iff freeing ``H`` (the other features on the instance's states)
    lets ``counterexample`` find an input decided otherwise, since every CXp hits every AXp; when
    it does not, the canonical AXp ``sufficient(order)`` with ``H`` first in ``order`` lies off
    ``H`` and is the next set to hit; the other features follow in decreasing count of the AXps
    found so far that hold them (deleted first, they are left out of the new AXp when they can
    be, which makes it unlike the ones before). Found CXps are blocked; the enumeration ends when
    the smallest hitting set left is larger (or none is left: the decision cannot be flipped)."""
    relevant = [f for f, n in enumerate(n_states) if n > 1]
    hitman = Hitman(htype="sorted", solver="g3")
    try:
        chosen: list[int] | None = []
        size: int | None = None
        seen: Counter[int] = Counter()  # how many AXps found so far hold each feature
        while chosen is not None and (size is None or len(chosen) <= size):
            budget.check("computing minimum necessary reasons")
            free = frozenset(chosen)
            if counterexample({g: frozenset({instance.states[g]}) for g in relevant if g not in free}) is not None:
                size = len(free)
                yield free
                hitman.block(sorted(free))
            else:
                rest = sorted((f for f in range(len(n_states)) if f not in free), key=lambda f: (-seen[f], f))
                axp = sufficient([*sorted(free), *rest]).features
                if not axp:
                    return  # the decision is constant: nothing flips it
                seen.update(axp)
                hitman.hit(sorted(axp))
            chosen = hitman.get()
    finally:
        hitman.delete()
