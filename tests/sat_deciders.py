"""Helpers for the tests of the SAT engine's deciders: one instance's portfolio without the full
CNF (what the bounds and the race settle, and the reduced CNF beside them), with the tuning
given as options."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from rfexplain.sat.deciders.base import DECIDERS, Answer, Question
from rfexplain.sat.deciders.leaves import InstanceLeaves, LeafTable
from rfexplain.sat.deciders.portfolio import Portfolio
from rfexplain.sat.deciders.race import Race

#: The deciders that need no solver.
NO_SOLVER = frozenset(DECIDERS) - {"reduced_cnf", "full_cnf"}


def screen_of(table: LeafTable, states: Sequence[int], **tuning: Any) -> Portfolio:
    """The portfolio of the instance ``states`` over ``table`` with the deciders that need no
    solver, its tuning changed by ``tuning`` (:meth:`~rfexplain.sat.tuning.SatTuning.replace`)."""
    return Portfolio(InstanceLeaves(table, states, tuning=table.tuning.replace(**tuning)), deciders=NO_SOLVER)


def with_deciders(portfolio: Portfolio, deciders: Collection[str]) -> Portfolio:
    """A portfolio over ``portfolio``'s leaves with the ``deciders`` (no full CNF)."""
    return Portfolio(portfolio.leaves, deciders=deciders)


def settle(
    portfolio: Portfolio, fixed: Sequence[int], kind: str, cls: int, budget: Any = None, *, short: bool = False
) -> Answer | None:
    """:meth:`~rfexplain.sat.deciders.portfolio.Portfolio.decide` of one question: the answer of
    the portfolio's deciders, ``None`` when they leave it open."""
    return portfolio.decide(Question(tuple(fixed), kind, cls, short=short), budget)


def decide_reduced(portfolio: Portfolio, fixed: Sequence[int], kind: str, cls: int) -> Answer:
    """One hard-vote question decided by the reduced CNF beside the climb (over ``portfolio``'s
    leaves), which always answer."""
    answer = settle(with_deciders(portfolio, {"reduced_cnf", "climb"}), fixed, kind, cls)
    assert answer is not None
    return answer


def race_of(portfolio: Portfolio, fixed: Sequence[int], kind: str, cls: int) -> Race:
    """A fresh race of one question (the free features' boxes of its reachable leaves)."""
    leaves = portfolio.leaves
    assert leaves is not None
    rows = leaves.reachable(fixed)
    free, lows, highs = leaves.free_boxes(fixed, rows)
    return Race(leaves, free, rows, (lows, highs), kind, cls)


def advance(race: Race, question: Question, nodes: int) -> Answer | None:
    """The race of ``question`` (:func:`race_of`) run alone for at most ``nodes`` more boxes."""
    race.nodes = nodes
    return race.decide(question)
