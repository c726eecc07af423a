"""Tree paths: every feasible root-to-leaf path implies its tree's vote; one vote per tree.

For tree ``k`` and each feasible path ``R`` (a box of state ranges, :meth:`Tree.paths`) with leaf
class ``c``, the clause ``~L(R) | vote(k, c)`` is added, where ``L(R)`` is the conjunction of the
path's range literals (Izza and Marques-Silva (2021), Section 4, Eq. (3) [IM21]); the votes of a
tree are pairwise exclusive and at least one holds (Eq. (4)). The feasible paths of a tree
partition the state space, so every assignment of the features fixes exactly one vote per tree.
A tree whose feasible leaves all carry one class always votes for it and gets no vote variable
(:class:`TreeVotes` records it as a constant).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rfexplain.core.forest import Tree
from rfexplain.sat.encodings.domains import range_literals
from rfexplain.sat.encodings.pool import Var, VarPool

__all__ = ["TreeVotes", "tree_clauses"]

Clause = list[int]


@dataclass(frozen=True)
class TreeVotes:
    """The classes a tree can vote for; ``constant`` is set when there is only one."""

    index: int
    labels: frozenset[int]

    @property
    def constant(self) -> int | None:
        return next(iter(self.labels)) if len(self.labels) == 1 else None


def tree_clauses(pool: VarPool, index: int, tree: Tree, n_states: Sequence[int]) -> tuple[list[Clause], TreeVotes]:
    """The path and vote clauses of one tree, and which classes it can vote for."""
    paths = list(tree.paths(n_states))
    labels = frozenset(label for _, label in paths)
    votes = TreeVotes(index, labels)
    clauses: list[Clause] = []
    if votes.constant is not None:
        return clauses, votes
    for box, label in paths:
        clause = [-lit for f, (lo, hi) in sorted(box.items()) for lit in range_literals(pool, f, lo, hi, n_states[f])]
        clause.append(pool.var(Var.vote(index, label)))
        clauses.append(clause)
    vote_vars = [pool.var(Var.vote(index, c)) for c in sorted(labels)]
    clauses.append(list(vote_vars))
    for a in range(len(vote_vars)):
        for b in range(a + 1, len(vote_vars)):
            clauses.append([-vote_vars[a], -vote_vars[b]])
    return clauses, votes
