"""Algorithms on circuits: closed forms, implicants/implicates, shortest ones (snr/ssr), robustness, Algorithms
6-7, against brute force on the circuits themselves."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rfexplain.circuit.compilers import ClassFormulas, NNFManager
from rfexplain.circuit.engine import CircuitEngine
from rfexplain.circuit.logic import (
    cnf_within_varsets,
    complete_reason,
    general_necessary_reasons,
    general_reason,
    holds,
    minimal_sets,
    prime_implicants,
    prime_implicates,
    robustness,
    shortest_general_necessary_reasons,
    shortest_prime_implicants,
    shortest_prime_implicates,
)
from rfexplain.circuit.logic.flips import one_set_at_a_time
from rfexplain.engines.base import Instance
from tests.hypothesis_budget import examples
from tests.strategies import forests_and_instances


def _brute(nnf: NNFManager, root: int, features: list[int]) -> tuple[list[int], list[int]]:
    """Prime implicants and implicates of a monotone circuit over instance states, by subsets."""
    masks = [sum(1 << f for f in c) for r in range(len(features) + 1) for c in itertools.combinations(features, r)]
    full = sum(1 << f for f in features)
    implicants = minimal_sets(m for m in masks if holds(nnf, root, m))
    implicates = minimal_sets(m for m in masks if not holds(nnf, root, full & ~m))
    return implicants, implicates


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests_and_instances())
def test_implicants_snr_ssr_robustness_by_brute_force(case: Any) -> None:
    forest, instance = case
    cf = ClassFormulas(forest)
    nnf = NNFManager(forest.states_per_feature)
    cr = complete_reason(cf.dg, cf.dg_3b(instance.prediction), instance.states, nnf)
    pis, pcs = _brute(nnf, cr, list(forest.tested_features))
    assert sorted(prime_implicants(nnf, cr)) == sorted(pis)
    assert sorted(prime_implicates(nnf, cr)) == sorted(pcs)
    shortest_pc = [m for m in pcs if m.bit_count() == min((p.bit_count() for p in pcs), default=0)]
    shortest_pi = [m for m in pis if m.bit_count() == min(p.bit_count() for p in pis)]
    assert sorted(shortest_prime_implicates(nnf, cr)) == sorted(shortest_pc)
    assert sorted(shortest_prime_implicants(nnf, cr)) == sorted(shortest_pi)
    r, V = robustness(nnf, cr)
    assert r == (min(p.bit_count() for p in pcs) if pcs else math.inf)
    assert sorted(V) == sorted(shortest_pc)  # Algorithm 5's V are the shortest NRs' variable sets


def test_algorithm_6_drops_literals_outside_V() -> None:
    """Paper issue: Algorithm 6 line 7 replaces such a literal by false, which would turn
    ``(x in {0,1} or y = 0)`` into the non-implicate ``y = 0``; it must be dropped instead."""
    m = NNFManager((3, 3))
    gr = m.conj(m.disj(m.literal(0, 0b011), m.literal(1, 0b001)), m.literal(1, 0b011))
    assert m.evaluate(gr, (0, 1))  # so "y = 0" is not an implicate
    assert cnf_within_varsets(m, gr, [0b10]) == [((1, 0b011),)]


def test_circuits_render_and_export() -> None:
    raw = [
        {
            "feature": [0, 1, -1, -1, -1],
            "threshold": [0.5, 0.5, 0, 0, 0],
            "left": [1, 3, -1, -1, -1],
            "right": [2, 4, -1, -1, -1],
            "label": [-1, -1, 1, 0, 1],
        }
    ]
    from rfexplain import Forest

    forest = Forest.from_raw_trees(raw, n_features=2, classes=["a", "b"], feature_names=["u", "w"])
    engine = CircuitEngine(forest)
    instance = Instance.from_states(forest, (0, 0))
    cr, gr = engine.complete_reason(instance), engine.general_reason(instance)
    assert (0, 0) in cr and (1, 1) not in cr
    assert "u" in str(cr) and cr.to_dot().startswith("digraph")
    assert "w" in str(gr) and (0, 0) in gr
    assert repr(cr).startswith("<complete reason circuit")


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests_and_instances())
def test_closed_forms_on_unordered_weak_test_once_graphs(case: Any) -> None:
    """The closed forms on the trees' own (unordered, re-testing) graphs combined by the
    path-carrying Apply, for 3B and 3A, equal the brute-force complete and general reasons."""
    from rfexplain.circuit.logic import general_reason
    from rfexplain.oracle import Oracle

    forest, instance = case
    oracle = Oracle(forest)
    want_cr, want_gr = oracle.complete_reason(instance), oracle.general_reason(instance)
    cf = ClassFormulas(forest, ordered=False)
    c = instance.prediction
    for parts in (cf.dg_3b(c), (cf.dg_3a(c),)):
        nnf = NNFManager(forest.states_per_feature)
        cr = complete_reason(cf.dg, parts, instance.states, nnf)
        gr = general_reason(cf.dg, parts, instance.states, nnf)
        for row in oracle.grid:
            z = tuple(int(s) for s in row)
            assert nnf.evaluate(cr, z) == (z in want_cr), ("complete", z)
            assert nnf.evaluate(gr, z) == (z in want_gr), ("general", z)


# ---------------------------------------------------------------------- variable depletion
def _naive_closure(clauses: list, full: list) -> set:
    """Resolution closure on every variable, all pairs, until nothing new; then the
    subsumption-minimal clauses (the definition the fast :func:`depleted` must meet)."""

    def implies(a: tuple, b: tuple) -> bool:
        mb = dict(b)
        return all(v in mb and m & ~mb[v] == 0 for v, m in a)

    s = set(clauses)
    while True:
        new = set()
        for a in s:
            for b in s:
                for i, (_v, _) in enumerate(a):
                    lits = []
                    for j, ((_, ma), (_, mb)) in enumerate(zip(a, b)):
                        lits.append(ma & mb if j == i else ma | mb)
                    if lits[i] == 0 or any(m == full[w] for m, (w, _) in zip(lits, a)):
                        continue
                    r = tuple((w, m) for (w, _), m in zip(a, lits))
                    if r not in s:
                        new.add(r)
        if not new:
            break
        s |= new
    return {c for c in s if not any(k != c and implies(k, c) for k in s)}


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_depletion_equals_the_naive_resolution_closure(data: Any) -> None:
    from rfexplain.circuit.logic.flips import depleted

    n_vars = data.draw(st.integers(1, 3))
    sizes = [data.draw(st.integers(2, 4)) for _ in range(n_vars)]
    full = [(1 << k) - 1 for k in sizes]
    v = [data.draw(st.integers(0, k - 1)) for k in sizes]
    # locally fixated clauses on exactly these variables: every mask holds v's state, none full
    lit = [
        st.integers(0, f).map(lambda m, i=i: m | (1 << v[i])).filter(lambda m, i=i: m != full[i])
        for i, f in enumerate(full)
    ]
    clauses = data.draw(st.lists(st.tuples(*lit), min_size=1, max_size=8))
    clauses = [tuple(enumerate(c)) for c in clauses]
    fast = depleted(clauses, list(range(n_vars)), full)
    assert fast is not None
    assert set(fast) == _naive_closure(clauses, full)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests_and_instances())
def test_general_reason_restricted_to_V_gives_the_same_flips(case: Any) -> None:
    """Algorithms 6-7 on the general reason with the literals outside V set to true (built
    canonically, as the engine does), for V at once and for one set of V at a time, give the
    same shortest flips and general necessary reasons as on the whole general reason.

    (Algorithm 6's clauses themselves may differ: the canonical restricted reason is an
    equivalent but different formula, e.g. ``x2 in {0}`` where the whole reason's CNF has
    ``x2 in {0,1}`` and ``x2 in {0,2}``; resolution by depletion makes them the same.)"""
    forest, instance = case
    cf = ClassFormulas(forest)
    nnf = NNFManager(forest.states_per_feature)
    parts = cf.dg_3b(instance.prediction)
    cr = complete_reason(cf.dg, parts, instance.states, nnf)
    gr = general_reason(cf.dg, parts, instance.states, nnf)
    _, V = robustness(nnf, cr)
    nrs = prime_implicates(nnf, cr)

    def on(vi: int) -> int:
        return general_reason(cf.dg, parts, instance.states, nnf, variables=vi)

    for algorithm, sets in ((shortest_general_necessary_reasons, V), (general_necessary_reasons, nrs)):
        want = sorted(algorithm(nnf, gr, sets))
        union = 0
        for m in sets:
            union |= m
        assert sorted(algorithm(nnf, on(union), sets)) == want
        assert sorted(one_set_at_a_time(algorithm, nnf, on, sets)) == want


def test_an_enumeration_timeout_also_bounds_compilation(cpu_clock: Callable[[], float]) -> None:
    """Compiling a large forest's class formula polls the query's budget: the enumeration ends
    as stopped by its timeout instead of compiling for minutes (the budget and the bound below
    count this process's CPU seconds, which a loaded machine does not stretch)."""
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain import Explainer

    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=40, max_depth=5, random_state=0).fit(X, y)
    decision = Explainer(model, engine="circuit", vote="hard").explain(X[0])
    start = cpu_clock()
    reasons = decision.sufficient_reasons(timeout=0.5)
    assert list(reasons) == []
    assert reasons.stopped_by == "timeout" and reasons.complete is False
    assert cpu_clock() - start < 10


# ---------------------------------------------------------------------- canonical complete reasons
def _or_decomposable(nnf: NNFManager, root: int) -> bool:
    from rfexplain.circuit.compilers.nnf import OR

    below: dict[int, int] = {}
    for n in nnf.reachable([root]):
        mask = 1 << nnf.var[n] if nnf.var[n] >= 0 else 0
        seen = 0
        for c in nnf.children[n]:
            if nnf.kind[n] == OR and below[c] & seen:
                return False
            seen |= below[c]
        below[n] = mask | seen
    return True


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 6),
    st.lists(st.tuples(st.sampled_from(["and", "or"]), st.integers(0, 40), st.integers(0, 40)), max_size=30),
    st.permutations(range(6)),
)
def test_kept_bdd_operations_by_truth_table(n: int, ops: list, order: list) -> None:
    from rfexplain.circuit.logic.kept_bdd import KeptBDD

    bdd = KeptBDD([r for r in order if r < n] if n < 6 else order)
    nodes = [bdd.var_node(x) for x in range(n)] + [0, 1]
    tables = [[bool(k >> x & 1) for k in range(1 << n)] for x in range(n)] + [[False] * (1 << n), [True] * (1 << n)]
    for op, i, j in ops:
        a, b = i % len(nodes), j % len(nodes)
        if op == "and":
            nodes.append(bdd.conj(nodes[a], nodes[b]))
            tables.append([p and q for p, q in zip(tables[a], tables[b])])
        else:
            nodes.append(bdd.or_var(nodes[a], b % n))
            tables.append([p or bool(k >> (b % n) & 1) for k, p in enumerate(tables[a])])
    for node, table in zip(nodes, tables):
        assert [bdd.evaluate(node, k) for k in range(1 << n)] == table
    canonical = {}
    for node, table in zip(nodes, tables):  # reduced and ordered: one node per function
        assert canonical.setdefault(tuple(table), node) == node


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests_and_instances(), st.booleans())
def test_complete_reason_is_one_node_per_subfunction_and_or_decomposable(case: Any, ordered: bool) -> None:
    """The canonical complete reason equals Equation 1 written out naively on the graph, and its
    disjunctions have disjoint variables (Algorithm 5 and ``shortest_prime_implicates`` rely on it)."""
    forest, instance = case
    cf = ClassFormulas(forest, ordered=ordered)
    parts = cf.dg_3b(instance.prediction)
    nnf = NNFManager(forest.states_per_feature)
    cr = complete_reason(cf.dg, parts, instance.states, nnf)
    assert _or_decomposable(nnf, cr)
    # Equation 1 node by node, as the paper writes it
    v = instance.states
    eq1 = {0: nnf.false, 1: nnf.true}
    for n in cf.dg.reachable(parts):
        if n > 1:
            x, es = cf.dg.var[n], cf.dg.edges[n]
            on = any(s >> v[x] & 1 for s, _ in es)
            eq1[n] = nnf.conj_all(
                [eq1[c] if (s >> v[x] & 1) or not on else nnf.or2(eq1[c], nnf.state(x, v[x])) for s, c in es]
            )
    want = nnf.conj_all(eq1[p] for p in parts)
    features = sorted(forest.tested_features)
    for r in range(len(features) + 1):
        for kept in itertools.combinations(features, r):
            mask = sum(1 << f for f in kept)
            assert holds(nnf, cr, mask) == holds(nnf, want, mask), kept
