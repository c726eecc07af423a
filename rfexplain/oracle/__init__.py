"""The brute-force oracle: every query answered by its definition over all state vectors of a
small forest. Public, so users can check any engine with it; it shares nothing with the SAT or
circuit engines but the shared core."""

from rfexplain.oracle.engine import DEFAULT_MAX_STATE_VECTORS, Oracle, OracleEngine, StateSet

__all__ = ["Oracle", "OracleEngine", "StateSet", "DEFAULT_MAX_STATE_VECTORS"]
