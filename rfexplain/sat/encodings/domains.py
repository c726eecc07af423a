"""Feature domains: the order encoding of thresholds, channelled to one variable per state.

A feature ``f`` with ``n`` states (``n - 1`` thresholds ``t_0 < ... < t_{n-2}``, docs/design.md, section 1)
gets the order variables ``gt(f, j)`` meaning ``x_f > t_j`` (state above ``j``), linked by
``gt(f, j+1) -> gt(f, j)``, and one state variable ``state(f, s)`` per state, channelled as
``state(f, s) <-> gt(f, s-1) & ~gt(f, s)`` (the missing bound at either end is dropped). This is
the interval encoding of real-valued features of Izza and Marques-Silva (2021) (Section 4, "SAT Encoding" [IM21]), with
the order links that make every assignment of the ``gt`` variables a single interval. A tree
condition ``lo <= state <= hi`` is then at most two literals, and fixing a feature to a state is a
single literal, ``state(f, s)``, which is what the explanation algorithms assume as a selector.
Features with a single state get no variable at all: they cannot change and never enter a reason.
"""

from __future__ import annotations

from collections.abc import Collection

from rfexplain.sat.encodings.pool import Var, VarPool

__all__ = ["domain_clauses", "range_literals", "state_literal", "decode_state"]

Clause = list[int]


def domain_clauses(pool: VarPool, feature: int, n_states: int) -> list[Clause]:
    """Order and channelling clauses of one feature (none for a single-state feature)."""
    clauses: list[Clause] = []
    if n_states < 2:
        return clauses
    gt = [pool.var(Var.gt(feature, j)) for j in range(n_states - 1)]
    for j in range(n_states - 2):
        clauses.append([-gt[j + 1], gt[j]])
    for s in range(n_states):
        x = pool.var(Var.state(feature, s))
        lower = gt[s - 1] if s > 0 else None  # state > s-1
        upper = gt[s] if s < n_states - 1 else None  # state > s (must be false)
        back = [x]
        if lower is not None:
            clauses.append([-x, lower])
            back.append(-lower)
        if upper is not None:
            clauses.append([-x, -upper])
            back.append(upper)
        clauses.append(back)
    return clauses


def range_literals(pool: VarPool, feature: int, lo: int, hi: int, n_states: int) -> list[int]:
    """Literals whose conjunction says ``lo <= state(feature) <= hi`` (empty for the full range)."""
    lits = []
    if lo > 0:
        lits.append(pool.var(Var.gt(feature, lo - 1)))
    if hi < n_states - 1:
        lits.append(-pool.var(Var.gt(feature, hi)))
    return lits


def state_literal(pool: VarPool, feature: int, state: int) -> int:
    """The selector literal fixing ``feature`` to ``state``."""
    return pool.var(Var.state(feature, state))


def decode_state(pool: VarPool, true_vars: Collection[int], feature: int, n_states: int) -> int:
    """The state of ``feature`` in a model given as the set of its true variables."""
    state = 0
    for j in range(n_states - 1):
        if pool.var(Var.gt(feature, j)) in true_vars:
            state = j + 1
        else:
            break
    return state
