"""The ADD package of the ADD comparator: ordered, hash-consed nodes in one :class:`ADDManager`
with a unique table and a cached ``Apply`` (Bahar et al. (1993) [Bah93]), the predicate order
(Gossen and Steffen (2021), Def. 1 [GS21]) and the ADD of one tree (Sect. 3, Def. 14-15):
the building blocks of :func:`rfexplain.comparators.add.aggregate`.

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

Everything is iterative (explicit stacks), so deep diagrams never meet Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any

from rfexplain.core.budget import Budget
from rfexplain.core.errors import ADDTooLargeError, InvalidOptionError
from rfexplain.core.forest import Forest, Tree

__all__ = ["TERMINAL", "ADD_NODE_BYTES", "PredicateOrder", "ADDManager", "tree_add"]

#: Estimated bytes of one node of an :class:`ADDManager` (its four list items, its unique-table
#: entry and its share of the Apply cache): what the memory budget counts per node
ADD_NODE_BYTES = 400

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
