"""Knowledge compilation of forests: NNF circuits, sorting networks, weak test-once decision
graphs with Apply, and the class formulas of Algorithms 3, 3A and 3B (Ji and Darwiche, 2026 [JD26])."""

from rfexplain.circuit.compilers.classformula import ClassFormulas, tree_class_nnf
from rfexplain.circuit.compilers.dgraph import DGManager
from rfexplain.circuit.compilers.nnf import Circuit, NNFManager
from rfexplain.circuit.compilers.sortnet import sortnet, threshold

__all__ = ["NNFManager", "Circuit", "DGManager", "ClassFormulas", "tree_class_nnf", "sortnet", "threshold"]
