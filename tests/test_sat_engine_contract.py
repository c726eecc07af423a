"""The SAT engine against the brute-force oracle: the shared engine contract."""

from .engine_contract import EngineContract


class TestSatEngine(EngineContract):
    engine = "sat"
