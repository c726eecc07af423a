"""The bounds decider: UNSAT, with a core, when the reachable leaves rule the condition out.

Summing, over trees, the best score a challenger ``d`` can get against ``c`` among a tree's
reachable leaves bounds the margin of ``d`` over ``c`` from above; when no challenger's bound
reaches a win, no counterexample exists. This is the per-tree bound of tree-ensemble
verification (Kantchelian, Tygar and Joseph (2016) [KTJ16]; Chen et al. (2019) [Che19]) over
the leaves the fixed features leave reachable [IM21]. Under the hard vote a win against a lower
class index needs a margin of one vote, so such bounds lose half a vote; soft-vote bounds are
float64 sums, and count as "no win" only below ``-NEAR_TIE``
(:data:`~rfexplain.core.vote.NEAR_TIE`).

The core is the fixed features left after deleting, one at a time in the question's order,
those the bounds can do without: as a solver's core, it lets the deletion loops skip calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rfexplain.core.vote import NEAR_TIE
from rfexplain.sat.deciders.base import Answer, Question
from rfexplain.sat.deciders.leaves import InstanceLeaves

__all__ = ["Bounds", "ruled_out", "slack"]


class Bounds:
    """The bounds decider of one instance (:class:`~.leaves.InstanceLeaves`); ``rows``: the
    reachable leaves of the question it is asked, when the caller has them (else they are found
    from the question's fixed features)."""

    name = "bounds"

    def __init__(self, leaves: InstanceLeaves, rows: np.ndarray | None = None) -> None:
        self.leaves = leaves
        self.rows = rows

    def decide(self, question: Question, budget: int | None = None) -> Answer | None:
        """UNSAT with a core when the reachable leaves of ``question`` rule its condition out,
        else ``None`` (one pass: ``budget`` is not needed)."""
        rows = self.rows if self.rows is not None else self.leaves.reachable(question.fixed)
        return ruled_out(self.leaves, rows, question)

    def core(self, fixed: Sequence[int], kind: str, cls: int) -> frozenset[int]:
        """A subset of ``fixed`` whose reachable leaves still rule the condition out: deletion in
        ``fixed``'s order, each feature dropped when the bounds without it stay below zero
        (compiled: :func:`.bound_kernels.bound_core`, counting for each leaf the fixed features it
        misses)."""
        from rfexplain.sat.bound_kernels import bound_core

        table = self.leaves.table
        margins, penalty = table.margins(kind, cls)
        kept = np.zeros(len(fixed), dtype=np.bool_)
        columns = np.asarray(fixed, dtype=np.int64)
        bound_core(self.leaves.outside, columns, table.tree, margins, penalty, kind == "not", NEAR_TIE, kept)
        return frozenset(columns[kept].tolist())


def ruled_out(leaves: InstanceLeaves, rows: np.ndarray, question: Question) -> Answer | None:
    """UNSAT with a core (:meth:`Bounds.core`) when the reachable leaves ``rows`` of ``leaves``
    rule the condition of ``question`` out, else ``None``: the bounds decider's answer, on
    whichever leaf table ``leaves`` reads (the lattice decider's too, :mod:`.lattice`)."""
    if slack(leaves, rows, question.kind, question.cls) > -NEAR_TIE:
        return None
    return Answer(False, core=Bounds(leaves).core(question.fixed, question.kind, question.cls), by=Bounds.name)


def slack(leaves: InstanceLeaves, rows: np.ndarray, kind: str, cls: int) -> float:
    """An upper bound on the margin by which the condition can hold with the reachable leaves
    ``rows`` of the table: it cannot hold when the bound is below ``-NEAR_TIE``.

    For every other class ``d`` at once: the sum over trees of the best score difference a
    reachable leaf gives (``d`` against ``cls`` for "not", ``cls`` against ``d`` for "predicts")
    bounds the margin from above; "not" needs one challenger, "predicts" beats them all."""
    from rfexplain.sat.bound_kernels import bound

    table = leaves.table
    margins, penalty = table.margins(kind, cls)
    return float(bound(rows, len(rows), table.tree, margins, penalty, kind == "not"))
