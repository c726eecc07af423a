"""The engine registry: built-ins, registration, entry-point discovery, UnsupportedQuery."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import rfexplain as rx
from rfexplain.engines import registry
from rfexplain.engines.base import EngineBase, Instance
from tests import handmade


class CountingEngine(EngineBase):
    """A tiny third-party engine: answers robustness only (by asking the oracle)."""

    name = "counting"
    queries = frozenset({"robustness"})

    def robustness(self, instance: Instance) -> float:
        from rfexplain.oracle import Oracle

        return Oracle(self.forest).robustness(instance)


class FakeEntryPoint:
    name = "plugin"

    def load(self) -> Any:
        return CountingEngine


def test_builtin_names_are_known() -> None:
    assert {"sat", "circuit", "oracle"} <= set(registry.known_engines())
    assert "oracle" in rx.available_engines()


def test_register_and_unsupported_query_names_other_engines() -> None:
    rx.register("counting", CountingEngine)
    try:
        forest = handmade.three_class_tree_example()
        decision = rx.Explainer(forest, engine="counting").explain([1, 0])
        assert decision.robustness() == 1
        with pytest.raises(
            rx.UnsupportedQuery, match=r"engine 'counting' does not answer sufficient_reason\(\).*'oracle'"
        ):
            decision.sufficient_reason()
        assert "counting" in registry.engines_supporting("robustness")
        assert "counting" not in registry.engines_supporting("sufficient_reasons")
    finally:
        registry._registered.pop("counting")


def test_entry_point_discovery(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_entry_points(group: str) -> Iterator[FakeEntryPoint]:
        assert group == "rfexplain.engines"
        return iter([FakeEntryPoint()])

    monkeypatch.setattr(registry, "entry_points", lambda group: list(fake_entry_points(group)))
    assert "plugin" in registry.known_engines()
    assert registry.engine_class("plugin") is CountingEngine
    decision = rx.Explainer(handmade.shortest_flip_example(), engine="plugin").explain([0, 0])
    assert decision.robustness() == 2
