"""The SDD comparator: exact class counts against the oracle, and equivalence checking of the
circuit engine's class formulas (Algorithm 3 NNF, 3A and 3B decision graphs)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rfexplain import Forest, datasets
from rfexplain.comparators.sdd import SDDForest, count_models, equivalent
from rfexplain.oracle import Oracle
from tests.hypothesis_budget import examples
from tests.strategies import forests

classformula = pytest.importorskip("rfexplain.circuit.compilers.classformula")
#: the circuit engine's vote-counting cores
CORES = ["python", "compact"]


def _sklearn_forest(name: str, n_trees: int, depth: int, seed: int = 0) -> Forest:
    from sklearn.ensemble import RandomForestClassifier

    data = datasets.load(name)
    model = RandomForestClassifier(n_estimators=n_trees, max_depth=depth, random_state=seed).fit(data.X, data.y)
    return Forest.from_sklearn(model, vote="hard")  # the SDD comparator compiles the hard vote


@settings(max_examples=examples(120), deadline=None)
@given(forests(), st.sampled_from(["order", "indicator"]), st.sampled_from(["balanced", "features", "right"]))
def test_counts_equal_the_oracle(forest: Forest, encoding: str, vtree: str) -> None:
    oracle = Oracle(forest)
    sdd = SDDForest(forest, encoding=encoding, vtree=vtree)
    counts = sdd.counts()
    assert counts == [int((oracle.labels == c).sum()) for c in range(forest.n_classes)]
    assert sum(counts) == math.prod(forest.states_per_feature)
    assert sum(sdd.fractions()) == 1


@settings(max_examples=examples(60), deadline=None)
@given(forests(), st.sampled_from(["order", "indicator"]))
def test_class_formulas_are_the_forest_on_every_state_vector(forest: Forest, encoding: str) -> None:
    oracle = Oracle(forest)
    sdd = SDDForest(forest, encoding=encoding)
    for c in range(forest.n_classes):
        node = sdd.class_formula(c)
        for z, label in zip(oracle.grid[:200], oracle.labels[:200]):
            assert sdd.holds(node, z) == (label == c)


@settings(max_examples=examples(80), deadline=None)
@given(forests(), st.sampled_from(["nnf", "3A", "3B"]), st.sampled_from(CORES))
def test_circuit_class_formulas_are_equivalent(forest: Forest, compiler: str, core: str) -> None:
    formulas = classformula.ClassFormulas(forest, core=core)
    assert equivalent(forest, formulas, compiler=compiler)


@settings(max_examples=examples(80), deadline=None)
@given(forests(min_classes=2))
def test_a_wrong_formula_is_caught_with_a_real_counterexample(forest: Forest) -> None:
    oracle = Oracle(forest)
    manager, roots = classformula.ClassFormulas(forest).nnf()
    sdd = SDDForest(forest)
    for c in range(forest.n_classes):
        # claim the formula of class c describes class d: wrong unless both are empty
        d = (c + 1) % forest.n_classes
        empty = not (oracle.labels == c).any() and not (oracle.labels == d).any()
        z = sdd.difference((manager, roots[c]), d)
        assert (z is None) == empty
        if z is not None:
            assert (oracle.labels[oracle.index(z)] == d) != manager.evaluate(roots[c], z)
        # a formula that is right except on one state vector
        target = tuple(int(s) for s in oracle.grid[0])
        point = manager.conj_all(manager.state(f, s) for f, s in enumerate(target))
        flipped = manager.disj(roots[c], point) if oracle.labels[0] != c else None
        if flipped is not None:
            assert sdd.difference((manager, flipped), c) == target
            assert not equivalent(forest, (manager, flipped), c, sdd=sdd)


def test_single_circuits_and_decision_graphs() -> None:
    forest = _sklearn_forest("iris", 5, 3)
    formulas = classformula.ClassFormulas(forest)
    sdd = SDDForest(forest)
    manager, roots = formulas.nnf()
    for c in range(forest.n_classes):
        assert equivalent(forest, (manager, roots[c]), c, sdd=sdd)
        assert equivalent(forest, (formulas.dg, formulas.dg_3a(c)), c, sdd=sdd)
        assert equivalent(forest, (formulas.dg, tuple(formulas.dg_3b(c))), c, sdd=sdd)
    with pytest.raises(ValueError, match="cls is required"):
        equivalent(forest, (manager, roots[0]))
    with pytest.raises(ValueError, match="compiler must be one of"):
        equivalent(forest, formulas, compiler="4")
    with pytest.raises(TypeError):
        sdd.convert(42)


@pytest.mark.parametrize(
    "name, n_trees, depth, encoding",
    [("iris", 25, 4, "order"), ("iris", 25, 4, "indicator"), ("wine", 5, 3, "order"), ("breast_cancer", 4, 3, "order")],
)
def test_real_forests_counts_and_equivalence(name: str, n_trees: int, depth: int, encoding: str) -> None:
    forest = _sklearn_forest(name, n_trees, depth)
    sdd = SDDForest(forest, encoding=encoding, timeout=60)
    counts = sdd.counts()
    assert sum(counts) == math.prod(forest.states_per_feature)
    formulas = classformula.ClassFormulas(forest)
    assert equivalent(forest, formulas, compiler="3B", sdd=sdd)
    # the data rows' decisions are models of their class formula
    data = datasets.load(name)
    S = forest.states(data.X[::15])
    for z, c in zip(S, forest.predict_states(S)):
        assert [sdd.holds(sdd.class_formula(d), z) for d in range(forest.n_classes)] == [
            d == c for d in range(forest.n_classes)
        ]


def test_counts_exceed_64_bits() -> None:
    """70 features with two states each: 2^70 state vectors, past PySDD's 64-bit counters."""
    raw = {
        "feature": [0, -1, -1],
        "threshold": [0.5, 0, 0],
        "left": [1, -1, -1],
        "right": [2, -1, -1],
        "label": [-1, 0, 1],
    }
    dummies = [
        {
            "feature": [f, -1, -1],
            "threshold": [0.5, 0, 0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": [-1, 0, 0],
        }
        for f in range(1, 70)
    ]
    forest = Forest.from_raw_trees([raw] + dummies, n_features=70, classes=[0, 1])
    sdd = SDDForest(forest)
    counts = sdd.counts()
    assert counts == [2**70, 0]
    assert count_models(sdd.manager, sdd.manager.true(), sdd.n_vars) == 2**70


def test_options_are_validated() -> None:
    forest = _sklearn_forest("iris", 2, 2)
    with pytest.raises(ValueError, match="encoding must be one of"):
        SDDForest(forest, encoding="log")
    with pytest.raises(ValueError, match="vtree must be one of"):
        SDDForest(forest, vtree="random")
    assert np.isclose(float(sum(SDDForest(forest, auto_minimize=True).fractions())), 1.0)
