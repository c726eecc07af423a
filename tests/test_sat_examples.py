"""The SAT engine on Izza and Marques-Silva (2021)'s running example (Fig. 1, Examples 1-2 [IM21]) and through the
public Explainer API."""

from __future__ import annotations

import math

from rfexplain import Budget, Explainer, verify
from rfexplain.engines.base import Instance
from rfexplain.sat.engine import SatEngine
from tests.handmade import rfxpl_running_example

BA, GBC, CP, W = 0, 1, 2, 3


def test_paper_example_1() -> None:
    """v = (1, 0, 1, 70) is classified Yes; {blocked-arteries, chest-pain} is an AXp and
    {blocked-arteries} a CXp (Example 1)."""
    forest = rfxpl_running_example()
    instance = Instance.of(forest, [1, 0, 1, 70])
    assert forest.classes[instance.prediction] == "Yes"
    with SatEngine(forest) as engine:
        axps = {r.features for r in engine.sufficient_reasons(instance, Budget())}
        cxps = {r.features for r in engine.necessary_reasons(instance, Budget())}
        assert frozenset({BA, CP}) in axps
        assert frozenset({BA}) in cxps
        assert engine.sufficient_reason(instance).features in axps
        assert engine.robustness(instance) == 1
        formula = engine.encoding.not_class(instance.prediction)
        assert formula.n_vars > 0 and formula.n_clauses > 0


def test_explainer_api_end_to_end() -> None:
    forest = rfxpl_running_example()
    with Explainer(forest, engine="sat", card="totalizer") as explainer:
        decision = explainer.explain([1, 0, 1, 70])
        reasons = decision.sufficient_reasons()
        listed = list(reasons)
        assert reasons.complete and listed
        assert all(verify(r, forest) for r in listed)
        assert str(decision.sufficient_reason())
        assert decision.robustness() == 1
        assert not math.isinf(decision.robustness())
        contrastive = list(decision.contrastive_reasons("No"))
        assert {r.features for r in contrastive} == {r.features for r in decision.necessary_reasons()}
