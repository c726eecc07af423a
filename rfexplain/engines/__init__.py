"""Explanation engines behind one interface (see :mod:`rfexplain.engines.base`)."""

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
