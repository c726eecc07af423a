"""The brute-force oracle against the papers' worked examples, and its own consistency."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings

from rfexplain.engines.base import Instance
from rfexplain.oracle import Oracle
from tests import handmade
from tests.hypothesis_budget import examples
from tests.strategies import forests_and_instances


def feature_sets(reasons: Any) -> set[frozenset[int]]:
    return {r.features for r in reasons}


def literal_sets(reasons: Any) -> set[tuple[tuple[int, tuple[int, ...]], ...]]:
    return {tuple((f, tuple(sorted(s))) for f, s in sorted(r.literals.items())) for r in reasons}


def minimal_hitting_sets(sets: list[frozenset[int]], universe: list[int]) -> set[frozenset[int]]:
    hitting = [
        frozenset(c)
        for k in range(len(universe) + 1)
        for c in itertools.combinations(universe, k)
        if all(frozenset(c) & s for s in sets)
    ]
    return {h for h in hitting if not any(o < h for o in hitting)}


# ---------------------------------------------------------------------- worked examples
def test_rfxpl_running_example() -> None:
    """Izza and Marques-Silva (2021), Examples 1-2 [IM21]: v = (1, 0, 1, 70) is Yes;
    {blocked-arteries, chest-pain} is its AXp and {blocked-arteries} a CXp; by hand, {chest-pain}
    is the only other CXp."""
    forest = handmade.rfxpl_running_example()
    oracle = Oracle(forest)
    v = Instance.of(forest, [1, 0, 1, 70])
    assert forest.classes[v.prediction] == "Yes"
    assert forest.predict([[0, 0, 1, 70]])[0] == "No"
    assert feature_sets(oracle.sufficient_reasons(v)) == {frozenset({0, 2})}
    assert feature_sets(oracle.necessary_reasons(v)) == {frozenset({0}), frozenset({2})}
    assert oracle.robustness(v) == 1


def test_susan_example() -> None:
    """Ji and Darwiche (2026), Sect. 2 [JD26]: the SRs, NRs, GSRs, GNRs, complete and general
    reasons listed for Susan."""
    forest = handmade.susan_example()
    oracle = Oracle(forest)
    age, btype, weight = 0, 1, 2
    A, B, AB, O = 0, 1, 2, 3
    under, norm, over = 0, 1, 2
    susan = Instance.of(forest, [60, A, over])
    assert forest.classes[susan.prediction] == "yes"
    assert feature_sets(oracle.sufficient_reasons(susan)) == {frozenset({age, btype}), frozenset({age, weight})}
    assert literal_sets(oracle.necessary_reasons(susan)) == {((age, (1,)),), ((btype, (A,)), (weight, (over,)))}
    assert literal_sets(oracle.general_sufficient_reasons(susan)) == {
        ((age, (1,)), (btype, (A, B))),
        ((age, (1,)), (weight, (over,))),
    }
    # The paper lists (Btype in {A,B,AB} or Weight in {norm,over}) as a GNR. It is implied by the
    # general reason but is not a *prime* implicate: resolving it with the third clause on Weight
    # gives (Btype in {A,B,AB} or Weight = over), which the general reason also implies and which
    # is strictly stronger. Its extra violation (Btype O, Weight norm) is indeed a flip. We follow
    # the definition (variable-minimal prime implicates), so the strong clause is the GNR.
    assert literal_sets(oracle.general_necessary_reasons(susan)) == {
        ((age, (1,)),),
        ((btype, (A, B, AB)), (weight, (over,))),
        ((btype, (A, B)), (weight, (under, over))),
    }
    assert forest.predict([[60, O, norm]])[0] == "no"
    complete = oracle.complete_reason(susan)
    general = oracle.general_reason(susan)
    for z in itertools.product(range(2), range(4), range(3)):
        a, b, w = z
        assert (z in complete) == (a == 1 and (b == A or w == over)), z
        assert (z in general) == (
            a == 1 and (b in (A, B, AB) or w in (norm, over)) and (b in (A, B) or w in (under, over))
        ), z
    # "if we set Btype to AB and Weight to norm ... the decision on Susan becomes no"
    assert forest.predict([[60, AB, norm]])[0] == "no"


def test_ternary_complete_reason_example() -> None:
    """Darwiche and Ji (2022), Sect. 3 [DJ22]: the complete reason of x2 y2 z1 under
    x̄1(x2 + ȳ1)(ȳ1 + z1) is x2(y2 + z1), with exactly the four other models the paper lists."""
    forest = handmade.ternary_complete_reason_example()
    oracle = Oracle(forest)
    delta = Instance.of(forest, [1, 1, 0])
    assert delta.prediction == 1
    models = set(oracle.complete_reason(delta).models())
    assert models == {(1, 1, 0), (1, 1, 1), (1, 1, 2), (1, 0, 0), (1, 2, 0)}
    assert feature_sets(oracle.sufficient_reasons(delta)) == {frozenset({0, 1}), frozenset({0, 2})}
    assert feature_sets(oracle.necessary_reasons(delta)) == {frozenset({0}), frozenset({1, 2})}
    # x3 y2 z1 is positive too, but not in the complete reason
    assert oracle.classify((2, 1, 0)) == 1 and (2, 1, 0) not in oracle.complete_reason(delta)


def test_three_class_tree_example() -> None:
    """Darwiche and Ji (2022), Fig. 4 [DJ22]: x2 y1 is c2; necessary reasons x2 and y1; violating
    x2 gives c1, y1 gives c3; the only way toward c3 is through Y."""
    forest = handmade.three_class_tree_example()
    oracle = Oracle(forest)
    v = Instance.of(forest, [1, 0])
    assert forest.classes[v.prediction] == "c2"
    assert feature_sets(oracle.necessary_reasons(v)) == {frozenset({0}), frozenset({1})}
    assert feature_sets(oracle.sufficient_reasons(v)) == {frozenset({0, 1})}
    assert feature_sets(oracle.contrastive_reasons(v, 2)) == {frozenset({1})}
    assert feature_sets(oracle.contrastive_reasons(v, 0)) == {frozenset({0})}


def test_shortest_flip_example() -> None:
    """Ji and Darwiche (2026), Sect. 4 [JD26]: instance x1 y1 under x12 ∨ y12: the NR x1 ∨ y1 does
    not tell how to flip, the GNR x12 ∨ y12 does; the only shortest flip is x3 y3."""
    forest = handmade.shortest_flip_example()
    oracle = Oracle(forest)
    v = Instance.of(forest, [0, 0])
    assert literal_sets(oracle.necessary_reasons(v)) == {((0, (0,)), (1, (0,)))}
    assert literal_sets(oracle.general_necessary_reasons(v)) == {((0, (0, 1)), (1, (0, 1)))}
    assert literal_sets(oracle.shortest_flips(v)) == {((0, (0, 1)), (1, (0, 1)))}
    assert oracle.shortest_flip_states(v) == [(2, 2)]
    assert oracle.robustness(v) == 2
    assert oracle.classify((1, 1)) == 1  # violates the NR x1 ∨ y1 without flipping


# ---------------------------------------------------------------------- consistency
@settings(max_examples=examples(150), deadline=None)
@given(forests_and_instances())
def test_hitting_set_duality(case: Any) -> None:
    forest, v = case
    oracle = Oracle(forest)
    sufficient = [r.features for r in oracle.sufficient_reasons(v)]
    necessary = [r.features for r in oracle.necessary_reasons(v)]
    assert all(s & n for s in sufficient for n in necessary)
    universe = oracle.relevant
    assert set(necessary) == (minimal_hitting_sets(sufficient, universe) if necessary else set())
    if necessary:
        assert set(sufficient) == minimal_hitting_sets(necessary, universe)
    else:
        assert sufficient == [frozenset()]
    assert oracle.robustness(v) == min((len(n) for n in necessary), default=float("inf"))


@settings(max_examples=examples(150), deadline=None)
@given(forests_and_instances())
def test_complete_and_general_reasons(case: Any) -> None:
    forest, v = case
    oracle = Oracle(forest)
    complete = set(oracle.complete_reason(v).models())
    general = set(oracle.general_reason(v).models())
    assert v.states in complete
    assert complete <= general
    assert all(oracle.classify(z) == v.prediction for z in general)
    # A GSR's feature set is an AXp's, and every AXp's feature set is some GSR's.
    assert feature_sets(oracle.general_sufficient_reasons(v)) == feature_sets(oracle.sufficient_reasons(v))


@settings(max_examples=examples(150), deadline=None)
@given(forests_and_instances())
def test_general_necessary_reasons_and_shortest_flips(case: Any) -> None:
    forest, v = case
    oracle = Oracle(forest)
    gnrs = oracle.general_necessary_reasons(v)
    for reason in gnrs:  # Ji and Darwiche (2026), Lemma 2: every violation of a GNR flips the decision
        ranges = [
            [s for s in range(forest.n_states(f)) if s not in reason.literals[f]]
            if f in reason.literals
            else [v.states[f]]
            for f in range(forest.n_features)
        ]
        for z in itertools.product(*ranges):
            assert oracle.classify(z) != v.prediction, (reason, z)
    flips = oracle.shortest_flips(v)
    shortest_nr = [r.features for r in oracle.necessary_reasons(v) if len(r) == oracle.robustness(v)]
    assert feature_sets(flips) == set(shortest_nr)
    violations = set()
    for reason in flips:
        ranges = [
            [s for s in range(forest.n_states(f)) if s not in reason.literals[f]]
            if f in reason.literals
            else [v.states[f]]
            for f in range(forest.n_features)
        ]
        violations |= set(itertools.product(*ranges))
    assert violations == set(oracle.shortest_flip_states(v))


@settings(max_examples=examples(100), deadline=None)
@given(forests_and_instances(min_classes=3))
def test_contrastive_reasons_refine_necessary_reasons(case: Any) -> None:
    forest, v = case
    oracle = Oracle(forest)
    necessary = [r.features for r in oracle.necessary_reasons(v)]
    union: set[frozenset[int]] = set()
    for target in range(forest.n_classes):
        if target == v.prediction:
            continue
        for reason in oracle.contrastive_reasons(v, target):
            assert any(n <= reason.features for n in necessary)
            union.add(reason.features)
    # every necessary reason is a contrastive reason toward some class
    assert set(necessary) <= union
