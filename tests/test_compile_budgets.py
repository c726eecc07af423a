"""Every budget holds in the compilers: time (polled inside the compiled product's slices of work
units, the Python loops around it and the closed forms) and memory (the compilers' accounted
bytes, checked before each growth). No wall-clock assertion: a fake clock decides when the time
is up, and the memory budget is in accounted bytes."""

from __future__ import annotations

import re

import numpy as np
import pytest

import rfexplain as rx
from rfexplain.circuit.compilers import dd_core, dd_kernels
from rfexplain.circuit.compilers.classformula import ClassFormulas
from rfexplain.circuit.compilers.dd_core import CompactCounter
from rfexplain.circuit.compilers.dgraph import DGManager
from rfexplain.core.budget import (
    MAX_MEMORY_ENV,
    Budget,
    BudgetArgumentError,
    BudgetExpired,
    check_max_memory,
    default_max_memory,
    parse_bytes,
)
from rfexplain.core.errors import ADDTooLargeError, CompilationTooLargeError
from rfexplain.core.forest import Forest


def wine_forest(trees: int = 12, depth: int = 4) -> tuple[Forest, object, np.ndarray]:
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier

    X, y = datasets.load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=0).fit(X, y)
    return Forest.from_sklearn(model, vote="hard"), model, X


class FakeClock:
    """Time stands still until ``after`` reads, then jumps a day ahead."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return 0.0 if self.reads <= self.after else 86_400.0


def expanded_at_stop(exc: BudgetExpired) -> int:
    match = re.search(r"\(([\d,]+) product nodes expanded\)", str(exc))
    assert match, str(exc)
    return int(match.group(1).replace(",", ""))


@pytest.mark.slow
def test_the_compiled_product_stops_mid_compilation_when_the_time_is_up(monkeypatch: pytest.MonkeyPatch) -> None:
    forest, _, _ = wine_forest()
    monkeypatch.setattr(dd_core, "SLICE", 500)  # slices of 500 work units: many polls
    monkeypatch.setattr(dd_core, "_POLL", 1024)  # few polls while the residual tables are built
    full = CompactCounter(forest, DGManager(forest.states_per_feature))
    full.at_least({0: 1, 1: -1}, 0)
    total = full.stats["product_nodes"]
    # the clock runs out after the residual tables (one read when the budget is made, a poll per
    # 1,024 Python steps) and a few slices of the product
    counter = CompactCounter(forest, DGManager(forest.states_per_feature))
    reads = []
    for after in (10, 20):
        clock = FakeClock(after)
        with pytest.raises(BudgetExpired) as caught:
            counter.at_least({0: 1, 1: -1}, 0, Budget(timeout=1.0, max_memory=None, clock=clock))
        reads.append(expanded_at_stop(caught.value))
    assert 0 < reads[0] < reads[1] < total  # stopped inside the product, later with a later clock


@pytest.mark.slow
def test_a_slice_is_bounded_in_work_units(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slice ends once its work units reach the slice's allowance: the units of one step (a
    tuple of ``m`` residuals into ``k`` children: ``m * (k + 1)``) past it at most."""
    forest, _, _ = wine_forest()
    run = dd_kernels.run
    slices: list[int] = []

    def counting(*args: object) -> tuple:
        ctr = args[10]
        before = int(ctr[dd_kernels.EXPANDED])
        out = run(*args)
        slices.append(int(ctr[dd_kernels.EXPANDED]) - before)
        return out

    monkeypatch.setattr(dd_kernels, "run", counting)
    monkeypatch.setattr(dd_core, "SLICE", 2_000)
    counter = CompactCounter(forest, DGManager(forest.states_per_feature))
    counter.at_least({0: 1, 1: -1}, 0)
    widest = forest.n_trees + 1
    # each expansion costs at least one unit, at most widest * (max states + 1)
    assert max(slices) <= 2_000
    assert len(slices) >= counter.stats["product_nodes"] * 1 // (2_000 + widest * (max(forest.states_per_feature) + 1))


def test_the_residual_tables_poll_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python loops before the product poll the time too: with the clock already run out,
    the product never starts."""
    forest, _, _ = wine_forest(trees=30, depth=6)

    def no_product(*args: object) -> int:
        raise AssertionError("the product started past the deadline")

    counter = CompactCounter(forest, DGManager(forest.states_per_feature))
    monkeypatch.setattr(counter, "_product", no_product)
    with pytest.raises(BudgetExpired, match="residual trees"):
        counter.at_least({0: 1, 1: -1}, 0, Budget(timeout=1.0, clock=FakeClock(1)))


def test_a_query_on_the_circuit_engine_stops_with_a_fake_clock() -> None:
    forest, _, X = wine_forest(trees=30, depth=6)
    d = rx.Explainer(forest, engine="circuit").explain(X[0])
    clock = FakeClock(3)
    with Budget(timeout=1.0, clock=clock).active(), pytest.raises(BudgetExpired):
        d.engine.sufficient_reason(d.instance)
    assert clock.reads > 3


@pytest.mark.slow
def test_the_compiled_product_raises_before_passing_the_memory_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """The product's accounted bytes (the store, the residual tables, its arrays at capacity)
    never pass the budget: every slice runs within it, and the error comes before a growth."""
    forest, _, _ = wine_forest()
    probe = CompactCounter(forest, DGManager(forest.states_per_feature))
    probe.at_least({0: 1, 1: -1}, 0)
    needed = probe.stats["peak_bytes"]
    budget_bytes = needed // 2
    run = dd_kernels.run
    seen: list[int] = []
    counter = CompactCounter(forest, DGManager(forest.states_per_feature))

    def measuring(*args: object) -> tuple:
        tables = sum(a.nbytes for a in args[:8])
        product = sum(a.nbytes for a in args[11:21])
        seen.append(counter._held() + tables + product)
        return run(*args)

    monkeypatch.setattr(dd_kernels, "run", measuring)
    with pytest.raises(CompilationTooLargeError, match="memory budget"):
        counter.at_least({0: 1, 1: -1}, 0, Budget(max_memory=budget_bytes))
    assert seen and max(seen) <= budget_bytes
    assert max(seen) > budget_bytes // 4  # it got some way before stopping


def test_the_circuit_engine_raises_compilation_too_large_under_a_small_memory_budget() -> None:
    forest, model, X = wine_forest()
    small = rx.Explainer(model, engine="circuit", vote="hard", max_memory=4_000_000)
    with pytest.raises(CompilationTooLargeError, match="max_memory"):
        small.explain(X[0]).sufficient_reason()
    roomy = rx.Explainer(model, engine="circuit", vote="hard", max_memory=None)
    assert (
        roomy.explain(X[0]).sufficient_reason()
        == rx.Explainer(model, engine="sat", vote="hard").explain(X[0]).sufficient_reason()
    )


def test_the_python_apply_stops_at_the_memory_budget() -> None:
    """Apply on decision graphs (the sorting network, Algorithm 3A) checks the active budget every
    1,024 nodes it makes."""
    forest, _, _ = wine_forest(trees=8, depth=4)
    cf = ClassFormulas(forest, method="sortnet")
    with Budget(max_memory=10_000_000).active(), pytest.raises(CompilationTooLargeError):
        cf.dg_3b(0)
    assert 3_000_000 < cf.dg.accounted_bytes() <= 10_000_000  # stopped near, and before, the budget


def test_add_aggregation_stops_at_the_memory_budget() -> None:
    from rfexplain.comparators.add import aggregate

    forest, _, _ = wine_forest(trees=8, depth=4)
    with pytest.raises(ADDTooLargeError):
        aggregate(forest, timeout=Budget(max_memory=20_000))
    aggregate(forest, timeout=Budget(max_memory=None))


def test_memory_budget_arguments() -> None:
    assert parse_bytes("6G") == 6 << 30
    assert parse_bytes("512MiB") == 512 << 20
    assert parse_bytes("none") is None
    assert check_max_memory(float("inf")) is None
    for bad in (0, -1, True, "x", 1.5):
        with pytest.raises(BudgetArgumentError):
            check_max_memory(bad)
    with pytest.raises(BudgetArgumentError):
        parse_bytes("lots")
    with pytest.raises(BudgetArgumentError):
        rx.Explainer(wine_forest(trees=2)[0], engine="oracle", max_memory=-5)


def test_the_default_memory_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_MEMORY_ENV, "3G")
    assert default_max_memory() == 3 << 30
    assert Budget().max_memory == 3 << 30
    monkeypatch.delenv(MAX_MEMORY_ENV)
    assert default_max_memory() == pytest.approx(
        __import__("os").sysconf("SC_PHYS_PAGES") * __import__("os").sysconf("SC_PAGE_SIZE") // 4
    )


def test_batch_workers_keep_the_explainers_memory_budget() -> None:
    from rfexplain.batch import EngineSpec

    forest, _, _ = wine_forest(trees=2, depth=2)
    explainer = rx.Explainer(forest, engine="oracle", max_memory=123_456_789)
    assert EngineSpec.of(explainer).build().max_memory == 123_456_789


def test_the_oracles_box_search_polls_the_active_budget() -> None:
    from rfexplain.oracle.engine import OracleEngine

    forest, _, X = wine_forest(trees=3, depth=2)
    engine = OracleEngine(forest)
    instance = rx.Explainer(forest, engine="oracle").explain(X[0]).instance
    with Budget(timeout=1.0, clock=FakeClock(1)).active(), pytest.raises(BudgetExpired):
        list(engine.oracle.general_sufficient_reasons(instance))
