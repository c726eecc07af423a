"""The query table is the one list of queries: the Decision methods, the Engine protocol, the
engine base class, the engines' ``QUERIES`` and the command line all follow it."""

from __future__ import annotations

import inspect

import pytest

import rfexplain as rx
from rfexplain.cli import QUERY_CHOICES, build_parser
from rfexplain.core.queries import QUERY_TABLE, Kind, query
from rfexplain.decision import Decision
from rfexplain.engines.base import ENGINE_HOOKS, ENUMERATION_QUERIES, QUERIES, Engine, EngineBase

NOT_QUERIES = {"ask", "values", "states", "plot", "describe"}  # plot draws reasons, describe writes them


def _public(cls: type) -> set[str]:
    return {name for name in vars(cls) if not name.startswith("_")}


def test_decision_methods_are_the_table() -> None:
    assert _public(Decision) - NOT_QUERIES == set(QUERY_TABLE)
    for spec in QUERY_TABLE.values():
        parameters = list(inspect.signature(getattr(Decision, spec.name)).parameters)[1:]
        expected = (
            (["target"] if spec.takes_target else [])
            + (["limit"] if spec.enumerates else [])
            + (["order"] if spec.kind is Kind.REASON else [])
            + ["timeout"]
        )
        assert parameters == expected, spec.name  # every query takes a timeout


@pytest.mark.parametrize("cls", [Engine, EngineBase])
def test_engine_interface_is_the_table(cls: type) -> None:
    # besides the queries: what an engine is, and the building blocks the base class's queries use
    assert _public(cls) - {"name", "queries", "close", *ENGINE_HOOKS} == set(QUERY_TABLE)
    for spec in QUERY_TABLE.values():
        parameters = list(inspect.signature(getattr(cls, spec.name)).parameters)[1:]
        expected = (
            ["instance"]
            + (["target"] if spec.takes_target else [])
            + (["budget"] if spec.enumerates else [])
            + (["order"] if spec.kind is Kind.REASON else [])
        )
        assert parameters == expected, (cls.__name__, spec.name)


def test_derived_lists() -> None:
    assert QUERIES == tuple(QUERY_TABLE)
    assert ENUMERATION_QUERIES == {q.name for q in QUERY_TABLE.values() if q.kind is Kind.ENUMERATION}
    assert set(QUERY_CHOICES) == {q.name for q in QUERY_TABLE.values() if q.kind is not Kind.FORMULA}
    explain = build_parser()._subparsers._group_actions[0].choices["explain"]  # type: ignore[union-attr]
    assert next(a for a in explain._actions if a.dest == "query").choices == QUERY_CHOICES
    for spec in QUERY_TABLE.values():
        if spec.all_of is not None:
            assert spec.kind is Kind.REASON and query(spec.all_of).enumerates


def test_unknown_query_and_wrong_arguments() -> None:
    with pytest.raises(rx.UnknownQueryError, match="query must be one of"):
        query("sufficient_reasonz")
    with pytest.raises(ValueError):
        query("robustnesses")


def test_decision_ask_checks_arguments_by_the_table() -> None:
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y)
    decision = rx.Explainer(model, engine="oracle").explain(X[0])
    with pytest.raises(rx.QueryArgumentError, match="takes no limit"):
        decision.ask("robustness", limit=1)
    with pytest.raises(rx.QueryArgumentError, match="needs a target"):
        decision.ask("contrastive_reasons")
    with pytest.raises(rx.QueryArgumentError, match="takes no target"):
        decision.ask("sufficient_reasons", target=1)
    with pytest.raises(rx.InvalidTargetError, match="must differ from the prediction"):
        decision.contrastive_reasons(decision.prediction)
    with pytest.raises(ValueError):  # still the builtin users catch
        decision.contrastive_reasons(decision.prediction)
    with pytest.raises(rx.QueryArgumentError, match="takes no order"):
        decision.ask("sufficient_reasons", order=[0, 1, 2, 3])
    for bad in ([0, 1, 2], [0, 1, 2, 2], [0, 1, 2, 4], "x0", [0, 1, 2, True], ["nope", 1, 2, 3]):
        with pytest.raises(rx.QueryArgumentError, match="order"):
            decision.sufficient_reason(order=bad)  # type: ignore[arg-type]
    assert decision.sufficient_reason(order=[3, 2, 1, 0]) == decision.sufficient_reason(order=["x3", "x2", 1, 0])
    assert decision.necessary_reason(order=None) == decision.necessary_reason(order=range(4))
    assert [set(r.features) for r in decision.ask("sufficient_reasons", limit=2)] == [
        set(r.features) for r in decision.sufficient_reasons(limit=2)
    ]


def test_unsupported_query_alias_is_deprecated_not_different() -> None:
    assert rx.UnsupportedQuery is rx.UnsupportedQueryError
    assert issubclass(rx.UnsupportedQueryError, rx.RFExplainError)
    assert issubclass(rx.UnsupportedQueryError, NotImplementedError)
