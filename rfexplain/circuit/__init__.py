"""The circuit engine (Ji and Darwiche, 2026 [JD26]; Darwiche and Ji, 2022 [DJ22]): class formulas compiled
into NNF circuits and weak test-once decision graphs (:mod:`rfexplain.circuit.compilers`), and
the algorithms on them (:mod:`rfexplain.circuit.logic`), behind
:class:`rfexplain.circuit.engine.CircuitEngine`.

It imports only the shared core and the engine interface: never the SAT engine or the oracle."""
