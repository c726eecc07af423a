"""Knowledge-compilation comparators for research (not engines): SDDs through PySDD and
algebraic decision diagrams after Gossen and Steffen (2019-2021). Only tests and
``experiments/`` use them."""
