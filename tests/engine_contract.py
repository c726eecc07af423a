"""The engine contract: one test class, subclassed once per engine (the ``dd`` pattern).

Every query an engine lists in ``queries`` is compared with the brute-force oracle on random
small forests (``tests/strategies.py``): whole *sets* of reasons, not samples. Witnesses are
checked with :func:`rfexplain.verify` against the forest. A subclass sets ``engine`` (the registry
name) and may set ``options`` and ``max_examples`` (its full budget, drawn under the ``"ci"``
hypothesis profile, scaled down under ``"fast"``: ``tests/hypothesis_budget.py``; each subclass
also gets a slow twin drawing the full budgets, see :meth:`EngineContract.__init_subclass__`)::

    class TestSatEngine(EngineContract):
        engine = "sat"
"""

from __future__ import annotations

import math
import sys
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfexplain import Budget, verify
from rfexplain.engines import engine_class
from rfexplain.engines.base import Instance
from rfexplain.oracle import Oracle
from tests.hypothesis_budget import examples
from tests.strategies import forests, forests_and_instances


def _keys(reasons: Any) -> set[tuple[str, tuple[tuple[int, tuple[int, ...]], ...], Any]]:
    """Reasons as comparable keys (kind, literals, target); fails on duplicates."""
    items = list(reasons)
    keys = [(r.kind, tuple((lit.feature, tuple(sorted(lit.states))) for lit in r.conditions), r.target) for r in items]
    assert len(keys) == len(set(keys)), f"duplicate reasons in {items}"
    return set(keys)


def _key(reason: Any) -> Any:
    """A single reason as a comparable key (kind, literals), ``None`` for ``None``."""
    if reason is None:
        return None
    return reason.kind, tuple(sorted((lit.feature, tuple(sorted(lit.states))) for lit in reason.conditions))


def canonical_by_brute_force(forest: Any, instance: Instance, order: Any = None) -> tuple[Any, Any]:
    """The canonical AXp and CXp (as literal keys, the CXp ``None`` when nothing flips), computed
    over every state vector of the forest with the plain deletion / fixing-back loops and no
    engine: a fixed set is sufficient iff every state vector agreeing with the instance on it is
    decided like the instance."""
    grid = np.indices(forest.states_per_feature).reshape(forest.n_features, -1).T
    labels = forest.predict_states(grid)
    v = np.asarray(instance.states)
    flips = grid[labels != instance.prediction]

    def sufficient(fixed: set[int]) -> bool:
        cols = sorted(fixed)
        return not bool(np.all(flips[:, cols] == v[cols], axis=1).any())

    features = list(range(forest.n_features)) if order is None else list(order)
    kept = set(features)
    for f in features:
        if sufficient(kept - {f}):
            kept.discard(f)
    axp = tuple((f, (instance.states[f],)) for f in sorted(kept))
    if sufficient(set()):
        return axp, None
    fixed: set[int] = set()
    for f in features:
        if not sufficient(fixed | {f}):
            fixed.add(f)
    cxp = tuple((f, (instance.states[f],)) for f in range(forest.n_features) if f not in fixed)
    return axp, cxp


class EngineContract:
    """Shared tests for an engine; subclasses name the engine."""

    engine: ClassVar[str]
    options: ClassVar[dict[str, Any]] = {}
    max_examples: ClassVar[int] = 60
    #: Draw every budget in full whatever the hypothesis profile (the slow twins).
    full_budget: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every contract gets a twin in its module, ``<name>FullBudget``, marked slow, that draws
        the full budgets: the default run checks each engine against the oracle on a fraction of
        the examples (the ``"fast"`` profile), ``python -m pytest -m slow`` on all of them."""
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("full_budget") or not cls.__name__.startswith("Test"):
            return
        twin = type(f"{cls.__name__}FullBudget", (cls,), {"full_budget": True, "__module__": cls.__module__})
        setattr(sys.modules[cls.__module__], twin.__name__, pytest.mark.slow(twin))

    #: The vote mode of the random forests (``"soft"`` gives every leaf an impure vector).
    vote: ClassVar[str] = "hard"
    #: Further options of the forests' strategy (:func:`tests.strategies.forests`, e.g. ``impure``).
    forest_options: ClassVar[dict[str, Any]] = {}

    # ------------------------------------------------------------------ helpers
    def examples(self, full: int) -> int:
        """A property test's budget of examples: ``full`` scaled to the hypothesis profile."""
        return full if self.full_budget else examples(full)

    def make(self, forest: Any) -> Any:
        return engine_class(self.engine)(forest, **self.options)

    def supports(self, query: str) -> bool:
        return query in engine_class(self.engine).queries

    def require(self, query: str) -> None:
        if not self.supports(query):
            pytest.skip(f"engine {self.engine!r} does not answer {query}")

    def check_witnesses(self, forest: Any, reasons: Any) -> None:
        for reason in reasons:
            result = verify(reason, forest)
            assert result.ok, (reason, result.problems)

    def run(self, check: Any) -> None:
        @settings(
            max_examples=self.examples(self.max_examples),
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(forests_and_instances(vote=self.vote, **self.forest_options))
        def property_test(case: Any) -> None:
            forest, instance = case
            engine = self.make(forest)
            try:
                check(forest, instance, engine, Oracle(forest))
            finally:
                engine.close()

        property_test()

    # ------------------------------------------------------------------ sufficient / necessary
    def test_sufficient_reasons_equal_oracle(self) -> None:
        self.require("sufficient_reasons")

        def check(forest: Any, instance: Instance, engine: Any, oracle: Oracle) -> None:
            got = list(engine.sufficient_reasons(instance, Budget()))
            assert _keys(got) == _keys(oracle.sufficient_reasons(instance))
            self.check_witnesses(forest, got)

        self.run(check)

    def test_one_sufficient_reason_is_an_axp(self) -> None:
        self.require("sufficient_reason")

        def check(forest: Any, instance: Instance, engine: Any, oracle: Oracle) -> None:
            reason = engine.sufficient_reason(instance)
            assert reason.kind == "sufficient"
            assert _keys([reason]) <= _keys(oracle.sufficient_reasons(instance))
            self.check_witnesses(forest, [reason])

        self.run(check)

    def test_necessary_reasons_equal_oracle(self) -> None:
        self.require("necessary_reasons")

        def check(forest: Any, instance: Instance, engine: Any, oracle: Oracle) -> None:
            got = list(engine.necessary_reasons(instance, Budget()))
            assert _keys(got) == _keys(oracle.necessary_reasons(instance))
            self.check_witnesses(forest, got)

        self.run(check)

    def test_one_necessary_reason_is_a_cxp(self) -> None:
        self.require("necessary_reason")

        def check(forest: Any, instance: Instance, engine: Any, oracle: Oracle) -> None:
            reason = engine.necessary_reason(instance)
            expected = oracle.necessary_reasons(instance)
            if not expected:
                assert reason is None
                return
            assert reason is not None and _keys([reason]) <= _keys(expected)
            self.check_witnesses(forest, [reason])

        self.run(check)

    # ------------------------------------------------------------------ canonical single answers
    def test_single_answers_are_the_canonical_deletion(self) -> None:
        """sufficient_reason / necessary_reason equal a brute-force deletion (fixing back) in the
        same order over every state vector, for index order and a random permutation."""
        self.require("sufficient_reason")
        self.require("necessary_reason")

        @settings(
            max_examples=self.examples(self.max_examples),
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(forests_and_instances(), st.randoms(use_true_random=False))
        def property_test(case: Any, rnd: Any) -> None:
            forest, instance = case
            order = list(range(forest.n_features))
            rnd.shuffle(order)
            engine = self.make(forest)
            try:
                for o in (None, order):
                    axp, cxp = canonical_by_brute_force(forest, instance, o)
                    assert _key(engine.sufficient_reason(instance, o)) == ("sufficient", axp), o
                    got = engine.necessary_reason(instance, o)
                    assert (None if got is None else _key(got)) == (None if cxp is None else ("necessary", cxp)), o
            finally:
                engine.close()

        property_test()

    def test_single_answers_do_not_depend_on_history(self) -> None:
        """A warm engine (after enumerations and other instances, in a random order) and a fresh
        engine per instance give identical single answers."""
        self.require("sufficient_reason")
        self.require("necessary_reason")

        @settings(max_examples=self.examples(max(10, self.max_examples // 3)), deadline=None)
        @given(forests(min_trees=2), st.randoms(use_true_random=False))
        def property_test(forest: Any, rnd: Any) -> None:
            grid = Oracle(forest).grid
            rows = [tuple(int(s) for s in grid[rnd.randrange(len(grid))]) for _ in range(6)]
            instances = [Instance.from_states(forest, r) for r in rows]
            fresh = []
            for instance in instances:
                with self.make(forest) as engine:
                    fresh.append((_key(engine.sufficient_reason(instance)), _key(engine.necessary_reason(instance))))
            order = list(range(len(instances)))
            rnd.shuffle(order)
            with self.make(forest) as warm:
                for i in order:
                    instance = instances[i]
                    if self.supports("sufficient_reasons"):
                        list(warm.sufficient_reasons(instance, Budget()))
                    got = (_key(warm.sufficient_reason(instance)), _key(warm.necessary_reason(instance)))
                    assert got == fresh[i], (i, rows[i])

        property_test()

    def test_shortest_reasons_equal_oracle(self) -> None:
        self.require("shortest_sufficient_reasons")
        self.require("shortest_necessary_reasons")

        def check(forest: Any, instance: Instance, engine: Any, oracle: Oracle) -> None:
            for query, everything in (
                ("shortest_sufficient_reasons", oracle.sufficient_reasons(instance)),
                ("shortest_necessary_reasons", oracle.necessary_reasons(instance)),
            ):
                best = min((len(r) for r in everything), default=0)
                expected = [r for r in everything if len(r) == best]
                got = list(getattr(engine, query)(instance, Budget()))
                assert _keys(got) == _keys(expected), query
                self.check_witnesses(forest, got)

        self.run(check)

    def test_robustness_equals_oracle(self) -> None:
        self.require("robustness")

        def check(forest: Any, instance: Instance, engine: Any, oracle: Oracle) -> None:
            expected = oracle.robustness(instance)
            got = engine.robustness(instance)
            assert got == expected
            assert expected == math.inf or isinstance(got, int)

        self.run(check)

    def test_contrastive_reasons_equal_oracle(self) -> None:
        self.require("contrastive_reasons")

        def check(forest: Any, instance: Instance, engine: Any, oracle: Oracle) -> None:
            for target in range(forest.n_classes):
                if target == instance.prediction:
                    continue
                got = list(engine.contrastive_reasons(instance, target, Budget()))
                assert _keys(got) == _keys(oracle.contrastive_reasons(instance, target)), target
                self.check_witnesses(forest, got)

        self.run(check)

    # ------------------------------------------------------------------ complete / general reasons
    def test_complete_and_general_reason_membership(self) -> None:
        self.require("complete_reason")
        self.require("general_reason")

        def check(forest: Any, instance: Instance, engine: Any, oracle: Oracle) -> None:
            complete = engine.complete_reason(instance)
            general = engine.general_reason(instance)
            want_complete = oracle.complete_reason(instance)
            want_general = oracle.general_reason(instance)
            for row in oracle.grid:
                z = tuple(int(s) for s in row)
                assert (z in complete) == (z in want_complete), ("complete", z)
                assert (z in general) == (z in want_general), ("general", z)

        self.run(check)

    def test_general_reasons_equal_oracle(self) -> None:
        self.require("general_sufficient_reasons")
        self.require("general_necessary_reasons")

        def check(forest: Any, instance: Instance, engine: Any, oracle: Oracle) -> None:
            got_gsr = list(engine.general_sufficient_reasons(instance, Budget()))
            got_gnr = list(engine.general_necessary_reasons(instance, Budget()))
            assert _keys(got_gsr) == _keys(oracle.general_sufficient_reasons(instance))
            assert _keys(got_gnr) == _keys(oracle.general_necessary_reasons(instance))
            self.check_witnesses(forest, got_gsr + got_gnr)

        self.run(check)

    def test_shortest_flips_equal_oracle(self) -> None:
        self.require("shortest_flips")

        def check(forest: Any, instance: Instance, engine: Any, oracle: Oracle) -> None:
            got = list(engine.shortest_flips(instance, Budget()))
            assert _keys(got) == _keys(oracle.shortest_flips(instance))
            self.check_witnesses(forest, got)

        self.run(check)

    # ------------------------------------------------------------------ budgets and lifecycle
    def test_limit_cuts_enumeration_cleanly(self) -> None:
        self.require("sufficient_reasons")
        from rfexplain import Explainer

        @settings(max_examples=self.examples(20), deadline=None)
        @given(forests(min_trees=3, vote=self.vote, **self.forest_options), st.integers(0, 2))
        def property_test(forest: Any, limit: int) -> None:
            decision = Explainer(forest, engine=self.engine, **self.options).explain(
                [forest.state_value(f, 0) for f in range(forest.n_features)]
            )
            everything = list(decision.sufficient_reasons())
            limited = decision.sufficient_reasons(limit=limit)
            got = list(limited)
            assert len(got) == min(limit, len(everything))
            if len(everything) > limit:
                assert limited.complete is False and limited.stopped_by == "limit"

        property_test()

    def test_timeout_zero_ends_incomplete(self) -> None:
        self.require("necessary_reasons")
        from rfexplain import Explainer

        @settings(max_examples=self.examples(10), deadline=None)
        @given(forests(min_trees=2, vote=self.vote, **self.forest_options))
        def property_test(forest: Any) -> None:
            decision = Explainer(forest, engine=self.engine, **self.options).explain(
                [forest.state_value(f, 0) for f in range(forest.n_features)]
            )
            result = decision.necessary_reasons(timeout=0)
            assert list(result) == []
            assert result.complete is False and result.stopped_by == "timeout"

        property_test()

    def test_unsupported_queries_raise(self) -> None:
        from rfexplain import UnsupportedQuery
        from rfexplain.engines.base import QUERIES

        cls = engine_class(self.engine)
        missing = [q for q in QUERIES if q not in cls.queries]
        if not missing:
            pytest.skip("engine answers every query")

        @settings(max_examples=self.examples(3), deadline=None)
        @given(forests_and_instances(vote=self.vote, **self.forest_options))
        def property_test(case: Any) -> None:
            forest, instance = case
            engine = self.make(forest)
            for query in missing:
                args: tuple[Any, ...] = (instance,)
                if query == "contrastive_reasons":
                    args += ((instance.prediction + 1) % forest.n_classes,)
                if query in (
                    "sufficient_reasons",
                    "necessary_reasons",
                    "shortest_sufficient_reasons",
                    "shortest_necessary_reasons",
                    "contrastive_reasons",
                    "general_sufficient_reasons",
                    "general_necessary_reasons",
                    "shortest_flips",
                ):
                    args += (Budget(),)
                with pytest.raises(UnsupportedQuery, match="oracle"):
                    result = getattr(engine, query)(*args)
                    list(result) if hasattr(result, "__iter__") else result

        property_test()
