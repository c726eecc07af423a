"""The SAT engine against the brute-force oracle: the shared engine contract, with the default
options and with other cardinality encodings, the paper's multi-class selector construction and
CaDiCaL (whose budgets go through conflict limits); the non-default ones without the prefilter,
so that the solver itself answers every query on these small forests."""

from typing import Any, ClassVar

from tests.engine_contract import EngineContract


class TestSatEngine(EngineContract):
    engine = "sat"
    max_examples = 100


class TestSatEngineTotalizerSelectors(EngineContract):
    engine = "sat"
    options: ClassVar[dict[str, Any]] = {"card": "totalizer", "multiclass": "selectors", "prefilter": False}
    max_examples = 25


class TestSatEngineSeqcounterCadical(EngineContract):
    engine = "sat"
    options: ClassVar[dict[str, Any]] = {"card": "seqcounter", "solver": "cd195", "prefilter": False}
    max_examples = 25


class TestSatEngineKMTotalizerSelectors(EngineContract):
    engine = "sat"
    options: ClassVar[dict[str, Any]] = {"card": "kmtotalizer", "multiclass": "selectors", "solver": "mgh"}
    max_examples = 25


class TestSatEngineNoPrefilter(EngineContract):
    engine = "sat"
    options: ClassVar[dict[str, Any]] = {"prefilter": False}
    max_examples = 50
