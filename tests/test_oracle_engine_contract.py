"""The oracle behind the engine interface passes the shared engine contract (plumbing, witnesses,
budgets); its answers are checked against hand-worked examples in test_oracle.py."""

from tests.engine_contract import EngineContract


class TestOracleEngine(EngineContract):
    engine = "oracle"
    max_examples = 30
