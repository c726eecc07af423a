"""The SAT engine under the soft vote against the brute-force oracle (which decides the soft vote
by definition from the leaf vectors): impure leaves, exact ties and float64 near-ties; with the
whole portfolio of deciders, with the full CNF alone and with each decider that takes soft-vote
questions alone beside it.

The configurations beyond the whole portfolio, the full CNF alone and the nearly pure forests'
lattices (each decider alone, the coarse and exact relaxations, the fine lattices) run in the
slow run (``python -m pytest -m slow``, CI)."""

from typing import Any, ClassVar

import pytest

from tests.engine_contract import EngineContract


class TestSatEngineSoftVote(EngineContract):
    """The whole portfolio of deciders."""

    engine = "sat"
    vote: ClassVar[str] = "soft"
    options: ClassVar[dict[str, Any]] = {"prefilter": True}
    max_examples = 80


class TestSatEngineSoftVoteFullCnfAlone(EngineContract):
    """The reference decider alone (the full CNF with its exact weighted comparisons)."""

    engine = "sat"
    vote: ClassVar[str] = "soft"
    options: ClassVar[dict[str, Any]] = {"prefilter": True, "deciders": ("full_cnf",)}
    max_examples = 30


def _decider_alone(name: str) -> type[EngineContract]:
    """The soft-vote contract with the decider ``name`` alone beside the full CNF (which answers
    what it leaves open); the clique search and the reduced CNF take no soft-vote question."""
    return type(
        f"TestSatEngineSoftVoteDecider_{name}",
        (EngineContract,),
        {
            "engine": "sat",
            "vote": "soft",
            "options": {"prefilter": True, "deciders": (name,)},
            "max_examples": 10,
            "pytestmark": pytest.mark.slow,
        },
    )


TestSatEngineSoftVoteBoundsAlone = _decider_alone("bounds")
TestSatEngineSoftVoteLatticeAlone = _decider_alone("lattice")
TestSatEngineSoftVoteBoxesAlone = _decider_alone("boxes")
TestSatEngineSoftVoteClimbAlone = _decider_alone("climb")


class TestOracleEngineSoftVote(EngineContract):
    engine = "oracle"
    vote: ClassVar[str] = "soft"
    max_examples = 20


class TestSatEngineSoftVoteCoarseRelaxation(EngineContract):
    """One bit per tree weight: the relaxed comparisons are far from exact, so most candidate
    counterexamples are refuted and refined (counterexample-guided exactness); no prefilter, so
    that the solver answers every query."""

    pytestmark = pytest.mark.slow  # one more configuration: CI's slow run
    engine = "sat"
    vote: ClassVar[str] = "soft"
    options: ClassVar[dict[str, Any]] = {"soft_bits": 1, "prefilter": False}
    max_examples = 60


class TestSatEngineSoftVoteExactUpFront(EngineContract):
    pytestmark = pytest.mark.slow  # one more configuration: CI's slow run

    engine = "sat"
    vote: ClassVar[str] = "soft"
    options: ClassVar[dict[str, Any]] = {"soft_bits": None}
    max_examples = 30


class TestSatEngineSoftVoteNearlyPure(EngineContract):
    """Forests with no, one, a few or every leaf impure (the others whole votes, with their exact
    ties), the whole portfolio: the lattices (:mod:`rfexplain.sat.deciders.lattice`) answer most
    questions, the soft race what they leave open."""

    engine = "sat"
    vote: ClassVar[str] = "soft"
    forest_options: ClassVar[dict[str, Any]] = {"impure": "mixed"}
    options: ClassVar[dict[str, Any]] = {"prefilter": True}
    max_examples = 80


class TestSatEngineSoftVoteLatticesCutShort(EngineContract):
    """The vote lattice then a 1-bit one, with budgets of a few boxes and without the bounds
    decider: the lattices' bounds, their races cut short and their spurious points all reach the
    soft race (itself cut short: the full CNF answers the rest)."""

    engine = "sat"
    vote: ClassVar[str] = "soft"
    forest_options: ClassVar[dict[str, Any]] = {"impure": "mixed"}
    options: ClassVar[dict[str, Any]] = {
        "prefilter": True,
        "deciders": ("lattice", "boxes", "cliques", "climb", "full_cnf"),
        "tuning": {"lattice_levels": (0, 1), "lattice_nodes": 8, "bnb_nodes": 64, "lattice_impure": 1.0},
    }
    max_examples = 60


class TestSatEngineSoftVoteFineLattices(EngineContract):
    """Lattices of 1 and 2 bits, whose roundings leave many spurious points on the tenths'
    vectors, and their witnesses confirmed by the exact vote; the soft race after them."""

    pytestmark = pytest.mark.slow  # one more configuration: CI's slow run
    engine = "sat"
    vote: ClassVar[str] = "soft"
    forest_options: ClassVar[dict[str, Any]] = {"impure": "mixed"}
    options: ClassVar[dict[str, Any]] = {"prefilter": True, "tuning": {"lattice_levels": (1, 2)}}
    max_examples = 60
