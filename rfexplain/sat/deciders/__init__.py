"""The SAT engine's deciders and their portfolio (:mod:`.base` says what they are asked)."""

from rfexplain.sat.deciders.base import COMPILED_DECIDERS, DECIDERS, Answer, Question

__all__ = ["Answer", "Question", "DECIDERS", "COMPILED_DECIDERS"]
