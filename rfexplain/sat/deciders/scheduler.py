"""The one chunked-deadline loop of the SAT engine: deciders asked in turns, the deadline polled
between turns.

A :class:`Scheduler` answers a question by asking deciders (:class:`.base.Decider`) in the turns
its :meth:`~Scheduler.turns` schedule gives: a generator that yields ``(decider, work)`` — whose
turn it is, and at most how many units of its own work it may take — receives each turn's answer
(``None``: not settled) and returns the question's answer (``None``: none of its deciders settles
it). :meth:`Scheduler.decide` runs the turns and polls the query's
:class:`~rfexplain.core.budget.Budget` before each, so that a question stops within one turn of
its deadline whichever decider is working; no decider polls a deadline itself. Every turn is
bounded (boxes, units of the clique search's work, climb restarts, solver conflicts), but where
there is no deadline a solver's turn may run to its answer.

The schedulers: the instance's portfolio (:class:`.portfolio.Portfolio`), the race of the
searches that need no solver (:class:`.race.Race`), and :class:`Chunks`, one SAT solver call
under assumptions in turns of a bounded number of conflicts (CaDiCaL cannot be interrupted, so a
deadline is enforced between rounds for every solver alike): the MaxSAT solver's calls
(:mod:`rfexplain.sat.search`) and a box question's full formula (:mod:`rfexplain.sat.engine`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Generic, TypeVar

from rfexplain.core.budget import Budget
from rfexplain.sat.deciders.base import Answer, Decider

__all__ = ["Scheduler", "Turns", "Chunks", "SolverCall"]

Q = TypeVar("Q")

#: A schedule: yields ``(decider, work)``, receives the turn's answer, returns the question's.
Turns = Generator[tuple[Decider[Q], int | None], Answer | None, Answer | None]


class Scheduler(Generic[Q]):
    """Asks deciders in the turns of :meth:`turns` (module docstring).

    ``what`` names the work in a :class:`~rfexplain.core.budget.BudgetExpired` message."""

    what = "deciding"

    def turns(self, question: Q, limited: bool) -> Turns[Q]:
        """The schedule of ``question`` (``limited``: the query has a deadline, so that solver
        turns must be bounded too)."""
        raise NotImplementedError

    def decide(self, question: Q, budget: Budget | None = None) -> Answer | None:
        """The answer to ``question``: the schedule's turns until it returns, ``budget`` (default:
        the current one, :meth:`.Budget.current`) polled before each turn;
        :class:`~rfexplain.core.budget.BudgetExpired` once it has run out. Each answer is marked
        with the decider that gave it (:attr:`.Answer.by`)."""
        if budget is None:
            budget = Budget.current()
        deadline = budget if budget is not None and budget.timed else None
        turns = self.turns(question, deadline is not None)
        answer: Answer | None = None
        try:
            while True:
                try:
                    decider, work = turns.send(answer)
                except StopIteration as done:
                    settled: Answer | None = done.value
                    return settled
                if deadline is not None and deadline.expired():
                    deadline.check(f"{self.what} ({decider.name})")
                answer = decider.decide(question, work)
                if answer is not None and answer.by != decider.name:
                    answer = answer.given_by(decider.name)
        finally:
            turns.close()


class SolverCall:
    """One SAT solver call under assumptions as a decider (the question is the assumptions):
    ``run(assumptions, conflicts)`` is SAT (True), UNSAT (False) or ``None`` when ``conflicts``
    (``None``: no limit) ran out first; the next call resumes, learnt clauses kept."""

    name = "solver"

    def __init__(self, run: Callable[[Sequence[int], int | None], bool | None]) -> None:
        self.run = run

    def decide(self, question: Sequence[int], budget: int | None) -> Answer | None:
        outcome = self.run(question, budget)
        return None if outcome is None else Answer(bool(outcome), by=self.name)


class Chunks(Scheduler[Sequence[int]]):
    """One solver call (:class:`SolverCall`) to its answer: at once without a deadline, else in
    turns of ``chunk`` conflicts."""

    def __init__(self, run: Callable[[Sequence[int], int | None], bool | None], chunk: int, what: str) -> None:
        self.call = SolverCall(run)
        self.chunk = chunk
        self.what = what

    def turns(self, question: Sequence[int], limited: bool) -> Turns[Sequence[int]]:
        work = self.chunk if limited else None
        while True:
            answer = yield self.call, work
            if answer is not None:
                return answer
