"""The circuit engine passes the shared engine contract: every query equals the brute-force
oracle on random small forests (ties, multi-class, re-tested features), witnesses verified."""

from tests.engine_contract import EngineContract


class TestCircuitEngine(EngineContract):
    engine = "circuit"
    max_examples = 60


class TestCircuitEngine3A(EngineContract):
    engine = "circuit"
    options = {"compiler": "3A"}
    max_examples = 30


class TestCircuitEngineCompactCore(EngineContract):
    engine = "circuit"
    options = {"core": "compact"}
    max_examples = 60


class TestCircuitEngine3ACompactCore(EngineContract):
    engine = "circuit"
    options = {"compiler": "3A", "core": "compact"}
    max_examples = 30
