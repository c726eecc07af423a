"""The SAT engine against the brute-force oracle: the shared engine contract, with the whole
portfolio of deciders (:mod:`rfexplain.sat.deciders`), with the full CNF alone (the reference
decider), with each other decider alone beside it, and with other cardinality encodings, the
paper's multi-class selector construction and CaDiCaL (whose budgets go through conflict
limits); the non-default ones with the full CNF alone, so that the solver itself answers every
query on these small forests.

The whole portfolio, the full CNF alone and no prefilter run in the default run; the other
encodings and solvers and each decider alone in the slow run (``python -m pytest -m slow``, CI)."""

from typing import Any, ClassVar

import pytest

from tests.engine_contract import EngineContract


class TestSatEngine(EngineContract):
    """The whole portfolio."""

    engine = "sat"
    options: ClassVar[dict[str, Any]] = {"prefilter": True}
    max_examples = 100


class TestSatEngineFullCnfAlone(EngineContract):
    """The reference decider alone."""

    engine = "sat"
    options: ClassVar[dict[str, Any]] = {"prefilter": True, "deciders": ("full_cnf",)}
    max_examples = 50


class TestSatEngineTotalizerSelectors(EngineContract):
    pytestmark = pytest.mark.slow  # one more configuration: CI's slow run

    engine = "sat"
    options: ClassVar[dict[str, Any]] = {"card": "totalizer", "multiclass": "selectors", "prefilter": False}
    max_examples = 25


class TestSatEngineSeqcounterCadical(EngineContract):
    pytestmark = pytest.mark.slow  # one more configuration: CI's slow run

    engine = "sat"
    options: ClassVar[dict[str, Any]] = {"card": "seqcounter", "solver": "cd195", "prefilter": False}
    max_examples = 25


class TestSatEngineKMTotalizerSelectors(EngineContract):
    pytestmark = pytest.mark.slow  # one more configuration: CI's slow run

    engine = "sat"
    options: ClassVar[dict[str, Any]] = {"card": "kmtotalizer", "multiclass": "selectors", "solver": "mgh"}
    max_examples = 25


class TestSatEngineNoPrefilter(EngineContract):
    engine = "sat"
    options: ClassVar[dict[str, Any]] = {"prefilter": False}
    max_examples = 25


def _decider_alone(name: str) -> type[EngineContract]:
    """The contract with the decider ``name`` alone beside the full CNF (which answers what it
    leaves open)."""
    return type(
        f"TestSatEngineDecider_{name}",
        (EngineContract,),
        {
            "engine": "sat",
            "options": {"prefilter": True, "deciders": (name,)},
            "max_examples": 10,
            "pytestmark": pytest.mark.slow,
        },
    )


TestSatEngineBoundsAlone = _decider_alone("bounds")
TestSatEngineBoxesAlone = _decider_alone("boxes")
TestSatEngineCliquesAlone = _decider_alone("cliques")
TestSatEngineClimbAlone = _decider_alone("climb")
TestSatEngineReducedCnfAlone = _decider_alone("reduced_cnf")
