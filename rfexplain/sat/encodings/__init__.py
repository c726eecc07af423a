"""CNF encodings of random forests (Izza and Marques-Silva (2021), Section 4 [IM21]): a variable pool keyed by typed
tuples, feature domains (order encoding channelled to states), tree paths and votes, the majority
vote with cardinality networks, and selectors fixing features to an instance's states.

The SAT engine (:mod:`rfexplain.sat.engine`) is their only user; nothing here imports the
circuit engine, the logic package or the oracle.
"""

from rfexplain.sat.encodings.cnf import ForestEncoding, Formula
from rfexplain.sat.encodings.pool import Var, VarPool
from rfexplain.sat.encodings.votes import CARD_ENCODINGS, MULTICLASS_CONSTRUCTIONS

__all__ = ["ForestEncoding", "Formula", "Var", "VarPool", "CARD_ENCODINGS", "MULTICLASS_CONSTRUCTIONS"]
