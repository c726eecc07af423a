"""The lattice decider's integer margins (:mod:`rfexplain.sat.deciders.lattice`): they bound the
exact soft-vote margins from above, are whole votes on pure leaves, and answer exactly."""

import itertools
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfexplain.engines.base import Instance
from rfexplain.sat.deciders.base import DECIDERS, Question
from rfexplain.sat.deciders.bounds import ruled_out
from rfexplain.sat.deciders.lattice import Lattice, lattice_table
from rfexplain.sat.deciders.leaves import InstanceLeaves, LeafTable
from rfexplain.sat.deciders.race import Race
from rfexplain.sat.encodings import ForestEncoding
from tests.hypothesis_budget import examples
from tests.strategies import forests


def _table(forest: Any) -> LeafTable:
    return LeafTable(ForestEncoding(forest))


@settings(max_examples=examples(60), deadline=None)
@given(
    forests(vote="soft", impure="mixed"),
    st.sampled_from(["not", "predicts"]),
    st.integers(0, 3),
    st.sampled_from([0, 1, 3, 24]),
)
def test_lattice_margins_bound_the_exact_margins(forest: Any, kind: str, cls: int, bits: int) -> None:
    cls = cls % forest.n_classes
    table = _table(forest)
    exponent = forest.aggregation.integer_weights()[0]
    margins, _ = lattice_table(table, kind, cls, bits).margins(kind, cls)
    others = [d for d in range(forest.n_classes) if d != cls]
    for i, weights in enumerate(table.exact):
        pure = sum(1 for w in weights if w) == 1
        for j, d in enumerate(others):
            exact = Fraction(weights[d] - weights[cls] if kind == "not" else weights[cls] - weights[d], 2**exponent)
            r = margins[i, j]
            assert r == int(r)
            assert Fraction(int(r), 2**bits) >= exact  # an upper bound
            assert Fraction(int(r), 2**bits) - exact < Fraction(1, 2**bits) or bits == 0
            if bits == 0:
                assert r in ((-1, 1) if forest.n_classes == 2 else (-1, 0, 1))
                if pure:
                    assert r == exact  # a pure leaf is a whole vote


def _truth(grid: np.ndarray, labels: np.ndarray, states: tuple[int, ...], fixed: list[int], kind: str, c: int) -> bool:
    agree = np.all(grid[:, fixed] == np.asarray(states)[fixed], axis=1) if fixed else np.ones(len(grid), dtype=bool)
    return bool(np.any(agree & ((labels != c) if kind == "not" else (labels == c))))


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    forests(max_trees=7, max_classes=3, max_features=4, max_depth=3, vote="soft", impure="mixed"),
    st.sampled_from([(0,), (0, 24), (1, 3)]),
    st.sampled_from([0, 4]),
    st.data(),
)
def test_every_question_the_lattices_settle_is_settled_right(
    forest: Any, levels: tuple[int, ...], box_points: int, data: Any
) -> None:
    """Against brute force over every state vector: UNSAT only where no point holds (with a
    core that suffices too), witnesses that hold under the exact soft vote and agree with the
    instance on the fixed features."""
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    labels = forest.predict_states(grid)
    table = _table(forest)
    if not table.soft:  # every leaf pure: the hard vote's deciders answer, not the lattices
        return
    for _ in range(4):
        states = tuple(int(s) for s in grid[data.draw(st.integers(0, len(grid) - 1))])
        leaves = InstanceLeaves(
            table, states, tuning=table.tuning.replace(lattice_levels=levels, box_points=box_points, lattice_impure=1.0)
        )
        fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
        rows = leaves.reachable(fixed)
        free, lows, highs = leaves.free_boxes(fixed, rows)
        for kind in ("not", "predicts"):
            for c in range(forest.n_classes):
                question = Question(tuple(fixed), kind, c, core=data.draw(st.booleans()))
                lattice = Lattice(leaves, rows, free, (lows, highs), DECIDERS, race=Race, bounds=ruled_out)
                answer = lattice.decide(question, None)
                if answer is None:
                    continue
                assert answer.by == "lattice"
                assert answer.sat == _truth(grid, labels, states, fixed, kind, c), (kind, c, fixed)
                if answer.core is not None:
                    assert not answer.sat and answer.core <= set(fixed)
                    assert not _truth(grid, labels, states, sorted(answer.core), kind, c)
                if answer.sat:
                    w = answer.witness
                    assert w is not None and all(w[f] == states[f] for f in fixed)
                    got = int(forest.predict_states(np.asarray([w]))[0])
                    assert (got != c) if kind == "not" else (got == c)


@pytest.mark.parametrize("levels", [(0,), (0, 24), (2,)])
def test_nearly_pure_forest_answers_match_the_soft_race(levels: tuple[int, ...]) -> None:
    """A scikit-learn forest of limited depth (a few impure leaves): every AXp and CXp of a few
    rows is the same with the lattices as with the soft race alone, and the lattices answer."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain import Forest
    from rfexplain.sat.engine import SatEngine

    data = load_breast_cancer()
    model = RandomForestClassifier(n_estimators=15, max_depth=4, random_state=0).fit(data.data, data.target)
    forest = Forest.from_sklearn(model, vote="soft")
    with_lattice = SatEngine(forest, prefilter=True, tuning={"lattice_levels": levels})
    without = SatEngine(forest, prefilter=True, deciders=[d for d in DECIDERS if d != "lattice"])
    try:
        for x in data.data[:4]:
            instance = Instance.of(forest, x)
            assert with_lattice.sufficient_reason(instance) == without.sufficient_reason(instance)
            assert with_lattice.necessary_reason(instance) == without.necessary_reason(instance)
    finally:
        with_lattice.close()
        without.close()


def _tie_forest() -> Any:
    """Three stumps on one feature: at state 0 two pure leaves and a half-and-half one (the
    forest's one impure leaf) tie the classes exactly (class 0 wins the tie), at state 1 class 1
    wins."""
    from rfexplain import Forest

    def stump(left: tuple[float, float], right: tuple[float, float]) -> dict:
        label = [-1, int(left[1] > left[0]), int(right[1] > right[0])]
        return {
            "feature": [0, -1, -1],
            "threshold": [0.5, 0.0, 0.0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": label,
            "proba": [None, left, right],
        }

    raw = [stump((1.0, 0.0), (0.0, 1.0)), stump((0.0, 1.0), (0.0, 1.0)), stump((0.5, 0.5), (0.0, 1.0))]
    return Forest.from_raw_trees(raw, n_features=1, classes=[0, 1], vote="soft")


@pytest.mark.parametrize("deciders", [{"cliques"}, {"boxes"}, DECIDERS])
def test_an_exact_tie_that_goes_to_the_challenger_is_a_witness(deciders: Any) -> None:
    """On the 24-bit lattice the margins are sums of about ``2**24`` per tree, where the float64
    near-tie tolerance is lost in rounding: the exact tie at state 0 (class 0 wins it) must still
    be found by each of the race's searches (a regression: the clique search missed it)."""
    forest = _tie_forest()
    assert forest.predict([[0.0], [1.0]]).tolist() == [0, 1]
    table = _table(forest)
    leaves = InstanceLeaves(table, (1,), tuning=table.tuning.replace(lattice_levels=(24,), lattice_impure=1.0))
    rows = leaves.reachable(())
    free, lows, highs = leaves.free_boxes((), rows)
    lattice = Lattice(leaves, rows, free, (lows, highs), deciders, race=Race, bounds=ruled_out)
    answer = lattice.decide(Question((), "not", 1), None)
    assert answer is not None and answer.sat and answer.witness == (0,) and answer.by == "lattice"


def _near_tie_forest() -> Any:
    """Three stumps: at state (1, 1, 1) the class-1 margins are ``-1``, ``fl(0.6) - fl(0.4)`` and
    ``fl(0.9) - fl(0.1)``, whose exact sum is ``-2**-55`` (class 0 wins everywhere), while each
    impure margin rounded up to the 24-bit lattice makes class 1 win by one step there: a
    spurious point on every lattice."""
    from rfexplain import Forest

    def stump(feature: int, left: tuple[float, float], right: tuple[float, float]) -> dict:
        return {
            "feature": [feature, -1, -1],
            "threshold": [0.5, 0.0, 0.0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": [-1, int(left[1] > left[0]), int(right[1] > right[0])],
            "proba": [None, left, right],
        }

    raw = [stump(0, (1.0, 0.0), (1.0, 0.0)), stump(1, (1.0, 0.0), (0.4, 0.6)), stump(2, (1.0, 0.0), (0.1, 0.9))]
    return Forest.from_raw_trees(raw, n_features=3, classes=[0, 1], vote="soft")


def test_a_spurious_point_leaves_the_soft_race_a_short_turn_before_the_full_cnf(monkeypatch: Any) -> None:
    """The lattice gives up on the near-tie point (``spurious``) and the UNSAT question is still
    answered exactly; the soft race then gets at most ``lattice_nodes`` boxes (its points
    within rounding of a tie are near-ties for its boxes too) before the full CNF."""
    from rfexplain.sat.engine import SatEngine

    forest = _near_tie_forest()
    assert Fraction(0.6) - Fraction(0.4) + Fraction(0.9) - Fraction(0.1) - 1 == -Fraction(1, 2**55)
    assert forest.predict([[1.0, 1.0, 1.0]]).tolist() == [0]
    table = _table(forest)
    leaves = InstanceLeaves(table, (0, 0, 0), tuning=table.tuning.replace(lattice_levels=(24,), lattice_impure=1.0))
    rows = leaves.reachable(())
    free, lows, highs = leaves.free_boxes((), rows)
    lattice = Lattice(leaves, rows, free, (lows, highs), DECIDERS, race=Race, bounds=ruled_out)
    assert lattice.decide(Question((), "not", 0), None) is None
    assert lattice.done and lattice.spurious

    asked: list[int] = []
    slices = Race.slices

    def recording(self: Race, nodes: int) -> Any:
        asked.append(nodes)
        return slices(self, nodes)

    monkeypatch.setattr(Race, "slices", recording)
    tuning = {"lattice_impure": 1.0, "lattice_nodes": 7, "whole_formula_leaves": 0, "first_slice": 1, "bnb_slice": 1}
    with SatEngine(forest, tuning=tuning) as engine:
        assert engine.necessary_reason(Instance.of(forest, [0.0, 0.0, 0.0])) is None  # nothing flips it
    assert 7 in asked
