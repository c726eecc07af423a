"""The SAT engine's deciders behind one protocol, asked by one loop: every decider has
``decide(question, budget)``, a query reaches the decider that answers it through the portfolio
directly, every decider alone (beside the full CNF) answers questions, and the solver calls
outside the portfolio (the MaxSAT solver's, a box question's) run in the same loop, stopped by
the budget."""

from __future__ import annotations

import inspect
import sys
from itertools import count
from types import FrameType
from typing import Any

import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx
from rfexplain.core.budget import Budget, BudgetExpired
from rfexplain.engines.base import Instance
from rfexplain.sat.deciders.base import DECIDERS
from rfexplain.sat.deciders.bounds import Bounds
from rfexplain.sat.deciders.boxes import Boxes, SmallBox
from rfexplain.sat.deciders.climb import Climb
from rfexplain.sat.deciders.cliques import Cliques
from rfexplain.sat.deciders.full_cnf import FullCnf
from rfexplain.sat.deciders.lattice import Lattice
from rfexplain.sat.deciders.reduced_cnf import ReducedCnf
from rfexplain.sat.engine import SatEngine

#: Every class that answers a question of the portfolio.
DECIDER_CLASSES = (Bounds, Lattice, Boxes, SmallBox, Cliques, Climb, ReducedCnf, FullCnf)

X, Y = load_breast_cancer(return_X_y=True)
MODEL = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(X, Y)


def test_every_decider_has_the_one_protocol() -> None:
    """``name`` among the decider names and ``decide(question, budget)``; every name is some
    class's."""
    for cls in DECIDER_CLASSES:
        assert cls.name in DECIDERS, cls
        assert list(inspect.signature(cls.decide).parameters) == ["self", "question", "budget"], cls
    assert {cls.name for cls in DECIDER_CLASSES} == set(DECIDERS)


def _chain(frame: FrameType | None) -> list[str]:
    """The calls from :meth:`.Decision.sufficient_reason` down to ``frame``, as
    ``Class.method`` of the object each runs on (a generator suspended between turns is not on
    the stack)."""
    names: list[str] = []
    while frame is not None:
        owner = frame.f_locals.get("self")
        name = f"{type(owner).__name__}.{frame.f_code.co_name}" if owner is not None else frame.f_code.co_name
        names.append(name)
        if name == "Decision.sufficient_reason":
            return names[::-1]
        frame = frame.f_back
    return []


@pytest.mark.parametrize(
    "vote, alone",
    [("hard", name) for name in DECIDERS if name != "lattice"]
    + [("soft", name) for name in ("bounds", "lattice", "boxes", "climb", "full_cnf")],
)
def test_a_query_reaches_the_decider_that_answers_through_the_portfolio(
    monkeypatch: Any, vote: str, alone: str
) -> None:
    """With each decider alone beside the full CNF (the reference), the decider answers some
    of an AXp's questions (under the soft vote, those that take its questions; the lattice
    decider takes soft-vote questions only, and alone it has its lattices' bounds), and every
    question goes from the facade to the decider in the same four calls: the engine, the AXp's
    deletion loop, the portfolio (its one loop), the decider."""
    seen: list[tuple[str, list[str], bool]] = []

    def recording(cls: type) -> Any:
        original = cls.decide

        def decide(self: Any, question: Any, budget: Any) -> Any:
            answer = original(self, question, budget)
            seen.append((self.name, _chain(sys._getframe(1)), answer is not None))
            return answer

        return decide

    for cls in DECIDER_CLASSES:
        monkeypatch.setattr(cls, "decide", recording(cls))
    # no first try of the full CNF before the reduced one (the forest is small); the lattices
    # take on the questions of this depth-4 forest, far from the hard vote, only when told to
    tuning = {"whole_formula_leaves": 0, "lattice_impure": 1.0}
    explainer = rx.Explainer(MODEL, engine="sat", vote=vote, prefilter=True, deciders=(alone,), tuning=tuning)
    for x in X[:40:8]:
        explainer.explain(x).sufficient_reason()
    expected = ["Decision.sufficient_reason", "SatEngine.sufficient_reason", "Search.axp"]
    assert {tuple(chain) for _, chain, _ in seen} == {(*expected, "Portfolio.decide")}
    assert alone in {name for name, _, answered in seen if answered}


def _ticking() -> Any:
    """A clock that reads one second more at every reading."""
    ticks = count()
    return lambda: float(next(ticks))


def test_the_maxsat_solvers_calls_stop_at_the_deadline() -> None:
    """The MaxSAT solver (RC2) asks its SAT solver in the one loop: on a clock that ticks at
    every reading, a budget of two seconds passes the loop's own poll (one reading) and runs
    out at the poll before RC2's first SAT call; without a deadline they run to the minimum
    CXps."""
    forest = rx.Forest.from_sklearn(MODEL, vote="hard")
    instance = Instance.of(forest, X[0])
    with SatEngine(forest) as engine:
        search = engine._search(instance)
        found = list(search.minimum_necessary_reasons(Budget(), limit=2))
        assert len(found) == 2 and all(engine._classify(r.counterexample) != instance.prediction for r in found)
        with pytest.raises(BudgetExpired, match=r"minimum necessary reason \(solver\)"):
            list(search.minimum_necessary_reasons(Budget(timeout=2, clock=_ticking()), limit=2))


def test_the_full_cnf_answers_in_chunks_under_a_deadline_and_at_once_without(monkeypatch: Any) -> None:
    """The full CNF's turns are ``conflict_chunk`` conflicts under a deadline and unbounded
    without one (CaDiCaL cannot be interrupted: the deadline is polled between turns)."""
    budgets: list[int | None] = []
    original = FullCnf.decide

    def decide(self: FullCnf, question: Any, budget: int | None) -> Any:
        budgets.append(budget)
        return original(self, question, budget)

    monkeypatch.setattr(FullCnf, "decide", decide)
    forest = rx.Forest.from_sklearn(MODEL, vote="hard")
    instance = Instance.of(forest, X[0])
    with SatEngine(forest, deciders=("full_cnf",), tuning={"conflict_chunk": 7}) as engine:
        search = engine._search(instance)
        search.axp()
        assert budgets and set(budgets) == {None}
        budgets.clear()
        search.axp(budget=Budget(timeout=3600))
        assert budgets and set(budgets) == {7}


def test_a_box_question_stops_at_the_deadline() -> None:
    """A box question the leaf deciders leave to the full formula (a set of states that is not
    an interval) runs in the one loop too: on a clock that ticks at every reading, a budget of
    two seconds passes the box question's own poll and runs out at the poll before the solver's
    first turn."""
    forest = rx.Forest.from_sklearn(MODEL, vote="hard")
    instance = Instance.of(forest, X[0])
    box = {f: frozenset(range(0, forest.states_per_feature[f], 2)) for f in range(forest.n_features)}
    with SatEngine(forest) as engine:
        found = engine.box_counterexample(instance, box)
        assert found is None or engine._classify(found) != instance.prediction
        with Budget(timeout=2, clock=_ticking()).active(), pytest.raises(BudgetExpired, match=r"a box \(solver\)"):
            engine.box_counterexample(instance, box)
