"""The engine interface every explanation engine implements (:mod:`rfexplain.engines.base`: the
``Engine`` protocol, ``EngineBase``, ``Instance``, the query list) and the registry that finds
engines by name (:mod:`rfexplain.engines.registry`). The engines themselves live in
:mod:`rfexplain.sat`, :mod:`rfexplain.circuit` and :mod:`rfexplain.oracle`."""

from rfexplain.engines.base import ENUMERATION_QUERIES, QUERIES, Engine, EngineBase, Instance, ReasonFormula
from rfexplain.engines.registry import available_engines, engine_class, engines_supporting, known_engines, register

__all__ = [
    "Engine",
    "EngineBase",
    "Instance",
    "ReasonFormula",
    "QUERIES",
    "ENUMERATION_QUERIES",
    "register",
    "engine_class",
    "known_engines",
    "available_engines",
    "engines_supporting",
]
