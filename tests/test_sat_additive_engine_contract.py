"""The SAT engine and the oracle under the additive (boosted) vote: leaf score vectors of either
sign, one class's column per tree or every column, an initial score as a one-leaf tree; exact
ties and float64 near-ties. The oracle decides by definition from the exact sums."""

from typing import Any, ClassVar

from tests.engine_contract import EngineContract


class TestSatEngineAdditiveVote(EngineContract):
    """The whole portfolio of deciders."""

    engine = "sat"
    vote: ClassVar[str] = "additive"
    options: ClassVar[dict[str, Any]] = {"prefilter": True}
    max_examples = 40


class TestSatEngineAdditiveVoteFullCnfAlone(EngineContract):
    """The reference decider alone (the full CNF with its exact weighted comparisons)."""

    engine = "sat"
    vote: ClassVar[str] = "additive"
    options: ClassVar[dict[str, Any]] = {"prefilter": True, "deciders": ("full_cnf",)}
    max_examples = 20


class TestOracleEngineAdditiveVote(EngineContract):
    engine = "oracle"
    vote: ClassVar[str] = "additive"
    max_examples = 10
