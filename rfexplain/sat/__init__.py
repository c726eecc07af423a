"""The SAT engine (Izza and Marques-Silva, 2021): CNF encodings of the forest
(:mod:`rfexplain.sat.encodings`) queried with incremental SAT, MUS/MCS extraction, hitting-set
duality and MaxSAT (:mod:`rfexplain.sat.search`), behind :class:`rfexplain.sat.engine.SatEngine`.

It imports only the shared core and the engine interface: never the circuit engine, the oracle
or the comparators."""
