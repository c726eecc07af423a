"""The SAT engine on real scikit-learn forests (iris, wine, breast cancer; 20-100 trees).

No oracle reaches these sizes; instead the enumerations must satisfy minimal hitting-set
duality (docs/design.md, section 2), every single / shortest answer must be consistent with the
enumerations, every witness must verify with the scikit-learn model itself, and every
cardinality encoding (and both multi-class constructions) must give identical explanations.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier

from rfexplain import Budget, Forest, verify
from rfexplain.engines.base import Instance
from rfexplain.oracle.engine import Oracle
from rfexplain.sat.encodings import CARD_ENCODINGS
from rfexplain.sat.engine import SatEngine
from tests.hypothesis_budget import examples
from tests.strategies import forests_and_instances

#: name -> (loader, trees, depth); small enough that every enumeration completes in well under a second.
MODELS = {
    "iris": (load_iris, 100, 5),
    "wine": (load_wine, 30, 3),
    "breast_cancer": (load_breast_cancer, 20, 2),
}
N_INSTANCES = 4
#: CPU seconds (the budgets of these tests read this process's CPU time: ``cpu_clock`` in
#: tests/conftest.py), so that a loaded machine does not cut an enumeration short.
TIMEOUT = 60.0
#: The larger forests are checked by ``python -m pytest -m slow``; iris (100 trees) in every run (the
#: engine contract runs every cardinality encoding on random forests in every run).
LARGER = pytest.mark.slow

pytestmark = pytest.mark.usefixtures("cpu_clock")


@cache
def _model(name: str) -> tuple[Any, np.ndarray, Forest]:
    loader, trees, depth = MODELS[name]
    X, y = loader(return_X_y=True)
    model = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=0).fit(X, y)
    rows = np.random.default_rng(1).choice(len(X), N_INSTANCES, replace=False)
    # the hard vote: these complete enumerations are sized for it (the soft vote's real-forest
    # checks are in test_soft_vote.py)
    return model, X[rows], Forest.from_sklearn(model, vote="hard")


def _minimal_hitting_set(candidate: frozenset[int], family: list[frozenset[int]]) -> bool:
    if not all(candidate & s for s in family):
        return False
    return all(any(s & candidate == {f} for s in family) for f in candidate)


def _all(engine: SatEngine, query: str, *args: Any) -> list[Any]:
    budget = Budget(timeout=TIMEOUT)
    reasons = list(getattr(engine, query)(*args, budget))
    assert not budget.timed_out, f"{query} did not finish within {TIMEOUT} s"
    return reasons


@pytest.fixture(
    scope="module", params=[pytest.param(name, marks=LARGER) if name != "iris" else name for name in sorted(MODELS)]
)
def case(request: Any) -> Any:
    model, rows, forest = _model(request.param)
    engine = SatEngine(forest)
    yield model, rows, forest, engine
    engine.close()


@pytest.mark.slow
def test_duality_witnesses_and_consistency(case: Any) -> None:
    model, rows, forest, engine = case
    for x in rows:
        instance = Instance.of(forest, x)
        axps = _all(engine, "sufficient_reasons", instance)
        cxps = _all(engine, "necessary_reasons", instance)
        a_sets = [r.features for r in axps]
        c_sets = [r.features for r in cxps]
        assert len(set(a_sets)) == len(a_sets) and len(set(c_sets)) == len(c_sets)
        assert a_sets, "a decision always has a sufficient reason"
        # every AXp hits every CXp, and each is a *minimal* hitting set of the other family
        assert all(a & c for a in a_sets for c in c_sets)
        if c_sets:
            assert all(_minimal_hitting_set(a, c_sets) for a in a_sets)
            assert all(_minimal_hitting_set(c, a_sets) for c in c_sets)
        # the families are complete: their minimal hitting sets are all found (sizes agree with
        # an independent count of minimal transversals on the union of features involved)
        assert _count_minimal_hitting_sets(c_sets) == len(a_sets) if c_sets else a_sets == [frozenset()]
        assert _count_minimal_hitting_sets(a_sets) == len(c_sets) if any(a_sets) else not c_sets
        # single answers and shortest answers are consistent with the enumerations
        one_axp = engine.sufficient_reason(instance)
        one_cxp = engine.necessary_reason(instance)
        assert one_axp.features in a_sets
        assert (one_cxp is None) == (not c_sets) and (one_cxp is None or one_cxp.features in c_sets)
        short_a = _all(engine, "shortest_sufficient_reasons", instance)
        short_c = _all(engine, "shortest_necessary_reasons", instance)
        assert {r.features for r in short_a} == {a for a in a_sets if len(a) == min(map(len, a_sets))}
        if c_sets:
            assert {r.features for r in short_c} == {c for c in c_sets if len(c) == min(map(len, c_sets))}
            assert engine.robustness(instance) == min(map(len, c_sets))
        else:
            assert short_c == [] and engine.robustness(instance) == float("inf")
        # contrastive reasons toward every other class
        contrastive = []
        for target in range(forest.n_classes):
            if target != instance.prediction:
                got = _all(engine, "contrastive_reasons", instance, target)
                assert all(any(c <= r.features for c in c_sets) for r in got)
                if forest.n_classes == 2:
                    assert {r.features for r in got} == set(c_sets)
                contrastive.extend(got)
        # every witness checks out with scikit-learn's own trees
        for reason in axps + cxps + short_a + short_c + contrastive + [one_axp] + ([one_cxp] if one_cxp else []):
            result = verify(reason, model)
            assert result.ok, (str(reason), result.problems)


def _count_minimal_hitting_sets(family: list[frozenset[int]]) -> int:
    """Minimal transversals of ``family`` by brute force over the union (small unions only),
    independent of the engine's hitting-set solver."""
    universe = sorted(set().union(*family))
    assert len(universe) <= 20, "universe too large for the brute-force count"
    masks = [sum(1 << universe.index(f) for f in s) for s in family]
    n = len(universe)
    hitting = [all(m & s for s in masks) for m in range(1 << n)]
    return sum(
        1 for m in range(1 << n) if hitting[m] and all(not hitting[m & ~(1 << k)] for k in range(n) if m >> k & 1)
    )


@LARGER
@pytest.mark.parametrize("name", ["wine", "breast_cancer"])
def test_every_cardinality_encoding_gives_identical_explanations(name: str) -> None:
    model, rows, forest = _model(name)
    reference = None
    for card in CARD_ENCODINGS:
        for multiclass in ("challengers", "selectors"):
            with SatEngine(forest, card=card, multiclass=multiclass) as engine:
                got = []
                for x in rows[:2]:
                    instance = Instance.of(forest, x)
                    axps = {r.features for r in _all(engine, "sufficient_reasons", instance)}
                    # one AXp depends on the cores the solver returns: it must be one of them
                    assert engine.sufficient_reason(instance).features in axps
                    got.append(
                        (
                            axps,
                            {r.features for r in _all(engine, "necessary_reasons", instance)},
                            {r.features for r in _all(engine, "shortest_sufficient_reasons", instance)},
                            engine.robustness(instance),
                        )
                    )
            if reference is None:
                reference = got
            assert got == reference, (card, multiclass)


def test_reduced_formula_gives_the_whole_forest_solvers_answers(monkeypatch: Any) -> None:
    """On an unlimited-depth forest (breast cancer, 30 features, 25 trees) many deletion steps
    leave more features free than the boxes search whole, so the reduced formula of the reachable
    leaves decides them (counted; the whole formula's first try is switched off, as on large
    forests; so is the branch and bound, which settles all of them on this forest); the canonical
    AXp and CXp are those of the full CNF alone, and every witness verifies with the model."""
    from rfexplain.sat.deciders.reduced_cnf import ReducedCnf

    X, y = load_breast_cancer(return_X_y=True)
    model = RandomForestClassifier(n_estimators=25, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model, vote="hard")
    calls = 0
    original = ReducedCnf.decide

    def counted(self: ReducedCnf, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        assert self.solver == "g3"
        calls += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ReducedCnf, "decide", counted)
    tuning = {"whole_formula_leaves": 0, "hard_bnb_nodes": 0}
    with SatEngine(forest, tuning=tuning) as reduced, SatEngine(forest, prefilter=False) as whole:
        for x in X[::60]:
            instance = Instance.of(forest, x)
            axp = reduced.sufficient_reason(instance)
            assert axp.features == whole.sufficient_reason(instance).features
            assert verify(axp, model)
            cxp, other = reduced.necessary_reason(instance), whole.necessary_reason(instance)
            assert (cxp is None) == (other is None)
            if cxp is not None and other is not None:
                assert cxp.features == other.features and verify(cxp, model)
    assert calls > 0


def test_cadical_with_a_budget() -> None:
    """CaDiCaL cannot be interrupted: budgets go through conflict limits, and answers agree."""
    model, rows, forest = _model("wine")
    with SatEngine(forest, solver="cd195") as cadical, SatEngine(forest) as glucose:
        for x in rows[:2]:
            instance = Instance.of(forest, x)
            a = {r.features for r in cadical.sufficient_reasons(instance, Budget(timeout=30))}
            b = {r.features for r in glucose.sufficient_reasons(instance, Budget(timeout=30))}
            assert a == b


def test_bad_options_are_refused() -> None:
    _, _, forest = _model("iris")
    with pytest.raises(ValueError, match="solver must be one of"):
        SatEngine(forest, solver="kissat404")
    with pytest.raises(ValueError, match="card must be one of"):
        SatEngine(forest, card="pairwise")
    with pytest.raises(TypeError):
        SatEngine(forest, colour="blue")  # type: ignore[call-arg]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_dual_loop_hits_axps_not_raw_cores(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``necessary_reasons`` hits sufficient sets, each an AXp shrunk from the solver's core
    (MARCO's shrink) unless the core is no larger than an AXp shrunk before: raw cores can be far
    from minimal, and hitting them let the dual loop run for minutes on a 21-feature forest
    whose instance has one AXp and one CXp."""
    from pysat.examples.hitman import Hitman

    _, X, forest = _model(name)
    hits: list[frozenset[int]] = []
    original = Hitman.hit
    monkeypatch.setattr(Hitman, "hit", lambda self, s, *a, **k: hits.append(frozenset(s)) or original(self, s, *a, **k))
    with SatEngine(forest) as engine:
        for x in X:
            instance = Instance.of(forest, x)
            list(engine.necessary_reasons(instance, Budget(timeout=TIMEOUT)))
            search = engine._search(instance)
            largest = 0
            for s in hits:
                assert not search.has_counterexample(sorted(s)), sorted(s)
                if len(s) > largest:
                    assert all(search.has_counterexample(sorted(s - {f})) for f in s), sorted(s)
                    largest = len(s)
            hits.clear()


@settings(max_examples=examples(120), deadline=None)
@given(
    st.sampled_from(["hard", "soft"]).flatmap(lambda vote: forests_and_instances(vote=vote)),
    st.randoms(use_true_random=False),
)
def test_correction_sets_are_counterexamples_reduced_toward_the_instance(case: Any, rnd: Any) -> None:
    """The AXp enumerations hit the correction sets :meth:`Search.correction_set` reduces from
    counterexamples; each must be one (its point is decided otherwise, by the brute-force oracle,
    and differs from the instance exactly on its features, a subset of those the given
    counterexample changed), or the hitting sets could skip AXps or take non-minimal sets for AXps.
    The point is the greedy reduction the docstring defines, decided by the oracle: under the soft
    vote the compiled float64 walk must hand every near tie to exact arithmetic."""
    forest, instance = case
    oracle = Oracle(forest)
    counterexamples = [tuple(int(s) for s in z) for z in oracle.grid if oracle.classify(z) != instance.prediction]
    if not counterexamples:
        return
    with SatEngine(forest) as engine:
        search = engine._search(instance)
        for z in rnd.sample(counterexamples, min(8, len(counterexamples))):
            found = search.correction_set(z)
            point = found.counterexample
            assert point is not None and oracle.classify(point) != instance.prediction, (z, point)
            changed = {f for f, (a, b) in enumerate(zip(point, instance.states)) if a != b}
            assert changed == set(found.features), (z, point, found.features)
            assert changed <= {f for f, (a, b) in enumerate(zip(z, instance.states)) if a != b}
            reference = list(z)
            for f in search.features:
                if reference[f] != instance.states[f]:
                    reference[f], kept = instance.states[f], reference[f]
                    if oracle.classify(tuple(reference)) == instance.prediction:
                        reference[f] = kept
            assert tuple(point) == tuple(reference), (z, point, reference)
        with pytest.raises(RuntimeError, match="not a counterexample"):
            search.correction_set(instance.states)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(1, 2**12 - 1), max_size=40), st.integers(1, 2**12 - 1))
def test_the_latest_set_meeting_a_hitting_set_in_one_feature(masks: list[int], hs: int) -> None:
    """The AXp witnesses come from the latest correction set meeting the AXp in one feature; the
    numpy search (fewer than 63 features) and the scan of Python ints (wider forests) must both
    find exactly the sets the definition names."""
    from rfexplain.sat.search import _Masks

    expected: dict[int, int] = {}
    for k, m in enumerate(masks):
        meet = [f for f in range(12) if m & hs & (1 << f)]
        if len(meet) == 1:
            expected[meet[0]] = k  # later sets overwrite earlier ones
    for n_features in (12, 100):
        store = _Masks(n_features)
        for m in masks:
            store.append(m)
        assert store.compact == (n_features < 63)
        assert store.latest_private(hs) == expected


def test_the_mask_store_grows_past_its_first_block() -> None:
    from rfexplain.sat.search import _Masks

    store = _Masks(20)
    for k in range(3000):
        store.append(1 << (k % 20) | 1 << 19)
    assert len(store) == 3000
    # hs = {0, 5}: every set holds 19 and one other feature; 0 and 5 alone meet it
    assert store.latest_private(1 | 1 << 5) == {0: 2980, 5: 2985}
