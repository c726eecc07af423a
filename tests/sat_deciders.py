"""Helpers for the tests of the SAT engine's deciders: one instance's portfolio without the full
CNF (what the bounds and the race settle, and the reduced CNF beside them), with the tuning
given as options."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rfexplain.sat.deciders.base import Answer, Question
from rfexplain.sat.deciders.leaves import InstanceLeaves, LeafTable
from rfexplain.sat.deciders.portfolio import Portfolio, Race


def screen_of(table: LeafTable, states: Sequence[int], **tuning: Any) -> Portfolio:
    """The portfolio of the instance ``states`` over ``table``, its tuning changed by ``tuning``
    (:meth:`~rfexplain.sat.tuning.SatTuning.replace`)."""
    return Portfolio(InstanceLeaves(table, states, tuning=table.tuning.replace(**tuning)))


def settle(
    portfolio: Portfolio, fixed: Sequence[int], kind: str, cls: int, budget: Any = None, *, short: bool = False
) -> Answer | None:
    """:meth:`~rfexplain.sat.deciders.portfolio.Portfolio.settle` of one question."""
    return portfolio.settle(Question(tuple(fixed), kind, cls, short=short), budget)


def decide_reduced(portfolio: Portfolio, fixed: Sequence[int], kind: str, cls: int) -> Answer:
    """:meth:`~rfexplain.sat.deciders.portfolio.Portfolio.decide_reduced` of one question."""
    return portfolio.decide_reduced(Question(tuple(fixed), kind, cls))


def race_of(portfolio: Portfolio, fixed: Sequence[int], kind: str, cls: int) -> Race:
    """A fresh race of one question (the free features' boxes of its reachable leaves)."""
    leaves = portfolio.leaves
    assert leaves is not None
    rows = leaves.reachable(fixed)
    free, lows, highs = leaves.free_boxes(fixed, rows)
    return Race(leaves, free, rows, (lows, highs), kind, cls)
