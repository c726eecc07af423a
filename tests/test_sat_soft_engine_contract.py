"""The SAT engine under the soft vote against the brute-force oracle (which decides the soft vote
by definition from the leaf vectors): impure leaves, exact ties and float64 near-ties."""

from typing import Any, ClassVar

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


class TestOracleEngineSoftVote(EngineContract):
    engine = "oracle"
    vote: ClassVar[str] = "soft"
    max_examples = 20


class TestSatEngineSoftVoteCoarseRelaxation(EngineContract):
    """One bit per tree weight: the relaxed comparisons are far from exact, so most candidate
    counterexamples are refuted and refined (counterexample-guided exactness); no prefilter, so
    that the solver answers every query."""

    engine = "sat"
    vote: ClassVar[str] = "soft"
    options: ClassVar[dict[str, Any]] = {"soft_bits": 1, "prefilter": False}
    max_examples = 60


class TestSatEngineSoftVoteExactUpFront(EngineContract):
    engine = "sat"
    vote: ClassVar[str] = "soft"
    options: ClassVar[dict[str, Any]] = {"soft_bits": None}
    max_examples = 30
