"""The reduced CNF decider: one hard-vote question as a small CNF over the reachable leaves.

The SAT engine's formulas encode the whole forest once, over every threshold of every feature, and
an instance enters through assumptions (Izza and Marques-Silva (2021), Section 4 [IM21]). On
scikit-learn's unlimited-depth forests that formula is large (ring: 100 trees, 68,000 nodes,
thousands of thresholds per feature) and a query with seven or more features free can keep
Glucose busy for minutes, although the fixed features leave each tree only a few dozen reachable
leaves. This module writes the query itself, after the per-instance simplification the SAT
engine's issue asks for (the "lazy encoding of only the trees and paths an instance can reach"):

- each free feature ranges over its *cells* (:meth:`~rfexplain.sat.deciders.leaves.InstanceLeaves.cells`:
  states no reachable leaf tells apart), order-encoded (``cell > i`` variables, a chain);
- each tree whose reachable leaves all vote one class is a constant; every other tree gets a vote
  literal per class it can vote for, with one clause per reachable leaf (its box implies its
  class) and at most one vote per tree. Since a tree's reachable leaves partition the free box,
  every point makes exactly the right vote true;
- the vote with the exact tie rule as in :mod:`rfexplain.sat.encodings.votes` ("``w`` beats
  ``l``" is a cardinality constraint over the vote literals, constants moved to the bound): for
  "predicts ``t``" ``t`` beats every class, for "not ``c``" one constraint per challenger that
  can win at all, each in its own solver call (smallest constraint first).

The answer is exact (the CNF is the query restricted to the reachable leaves, which decide it);
a model's cells, each turned into its representative state, give the counterexample.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pysat.solvers import Solver

from rfexplain.sat.deciders.base import Answer, Question
from rfexplain.sat.deciders.leaves import InstanceLeaves
from rfexplain.sat.encodings.pool import VarPool
from rfexplain.sat.encodings.votes import at_least
from rfexplain.sat.tuning import DEFAULT_TUNING

__all__ = ["ReducedCnf", "ReducedQuery", "cell_ranges"]

Clause = list[int]


class ReducedCnf:
    """The reduced CNF decider of one question: the free features ``free`` with their ``cells``,
    the reachable leaves ``rows`` with their boxes ``lows..highs`` on them. Its CNF
    (:class:`ReducedQuery`) is built at its first turn, so that a question another decider
    settles first pays for no formula; each turn then solves for at most ``budget`` conflicts.
    :meth:`close` frees its solver."""

    name = "reduced_cnf"

    def __init__(
        self,
        leaves: InstanceLeaves,
        free: list[int],
        lows: np.ndarray,
        highs: np.ndarray,
        cells: list[np.ndarray],
        rows: np.ndarray,
        kind: str,
        cls: int,
        *,
        solver: str = "g3",
        card: str = DEFAULT_TUNING.reduced_card,
    ) -> None:
        self.leaves, self.free, self.lows, self.highs, self.cells, self.rows = leaves, free, lows, highs, cells, rows
        self.kind, self.cls, self.solver, self.card = kind, cls, solver, card
        #: the question's CNF and solver, once a turn has built them
        self.query: ReducedQuery | None = None

    def decide(self, question: Question, budget: int | None) -> Answer | None:
        """Solve for at most ``budget`` conflicts (``None``: to the end): a witness, UNSAT without
        a core, or ``None`` when the conflicts ran out first."""
        if self.query is None:
            table = self.leaves.table
            self.query = ReducedQuery(
                self.lows,
                self.highs,
                table.tree[self.rows],
                np.argmax(table.score[self.rows], axis=1),
                self.cells,
                table.forest.n_classes,
                self.kind,
                self.cls,
                solver=self.solver,
                card=self.card,
            )
        outcome = self.query.run(budget)
        if outcome is None:
            return None
        if not outcome:
            return Answer(False)
        return self.leaves.witness(self.free, np.asarray(self.query.witness))

    def close(self) -> None:
        if self.query is not None:
            self.query.close()


class ReducedQuery:
    """One hard-vote query as a CNF over its reachable leaves (the module's encoding), decided in
    rounds of a bounded number of conflicts, so that another search can take turns with it
    (the portfolio, :mod:`.portfolio`).

    Parameters
    ----------
    low, high : arrays of shape (leaves, free features)
        The reachable leaves' boxes on the free features (inclusive state ranges).
    trees, labels : arrays of shape (leaves,)
        Each leaf's tree index and class vote.
    cells : sequence of arrays
        Per free feature, the sorted representative states of its cells (every leaf boundary is a
        cell boundary; cells without an allowed state are left out).
    kind, cls : str, int
        ``"not"``: the forest does not predict ``cls``; ``"predicts"``: it predicts ``cls``.
    card : str
        The cardinality encoding (the tuning's ``reduced_card``; by default the k-modulo
        totalizer of Ogawa et al. (2013)).
    """

    def __init__(
        self,
        low: np.ndarray,
        high: np.ndarray,
        trees: np.ndarray,
        labels: np.ndarray,
        cells: Sequence[np.ndarray],
        n_classes: int,
        kind: str,
        cls: int,
        *,
        solver: str = "g3",
        card: str = DEFAULT_TUNING.reduced_card,
    ) -> None:
        self.cells = cells
        self.solver_name = solver
        #: The counterexample's free-feature states once :meth:`run` has found one.
        self.witness: tuple[int, ...] | None = None
        self._sat: Solver | None = None
        self.order, self.clauses, self.constraints = _encode(
            low, high, trees, labels, cells, n_classes, kind, cls, card
        )

    def run(self, conflicts: int | None) -> bool | None:
        """Go on solving for at most ``conflicts`` conflicts (``None``: to the end): True when a
        counterexample is found (:attr:`witness`), False when there is none, ``None`` when the
        conflicts ran out first (the next call resumes, learnt clauses kept)."""
        while self.constraints:
            if self._sat is None:
                self._sat = Solver(name=self.solver_name, bootstrap_with=self.clauses)
                self._sat.append_formula(self.constraints[0])
            if conflicts is None:
                outcome: bool | None = bool(self._sat.solve())
            else:
                self._sat.conf_budget(conflicts)
                outcome = self._sat.solve_limited()
            if outcome is None:
                return None
            if outcome:
                model = self._sat.get_model()
                assert model is not None
                true = {lit for lit in model if lit > 0}
                self.witness = tuple(
                    int(reps[sum(1 for x in chain if x in true)]) for reps, chain in zip(self.cells, self.order)
                )
                self.close()
                return True
            self.close()
            self.constraints.pop(0)  # this challenger cannot win: the next one
        return False

    def close(self) -> None:
        """Free the solver (a later :meth:`run` of the same constraint starts again)."""
        if self._sat is not None:
            self._sat.delete()
            self._sat = None


def cell_ranges(low: np.ndarray, high: np.ndarray, cells: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The leaves' boxes ``low..high`` (states, one column per free feature) as inclusive ranges
    of indices into each feature's ``cells`` (its cells' sorted representative states); a range
    with first > last holds no allowed cell."""
    first = np.empty(low.shape, dtype=np.int64)
    last = np.empty(low.shape, dtype=np.int64)
    for j, reps in enumerate(cells):
        first[:, j] = np.searchsorted(reps, low[:, j], side="left")
        last[:, j] = np.searchsorted(reps, high[:, j], side="right") - 1
    return first, last


def _encode(
    low: np.ndarray,
    high: np.ndarray,
    trees: np.ndarray,
    labels: np.ndarray,
    cells: Sequence[np.ndarray],
    n_classes: int,
    kind: str,
    cls: int,
    card: str,
) -> tuple[list[list[int]], list[Clause], list[list[Clause]]]:
    """The query's CNF: the cells' order variables (per free feature), the clauses of the leaves
    and votes, and the vote constraints, one solver call each in order (a satisfiable one answers;
    an empty list: no counterexample; an empty constraint: a challenger wins everywhere)."""
    pool = VarPool()
    clauses: list[Clause] = []
    order = [[pool.fresh("cell", j, i) for i in range(len(reps) - 1)] for j, reps in enumerate(cells)]
    for chain in order:
        clauses.extend([-chain[i + 1], chain[i]] for i in range(len(chain) - 1))
    first, last = cell_ranges(low, high, cells)
    alive = np.all(first <= last, axis=1)  # a leaf covering no allowed cell is reached by no input
    first, last, trees, labels = first[alive], last[alive], trees[alive], labels[alive]

    votes: list[dict[int, int]] = []  # per non-constant tree: class -> vote literal
    constants = [0] * n_classes
    bounds = [len(reps) - 1 for reps in cells]
    starts = np.flatnonzero(np.r_[True, trees[1:] != trees[:-1]]) if len(trees) else np.zeros(0, dtype=np.int64)
    ends = np.r_[starts[1:], len(trees)]
    for s, e in zip(starts.tolist(), ends.tolist()):
        classes = sorted(set(labels[s:e].tolist()))
        if len(classes) == 1:
            constants[classes[0]] += 1
            continue
        k = len(votes)
        lits = {c: pool.fresh("vote", k, c) for c in classes}
        votes.append(lits)
        clauses.extend([-lits[a], -lits[b]] for i, a in enumerate(classes) for b in classes[i + 1 :])
        for row in range(s, e):
            clause = [lits[int(labels[row])]]
            for j in range(len(cells)):
                lo, hi = int(first[row, j]), int(last[row, j])
                if lo > 0:
                    clause.append(-order[j][lo - 1])
                if hi < bounds[j]:
                    clause.append(order[j][hi])
            clauses.append(clause)

    def beats(winner: int, loser: int) -> list[Clause] | None:
        """Clauses for "``winner`` has more votes than ``loser``, or as many and a lower index";
        ``None`` when impossible. A tree that can vote only ``winner`` or ``loser`` counts its one
        literal twice (``vote(w) + ~vote(l) = 2 vote(w)``); when every tree is such, the bound
        is halved instead, which halves the constraint."""
        need = (1 if winner > loser else 0) + constants[loser] - constants[winner]
        pairs: list[tuple[int, int]] = []
        lits: list[int] = []
        for v in votes:
            w, l = v.get(winner), v.get(loser)
            if w is not None and l is not None and len(v) == 2:
                pairs.append((w, l))
                need += 1
                continue
            if w is not None:
                lits.append(w)
            if l is not None:
                lits.append(-l)
                need += 1
        if not lits:
            return at_least(pool, [w for w, _ in pairs], (need + 1) // 2, card)
        return at_least(pool, [x for w, l in pairs for x in (w, -l)] + lits, need, card)

    constraints: list[list[Clause]] = []
    if kind == "predicts":
        extra_all: list[Clause] = []
        for d in range(n_classes):
            if d != cls:
                extra = beats(cls, d)
                if extra is None:
                    return order, clauses, []
                extra_all.extend(extra)
        constraints.append(extra_all)
    else:
        for d in range(n_classes):
            if d == cls:
                continue
            extra = beats(d, cls)
            if extra is None:
                continue
            if not extra:
                constraints = [[]]  # a challenger wins everywhere
                break
            constraints.append(extra)
        constraints.sort(key=len)  # the smaller constraint first: usually the closer challenger
    return order, clauses, constraints
