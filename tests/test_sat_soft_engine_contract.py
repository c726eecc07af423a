"""The SAT engine under the soft vote against the brute-force oracle (which decides the soft vote
by definition from the leaf vectors): impure leaves, exact ties and float64 near-ties."""

from typing import ClassVar

from tests.engine_contract import EngineContract


class TestSatEngineSoftVote(EngineContract):
    engine = "sat"
    vote: ClassVar[str] = "soft"
    max_examples = 80


class TestOracleEngineSoftVote(EngineContract):
    engine = "oracle"
    vote: ClassVar[str] = "soft"
    max_examples = 20
