"""General sufficient and necessary reasons and shortest flips from box questions.

The definitions are Darwiche and Ji's (2022) general reason and its variable-minimal prime
implicants and implicates [DJ22], with the shortest flips of Ji and Darwiche (2026), Section 4
[JD26] (docs/design.md, section 2). Let ``v`` be the instance and ``c`` its decision. The general
reason is locally fixated on ``v`` (every hybrid of a model and ``v`` is a model), which reduces
both kinds to the sufficient and necessary reasons an engine already enumerates:

- **general sufficient reasons (GSR)**: their feature sets are the AXps. For an AXp ``S``, they
  are the maximal boxes ``B`` (a set of states ``B_f`` per feature of ``S``, the other features
  free) that contain ``v`` and hold no input decided otherwise: a box holding ``v`` lies inside
  the general reason iff every input in it is decided ``c``.
- **general necessary reasons (GNR)**: their feature sets are the CXps. For a CXp ``W``, a
  maximal box ``B`` disjoint from the general reason never holds ``v_f`` on a feature of ``W``,
  and (``W`` being subset-minimal) every input of ``B`` with the other features at ``v``'s
  states is decided otherwise: the GNRs of ``W`` are the maximal such *flip boxes*, reported as
  the clauses ``OR_{f in W} x_f in D_f \\ B_f``.
- **shortest flips**: the GNRs of the minimum CXps, whose flip boxes hold every input decided
  otherwise at minimum Hamming distance from ``v``.

A box avoids a set of inputs iff, for every such input ``p``, some feature ``f`` has
``p_f`` removed from ``B_f``: the maximal boxes are the complements of the minimal hitting sets
of the (feature, state) pairs. :func:`maximal_boxes` enumerates them by implicit hitting-set
dualisation (Bailey and Stuckey, 2005; the AXp/CXp duality of Ignatiev et al., 2020, as the
SAT engine's enumerations use it): a SAT solver proposes a hitting set of the regions found so
far, shrunk to a minimal one; the engine's box question either finds an input of the candidate
box that must be avoided, or proves the box good (it is then maximal, and blocked). A found
input is widened to its *cell*, the box of states that reach the same leaf in every tree (any
vote decides its whole cell alike), so one question rules out a whole region.

Each engine supplies the box questions (:meth:`~rfexplain.engines.base.EngineBase.box_counterexample`
and :meth:`~rfexplain.engines.base.EngineBase.box_example`) and the enumerations of AXps and
CXps; the results are exact and the same sets on every engine.

References
----------
[DJ22] A. Darwiche and C. Ji. On the computation of necessary and sufficient explanations.
AAAI 2022.
[JD26] C. Ji and A. Darwiche. Circuit representations of random forests with applications to XAI.
[BS05] J. Bailey and P. J. Stuckey. Discovery of minimal unsatisfiable subsets of constraints
using hitting set dualization. PADL 2005.
[IMS20] A. Ignatiev, N. Narodytska, N. Asher and J. Marques-Silva. From contrastive to abductive
explanations and back again. AIxIA 2020.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Protocol

import numpy as np
from pysat.solvers import Solver

from rfexplain.core.bits import bits_of, mask_of
from rfexplain.core.budget import Budget
from rfexplain.core.forest import Forest
from rfexplain.core.reasons import Reason, Witness


class Instance(Protocol):
    """What these functions read of an :class:`~rfexplain.engines.base.Instance`."""

    @property
    def values(self) -> tuple[float, ...]: ...
    @property
    def states(self) -> tuple[int, ...]: ...
    @property
    def prediction(self) -> int: ...


__all__ = ["Box", "Cells", "maximal_boxes", "general_sufficient", "general_necessary"]

#: Feature -> the states a box allows on it.
Box = dict[int, frozenset[int]]
#: A box question: an input of the box (a state vector) to avoid, or ``None`` when there is none.
Question = Callable[[Box], "tuple[int, ...] | None"]


class Cells:
    """The cell of an input: per feature, the interval of states for which every tree reaches
    the same leaf (the intersection of the leaves' boxes, :meth:`FlatForest.leaf_boxes`)."""

    def __init__(self, forest: Forest) -> None:
        self._flat = forest.flat
        self._nodes, self._low, self._high = self._flat.leaf_boxes()

    def __call__(self, z: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)``: the cell's inclusive bounds per feature."""
        reached = self._flat.tree_leaves(np.asarray(z, dtype=np.int64))[0] + self._flat.first_nodes
        rows = np.searchsorted(self._nodes, reached)
        return self._low[rows].max(axis=0), self._high[rows].min(axis=0)


class _Hitting:
    """Minimal hitting sets of regions over (feature, state) pairs, one region at a time.

    A region asks that, for one of its features ``f``, every state of its set ``R_f`` be removed;
    a pair's variable says it is removed. The solver holds the regions (one auxiliary variable per
    alternative of more than one state), the blocked hitting sets and the caller's extra clauses;
    a model is shrunk to a minimal hitting set by deleting pairs in order while every region stays
    hit (the regions are monotone in the removed pairs, the blocks and extra clauses antitone)."""

    def __init__(self, pairs: Sequence[tuple[int, int]]) -> None:
        self.var = {pair: k + 1 for k, pair in enumerate(pairs)}
        self.pair = {k: pair for pair, k in self.var.items()}
        self.solver = Solver(name="m22")
        self.top = len(pairs)
        #: Each region as its alternatives: (feature, bit set of states).
        self.regions: list[list[tuple[int, int]]] = []
        #: Pair -> the regions (and alternatives) it takes part in.
        self.uses: dict[tuple[int, int], list[tuple[int, int]]] = {pair: [] for pair in pairs}

    def add_region(self, alternatives: Mapping[int, frozenset[int]]) -> None:
        if not alternatives:
            raise RuntimeError("internal error: a box question returned an input no box can avoid")
        clause = []
        index = len(self.regions)
        region = []
        for k, (f, states) in enumerate(sorted(alternatives.items())):
            region.append((f, mask_of(states)))
            lits = [self.var[(f, s)] for s in sorted(states)]
            for s in states:
                self.uses[(f, s)].append((index, k))
            if len(lits) == 1:
                clause.append(lits[0])
                continue
            self.top += 1
            clause.append(self.top)
            for lit in lits:
                self.solver.add_clause([-self.top, lit])
        self.regions.append(region)
        self.solver.add_clause(clause)

    def next(self) -> dict[int, int] | None:
        """A minimal hitting set not blocked yet (feature -> bit set of removed states), or None."""
        if not self.solver.solve():
            return None
        model = self.solver.get_model()
        removed = sorted(self.pair[lit] for lit in model if 0 < lit <= len(self.pair))
        chosen: dict[int, int] = {}
        for f, s in removed:
            chosen[f] = chosen.get(f, 0) | 1 << s
        hits = [sum(1 for f, bits in region if bits & ~chosen.get(f, 0) == 0) for region in self.regions]
        for f, s in removed:
            # the alternatives on ``f`` holding ``s`` that ``chosen`` meets now break without it
            broken = [r for r, k in self.uses[(f, s)] if self.regions[r][k][1] & ~chosen[f] == 0]
            if any(hits[r] == 1 for r in broken):
                continue
            chosen[f] &= ~(1 << s)
            for r in broken:
                hits[r] -= 1
        return {f: bits for f, bits in chosen.items() if bits}

    def block(self, chosen: Mapping[int, int]) -> None:
        """No later hitting set contains ``chosen``."""
        self.solver.add_clause([-self.var[(f, s)] for f, bits in sorted(chosen.items()) for s in bits_of(bits)])

    def close(self) -> None:
        self.solver.delete()


def maximal_boxes(
    universe: Mapping[int, frozenset[int]],
    keep: Mapping[int, int],
    question: Question,
    cells: Cells,
    budget: Budget,
) -> list[Box]:
    """Every maximal box inside ``universe`` (feature -> states) that holds ``keep[f]`` on each
    feature of ``keep``, at least one state on every other feature, and no input ``question``
    reports, sorted by its state sets (as bit sets, in feature order).

    Implicit hitting-set dualisation (see the module docstring): each candidate is the complement
    of a minimal hitting set of the cells found so far; ``question`` proves it good (it is then
    maximal: a larger box misses a cell) or reports an input, whose cell must be avoided too."""
    features = sorted(universe)
    pairs = [(f, s) for f in features for s in sorted(universe[f]) if keep.get(f) != s]
    hitting = _Hitting(pairs)
    found: list[Box] = []
    try:
        for f in features:
            if f not in keep:
                hitting.solver.add_clause([-hitting.var[(f, s)] for s in sorted(universe[f])])
        while True:
            budget.check("enumerating maximal boxes")
            chosen = hitting.next()
            if chosen is None:
                break
            box = {f: frozenset(s for s in universe[f] if not chosen.get(f, 0) >> s & 1) for f in features}
            z = question(box)
            if z is None:
                found.append(box)
                if not chosen:
                    break  # the whole universe: the only maximal box
                hitting.block(chosen)
                continue
            low, high = cells(z)
            hitting.add_region(
                {
                    f: frozenset(s for s in universe[f] if low[f] <= s <= high[f])
                    for f in features
                    if not (f in keep and low[f] <= keep[f] <= high[f])
                }
            )
    finally:
        hitting.close()
    return sorted(found, key=lambda box: tuple(mask_of(box[f]) for f in features))


def general_sufficient(
    forest: Forest, instance: Instance, axps: Iterable[Reason], counterexample: Question, budget: Budget
) -> Iterator[Reason]:
    """The GSRs of ``instance``: for each AXp of ``axps`` in turn, its maximal boxes holding the
    instance and no input ``counterexample`` finds (a state vector of the box, the features off
    the AXp free, decided otherwise). Each carries its AXp's witnesses: an input decided otherwise
    that meets every other literal (they hold the instance's states) and breaks the literal of its
    ``dropped`` feature (it would be in the box otherwise)."""
    cells = Cells(forest)
    n_states = forest.states_per_feature
    for axp in axps:
        universe = {f: frozenset(range(n_states[f])) for f in sorted(axp.features)}
        keep = {f: instance.states[f] for f in universe}
        for box in maximal_boxes(universe, keep, counterexample, cells, budget):
            yield Reason.of(
                "general_sufficient",
                box,
                space=forest.space,
                instance=instance.values,
                decision=instance.prediction,
                witnesses=axp.witnesses,
            )


def _within(question: Question, rest: Box, box: Box) -> tuple[int, ...] | None:
    """``question`` about ``box`` with the features of ``rest`` on its states."""
    return question({**rest, **box})


def general_necessary(
    forest: Forest, instance: Instance, cxps: Iterable[Reason], example: Question, budget: Budget
) -> Iterator[Reason]:
    """The GNRs of ``instance`` over the CXps of ``cxps``, in turn: the maximal flip boxes of each
    (its features off the instance's states, the other features on them, no input ``example``
    finds: a state vector of the box decided like the instance), as clauses of the states outside
    the box. The witness is the box's input of lowest states, decided otherwise."""
    cells = Cells(forest)
    n_states = forest.states_per_feature
    v = instance.states
    for cxp in cxps:
        universe = {f: frozenset(range(n_states[f])) - {v[f]} for f in sorted(cxp.features)}
        rest = {g: frozenset({v[g]}) for g in range(forest.n_features) if g not in universe and n_states[g] > 1}
        boxes = maximal_boxes(universe, {}, partial(_within, example, rest), cells, budget)
        points = [tuple(min(box[f]) if f in box else v[f] for f in range(forest.n_features)) for box in boxes]
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
