"""The circuit engine (Ji and Darwiche, 2023; Darwiche and Ji, 2022): class formulas compiled
into NNF circuits and weak test-once decision graphs (:mod:`rfexplain.circuit.compilers`), and
the algorithms on them (:mod:`rfexplain.circuit.logic`), behind
:class:`rfexplain.circuit.engine.CircuitEngine`.

It imports only the shared core and the engine interface: never the SAT engine or the oracle."""
