"""Class formulas of a forest: Algorithm 3 (NNF), 3A and 3B (Ji and Darwiche (2026),
Section 3 [JD26]).

For a forest of ``n`` trees and ``k`` classes, the class formula ``R^i`` holds exactly on the
state vectors the forest decides as class ``i`` under the rule of docs/design.md, section 1: hard majority,
ties to the **lowest class index**. The paper's formulas let ties belong to every tied class; ours
do not, so the formulas of different classes are mutually exclusive and exhaustive:

- ``k = 2``: class 0 wins iff it has at least ``ceil(n/2)`` votes, class 1 iff it has at least
  ``floor(n/2) + 1``; each is one output of a sorting network on the trees' class formulas
  (lines 5-10 of Algorithm 3, with the threshold made tie-aware).
- ``k > 2``: ``R^i = AND_{j != i} F^{ij}`` where ``F^{ij}`` compares the votes of ``i`` and ``j``
  through a sorting network on ``C^i_1, not C^j_1, ..., C^i_n, not C^j_n`` (lines 11-19): output
  ``n`` (``N_i >= N_j``) when ``j > i`` and output ``n + 1`` (``N_i > N_j``) when ``j < i``.

Three forms are produced:

- **Algorithm 3**: every input is an NNF (Darwiche and Ji (2022), Definition 3 [DJ22]) and a comparator
  builds ``or``/``and`` nodes (:meth:`ClassFormulas.nnf`).
- **Algorithm 3B**: inputs are weak test-once decision graphs, comparators run Apply
  (Algorithm 4), and ``R^i`` is kept as the *conjunction* of the graphs ``F^{ij}``
  (:meth:`ClassFormulas.dg_3b`). With ordered graphs (the default) each ``F^{ij}`` is canonical,
  and ``method="count"`` (the default) builds that same graph by a direct product construction
  (:mod:`.votecount`) instead of the network; ``method="sortnet"`` is the paper's way. Either
  way ``F^{ji}`` is obtained as the negation of ``F^{ij}``.
- **Algorithm 3A**: the conjunction is also computed by Apply, giving one weak test-once decision
  graph per class (:meth:`ClassFormulas.dg_3a`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from rfexplain.circuit.compilers.dd_core import CompactCounter
from rfexplain.circuit.compilers.dgraph import DGManager
from rfexplain.circuit.compilers.gcpause import without_gc
from rfexplain.circuit.compilers.nnf import NNFManager
from rfexplain.circuit.compilers.sortnet import threshold
from rfexplain.circuit.compilers.votecount import VoteCounter
from rfexplain.core.budget import Budget
from rfexplain.core.forest import Forest

__all__ = [
    "ClassFormulas",
    "tree_class_nnf",
    "dg_to_nnf",
    "vote_thresholds",
    "variable_order",
    "METHODS",
    "ORDERS",
    "CORES",
]

#: how Algorithm 3B obtains each vote-threshold graph: ``"sortnet"`` runs the paper's sorting
#: network with Apply at every comparator; ``"count"`` builds the same (canonical, ordered) graph
#: directly by :class:`~.votecount.VoteCounter`, without the network's intermediate graphs
METHODS = ("count", "sortnet")
#: variable orders of ordered graphs (:func:`variable_order`)
ORDERS = ("depth", "trees", "frequency", "index")
#: which core runs ``method="count"``: ``"compact"`` (:class:`~.dd_core.CompactCounter`, flat
#: arrays and compiled loops; the default) or ``"python"`` (:class:`~.votecount.VoteCounter`, one
#: Python object per node). Both give the same graph node for node. The compact core loads its
#: compiled loops once per process, which dominates on forests that compile in hundredths of a
#: second.
CORES = ("python", "compact")

log = logging.getLogger(__name__)


def dg_to_nnf(dg: DGManager, root: int, nnf: NNFManager, memo: dict[int, int] | None = None) -> int:
    """Darwiche and Ji (2022), Definition 3 [DJ22]: ``Delta[T] = AND_j (Delta[T_j] or X not in S_j)``.

    The complement of an edge label is taken in the variable's full domain.
    """
    memo = {} if memo is None else memo
    memo.setdefault(0, nnf.false)
    memo.setdefault(1, nnf.true)
    full = dg.full
    for n in dg.reachable([root]):
        if n in memo:
            continue
        v = dg.var[n]
        memo[n] = nnf.conj_all(nnf.disj(memo[c], nnf.literal(v, full[v] & ~s)) for s, c in dg.edges[n])
    return memo[root]


def tree_class_nnf(forest: Forest, tree_index: int, cls: int, nnf: NNFManager, *, negated: bool = False) -> int:
    """The NNF class formula of one tree for class ``cls`` (or its negation)."""
    dg = DGManager(forest.states_per_feature)
    leaf = [(1 if (c == cls) != negated else 0) for c in range(forest.n_classes)]
    return dg_to_nnf(dg, dg.from_tree(forest.trees[tree_index], leaf), nnf)


def vote_thresholds(n_trees: int, n_classes: int, i: int) -> list[tuple[int | None, int]]:
    """For class ``i``: ``(j, k)`` pairs meaning "output ``k`` of the network comparing ``i`` with
    ``j``" (``j is None`` for the binary network on ``i``'s votes alone)."""
    n = n_trees
    if n_classes == 1:
        return []
    if n_classes == 2:
        return [(None, (n + 1) // 2 if i == 0 else n // 2 + 1)]
    return [(j, n if j > i else n + 1) for j in range(n_classes) if j != i]


def variable_order(forest: Forest, order: str = "depth") -> list[int]:
    """Rank of every feature in the variable order of ordered graphs.

    ``"depth"`` (default): features by decreasing ``sum of 2**-depth`` over the tree nodes that
    test them, so features tested near the roots of many trees come first. ``"trees"``: order of
    first appearance, tree by tree (breadth-first in each tree). ``"frequency"``: most tested
    features first. ``"index"``: feature index order. Ties go to the lower index.
    """
    n = forest.n_features
    if order == "index":
        seq = list(range(n))
    elif order == "depth":
        score = forest.depth_weights()
        seq = sorted(range(n), key=lambda f: (-score[f], f))
    elif order == "frequency":
        counts = [0] * n
        for t in forest.trees:
            for f in t.feature:
                if f >= 0:
                    counts[f] += 1
        seq = sorted(range(n), key=lambda f: (-counts[f], f))
    elif order == "trees":
        seq = []
        seen: set[int] = set()
        for t in forest.trees:
            queue = [0]
            while queue:
                node = queue.pop(0)
                f = t.feature[node]
                if f >= 0:
                    if f not in seen:
                        seen.add(f)
                        seq.append(f)
                    queue += [t.left[node], t.right[node]]
        seq += [f for f in range(n) if f not in seen]
    else:
        raise ValueError(f"order must be one of {list(ORDERS)}. Got {order!r} instead.")
    rank = [0] * n
    for position, f in enumerate(seq):
        rank[f] = position
    return rank


class ClassFormulas:
    """Compiles and caches the class formulas of one forest (lazily, once per class and form).

    Parameters
    ----------
    forest : Forest
    ordered : bool
        Turn every tree into a graph testing the variables in one order (default); otherwise
        the trees' own weak test-once graphs go through the general, path-carrying Apply.
    order : {"depth", "trees", "frequency", "index"}
        The variable order of ordered graphs (:func:`variable_order`).
    method : {"count", "sortnet"}, optional
        How 3B builds each vote graph (:data:`METHODS`); default ``"count"`` for ordered graphs,
        ``"sortnet"`` otherwise (counting needs ordered graphs).
    core : {"compact", "python"}
        Which core counts votes for ``method="count"`` (:data:`CORES`).
    """

    def __init__(
        self,
        forest: Forest,
        *,
        ordered: bool = True,
        order: str = "depth",
        method: str | None = None,
        core: str = "compact",
    ) -> None:
        if method is None:
            method = "count" if ordered else "sortnet"
        if method not in METHODS:
            raise ValueError(f"method must be one of {list(METHODS)}. Got {method!r} instead.")
        if method == "count" and not ordered:
            raise ValueError("method 'count' builds ordered graphs; use method='sortnet' with ordered=False")
        if core not in CORES:
            raise ValueError(f"core must be one of {list(CORES)}. Got {core!r} instead.")
        self.forest = forest
        self.ordered = ordered
        self.method = method
        self.dg = DGManager(forest.states_per_feature)
        self.dg.ordered = ordered
        if ordered:
            self.dg.rank = variable_order(forest, order)
        self._tree_dg: dict[tuple[int, int, bool], int] = {}
        self.core = core
        self._counter: VoteCounter | CompactCounter | None = None
        if method == "count":
            self._counter = CompactCounter(forest, self.dg) if core == "compact" else VoteCounter(forest, self.dg)
        self._pair: dict[tuple[int, int | None], int] = {}
        self._3b: dict[int, tuple[int, ...]] = {}
        self._3a: dict[int, int] = {}
        self.timings: dict[str, float] = {}

    # ------------------------------------------------------------------ inputs
    def tree_dg(self, tree: int, cls: int, negated: bool = False) -> int:
        """``C^cls_tree`` (or its negation) as a weak test-once decision graph."""
        key = (tree, cls, negated)
        if key not in self._tree_dg:
            leaf = [(1 if (c == cls) != negated else 0) for c in range(self.forest.n_classes)]
            if self.ordered:
                self._tree_dg[key] = self.dg.from_tree_ordered(self.forest.trees[tree], leaf)
            else:
                self._tree_dg[key] = self.dg.from_tree(self.forest.trees[tree], leaf)
        return self._tree_dg[key]

    def _inputs(self, i: int, j: int | None, make) -> list:
        n = self.forest.n_trees
        if j is None:
            return [make(l, i, False) for l in range(n)]
        xs = []
        for l in range(n):
            xs.append(make(l, j, True))  # x[2l]   = not C^j_l
            xs.append(make(l, i, False))  # x[2l+1] = C^i_l
        return xs

    # ------------------------------------------------------------------ Algorithm 3 (NNF)
    def nnf(
        self, manager: NNFManager | None = None, classes: Sequence[int] | None = None
    ) -> tuple[NNFManager, dict[int, int]]:
        """Algorithm 3: the class formula of every class (or of ``classes``) as NNF circuits in one
        manager. Returns ``(manager, {class: root})``."""
        forest = self.forest
        m = manager if manager is not None else NNFManager(forest.states_per_feature)
        dg = DGManager(forest.states_per_feature)
        memo: dict[int, int] = {}
        cache: dict[tuple[int, int, bool], int] = {}

        def make(l: int, c: int, negated: bool) -> int:
            key = (l, c, negated)
            if key not in cache:
                leaf = [(1 if (x == c) != negated else 0) for x in range(forest.n_classes)]
                cache[key] = dg_to_nnf(dg, dg.from_tree(forest.trees[l], leaf), m, memo)
            return cache[key]

        roots = {}
        for i in classes if classes is not None else range(forest.n_classes):
            parts = [
                threshold(self._inputs(i, j, make), k, m, m.false)
                for j, k in vote_thresholds(forest.n_trees, forest.n_classes, i)
            ]
            roots[i] = m.conj_all(parts)
        return m, roots

    # ------------------------------------------------------------------ Algorithms 3B and 3A
    @without_gc
    def vote_graph(self, i: int, j: int | None, budget: Budget | None = None) -> int:
        """``F^{ij}`` (class ``i`` beats class ``j`` under the tie rule), or for two classes
        (``j is None``) class ``i``'s vote threshold, as one decision graph.

        The two sides of a comparison are complements (``F^{ji} = not F^{ij}``, and with two
        classes class 1 wins iff class 0 does not), so only ``i < j`` (class 0) is compiled and
        the other side is its negation, which is linear in the graph. Counting stops with
        :class:`~rfexplain.core.budget.BudgetExpired` when ``budget`` expires.
        """
        key = (i, j)
        if key not in self._pair:
            forest = self.forest
            other = 1 - i if j is None else j
            if other < i:
                side = self.vote_graph(other, None if j is None else i, budget)
                negate = self._counter.negate if isinstance(self._counter, CompactCounter) else self.dg.negate
                self._pair[key] = negate(side)
            elif self._counter is not None:
                weights = {i: 1} if j is None else {i: 1, j: -1}
                need = (forest.n_trees + 1) // 2 if j is None else 0
                start = time.perf_counter()
                self._pair[key] = self._counter.at_least(weights, need, budget)
                if log.isEnabledFor(logging.INFO):
                    log.info(
                        "vote graph of class %d against %s: %d nodes in %.1fs",
                        i,
                        "the rest" if j is None else j,
                        self.dg.size(self._pair[key]),
                        time.perf_counter() - start,
                    )
            else:
                k = dict(vote_thresholds(forest.n_trees, forest.n_classes, i))[j]
                self._pair[key] = threshold(self._inputs(i, j, self.tree_dg), k, self.dg, self.dg.false)
        return self._pair[key]

    def dg_3b(self, i: int, budget: Budget | None = None) -> tuple[int, ...]:
        """Algorithm 3B: class ``i`` as a conjunction of weak test-once decision graphs ``F^{ij}``
        (constant-true conjuncts dropped; a false conjunct leaves just ``(false,)``)."""
        if i not in self._3b:
            start = time.perf_counter()
            forest = self.forest
            others = [j for j, _ in vote_thresholds(forest.n_trees, forest.n_classes, i)]
            # the graphs to count first, the negations of earlier ones after: a product's arrays
            # then never sit beside a negated copy that could have waited (ann-thyroid's class
            # 1: one 14M-node graph less in the store while its product runs)
            for j in sorted(others, key=lambda j: j is not None and j < i):
                self.vote_graph(i, j, budget)
            parts = [self.vote_graph(i, j, budget) for j in others]
            if any(f == 0 for f in parts):
                parts = [0]
            parts = [f for f in parts if f != 1]
            self._3b[i] = tuple(dict.fromkeys(parts))
            self.timings[f"3B:{i}"] = time.perf_counter() - start
            if log.isEnabledFor(logging.DEBUG):  # the size walks the whole formula
                log.debug(
                    "3B class %d: %d graphs, %d nodes in %.2fs",
                    i,
                    len(parts),
                    self.dg.size(parts or [1]),
                    self.timings[f"3B:{i}"],
                )
        return self._3b[i]

    @without_gc
    def dg_3a(self, i: int, budget: Budget | None = None) -> int:
        """Algorithm 3A: class ``i`` as one weak test-once decision graph (Apply-conjunction of
        the 3B graphs)."""
        if i not in self._3a:
            parts = self.dg_3b(i, budget)
            start = time.perf_counter()
            root = 1
            # conjoin smaller graphs first
            for f in sorted(parts, key=self.dg.size):
                root = self.dg.conj(root, f)
            self._3a[i] = root
            self.timings[f"3A-3B:{i}"] = time.perf_counter() - start
        return self._3a[i]

    def conjuncts(self, i: int, compiler: str, budget: Budget | None = None) -> tuple[int, ...]:
        """The class formula of ``i`` as a tuple of decision graphs to be conjoined."""
        if compiler == "3A":
            root = self.dg_3a(i, budget)
            return () if root == 1 else (root,)
        return self.dg_3b(i, budget)
