"""The SAT engine's deciders before the full CNF (:mod:`rfexplain.sat.deciders`: bounds, box
search, cliques, climbs, the reduced CNF) against brute force: every question they settle is
settled right, every witness they give is one and every core they give suffices,
under both votes and both conditions ("does not predict c", "predicts t")."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier

from rfexplain import Forest
from rfexplain.core.vote import NEAR_TIE
from rfexplain.engines.base import Instance
from rfexplain.sat.deciders import leaves as leaves_module
from rfexplain.sat.deciders.base import DECIDERS, Answer, Question
from rfexplain.sat.deciders.bounds import Bounds, slack
from rfexplain.sat.deciders.leaves import LeafTable
from rfexplain.sat.deciders.race import Race
from rfexplain.sat.encodings import ForestEncoding
from rfexplain.sat.engine import SatEngine
from tests.hypothesis_budget import examples
from tests.sat_deciders import advance, decide_reduced, race_of, screen_of, settle, with_deciders
from tests.strategies import forests


def _truth(grid: np.ndarray, labels: np.ndarray, states: tuple[int, ...], fixed: list[int], kind: str, c: int) -> bool:
    agree = np.all(grid[:, fixed] == np.asarray(states)[fixed], axis=1) if fixed else np.ones(len(grid), dtype=bool)
    hold = labels != c if kind == "not" else labels == c
    return bool(np.any(agree & hold))


def _check(forest: Any, data: Any, box_points: int, **tuning: Any) -> int:
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    labels = forest.predict_states(grid)
    table = LeafTable(ForestEncoding(forest))
    settled = 0
    for _ in range(6):
        states = tuple(int(s) for s in grid[data.draw(st.integers(0, len(grid) - 1))])
        screen = screen_of(table, states, box_points=box_points, **tuning)
        fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
        for kind in ("not", "predicts"):
            for c in range(forest.n_classes):
                decided = settle(screen, fixed, kind, c)
                if decided is None:
                    continue
                settled += 1
                assert decided.sat == _truth(grid, labels, states, fixed, kind, c), (kind, c, fixed)
                if decided.core is not None:  # a bound core: fixed features that suffice too
                    assert not decided.sat and decided.core <= set(fixed)
                    assert not _truth(grid, labels, states, sorted(decided.core), kind, c), (kind, c, fixed)
                if decided.sat:
                    w = decided.witness
                    assert w is not None and all(w[f] == states[f] for f in fixed)
                    got = int(forest.predict_states(np.asarray([w]))[0])
                    assert (got != c) if kind == "not" else (got == c)
    return settled


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=7, max_classes=4), st.sampled_from([0, 4, 256]), st.data())
def test_prefilter_hard_vote_settles_right(forest: Any, box_points: int, data: Any) -> None:
    _check(forest, data, box_points)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=7, max_classes=4, vote="soft"), st.sampled_from([0, 4, 256]), st.data())
def test_prefilter_soft_vote_settles_right(forest: Any, box_points: int, data: Any) -> None:
    """Bounds, small boxes and (with ``box_points=0``) the branch and bound, with exact ties and
    near-ties."""
    _check(forest, data, box_points)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    forests(max_trees=6, max_classes=3, max_features=5, max_depth=4, vote="soft"), st.sampled_from([0, 3]), st.data()
)
def test_prefilter_branch_and_bound_settles_right(forest: Any, box_points: int, data: Any) -> None:
    """Every soft-vote query the bounds and small boxes leave goes to the branch
    and bound, which splits down to boxes of at most ``box_points`` combinations."""
    assert _check(forest, data, box_points) > 0


@pytest.mark.slow
def test_prefilter_settles_most_queries_on_a_real_forest_and_changes_no_answer() -> None:
    """On a real forest the prefilter answers many queries without the solver, and every reason
    equals the one the solver alone gives."""
    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=30, max_depth=4, random_state=0).fit(X, y)
    for vote in ("hard", "soft"):
        forest = Forest.from_sklearn(model, vote=vote)
        with SatEngine(forest) as screened, SatEngine(forest, prefilter=False) as plain:
            for x in X[::20]:
                instance = Instance.of(forest, x)
                assert screened.sufficient_reason(instance).literals == plain.sufficient_reason(instance).literals
                assert screened.necessary_reason(instance).literals == plain.necessary_reason(instance).literals
            stats = screened.stats
            assert stats.screened_sat + stats.screened_unsat > 0, vote
            assert plain.stats.screened_sat + plain.stats.screened_unsat == 0


#: the left leaves' class vectors of :func:`_near_tie_forest`
NEAR_TIE_LEAVES = [(0.1, 0.3), (0.2, 0.2), (0.3, 0.1 + 2**-55)]


def _near_tie_forest() -> Forest:
    """Three stumps on one feature whose class sums at state 0 tie in float64 (0.6 and 0.6) while
    class 1 wins exactly (its vectors sum to 0.6 + 2**-55 in rationals)."""
    raw = [
        {
            "feature": [0, -1, -1],
            "threshold": [0.5, 0.0, 0.0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": [-1, 1, 0],
            "proba": [None, v, (1.0, 0.0)],
        }
        for v in NEAR_TIE_LEAVES
    ]
    return Forest.from_raw_trees(raw, n_features=1, classes=["a", "b"], vote="soft")


def test_prefilter_decides_float64_near_ties_exactly() -> None:
    """At state 0 the three trees' class sums are equal in float64 (0.6 and 0.6) but class 1 wins
    exactly (its vectors sum to 0.6 + 2**-55 in rationals); the prefilter must see the flip."""
    from rfexplain.core.forest import exact_soft_winner

    left = NEAR_TIE_LEAVES
    assert exact_soft_winner(left) == 1 and sum(v[0] for v in left) == sum(v[1] for v in left)
    forest = _near_tie_forest()
    assert forest.predict([[0.0], [1.0]]).tolist() == ["b", "a"]
    screen = screen_of(LeafTable(ForestEncoding(forest)), (1,))
    decided = settle(screen, [], "not", 0)
    assert decided is not None and decided.sat and decided.witness == (0,)
    assert settle(screen, [0], "not", 0) == Answer(False, core=frozenset({0}))
    with SatEngine(forest) as engine:
        reason = engine.sufficient_reason(Instance.of(forest, [1.0]))
        assert set(reason.literals) == {0}


def test_prefilter_is_on_by_default_under_both_votes() -> None:
    """Measured: the screen pays on the paper's forests and, since its table is built with numpy
    and the formula only when a query needs it, on scikit-learn's unlimited-depth forests too."""
    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    hard, soft = Forest.from_sklearn(model, vote="hard"), Forest.from_sklearn(model, vote="soft")
    assert SatEngine(hard).prefilter and SatEngine(soft).prefilter
    assert not SatEngine(hard, prefilter=False).prefilter and not SatEngine(soft, prefilter=False).prefilter


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=5, max_classes=3, max_features=4, max_depth=5))
def test_leaf_table_rows_are_the_feasible_leaf_paths(forest: Any) -> None:
    """The table's vectorised leaf boxes are exactly the boxes of the feasible root-to-leaf
    paths (:meth:`Tree.leaf_paths`), one row per leaf, with its tree and vote."""
    table = LeafTable(ForestEncoding(forest))
    n_states = forest.states_per_feature
    expected = {}
    for k, tree in enumerate(forest.trees):
        for box, leaf in tree.leaf_paths(n_states):
            low = tuple(box.get(f, (0, n - 1))[0] for f, n in enumerate(n_states))
            high = tuple(box.get(f, (0, n - 1))[1] for f, n in enumerate(n_states))
            expected[int(forest.flat.first_nodes[k]) + leaf] = (k, low, high, tree.label[leaf])
    rows = {int(node): int(row) for node, row in enumerate(table.row_of_node) if row >= 0}
    assert rows.keys() == expected.keys() and sorted(rows.values()) == list(range(len(rows)))
    for node, row in rows.items():
        k, low, high, label = expected[node]
        assert table.tree[row] == k and tuple(table.low[row]) == low and tuple(table.high[row]) == high
        if not table.soft:
            assert table.score[row].tolist() == [float(c == label) for c in range(forest.n_classes)]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=6, max_classes=3, max_features=4, max_depth=4), st.data())
def test_one_state_per_cell_stands_for_every_state(forest: Any, data: Any) -> None:
    """Every allowed state of a free feature sends every point (agreeing with the instance on the
    fixed features) to the same leaves as the state chosen for its cell, and the chosen states
    are allowed, distinct and sorted."""
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    table = LeafTable(ForestEncoding(forest))
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    screen = screen_of(table, states).leaves
    assert screen is not None
    fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    reachable = np.flatnonzero(~np.any(screen.outside[:, fixed], axis=1))
    agree = grid[np.all(grid[:, fixed] == states[fixed], axis=1)]
    for f in set(range(forest.n_features)) - set(fixed):
        cells = screen.cells(f, table.low[reachable, f], table.high[reachable, f], 0, forest.n_states(f) - 1)
        assert list(cells) == sorted(set(cells.tolist())) and set(cells.tolist()) <= set(table.allowed[f].tolist())
        for s in table.allowed[f]:
            stand_in = cells[cells <= s].max()
            moved = agree.copy()
            moved[:, f] = s
            chosen = agree.copy()
            chosen[:, f] = stand_in
            assert np.array_equal(forest.flat.tree_leaves(moved), forest.flat.tree_leaves(chosen)), (f, s, stand_in)


def test_queries_the_prefilter_settles_build_no_formula() -> None:
    """A forest over two features has at most a few hundred cell combinations, so the prefilter
    settles every query: no formula is built and no solver is loaded. Without the prefilter the
    same queries load one."""
    X, y = load_wine(return_X_y=True)
    X = X[:, [0, 6]]
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model)
    with SatEngine(forest, prefilter=True) as screened, SatEngine(forest, prefilter=False) as plain:
        for engine in (screened, plain):
            instance = Instance.of(forest, X[0])
            engine.sufficient_reason(instance)
            engine.necessary_reason(instance)
        assert screened.stats.sat_calls + screened.stats.unsat_calls == 0
        assert not any(oracle.loaded for oracle in screened._oracles.values())
        assert screened.encoding._formulas == {} and screened.describe()["formulas"] == {}
        assert any(oracle.loaded for oracle in plain._oracles.values()) and plain.describe()["formulas"]


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=6, max_classes=4, max_features=4, max_depth=4), st.data())
def test_reduced_formula_decides_every_hard_query_exactly(forest: Any, data: Any) -> None:
    """The CNF over the reachable leaves (:mod:`rfexplain.sat.deciders.reduced_cnf`) answers every query as
    brute force over all state vectors does, and its witnesses agree with the instance on the
    fixed features and meet the condition."""
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    decisions = np.asarray([forest.decide(tuple(z)) for z in grid.tolist()])
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    kind = data.draw(st.sampled_from(["not", "predicts"]))
    cls = data.draw(st.integers(0, forest.n_classes - 1))
    settled = decide_reduced(screen_of(LeafTable(ForestEncoding(forest)), states), fixed, kind, cls)
    agree = np.all(grid[:, fixed] == states[fixed], axis=1)
    holds = (decisions != cls) if kind == "not" else (decisions == cls)
    assert settled.sat == bool(np.any(agree & holds))
    if settled.sat:
        assert settled.witness is not None
        witness = np.asarray(settled.witness)
        assert np.array_equal(witness[fixed], states[fixed])
        assert (forest.decide(settled.witness) != cls) if kind == "not" else (forest.decide(settled.witness) == cls)


def test_branch_and_bound_decides_the_near_ties_it_sets_aside_exactly() -> None:
    """With no box small enough to search whole, the compiled branch and bound meets the float64
    tie at state 0, sets it aside and the exact decision makes it the witness; with no room to
    set it aside the query goes to the solver (``None``), never to a float64 guess (a fresh
    filter: this one would start its climb from the witness it found). The soft race alone (no
    lattice levels); the lattices, whose ties are exact, find the same witness."""
    table = LeafTable(ForestEncoding(_near_tie_forest()))
    screen = screen_of(table, (1,), box_points=0, lattice_levels=())
    decided = settle(screen, [], "not", 0)
    assert decided is not None and decided.sat and decided.witness == (0,)
    assert settle(screen, [], "predicts", 1) == decided
    assert settle(screen_of(table, (1,), box_points=0, bnb_ties=0, lattice_levels=()), [], "not", 0) is None
    # every leaf of this forest is impure: the lattices take it on only when told to
    on_lattices = settle(screen_of(table, (1,), box_points=0, bnb_ties=0, lattice_impure=1.0), [], "not", 0)
    assert on_lattices is not None and on_lattices.by == "lattice" and on_lattices.witness == (0,)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(max_trees=6, max_classes=3, max_features=5, max_depth=4), st.data())
def test_branch_and_bound_resumes_across_slices_and_growth(forest: Any, data: Any) -> None:
    """The compiled search stopped after every box (one-box slices) and starting from a one-box
    stack and the smallest row pool (room for the first box's halves), so that it resumes
    thousands of times and grows both: the answers
    stay exact (the hard vote, every query through the branch and bound)."""
    _check(forest, data, 0, bnb_slice=1, first_slice=1, bnb_stack=1, bnb_pool=2)


@pytest.mark.parametrize("levels, decider", [((), "boxes"), ((24,), "lattice")])
def test_branch_and_bound_polls_the_budget_between_slices(levels: tuple[int, ...], decider: str) -> None:
    """A soft-vote query the branch and bound needs many boxes for stops with ``BudgetExpired``
    when its budget runs out during the search, instead of finishing it: on a clock that ticks
    once per reading, the budget of three ticks runs out at a poll before a one-box slice (the
    first poll is before the bounds). The soft race alone (no lattice levels), and the lattices,
    whose races take turns of a slice each."""
    from itertools import count

    from rfexplain.core.budget import Budget, BudgetExpired

    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=30, max_depth=4, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model, vote="soft")
    table = LeafTable(ForestEncoding(forest))
    tuning = {
        "box_points": 1,
        "bnb_slice": 1,
        "first_slice": 1,
        "slice_climbs": 0,
        "lattice_levels": levels,
        "lattice_impure": 1.0,
    }
    screen = screen_of(table, Instance.of(forest, X[0]).states, **tuning)
    assert settle(screen, [], "not", 0) is not None  # decided without a budget
    ticks = count()
    with pytest.raises(BudgetExpired, match=rf"\({decider}\)"):
        settle(screen, [], "not", 0, budget=Budget(timeout=3, clock=lambda: float(next(ticks))))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["hard", "soft"]).flatmap(
        lambda vote: forests(max_trees=6, max_classes=3, max_features=5, max_depth=4, vote=vote)
    ),
    st.sampled_from([(True,), (False,), (True, False)]),
    st.data(),
)
def test_each_split_rule_alone_and_raced_settles_right(forest: Any, rules: tuple[bool, ...], data: Any) -> None:
    """The race may end with either split rule's search, so each must be exact alone: the guided
    rule alone, the leaf-end rule alone and both raced from the first box (one-box slices),
    every query through the branch and bound."""
    _check(forest, data, 0, bnb_slice=1, first_slice=1, split_rules=rules)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["hard", "soft"]).flatmap(lambda vote: forests(vote=vote, max_features=5)), st.data())
def test_the_compiled_bound_core_deletes_as_the_definition_does(forest: Any, data: Any) -> None:
    """The bound core is deletion in ``fixed``'s order against the leaf bounds: the compiled
    kernel must keep exactly the features the step-by-step definition keeps."""
    table = LeafTable(ForestEncoding(forest))
    states = [data.draw(st.integers(0, n - 1)) for n in forest.states_per_feature]
    screen = screen_of(table, states).leaves
    assert screen is not None
    fixed = data.draw(st.permutations(range(forest.n_features)))
    for kind in ("not", "predicts"):
        for c in range(forest.n_classes):
            misses = screen.outside[:, list(fixed)].sum(axis=1)
            expected = []
            for f in fixed:
                trial = misses - screen.outside[:, f]
                if slack(screen, np.flatnonzero(trial == 0), kind, c) > -NEAR_TIE:
                    expected.append(f)
                else:
                    misses = trial
            assert Bounds(screen).core(fixed, kind, c) == frozenset(expected), (kind, c, fixed)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["hard", "soft"]).flatmap(
        lambda vote: forests(max_trees=7, max_classes=3, max_features=4, max_depth=4, vote=vote)
    ),
    st.sampled_from(["not", "predicts"]),
    st.data(),
)
def test_trees_merged_in_pairs_send_every_point_to_one_row_of_each_pair(forest: Any, kind: str, data: Any) -> None:
    """The paired leaf table (:func:`~rfexplain.sat.box_kernels.merge_pairs`, twice, as the
    branch and bound does) against its definition on every point of the state space: each point
    lies in exactly one row of each merged tree, and the rows it lies in sum to the forest's
    class scores and margins; a pair is only formed when merging lowers its bound."""
    from rfexplain.sat import box_kernels as kernels

    table = LeafTable(ForestEncoding(forest))
    c = data.draw(st.integers(0, forest.n_classes - 1))
    margins, penalty = table.margins(kind, c)
    low, high, trees, rows_margins, scores = table.low, table.high, table.tree, margins, table.score
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    inside = np.all((grid[:, None, :] >= table.low[None]) & (grid[:, None, :] <= table.high[None]), axis=2)
    expected_scores, expected_margins = inside @ table.score, inside @ margins
    for _ in range(2):
        partner, starts = kernels.pair_partners(low, high, trees, rows_margins, penalty, kind == "not")
        assert all(partner[partner[k]] == k for k in np.flatnonzero(partner >= 0))
        total = kernels.merged_rows(low, high, partner, starts)
        low, high, trees, rows_margins, scores = kernels.merge_pairs(
            low, high, rows_margins, scores, partner, starts, total
        )
        assert len(low) == total and np.all(np.diff(trees) >= 0)
        assert len(np.unique(trees)) == len(starts) - 1 - int(np.count_nonzero(partner >= 0)) // 2
        inside = np.all((grid[:, None, :] >= low[None]) & (grid[:, None, :] <= high[None]), axis=2)
        for t in np.unique(trees):
            assert np.all(inside[:, trees == t].sum(axis=1) == 1)
        np.testing.assert_allclose(inside @ scores, expected_scores, atol=1e-9)
        np.testing.assert_allclose(inside @ rows_margins, expected_margins, atol=1e-9)


def test_pairing_merges_the_trees_whose_best_leaves_disagree() -> None:
    """Two trees whose best leaves need ``x <= 0`` and ``x > 0`` respectively are paired (their
    bound drops from 2 to 0), and a third tree on another feature stays alone."""
    from rfexplain.sat import box_kernels as kernels

    # rows: (tree, low, high, margin) on two features with states 0..1
    rows = [(0, (0, 0), (0, 1), 1.0), (0, (1, 0), (1, 1), -1.0)]
    rows += [(1, (0, 0), (0, 1), -1.0), (1, (1, 0), (1, 1), 1.0)]
    rows += [(2, (0, 0), (1, 0), 1.0), (2, (0, 1), (1, 1), -1.0)]
    low = np.asarray([r[1] for r in rows], dtype=np.int32)
    high = np.asarray([r[2] for r in rows], dtype=np.int32)
    trees = np.asarray([r[0] for r in rows], dtype=np.int64)
    margins = np.asarray([[r[3]] for r in rows])
    partner, _ = kernels.pair_partners(low, high, trees, margins, np.zeros(1), True)
    assert partner.tolist() == [1, 0, -1]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["hard", "soft"]).flatmap(
        lambda vote: forests(max_trees=7, max_classes=3, max_features=5, max_depth=4, vote=vote)
    ),
    st.data(),
)
def test_branch_and_bound_on_paired_trees_settles_right(forest: Any, data: Any) -> None:
    """Every query through the branch and bound, one box per slice, so that the search on the
    paired table (every pairing round taken, whatever it costs) joins after the first box and
    settles most queries, the searches' estimated remaining work choosing which one takes the
    favoured slices from the first box on or never: the answers, witnesses and cores stay exact."""
    progress_after = data.draw(st.sampled_from([1, 1 << 62]))
    _check(
        forest,
        data,
        0,
        bnb_slice=1,
        first_slice=1,
        pair_growth=float("inf"),
        hard_bnb_nodes=1_000_000,
        progress_after=progress_after,
    )


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["hard", "soft"]).flatmap(
        lambda vote: forests(max_trees=8, max_classes=3, max_features=5, max_depth=4, vote=vote)
    ),
    st.sampled_from([(True,), (False,)]),
    st.data(),
)
def test_branch_and_bound_with_the_pair_bound_from_the_first_box_settles_right(
    forest: Any, rules: tuple[bool, ...], data: Any
) -> None:
    """Every query through the branch and bound with the pair bound (two classes) judging the
    children from the first box on (and one-box slices, so that the search stops and resumes around
    it): the answers, witnesses and cores stay exact, under each split rule."""
    _check(forest, data, 0, bnb_slice=1, first_slice=1, pair_bound_after=0, split_rules=rules, hard_bnb_nodes=1_000_000)


@pytest.mark.parametrize("vote", ["hard", "soft"])
@pytest.mark.parametrize("dataset, row", [("breast_cancer", 0), ("breast_cancer", 7)])
def test_the_pair_bound_prunes_boxes_the_per_tree_bound_keeps(vote: str, dataset: str, row: int) -> None:
    """On a real two-class forest, the query that proves an AXp sufficient (every other
    feature free) takes fewer boxes with the pair bound than without it, and settles the same
    (the bound would be useless, or the test above could not fail, otherwise)."""
    from sklearn import datasets

    X, y = getattr(datasets, f"load_{dataset}")(return_X_y=True)
    model = RandomForestClassifier(n_estimators=30, max_depth=5, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model, vote=vote)
    instance = Instance.of(forest, X[row])
    with SatEngine(forest) as engine:
        fixed = sorted(engine.sufficient_reason(instance).features)
    table = LeafTable(ForestEncoding(forest))
    boxes = {}
    for after in (0, 10**9):
        race = race_of(screen_of(table, instance.states, pair_bound_after=after), fixed, "not", instance.prediction)
        settled = advance(race, Question(tuple(fixed), "not", instance.prediction), 10**7)
        assert settled is not None and not settled.sat
        boxes[after] = race.boxes.runs[0].boxes
    assert boxes[0] < boxes[10**9], boxes


def _hard_query(forest: Any, data: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int], str, int]:
    """A random hard-vote query on ``forest`` with its brute-force truth: (grid, decisions,
    states, fixed, kind, cls)."""
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    decisions = np.asarray([forest.decide(tuple(z)) for z in grid.tolist()])
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    return (
        grid,
        decisions,
        states,
        fixed,
        data.draw(st.sampled_from(["not", "predicts"])),
        data.draw(st.integers(0, forest.n_classes - 1)),
    )


def _assert_exact(forest: Any, query: tuple[Any, ...], settled: Any) -> None:
    grid, decisions, states, fixed, kind, cls = query
    agree = np.all(grid[:, fixed] == states[fixed], axis=1)
    holds = (decisions != cls) if kind == "not" else (decisions == cls)
    assert settled.sat == bool(np.any(agree & holds))
    if settled.sat:
        witness = np.asarray(settled.witness)
        assert np.array_equal(witness[fixed], states[fixed])
        assert (forest.decide(settled.witness) != cls) if kind == "not" else (forest.decide(settled.witness) == cls)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    forests(max_trees=6, max_classes=4, max_features=4, max_depth=4),
    st.sampled_from(["solver", "search", "both", "climb"]),
    st.data(),
)
def test_reduced_formula_raced_with_the_stopped_branch_and_bound_is_exact(forest: Any, winner: str, data: Any) -> None:
    """A query whose race the portfolio stopped at its node budget (one box) goes on beside the
    reduced formula's solver, in one-box slices and one-conflict turns: exact whichever side
    answers — the solver alone (the search never gets a turn), the search alone (the solver
    never finishes), both taking turns (the counterexample search finding nothing), or the
    counterexample search (one restart a turn) with the branch and bound (the solver never
    finishes)."""
    from rfexplain.sat.climb import MarginClimb
    from rfexplain.sat.deciders.reduced_cnf import ReducedQuery

    query = _hard_query(forest, data)
    _, _, states, fixed, kind, cls = query
    tuning: dict[str, Any] = {
        "box_points": 0,
        "hard_bnb_nodes": 1,
        "bnb_slice": 1,
        "first_slice": 1,
        "race_conflicts": 1,
        "climb_restarts": 1,
    }
    if winner == "solver":
        tuning["solver_share"] = float("inf")
    with pytest.MonkeyPatch.context() as patch:
        if winner != "climb":
            patch.setattr(MarginClimb, "run", lambda self, restarts: None)
        if winner in ("search", "climb"):
            patch.setattr(ReducedQuery, "run", lambda self, conflicts: None)
        screen = screen_of(LeafTable(ForestEncoding(forest)), states, **tuning)
        decided = settle(screen, fixed, kind, cls)
        if decided is not None:
            _assert_exact(forest, query, decided)
            return
        beside = settle(with_deciders(screen, DECIDERS), fixed, kind, cls)  # all but the full CNF
        assert beside is not None
        _assert_exact(forest, query, beside)
        if winner in ("search", "climb"):  # the stopped race (or the climb) answers, not the solver
            assert beside.by != "reduced_cnf"


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["hard", "soft"]).flatmap(lambda vote: forests(max_features=5, vote=vote)), st.data())
def test_a_resumed_branch_and_bound_searches_as_an_uninterrupted_one(forest: Any, data: Any) -> None:
    """The branch and bound's turns (which search takes a slice, when the paired table joins)
    depend on the boxes searched, not on how many each call was given: stopped and resumed at
    random budgets it examines the same boxes and settles with the same answer and witness."""
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    fixed = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    kind, cls = data.draw(st.sampled_from(["not", "predicts"])), data.draw(st.integers(0, forest.n_classes - 1))
    table = LeafTable(ForestEncoding(forest))
    tuning = {
        "box_points": 0,
        "bnb_slice": 3,
        "first_slice": 3,
        "pair_growth": float("inf"),
        "progress_after": data.draw(st.sampled_from([1, 4096])),
    }
    screen = screen_of(table, states, **tuning)
    assert screen.leaves is not None
    if slack(screen.leaves, screen.leaves.reachable(fixed), kind, cls) <= -NEAR_TIE:
        return
    question = Question(tuple(fixed), kind, cls)
    whole = race_of(screen, fixed, kind, cls)
    answer = advance(whole, question, 10**6)
    pieces = race_of(screen_of(table, states, **tuning), fixed, kind, cls)  # no climb from ``whole``'s witness
    resumed = None
    for _ in range(10**6):
        resumed = advance(pieces, question, data.draw(st.integers(1, 5)))
        if resumed is not None or pieces.finished:
            break
    assert resumed == answer
    assert pieces.turn == whole.turn and pieces.boxes.paired == whole.boxes.paired
    assert [run.state.tolist() for run in pieces.boxes.runs] == [run.state.tolist() for run in whole.boxes.runs]


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["hard", "soft"]).flatmap(lambda vote: forests(max_trees=6, max_features=4, vote=vote)),
    st.data(),
)
def test_a_race_first_climbs_from_the_latest_counterexample(forest: Any, data: Any) -> None:
    """At the end of its first slice a query's race climbs from the counterexamples the
    instance's deciders found last (:meth:`.Race.climb_restarts`, :meth:`.Race.climber`): a
    counterexample of a
    query with more fixed features is one of every query with fewer, and is found at once, with
    a witness that agrees with the instance on the fixed features and meets the condition. Where
    the clique search has joined, the same from turn ``clique_race_climb_after``
    on, and not once a solver runs beside the race."""
    grid = np.asarray(list(itertools.product(*[range(n) for n in forest.states_per_feature])), dtype=np.int64)
    decisions = forest.predict_states(grid)
    states = grid[data.draw(st.integers(0, len(grid) - 1))]
    kind, cls = data.draw(st.sampled_from(["not", "predicts"])), data.draw(st.integers(0, forest.n_classes - 1))
    earlier = sorted(data.draw(st.sets(st.sampled_from(range(forest.n_features)))))
    fixed = sorted(data.draw(st.sets(st.sampled_from(earlier)))) if earlier else []
    holds = (decisions != cls) if kind == "not" else (decisions == cls)
    witnesses = np.flatnonzero(np.all(grid[:, earlier] == states[earlier], axis=1) & holds)
    # no random restart: the start itself
    portfolio = screen_of(LeafTable(ForestEncoding(forest)), states, slice_climbs=0, clique_race_climbs=0)
    screen = portfolio.leaves
    assert screen is not None
    rows = screen.reachable(fixed)
    free, lows, highs = screen.free_boxes(fixed, rows)
    race = race_of(portfolio, fixed, kind, cls)
    race.clique, race.turn, race.climbing = None, 1, True  # as at the end of the first slice
    if not free or not len(witnesses):
        return
    found = grid[witnesses[data.draw(st.integers(0, len(witnesses) - 1))]]
    screen.witness(list(range(forest.n_features)), found)
    after = screen.tuning.clique_race_climb_after
    if forest.vote == "hard" and data.draw(st.booleans()):  # the clique search has joined:
        race.clique = object()  # type: ignore[assignment]  # only whether it joined matters here
        race.turn = after - 1  # no climb before its turn,
        assert race.climb_restarts() is None and race.climb is None
        race.turn, race.alone = after, False  # nor beside a solver
        assert race.climb_restarts() is None and race.climb is None
        race.alone = True
    restarts = race.climb_restarts()
    assert restarts is not None
    settled = race.climber().decide(Question(tuple(fixed), kind, cls), restarts)
    assert settled is not None and settled.sat
    witness = np.asarray(settled.witness)
    assert np.array_equal(witness[fixed], states[fixed])
    decided = int(forest.predict_states(witness[None, :])[0])
    assert (decided != cls) if kind == "not" else (decided == cls)
    for j, f in enumerate(free):  # the start itself: the found counterexample's cells
        reps = screen.cells(f, lows[:, j], highs[:, j], 0, forest.states_per_feature[f] - 1)
        assert witness[f] == reps[np.searchsorted(reps, found[f], side="right") - 1]


def test_the_solver_takes_the_clique_race_climbs_over() -> None:
    """A race its node budget stopped goes on beside the reduced CNF's solver with its climbs
    off (the question's own climb runs beside the solver): the portfolio resumes the very race
    it stopped, no longer :attr:`.Race.alone`."""
    from rfexplain.sat.climb import MarginClimb
    from rfexplain.sat.deciders.reduced_cnf import ReducedQuery

    stumps = [
        {
            "feature": [0, -1, -1],
            "threshold": [t, 0.0, 0.0],
            "left": [1, -1, -1],
            "right": [2, -1, -1],
            "label": [-1, 0, 1],
        }
        for t in (0.5, 1.5, 2.5)
    ]
    forest = Forest.from_raw_trees(stumps, n_features=1, classes=["a", "b"])
    tuning = {"box_points": 0, "hard_bnb_nodes": 1, "bnb_slice": 1, "first_slice": 1}
    screen = screen_of(LeafTable(ForestEncoding(forest)), (0,), **tuning)
    seen: list[tuple[Race, bool]] = []
    original = Race.slices

    def slices(self: Race, nodes: int) -> Any:
        seen.append((self, self.alone))
        return original(self, nodes)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Race, "slices", slices)
        patch.setattr(MarginClimb, "run", lambda self, restarts: None)  # neither the climb
        patch.setattr(ReducedQuery, "run", lambda self, conflicts: None)  # nor the solver answers
        answer = settle(with_deciders(screen, DECIDERS), [], "not", 0)
    assert answer is not None and answer.sat and answer.by in ("boxes", "cliques")
    assert [alone for _, alone in seen[:2]] == [True, False] and seen[0][0] is seen[1][0]


@pytest.mark.parametrize("cliques", [True, False])
def test_warm_up_loads_the_loops_of_the_queries(cliques: bool) -> None:
    """:func:`.leaves.warm_up` loads the branch and bound's, the climb's and (with ``cliques``)
    the clique search's compiled loops, which the benchmarks' workers count as loading, not as
    the first instance's time. Checked in a fresh interpreter, where nothing else loaded them."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        f"""
        import numpy as np
        from rfexplain.sat import box_kernels, climb_kernels, clique_kernels
        from rfexplain.sat.deciders import leaves

        kernels = (box_kernels.search, climb_kernels.climb, clique_kernels.search)
        assert not any(k.signatures for k in kernels)
        leaves.warm_up(np.dtype(np.int32), cliques={cliques})
        print([bool(k.signatures) for k in kernels])
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str([True, True, cliques])


@settings(max_examples=examples(50), deadline=None)
@given(st.integers(0, 6), st.integers(0, 140), st.data())
def test_packed_rows_keep_every_flag(rows: int, columns: int, data: Any) -> None:
    """:func:`.leaves.pack_bits` (the instance's leaves outside the instance, one word per
    64 features) keeps bit ``j % 64`` of word ``j // 64`` equal to column ``j``, and an ``and``
    with a packed feature set finds the rows :meth:`.InstanceLeaves.reachable` must drop."""
    flags = np.asarray(data.draw(st.lists(st.booleans(), min_size=rows * columns, max_size=rows * columns)), dtype=bool)
    flags = flags.reshape(rows, columns)
    packed = leaves_module.pack_bits(flags)
    assert packed.shape == (rows, (columns + 63) // 64) and packed.dtype == np.uint64
    for j in range(columns):
        assert np.array_equal((packed[:, j // 64] >> np.uint64(j % 64)) & np.uint64(1), flags[:, j])
    chosen = np.asarray(data.draw(st.lists(st.booleans(), min_size=columns, max_size=columns)), dtype=bool)
    hit = (packed & leaves_module.pack_bits(chosen[None, :])[0]).any(axis=1)
    assert np.array_equal(hit, flags[:, chosen].any(axis=1))


class _Run:
    """A box search as :meth:`Boxes.second_turn` reads it: its boxes and estimated remaining work."""

    def __init__(self, boxes: int, work: float) -> None:
        self.boxes, self.work = boxes, work

    def remaining_work(self, bottom: Any, top: Any) -> float:
        return self.work


def test_the_search_with_less_estimated_work_takes_the_favoured_slices() -> None:
    """By default the paired table's search takes all but one slice in ``pair_turns`` and the
    second split rule's one in ``race_turns``; once both searches have examined
    ``progress_after`` boxes, the one with the smaller estimated remaining work takes the
    favoured share (the other, one slice in those)."""
    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    forest = Forest.from_sklearn(model)
    screen = screen_of(LeafTable(ForestEncoding(forest)), Instance.of(forest, X[0]).states, progress_after=10)
    boxes = race_of(screen, [], "not", 0).boxes
    tuning = boxes.tuning

    def turns(first: _Run, second: _Run, paired: bool) -> list[bool]:
        boxes.runs, boxes.paired = [first, second], paired  # type: ignore[list-item]
        boxes._second_favoured = (-1, False)
        out = []
        for k in range(2 * tuning.pair_turns * tuning.race_turns):
            boxes.slices = k
            out.append(boxes.second_turn())
        return out

    slices = range(2 * tuning.pair_turns * tuning.race_turns)
    paired = [k % tuning.pair_turns != 0 for k in slices]
    race = [(k - tuning.race_after) % tuning.race_turns == 0 for k in slices]
    assert turns(_Run(10, 1.0), _Run(10, 1.0), True) == paired  # even: the default
    assert turns(_Run(9, 1.0), _Run(10, 2.0), True) == paired  # too early to judge
    assert turns(_Run(10, 1.0), _Run(10, 2.0), True) == [not t for t in paired]
    assert turns(_Run(10, 2.0), _Run(10, 1.0), True) == paired
    assert turns(_Run(10, 1.0), _Run(10, 2.0), False) == race
    assert turns(_Run(10, 2.0), _Run(10, float("inf")), False) == race
    assert turns(_Run(10, 2.0), _Run(10, 1.0), False) == [not t for t in race]
