"""SAT calls under a wall-clock budget, shared by the SAT engine's solvers.

CaDiCaL cannot be interrupted, so a deadline is enforced for every solver alike between rounds of
``solve_limited`` of at most :data:`CONFLICT_CHUNK` conflicts.
"""

from __future__ import annotations

from collections.abc import Sequence

from pysat.solvers import Solver

from rfexplain.core.budget import Budget

__all__ = ["CONFLICT_CHUNK", "solve_within"]

#: Conflicts granted per ``solve_limited`` round when a wall-clock budget applies.
CONFLICT_CHUNK = 2000


def solve_within(solver: Solver, assumptions: Sequence[int], budget: Budget | None) -> bool:
    """SAT (True) or UNSAT (False) under ``assumptions``;
    :class:`~rfexplain.core.budget.BudgetExpired` when ``budget``'s deadline passes first."""
    if budget is None or budget.deadline is None:
        return bool(solver.solve(assumptions=list(assumptions)))
    outcome = None
    while outcome is None:
        budget.check("solving")
        solver.conf_budget(CONFLICT_CHUNK)
        outcome = solver.solve_limited(assumptions=list(assumptions))
    return bool(outcome)
