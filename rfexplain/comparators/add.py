"""Algebraic decision diagrams of random forests (Gossen and Steffen (2021), Sections 2-7 [GS21]).

A hand-written ADD package: ordered, hash-consed nodes in one :class:`ADDManager`, with a unique
table and an ``Apply`` whose results are cached, and the paper's aggregation pipeline on top of it
(:func:`aggregate`): every tree becomes an ADD (Sect. 3, Def. 14-15), the trees' one-hot class
vectors are added into the **class-vector ADD** ``d_V`` (Sect. 5, Def. 18 and 20), and the
**majority-vote ADD** ``d_C`` is its image under the majority vote of docs/design.md, section 1 (hard
majority, ties to the lowest class index; Def. 12 and 22).

Under the soft vote (a forest with ``vote="soft"``) the trees' terminals are their leaves'
class-probability vectors instead of one-hot votes -- the class-vector aggregation the paper
describes for probability vectors -- kept exact as the forest's integer weights
(:meth:`~rfexplain.core.forest.Forest.soft_weights`, probabilities times a common ``2**E``), so
``d_V`` holds exact summed weights and ``d_C`` their argmax, ties to the lowest class index.

Predicates and their order
--------------------------
The predicates are the forest's threshold tests ``x[f] <= t_j``, that is ``state[f] <= j`` on the
discretised forest (:class:`~rfexplain.core.forest.Forest`). The predicate order (Def. 1) groups the
tests by feature (features in ``feature_order``, by default the most tested first) and, inside a
feature, sorts them by **increasing threshold**.

Infeasible-path reduction (Sect. 7)
-----------------------------------
With ``reduce=True`` the manager keeps every diagram *vacuity-free* on the fly, which is what the
paper recommends ("applying Δ_v ... already when aggregating the ADD Forest, is vital"): on the
true edge of ``x[f] <= t_j`` every later test ``x[f] <= t_k`` (``k > j``, so later in the order)
is implied, hence vacuous. :meth:`ADDManager.mk` therefore replaces a true-child that tests the
same feature by that child's own true-child (one step suffices, by induction), and Apply's
cofactors follow the same implication. The false edge implies nothing about larger thresholds,
and a feature's tests are contiguous in the order, so these are the only vacuous tests there are.
One more rule makes the result minimal: a test ``x[f] <= t_j`` whose false-child tests ``f``
again with the same true-child is redundant (both sides agree below ``t_j``). With both rules a
feature's tests along a path are exactly the breakpoints of the function of its state, so the
reduced diagram is a *normal form* for this order (the chain encoding of a reduced
multi-valued decision diagram over the states): two forests with the same decision function on
state vectors get the same reduced majority-vote ADD. (The paper notes that vacuity reduction
has no normal form in general; the grouped, increasing order is what restores one here.)
With ``reduce=False`` the predicates are treated as independent Boolean variables (the
symbolic semantics of Def. 3), which gives the paper's unreduced sizes.

ADDs are due to Bahar et al. (1993) [Bah93].

Everything is iterative (explicit stacks), so deep diagrams never meet Python's recursion limit.

Example
-------
>>> from rfexplain import Forest
>>> raw = {"feature": [0, -1, -1], "threshold": [0.5, 0, 0], "left": [1, -1, -1],
...        "right": [2, -1, -1], "label": [-1, 0, 1]}
>>> forest = Forest.from_raw_trees([raw, raw], n_features=1, classes=["a", "b"])
>>> agg = aggregate(forest)
>>> agg.stats()["majority_nodes"]
3
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable, Iterable, MutableSequence, Sequence
from dataclasses import dataclass, field
from typing import Any

from rfexplain.core.budget import Budget
from rfexplain.core.errors import ADDTooLargeError, InvalidOptionError
from rfexplain.core.forest import Forest, Tree, winning_class

__all__ = [
    "ADDManager",
    "ADDTooLargeError",
    "PredicateOrder",
    "AggregatedForest",
    "aggregate",
    "tree_add",
    "majority_index",
]

log = logging.getLogger(__name__)

#: Level of terminal nodes: below every predicate.
TERMINAL = 1 << 60


@dataclass(frozen=True)
class PredicateOrder:
    """The linear order of the predicates ``state[f] <= j`` (the paper's Def. 1).

    ``variables[i] = (f, j)`` is the ``i``-th predicate. Tests of one feature are contiguous and
    sorted by increasing ``j`` (this is what the infeasible-path reduction relies on).
    """

    variables: tuple[tuple[int, int], ...]
    feature_order: tuple[int, ...]

    @classmethod
    def for_forest(cls, forest: Forest, feature_order: Sequence[int] | str = "frequency") -> PredicateOrder:
        """The order of ``forest``'s threshold tests.

        Parameters
        ----------
        feature_order : ``"frequency"``, ``"index"`` or a sequence of feature indices
            ``"frequency"`` puts the features tested most often near the roots of the trees
            first (weight ``2**-depth`` per test), ``"index"`` keeps the features' order. Every
            tested feature must appear in an explicit sequence.
        """
        tested = [f for f in range(forest.n_features) if forest.thresholds[f]]
        if isinstance(feature_order, str):
            if feature_order == "index":
                order = tested
            elif feature_order == "frequency":
                weight = forest.depth_weights()
                order = sorted(tested, key=lambda f: (-weight[f], f))
            else:
                raise InvalidOptionError(
                    f"feature_order must be one of ['frequency', 'index'] or a sequence. Got {feature_order!r} instead."
                )
        else:
            order = [int(f) for f in feature_order]
            missing = set(tested) - set(order)
            if missing or len(set(order)) != len(order):
                raise InvalidOptionError(
                    f"feature_order must list every tested feature once; missing {sorted(missing)}"
                )
            order = [f for f in order if forest.thresholds[f]]
        variables = tuple((f, j) for f in order for j in range(len(forest.thresholds[f])))
        return cls(variables=variables, feature_order=tuple(order))

    def index(self) -> dict[tuple[int, int], int]:
        return {v: i for i, v in enumerate(self.variables)}


class ADDManager:
    """Nodes, unique table and Apply cache of algebraic decision diagrams.

    Nodes are integers. A terminal holds a hashable value (a class vector, a class index, a
    Boolean); an internal node ``(level, hi, lo)`` tests predicate ``order.variables[level]``
    and goes to ``hi`` when it holds (``state[f] <= j``), to ``lo`` otherwise. Children have
    larger levels than their parents; terminals have level :data:`TERMINAL`.

    Parameters
    ----------
    order : PredicateOrder
    reduce : bool
        Keep every diagram free of vacuous tests (infeasible-path reduction, [GS21], Sect. 7).
    max_nodes : int
        Raise :class:`ADDTooLargeError` when the manager would hold more nodes than this.
    """

    def __init__(self, order: PredicateOrder, *, reduce: bool = True, max_nodes: int = 20_000_000) -> None:
        self.order = order
        self.reduce = bool(reduce)
        self.max_nodes = int(max_nodes)
        self.vfeature: list[int] = [f for f, _ in order.variables]
        self.vsplit: list[int] = [j for _, j in order.variables]
        # lists, or int64 arrays (array.array) for the diagrams :meth:`adopt` takes over
        self.level: MutableSequence[int] = []
        self.hi: MutableSequence[int] = []
        self.lo: MutableSequence[int] = []
        self.value: list[Any] = []
        #: ``None`` until first needed after :meth:`adopt`
        self._unique: dict[tuple[int, int, int], int] | None = {}
        self._terminals: dict[tuple[type, Hashable], int] = {}
        self._cache: dict[tuple, int] = {}

    def __len__(self) -> int:
        return len(self.level)

    # ------------------------------------------------------------------ nodes
    def _new(self, level: int, hi: int, lo: int, value: Any) -> int:
        n = len(self.level)
        if n >= self.max_nodes:
            raise ADDTooLargeError(
                f"the ADD manager reached its budget of {self.max_nodes:,} nodes (max_nodes=, or the memory "
                f"budget max_memory= at {ADD_NODE_BYTES} bytes a node)"
            )
        self.level.append(level)
        self.hi.append(hi)
        self.lo.append(lo)
        self.value.append(value)
        return n

    def terminal(self, value: Hashable) -> int:
        """The terminal node holding ``value`` (one node per distinct value and type)."""
        key = (type(value), value)
        n = self._terminals.get(key)
        if n is None:
            n = self._new(TERMINAL, -1, -1, value)
            self._terminals[key] = n
        return n

    def is_terminal(self, node: int) -> bool:
        return self.level[node] == TERMINAL

    def mk(self, level: int, hi: int, lo: int) -> int:
        """The reduced node testing predicate ``level`` ([GS21], Theorem 2 and Sect. 7).

        With ``reduce``, a true-child that tests the same feature is replaced by its own
        true-child (that test is implied); a node whose false-child tests the same feature with
        the same true-child is that false-child (below ``t_j`` both give the same value); and a
        node with equal children is its child.
        """
        if self.reduce:
            f = self.vfeature[level]
            hl = self.level[hi]
            if hl != TERMINAL and self.vfeature[hl] == f:
                hi = self.hi[hi]
            ll = self.level[lo]
            if ll != TERMINAL and self.vfeature[ll] == f and self.hi[lo] == hi:
                # on state <= j the false-child already yields hi: this test is redundant
                return lo
        if hi == lo:
            return hi
        key = (level, hi, lo)
        unique = self._unique
        if unique is None:
            unique = self._unique = {
                (lv, h, o): n for n, (lv, h, o) in enumerate(zip(self.level, self.hi, self.lo)) if lv != TERMINAL
            }
        n = unique.get(key)
        if n is None:
            n = self._new(level, hi, lo, None)
            unique[key] = n
        return n

    def adopt(
        self, level: MutableSequence[int], hi: MutableSequence[int], lo: MutableSequence[int], value: list[Any]
    ) -> None:
        """Take over reduced, hash-consed diagrams built elsewhere (children before parents;
        terminals with level :data:`TERMINAL`, ``hi = lo = -1`` and their ``value``): the store
        of an empty manager. The unique table is rebuilt from them only when :meth:`mk` first needs
        it (most diagrams written out of :mod:`.add_core` are only read)."""
        if self.level:
            raise ValueError("adopt() needs an empty manager")
        self.level, self.hi, self.lo, self.value = level, hi, lo, value
        self._terminals = {(type(v), v): n for n, v in enumerate(value) if level[n] == TERMINAL}
        self._unique = None

    def variable(self, f: int, j: int, true_value: Hashable = True, false_value: Hashable = False) -> int:
        """The diagram of one predicate ``state[f] <= j`` with the given terminal values."""
        level = self.order.index()[(f, j)]
        return self.mk(level, self.terminal(true_value), self.terminal(false_value))

    def clear_cache(self) -> None:
        self._cache.clear()

    # ------------------------------------------------------------------ Apply
    def _cofactors(self, node: int, level: int) -> tuple[int, int]:
        """``(node | predicate true, node | predicate false)`` for the predicate at ``level``."""
        nl = self.level[node]
        if nl == level:
            return self.hi[node], self.lo[node]
        if self.reduce and nl != TERMINAL and self.vfeature[nl] == self.vfeature[level]:
            # state <= j implies state <= k for the later test k > j of the same feature
            return self.hi[node], node
        return node, node

    def apply(
        self,
        op: Callable[[Any, Any], Hashable],
        a: int,
        b: int,
        *,
        name: str,
        commutative: bool = True,
        budget: Budget | None = None,
    ) -> int:
        """The diagram of ``op`` applied pointwise to ``a`` and ``b`` ([GS21], Theorem 7).

        ``name`` identifies ``op`` in the cache (same name, same function).
        """
        level, value = self.level, self.value
        cache = self._cache
        cof = self._cofactors

        def key_of(x: int, y: int) -> tuple:
            if commutative and x > y:
                x, y = y, x
            return (name, x, y)

        root = key_of(a, b)
        if root in cache:
            return cache[root]
        stack = [(a, b)]
        steps = 0
        while stack:
            steps += 1
            if budget is not None and not steps & 0xFFF:
                budget.check("applying an ADD operation")
            x, y = stack[-1]
            key = key_of(x, y)
            if key in cache:
                stack.pop()
                continue
            lx, ly = level[x], level[y]
            if lx == TERMINAL and ly == TERMINAL:
                cache[key] = self.terminal(op(value[x], value[y]))
                stack.pop()
                continue
            v = lx if lx < ly else ly
            x1, x0 = cof(x, v)
            y1, y0 = cof(y, v)
            r1 = cache.get(key_of(x1, y1))
            r0 = cache.get(key_of(x0, y0))
            if r1 is None or r0 is None:
                if r1 is None:
                    stack.append((x1, y1))
                if r0 is None:
                    stack.append((x0, y0))
                continue
            cache[key] = self.mk(v, r1, r0)
            stack.pop()
        return cache[root]

    def map_terminals(self, fn: Callable[[Any], Hashable], a: int, *, name: str) -> int:
        """The diagram of ``fn`` applied to every terminal of ``a`` (the lifted ``α_D`` of
        Theorem 6: majority vote ``Δ_C``, class projection ``Δ_B``), reduced on the way."""
        cache = self._cache
        level, hi, lo, value = self.level, self.hi, self.lo, self.value
        for n in self.reachable([a]):  # children first
            key = (name, n)
            if key in cache:
                continue
            if level[n] == TERMINAL:
                cache[key] = self.terminal(fn(value[n]))
            else:
                cache[key] = self.mk(level[n], cache[(name, hi[n])], cache[(name, lo[n])])
        return cache[(name, a)]

    # ------------------------------------------------------------------ traversal
    def reachable(self, roots: Iterable[int]) -> list[int]:
        """Nodes reachable from ``roots``, children before parents (decreasing level, then id)."""
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if self.level[n] != TERMINAL:
                stack.append(self.hi[n])
                stack.append(self.lo[n])
        return sorted(seen, key=lambda n: (-self.level[n], n))

    def size(self, roots: Iterable[int] | int) -> int:
        """Number of nodes (terminals included) reachable from ``roots``."""
        if isinstance(roots, int):
            roots = [roots]
        return len(self.reachable(roots))

    def terminal_values(self, root: int) -> list[Any]:
        return [self.value[n] for n in self.reachable([root]) if self.level[n] == TERMINAL]

    def depth(self, root: int) -> int:
        """Largest number of tests on a root-to-terminal path."""
        d: dict[int, int] = {}
        for n in self.reachable([root]):
            d[n] = 0 if self.level[n] == TERMINAL else 1 + max(d[self.hi[n]], d[self.lo[n]])
        return d[root]

    def evaluate(self, root: int, states: Sequence[int]) -> Any:
        """The terminal value reached by the state vector ``states``."""
        n = root
        level, hi, lo, vf, vs = self.level, self.hi, self.lo, self.vfeature, self.vsplit
        while level[n] != TERMINAL:
            lv = level[n]
            n = hi[n] if states[vf[lv]] <= vs[lv] else lo[n]
        return self.value[n]

    def restrict_box(self, root: int, box: dict[int, tuple[int, int]]) -> set[Any]:
        """Terminal values reachable by state vectors in ``box`` (feature -> inclusive state
        range; features not in ``box`` are free), following only feasible paths."""
        out: set[Any] = set()
        seen: set[tuple] = set()
        stack: list[tuple[int, int, int, int]] = [(root, -1, 0, 0)]  # node, feature, lo, hi in force
        level, hi, lo, vf, vs = self.level, self.hi, self.lo, self.vfeature, self.vsplit
        while stack:
            item = stack.pop()
            if item in seen:
                continue
            seen.add(item)
            n, cf, clo, chi = item
            lv = level[n]
            if lv == TERMINAL:
                out.add(self.value[n])
                continue
            f, j = vf[lv], vs[lv]
            if f != cf:
                cf = f
                clo, chi = box.get(f, (0, TERMINAL))
            if clo <= j:
                stack.append((hi[n], cf, clo, min(chi, j)))
            if chi > j:
                stack.append((lo[n], cf, max(clo, j + 1), chi))
        return out

    def count_states(self, root: int, n_states: Sequence[int]) -> dict[Any, int]:
        """Number of state vectors reaching each terminal value of a diagram, exactly.

        Only valid for a reduced diagram (``reduce=True``), whose paths are feasible except for
        the interval bookkeeping done here. ``n_states[f]`` is the number of states of feature
        ``f``; features the order does not list have one state.
        """
        fo = list(self.order.feature_order)
        pos = {f: i + 1 for i, f in enumerate(fo)}  # position 0 is a virtual one-state feature
        width = [1] + [int(n_states[f]) for f in fo]
        suffix = [1] * (len(width) + 1)
        for p in range(len(width) - 1, -1, -1):
            suffix[p] = suffix[p + 1] * width[p]
        level, hi, lo, vf, vs = self.level, self.hi, self.lo, self.vfeature, self.vsplit
        memo: dict[tuple[int, int, int, int], dict[Any, int]] = {}

        def deps(key: tuple[int, int, int, int]) -> list[tuple[tuple[int, int, int, int], int]]:
            """(sub-key, multiplier) pairs whose sum is ``key``'s count; [] for a terminal."""
            n, p, a, b = key
            if level[n] == TERMINAL:
                return []
            q = pos[vf[level[n]]]
            if q > p:
                between = 1
                for r in range(p + 1, q):
                    between *= width[r]
                return [((n, q, 0, width[q] - 1), (b - a + 1) * between)]
            j = vs[level[n]]
            out = []
            if a <= j:
                out.append(((hi[n], p, a, min(b, j)), 1))
            if b > j:
                out.append(((lo[n], p, max(a, j + 1), b), 1))
            return out

        top = (root, 0, 0, 0)
        stack = [top]
        while stack:
            key = stack[-1]
            if key in memo:
                stack.pop()
                continue
            n, p, a, b = key
            if level[n] == TERMINAL:
                memo[key] = {self.value[n]: (b - a + 1) * suffix[p + 1]}
                stack.pop()
                continue
            parts = deps(key)
            missing = [k for k, _ in parts if k not in memo]
            if missing:
                stack.extend(missing)
                continue
            total: dict[Any, int] = {}
            for k, mult in parts:
                for v, c in memo[k].items():
                    total[v] = total.get(v, 0) + c * mult
            memo[key] = total
            stack.pop()
        return memo[top]

    def collect(self, roots: Sequence[int]) -> list[int]:
        """Garbage collection: keep only the nodes reachable from ``roots``; return their new ids.

        Every other node id becomes invalid, and the Apply cache is cleared.
        """
        old_level, old_hi, old_lo, old_value = self.level, self.hi, self.lo, self.value
        keep = self.reachable(roots)
        self.level, self.hi, self.lo, self.value = [], [], [], []
        self._unique, self._terminals, self._cache = {}, {}, {}
        new: dict[int, int] = {}
        for n in keep:
            if old_level[n] == TERMINAL:
                new[n] = self.terminal(old_value[n])
            else:
                new[n] = self.mk(old_level[n], new[old_hi[n]], new[old_lo[n]])
        return [new[r] for r in roots]


# ---------------------------------------------------------------------- trees as ADDs
def tree_add(manager: ADDManager, tree: Tree, leaf_value: Callable[[int], Hashable], *, by_leaf: bool = False) -> int:
    """The ADD of one tree, ``Δ_~ ∘ Δ_≺`` of [GS21] (Def. 8 and Theorem 3).

    The tree's root-to-leaf paths, as sets of predicate literals, are split on the predicates in
    the manager's order (Def. 8's partial evaluation ``t_{p->1}``, ``t_{p->0}``); ``leaf_value``
    maps a leaf's class index (its node index with ``by_leaf``) to its terminal value. Paths
    whose literals contradict each other
    are dropped; with ``reduce`` the vacuous tests are removed by :meth:`ADDManager.mk`.
    """
    index = manager.order.index()
    paths: list[tuple[dict[int, bool], Hashable]] = []
    stack: list[tuple[int, dict[int, bool]]] = [(0, {})]
    while stack:
        node, lits = stack.pop()
        f = tree.feature[node]
        if f < 0:
            paths.append((lits, leaf_value(node if by_leaf else tree.label[node])))
            continue
        v = index[(f, tree.split[node])]
        for child, val in ((tree.left[node], True), (tree.right[node], False)):
            if lits.get(v, val) == val:
                stack.append((child, {**lits, v: val}))
    memo: dict[tuple[int, frozenset[int]], int] = {}

    def first(level: int, ids: frozenset[int]) -> int | None:
        """The smallest predicate level >= ``level`` some path in ``ids`` tests, or None when
        every path there yields the same value."""
        values = {paths[i][1] for i in ids}
        if len(values) == 1:
            return None
        return min(v for i in ids for v in paths[i][0] if v >= level)

    top = (0, frozenset(range(len(paths))))
    work = [top]
    while work:
        level, ids = work[-1]
        if (level, ids) in memo:
            work.pop()
            continue
        found = first(level, ids)
        if found is None:
            memo[(level, ids)] = manager.terminal(paths[next(iter(ids))][1])
            work.pop()
            continue
        v = found
        t = (v + 1, frozenset(i for i in ids if paths[i][0].get(v, True)))
        e = (v + 1, frozenset(i for i in ids if not paths[i][0].get(v, False)))
        pending = [k for k in (t, e) if k not in memo]
        if pending:
            work.extend(pending)
            continue
        memo[(level, ids)] = manager.mk(v, memo[t], memo[e])
        work.pop()
    return memo[top]


#: Hard majority with ties to the lowest class index ([GS21], Def. 12): the package's one tie
#: rule, :func:`rfexplain.core.forest.winning_class`, under the name this module exports.
majority_index = winning_class


def _add_vectors(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(x + y for x, y in zip(a, b))


# ---------------------------------------------------------------------- the pipeline
@dataclass
class AggregatedForest:
    """The result of :func:`aggregate`: the class-vector and majority-vote ADDs of a forest.

    Attributes
    ----------
    forest, manager : the forest and the manager holding every diagram
    class_vector : root of ``d_V`` (terminals: vote counts per class), or ``None`` when it was
        dropped to save memory
    majority : root of ``d_C`` (terminals: class indices)
    timings : seconds per phase (``trees``, ``class_vector``, ``majority``)
    """

    forest: Forest
    manager: ADDManager
    class_vector: int | None
    majority: int
    timings: dict[str, float] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    _bdds: dict[int, int] = field(default_factory=dict, repr=False)

    def class_bdd(self, cls: int) -> int:
        """The class characterisation BDD ``Ξ_C(c)`` ([GS21], Def. 30-31): terminals True
        where the forest decides ``cls``."""
        if not 0 <= cls < self.forest.n_classes:
            raise InvalidOptionError(f"cls must be a class index in [0, {self.forest.n_classes}). Got {cls!r} instead.")
        if cls not in self._bdds:
            self._bdds[cls] = self.manager.map_terminals(lambda c: c == cls, self.majority, name=f"is{cls}")
        return self._bdds[cls]

    def counts(self) -> list[int]:
        """Number of state vectors decided as each class (exact; reduced diagrams only)."""
        if not self.manager.reduce:
            raise InvalidOptionError("state counts need the infeasible-path reduction (aggregate(..., reduce=True))")
        by_class = self.manager.count_states(self.majority, self.forest.states_per_feature)
        return [by_class.get(c, 0) for c in range(self.forest.n_classes)]

    def predict_states_one(self, states: Sequence[int]) -> int:
        """Decision for one state vector by walking the majority-vote ADD."""
        return int(self.manager.evaluate(self.majority, states))

    def stats(self) -> dict[str, Any]:
        """Node counts (terminals included) and depths of the diagrams, and the timings."""
        m = self.manager
        out: dict[str, Any] = dict(self.sizes)  # the compact core measured these already
        if "majority_nodes" not in out:
            out["majority_nodes"] = m.size(self.majority)
        if "majority_depth" not in out:
            out["majority_depth"] = m.depth(self.majority)
        if self.class_vector is not None and "class_vector_nodes" not in out:
            out["class_vector_nodes"] = m.size(self.class_vector)
        out["reduced"] = m.reduce
        out.update({f"time_{k}": v for k, v in self.timings.items()})
        return out


#: Estimated bytes of one node of an :class:`ADDManager` (its four list items, its unique-table
#: entry and its share of the Apply cache): what the memory budget counts per node
ADD_NODE_BYTES = 400


def compact_node_bytes(n_classes: int) -> int:
    """Bytes of one node of the compiled store (:class:`~.add_core.CompactADD`): its row, a
    terminal row at most, its unique-table slots (kept at most half full) and computed-table slots."""
    return 3 * 4 + 8 * (n_classes + 1) + 2 * 2 * 4 * 2 + 16


def nodes_within(budget: Budget, max_nodes: int, per_node: int, held: int = 0) -> int:
    """``max_nodes``, lowered to the nodes of ``per_node`` bytes that fit in the budget's memory
    (``max_memory``) beside ``held`` bytes: the ADD compilers' memory budget is a node budget
    (:class:`ADDTooLargeError`, a ``MemoryError``, when they would pass it)."""
    if budget.max_memory is None:
        return max_nodes
    return max(2, min(max_nodes, (budget.max_memory - held) // per_node))


def aggregate(
    forest: Forest,
    *,
    reduce: bool = True,
    feature_order: Sequence[int] | str = "frequency",
    strategy: str = "balanced",
    keep_class_vector: bool = True,
    max_nodes: int = 20_000_000,
    timeout: float | Budget | None = None,
    vote: str | None = None,
    core: str = "compact",
    decide_early: bool = False,
) -> AggregatedForest:
    """Aggregate a forest into its class-vector and majority-vote ADDs ([GS21], Sect. 6, Def. 24).

    Parameters
    ----------
    forest : Forest
    reduce : bool
        Infeasible-path reduction during aggregation (Sect. 7); ``False`` gives the symbolic
        (independent-predicate) diagrams ``d_V`` and ``d_C`` of Sect. 6.
    feature_order : see :meth:`PredicateOrder.for_forest`
    strategy : ``"balanced"`` or ``"sequential"``
        Add the trees' ADDs pairwise in a balanced tree, or one after another into an
        accumulator (the paper's left-to-right concatenation).
    keep_class_vector : bool
        Keep ``d_V`` alive (its size is always measured).
    max_nodes : int
        Node budget of the manager (:class:`ADDTooLargeError` beyond it); garbage collection
        runs when half of it is used.
    timeout : float or Budget, optional
        Seconds, or a :class:`~rfexplain.core.budget.Budget`;
        :class:`~rfexplain.core.budget.BudgetExpired` (a :class:`TimeoutError`) when aggregation
        takes longer (checked inside and between Applies).
    vote : {"hard", "soft"}, optional
        Aggregate one-hot votes or the leaves' exact class-probability weights (default: the
        forest's own vote mode; see the module docstring).
    core : {"compact", "python"}
        Run the sums and the majority map in the compiled array store of :mod:`.add_core`
        (the default; the result is written into an :class:`ADDManager`), or in the
        :class:`ADDManager` itself. Both build the same diagrams; soft-vote weights whose sums
        could pass int64 always run in Python.
    decide_early : bool
        With the compact core and ``keep_class_vector=False``: turn every partial sum whose
        winner the remaining trees cannot change into that class at once
        (:meth:`.add_core.CompactADD.add`). The majority-vote ADD is the same; the intermediate
        diagrams, and the time, shrink. ``stats()`` then reports ``decided_vector_nodes`` (the
        last sum, partly decided) instead of ``class_vector_nodes``.

    Examples
    --------
    >>> from rfexplain import Forest
    >>> raw = {"feature": [0, -1, -1], "threshold": [1.0, 0, 0], "left": [1, -1, -1],
    ...        "right": [2, -1, -1], "label": [-1, 1, 0]}
    >>> agg = aggregate(Forest.from_raw_trees([raw], n_features=1, classes=[0, 1]))
    >>> agg.predict_states_one([0]), agg.predict_states_one([1])
    (1, 0)
    """
    if strategy not in ("balanced", "sequential"):
        raise InvalidOptionError(f"strategy must be one of ['balanced', 'sequential']. Got {strategy!r} instead.")
    if core not in ("compact", "python"):
        raise InvalidOptionError(f"core must be one of ['compact', 'python']. Got {core!r} instead.")
    if decide_early and (keep_class_vector or core != "compact"):
        raise InvalidOptionError(
            "decide_early leaves no exact class-vector ADD: it needs core='compact' and keep_class_vector=False"
        )
    budget = Budget.of(timeout)
    max_nodes = nodes_within(budget, max_nodes, ADD_NODE_BYTES)
    start = time.perf_counter()

    def check_time() -> None:
        budget.check("aggregating ADDs")

    order = PredicateOrder.for_forest(forest, feature_order)
    m = ADDManager(order, reduce=reduce, max_nodes=max_nodes)
    k = forest.n_classes
    roots = []
    if (vote or forest.vote) == "soft":
        _, weights = forest.aggregation.integer_weights()
        for tree, leaf_weights in zip(forest.trees, weights):
            roots.append(tree_add(m, tree, leaf_weights.__getitem__, by_leaf=True))
        leaf_vectors = [list(w.values()) for w in weights]
    else:
        one_hot = [tuple(int(c == i) for i in range(k)) for c in range(k)]
        for tree in forest.trees:
            roots.append(tree_add(m, tree, lambda c: one_hot[c]))
        leaf_vectors = [
            [one_hot[tree.label[i]] for i in range(tree.n_nodes) if tree.feature[i] < 0] for tree in forest.trees
        ]
    m.clear_cache()
    t_trees = time.perf_counter()
    log.debug("built %d tree ADDs (%d nodes) in %.3f s", len(roots), len(m), t_trees - start)
    if core == "compact":
        from rfexplain.comparators.add_core import LARGEST_SUM

        largest_sum = sum(max((max(v) for v in leaves), default=0) for leaves in leaf_vectors)
        if largest_sum <= LARGEST_SUM:
            gains = _tree_gains(leaf_vectors, k) if decide_early else None
            return _aggregate_compact(forest, m, roots, strategy, keep_class_vector, budget, start, t_trees, gains)
        log.debug("soft-vote weights may pass int64: aggregating in Python")

    def add(a: int, b: int) -> int:
        return m.apply(_add_vectors, a, b, name="add", budget=budget)

    def maybe_collect(live: list[int]) -> list[int]:
        if len(m) > m.max_nodes // 2:
            live = m.collect(live)
            log.debug("garbage collected: %d nodes live", len(m))
        return live

    if strategy == "sequential":
        acc = roots[0]
        for i in range(1, len(roots)):
            acc = add(acc, roots[i])
            if i % 16 == 0:
                check_time()
                m.clear_cache()
                live = maybe_collect([acc] + roots[i + 1 :])
                acc, roots[i + 1 :] = live[0], live[1:]
    else:
        level = roots
        while len(level) > 1:
            nxt = [add(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
            check_time()
            m.clear_cache()
            level = maybe_collect(level)
        acc = level[0]
    t_vector = time.perf_counter()
    sizes = {"class_vector_nodes": m.size(acc)}
    majority = m.map_terminals(majority_index, acc, name="majority")
    t_major = time.perf_counter()
    class_vector: int | None = acc
    if not keep_class_vector:
        class_vector = None
        majority = m.collect([majority])[0]
    else:
        m.clear_cache()
    return AggregatedForest(
        forest=forest,
        manager=m,
        class_vector=class_vector,
        majority=majority,
        timings={"trees": t_trees - start, "class_vector": t_vector - t_trees, "majority": t_major - t_vector},
        sizes=sizes,
    )


def _tree_gains(leaf_vectors: list[list[tuple[int, ...]]], k: int) -> tuple[Any, Any]:
    """Prefix sums over the trees of the least and the most each tree adds to each class (its
    leaves' vectors): rows ``0..T`` of two ``(T + 1, k)`` int64 arrays."""
    import numpy as np

    low = np.zeros((len(leaf_vectors) + 1, k), dtype=np.int64)
    high = np.zeros((len(leaf_vectors) + 1, k), dtype=np.int64)
    for t, leaves in enumerate(leaf_vectors):
        vectors = np.array(leaves, dtype=np.int64).reshape(-1, k)
        low[t + 1] = low[t] + vectors.min(axis=0)
        high[t + 1] = high[t] + vectors.max(axis=0)
    return low, high


def _aggregate_compact(
    forest: Forest,
    trees: ADDManager,
    roots: list[int],
    strategy: str,
    keep_class_vector: bool,
    budget: Budget,
    start: float,
    t_trees: float,
    gains: tuple[Any, Any] | None,
) -> AggregatedForest:
    """:func:`aggregate`'s sums and majority map in the compiled store of :mod:`.add_core`, from
    the trees' ADDs in ``trees``; the results are written back into a new :class:`ADDManager`.
    With ``gains`` (:func:`_tree_gains`) every sum decides early."""
    from rfexplain.comparators.add_core import CompactADD

    level_feature = [f for f, _ in trees.order.variables]
    per_node = compact_node_bytes(forest.n_classes)
    store_nodes = nodes_within(budget, trees.max_nodes, per_node, held=ADD_NODE_BYTES * len(trees))
    store = CompactADD(level_feature, forest.n_classes, reduce=trees.reduce, max_nodes=store_nodes)
    store.load(trees.level, trees.hi, trees.lo, trees.value, TERMINAL)
    n = len(roots)

    def add(a: tuple[int, int, int], b: tuple[int, int, int]) -> tuple[int, int, int]:
        """Sum of two partial sums ``(root, first tree, end)`` over adjacent tree ranges."""
        first, end = a[1], b[2]
        others = None
        if gains is not None:
            low, high = gains
            outside = low[n] - low[end] + low[first], high[n] - high[end] + high[first]
            others = (outside[0], outside[1])
        return store.add(a[0], b[0], budget, others), first, end

    def collect(parts: list[tuple[int, int, int]], live: int) -> tuple[list[tuple[int, int, int]], int]:
        kept, live = store.maybe_collect([p[0] for p in parts], live)
        return [(r, p[1], p[2]) for r, p in zip(kept, parts)], live

    live = len(store)
    parts = [(r, t, t + 1) for t, r in enumerate(roots)]
    if strategy == "sequential":
        acc = parts[0]
        for i in range(1, n):
            acc = add(acc, parts[i])
            if i % 16 == 0:
                budget.check("aggregating ADDs")
                kept, live = collect([acc] + parts[i + 1 :], live)
                acc, parts[i + 1 :] = kept[0], kept[1:]
    else:
        while len(parts) > 1:
            nxt = [add(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
            if len(parts) % 2:
                nxt.append(parts[-1])
            budget.check("aggregating ADDs")
            parts, live = collect(nxt, live)
        acc = parts[0]
    t_vector = time.perf_counter()
    sizes = {("decided_vector_nodes" if gains is not None else "class_vector_nodes"): store.size(acc[0])}
    majority = store.to_class(acc[0])
    t_major = time.perf_counter()
    sizes["majority_nodes"] = store.size(majority)
    sizes["majority_depth"] = store.depth(majority)
    sizes["peak_store_nodes"] = store.peak_nodes
    sizes["store_bytes"] = store.nbytes()
    kept_roots = [acc[0], majority] if keep_class_vector else [majority]
    level, hi, lo, values, out = store.export(kept_roots, TERMINAL, release=True)
    manager = ADDManager(trees.order, reduce=trees.reduce, max_nodes=max(trees.max_nodes, 2 * len(values)))
    manager.adopt(level, hi, lo, values)
    log.debug(
        "compact ADD core: peak %d nodes, %d bytes of arrays; exported %d nodes",
        store.peak_nodes,
        sizes["store_bytes"],
        len(manager),
    )
    return AggregatedForest(
        forest=forest,
        manager=manager,
        class_vector=out[0] if keep_class_vector else None,
        majority=out[-1],
        timings={
            "trees": t_trees - start,
            "class_vector": t_vector - t_trees,
            "majority": t_major - t_vector,
            "export": time.perf_counter() - t_major,
        },
        sizes=sizes,
    )
