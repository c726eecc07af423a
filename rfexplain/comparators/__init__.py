"""Knowledge-compilation comparators for research (not engines): SDDs through PySDD and
algebraic decision diagrams after Gossen and Steffen (2021) [GS21]. Only tests and
``experiments/`` use them."""
