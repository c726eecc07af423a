"""Weak test-once decision graphs and Apply (Ji and Darwiche (2026), Section 3,
Algorithm 4 [JD26]; after Bryant's Apply, 1986 [Bry86]).

A :class:`DGManager` stores binary decision graphs (leaves true and false) whose internal nodes
test one discrete variable with edges labelled by disjoint *sets of states*. Node ``0`` is false,
``1`` is true. Graphs are kept **weak test-once with feasible edge labels**: on every root-to-node
path, the edges of a node testing ``X`` partition exactly the states of ``X`` still feasible on
that path (the last ``X``-label above it, or the whole domain). This is what the closed forms of
the complete and general reasons (docs/design.md, section 2) need.

Nodes are hash-consed (one open-addressing unique table on ``(var, edges)``) and *reduced*: edges
leading to the same child are merged and a node with one edge is replaced by its child. Children
always have smaller ids than their parents, so increasing id order is a topological order. The
nodes are rows of flat arrays (:class:`DGManager`), written a whole graph at a time by compiled
code (:mod:`.dg_kernels`: a vote graph, a negation) or one node at a time by Python (Apply).

:meth:`DGManager.apply` is Algorithm 4: it conjoins or disjoins two graphs while carrying the path
``p`` (feasible states of every variable), intersecting edge labels with it, and caching on
``(D1, D2, p*, op)`` where ``p*`` is ``p`` restricted to the variables of ``D1`` and ``D2``. It runs
with an explicit stack (no Python recursion). When one side is a constant that does not absorb,
the other graph is *restricted* to ``p`` (line 6 of Algorithm 4) by the same loop.

Example
-------
>>> m = DGManager((3, 2))
>>> a = m.node(0, [(0b001, m.true), (0b110, m.false)])      # x0 = 0
>>> b = m.node(1, [(0b01, m.false), (0b10, m.true)])        # x1 = 1
>>> f = m.apply("or", a, b)
>>> [m.evaluate(f, (s0, s1)) for s0 in range(3) for s1 in range(2)]
[True, True, False, True, False, True]
"""

from __future__ import annotations

import gc
import logging
from array import array
from collections.abc import Iterable, Sequence

import numpy as np

from rfexplain.circuit.compilers import dg_kernels
from rfexplain.circuit.compilers.dg_kernels import node_hash
from rfexplain.core.bits import bits_of
from rfexplain.core.budget import poll, require
from rfexplain.core.errors import CompilationTooLargeError
from rfexplain.core.forest import Tree

__all__ = ["DGManager", "warm_up"]

log = logging.getLogger(__name__)

_INT16_MAX, _UINT16_MAX, _INT32_MAX = (1 << 15) - 1, (1 << 16) - 1, (1 << 31) - 1
#: Estimated bytes of one entry of the Python containers a store keeps beside its arrays (the
#: object, its share of the container's table and of the ints it holds): a node's edge tuple read
#: by Python (two edges), a distinct mask, an entry of the Apply caches (ordered, general), a
#: node of a kept reachable list, a node's variable set
_PY_EDGES, _PY_MASK, _PY_CACHE, _PY_APPLY, _PY_REACH, _PY_VARS = 340, 150, 200, 330, 40, 40
#: nodes made (or Apply frames run) in Python between two polls of the active budget
_POLL = 1024


def warm_up() -> None:
    """Load (or, on a fresh install, compile) the store's compiled loops now: a few nodes, their
    negation, reachability and a rehash of the unique table."""
    dg = DGManager((3, 2))
    a = dg.node(0, [(0b001, dg.true), (0b110, dg.false)])
    b = dg.node(1, [(0b01, a), (0b10, dg.true)])
    dg.negate(b)
    dg._rehash(2 * len(dg._table))


def _extend(store: array, raw: bytes) -> None:
    """Append ``raw`` to one of the store's arrays. A numpy view handed to a kernel is dropped
    before the arrays grow, but numba's first compilation of a kernel in a process keeps its
    arguments in a reference cycle until the next collection: collect once and retry."""
    try:
        store.frombytes(raw)
    except BufferError:
        gc.collect()
        store.frombytes(raw)


def _widened(store: array, typecode: str) -> array:
    """A copy of ``store`` with the wider item type ``typecode``."""
    wide = array(typecode)
    wide.frombytes(np.frombuffer(store, store.typecode).astype(typecode).data.cast("B"))
    return wide


def _cut(store: array, length: int) -> None:
    """Cut one of the store's arrays to ``length`` items (the same retry as :func:`_extend`)."""
    try:
        del store[length:]
    except BufferError:
        gc.collect()
        del store[length:]


class _Edges:
    """``dg.edges[n]``: node ``n``'s edges as a tuple of ``(state mask, child)`` pairs sorted by
    mask. Nodes made in Python keep the tuple they were made from; nodes written by compiled code
    are read from the store's arrays the first time Python asks for them, and the tuple is kept
    for the next walk (the closed forms walk the same formula for every instance)."""

    __slots__ = ("_dg",)

    def __init__(self, dg: DGManager) -> None:
        self._dg = dg

    def __getitem__(self, n: int) -> tuple[tuple[int, int], ...]:
        dg = self._dg
        e = dg._py.get(n)
        if e is None:
            if not 0 <= n < len(dg.var):
                raise IndexError(f"no node {n} in a store of {len(dg.var)} nodes")
            a, b = dg._first[n], dg._first[n + 1]
            e = tuple(sorted(zip(map(dg._masks.__getitem__, dg._mid[a:b]), dg._kid[a:b])))
            dg._py[n] = e
        return e


class DGManager:
    """Store, unique table and Apply cache for weak test-once decision graphs.

    The nodes live in flat arrays (issue 16's compact store): per node its variable and the offset
    of its first edge, per edge the id of its state mask in a table of distinct masks and its
    child; one open-addressing unique table over those rows (:mod:`.dg_kernels`). Compiled code
    writes whole graphs into it (:meth:`intern_graph`, :meth:`negate`). The arrays take the
    narrowest item types that hold them (int16 variables, int32 edge offsets and uint16 mask ids,
    widened when the store outgrows them): 6 bytes per edge; per node 6 bytes, 4 for the
    negation map and 8-16 for the unique table (kept a quarter to half full). ``var[n]`` reads a
    node's variable and ``edges[n]`` its edges (:class:`_Edges`).

    Parameters
    ----------
    n_states : sequence of int
        Number of states of every variable.
    """

    false = 0
    true = 1
    #: the largest edge count and mask id the narrow store types hold (tests lower them)
    _first_limit = _INT32_MAX
    _mid_limit = _UINT16_MAX

    def __init__(self, n_states: Sequence[int]) -> None:
        self.n_states = tuple(int(n) for n in n_states)
        self.full = tuple((1 << n) - 1 for n in self.n_states)
        # the arrays start with the narrowest item types; _first and _mid widen in place when
        # the edges or the distinct masks pass them (_room_for_edges, mask_id): on ann-thyroid's
        # Table 2 row, 119M nodes and 4.3 edges per node, that is 14 bytes a node less
        #: the variable of every node (-1 for the leaves)
        self.var = array("h" if len(self.n_states) <= _INT16_MAX else "i", [-1, -1])
        self._first = array("i", [0, 0, 0])  # node n's edges are first[n] .. first[n + 1] - 1
        self._mid = array("H")  # per edge: its mask's id in _masks
        self._kid = array("i")  # per edge: its child
        self._masks: list[int] = []
        self._mask_id: dict[int, int] = {}
        #: the edge tuple of every node Python made or read (:class:`_Edges`); a dictionary, not a
        #: list over all nodes, so the nodes compiled code writes cost nothing here
        self._py: dict[int, tuple[tuple[int, int], ...]] = {0: (), 1: ()}
        self.edges = _Edges(self)
        self._table = np.full(1 << 10, -1, np.int32)
        self._neg = array("i", [1, 0])  # negation of each node, -1 while unknown
        #: the bit set of the variables below each node, filled lazily (:meth:`_vars_masks`)
        self._vars_mask: list[int] = [0, 0]
        self._apply_cache: dict[tuple, int] = {}
        #: every graph tests variables in increasing index order (test-once): Apply then needs no
        #: path (every feasible set is the full domain) and caches on (op, D1, D2) alone
        self.ordered = False
        self._and_cache: dict[tuple[int, int], int] = {}
        #: position of each variable in the order of ordered graphs (default: index order)
        self.rank: list[int] = list(range(len(self.n_states)))
        self._or_cache: dict[tuple[int, int], int] = {}
        self._reachable: dict[tuple[int, ...], list[int]] = {}
        #: the size budget: creating node number ``max_nodes`` raises CompilationTooLargeError
        self.max_nodes: int | None = None
        #: Apply's steps so far, over all its calls (the budgets are polled every _POLL of them)
        self._steps = 0

    def __len__(self) -> int:
        return len(self.var)

    def clear_caches(self) -> None:
        """Drop the Apply caches (the unique table stays)."""
        self._apply_cache.clear()
        self._and_cache.clear()
        self._or_cache.clear()

    def store_bytes(self) -> int:
        """Bytes of the node store's arrays and unique table (not the edge tuples Python keeps)."""
        arrays = (self.var, self._first, self._mid, self._kid, self._neg)
        return sum(a.itemsize * len(a) for a in arrays) + self._table.nbytes

    def accounted_bytes(self) -> int:
        """The bytes the memory budget counts for this manager: the store's arrays and unique
        table exactly, its Python containers (edge tuples, masks, Apply caches, kept reachable
        lists, variable sets) by their entries times an estimate of an entry's bytes."""
        caches = len(self._and_cache) + len(self._or_cache)
        reach = sum(len(nodes) for nodes in self._reachable.values())
        return (
            self.store_bytes()
            + _PY_EDGES * len(self._py)
            + _PY_MASK * len(self._masks)
            + _PY_CACHE * caches
            + _PY_APPLY * len(self._apply_cache)
            + _PY_REACH * reach
            + _PY_VARS * len(self._vars_mask)
        )

    def growth_bytes(self, nodes: int, edges: int) -> int:
        """Bytes the store grows by for ``nodes`` more nodes and ``edges`` more edges (its
        arrays, the negation map, and the unique table's new copy where it must grow)."""
        n = len(self.var)
        size = len(self._table)
        while 2 * (n + nodes) > size:
            size *= 2
        table = 4 * size if size > len(self._table) else 0
        per_node = self.var.itemsize + self._first.itemsize + 4
        return nodes * per_node + edges * (self._mid.itemsize + self._kid.itemsize) + table

    def _check_memory(self, nodes: int, edges: int, doing: str, python: bool = False) -> None:
        """The active budget's time, and its memory with ``nodes`` and ``edges`` more
        (:func:`~rfexplain.core.budget.require`); with ``python``, also the Python entries of that
        many nodes made by Apply (an edge tuple, an Apply cache entry and a variable set each)."""
        poll(doing)
        more = self.growth_bytes(nodes, edges)
        if python:
            more += nodes * (_PY_EDGES + _PY_APPLY + _PY_VARS)
        require(None, self.accounted_bytes() + more, doing)

    # ------------------------------------------------------------------ nodes
    def node(self, var: int, edges: Iterable[tuple[int, int]]) -> int:
        """The reduced node testing ``var`` with edges ``(state mask, child)``.

        Edges with an empty mask are dropped, edges to the same child merged, and a node left
        with a single edge is its child.
        """
        by_child: dict[int, int] = {}
        for mask, child in edges:
            if mask:
                if child in by_child:
                    by_child[child] |= mask
                else:
                    by_child[child] = mask
        if not by_child:
            raise ValueError(f"a decision node on variable {var} needs at least one non-empty edge")
        if len(by_child) == 1:
            return next(iter(by_child))
        return self.canonical_node(var, tuple(sorted((m, c) for c, m in by_child.items())))

    def mask_id(self, mask: int) -> int:
        """The id of a state mask in the store's table of distinct masks (added when new)."""
        i = self._mask_id.get(mask)
        if i is None:
            i = self._mask_id[mask] = len(self._masks)
            self._masks.append(mask)
            if i > self._mid_limit and self._mid.typecode == "H":
                self._mid = _widened(self._mid, "i")
        return i

    def _room_for_edges(self, edges: int) -> None:
        """Widen the edge offsets before the store passes ``edges`` edges in all, if their
        narrow item type cannot count that far."""
        if edges > self._first_limit and self._first.typecode == "i":
            self._first = _widened(self._first, "q")

    def canonical_node(self, var: int, canon: tuple[tuple[int, int], ...]) -> int:
        """The node testing ``var`` with edges ``canon`` that are already canonical: at least two,
        non-empty masks, distinct children, sorted by mask (what :meth:`node` makes of any
        edges)."""
        mask_id = self._mask_id
        rows = []
        for m, c in canon:
            i = mask_id.get(m)
            rows.append((self.mask_id(m) if i is None else i, c))
        rows.sort()
        mids = [r[0] for r in rows]
        kids = [r[1] for r in rows]
        table = self._table
        tmask = len(table) - 1
        slot = node_hash(var, mids, kids) & tmask
        first, k = self._first, len(rows)
        while True:
            n = int(table[slot])
            if n < 0:
                break
            if self.var[n] == var:
                a = first[n]
                b = a + k
                if first[n + 1] == b and self._kid[a:b].tolist() == kids and self._mid[a:b].tolist() == mids:
                    return n
            slot = (slot + 1) & tmask
        n = len(self.var)
        if self.max_nodes is not None and n >= self.max_nodes:
            raise CompilationTooLargeError(
                f"the decision graphs reached the size budget of {self.max_nodes:,} nodes "
                "(max_nodes=); use a smaller forest, a larger max_nodes or the sat engine"
            )
        if n % _POLL == 2:  # the next _POLL nodes' growth, before any of it (2 is the first node)
            self._check_memory(_POLL, 4 * _POLL, f"decision graphs ({n:,} nodes)", python=True)
        self._room_for_edges(len(self._mid) + k)
        first = self._first
        self.var.append(var)
        self._mid.extend(mids)
        self._kid.extend(kids)
        first.append(len(self._mid))
        self._py[n] = canon
        table[slot] = n
        if 2 * (n + 1) > len(table):
            self._rehash(2 * len(table))
        return n

    def from_tree(self, tree: Tree, leaf_value: Sequence[int]) -> int:
        """A tree as a weak test-once decision graph with feasible edge labels.

        ``leaf_value[c]`` is the leaf (``true``/``false`` id) that class index ``c`` becomes.
        A tree node ``state <= split`` sends the feasible states ``<= split`` left and the others
        right; a side with no feasible state is dropped (the node disappears).
        """
        result: dict[tuple[int, tuple[int, ...]], int] = {}
        # iterative post-order over (tree node, feasible masks on the path)
        stack: list[tuple[int, tuple[int, ...], bool]] = [(0, self.full, False)]
        while stack:
            t, p, expanded = stack.pop()
            key = (t, p)
            if key in result and not expanded:
                continue
            f = tree.feature[t]
            if f < 0:
                result[key] = leaf_value[tree.label[t]]
                continue
            low = (1 << (tree.split[t] + 1)) - 1
            lmask, rmask = p[f] & low, p[f] & ~low
            lp = p[:f] + (lmask,) + p[f + 1 :]
            rp = p[:f] + (rmask,) + p[f + 1 :]
            children = []
            if lmask:
                children.append((lmask, tree.left[t], lp))
            if rmask:
                children.append((rmask, tree.right[t], rp))
            if not expanded:
                stack.append((t, p, True))
                for _, c, cp in children:
                    if (c, cp) not in result:
                        stack.append((c, cp, False))
                continue
            result[key] = self.node(f, [(m, result[(c, cp)]) for m, c, cp in children])
        return result[(0, self.full)]

    def from_tree_ordered(self, tree: Tree, leaf_value: Sequence[int]) -> int:
        """A tree as a decision graph that tests variables in increasing index order (an ordered
        multi-valued decision diagram), built with Apply from the tree's literals: node
        ``x <= t`` becomes ``(x <= t and left) or (x > t and right)``."""
        value: dict[int, int] = {}
        for t in range(tree.n_nodes - 1, -1, -1):  # children have larger indices than parents
            f = tree.feature[t]
            if f < 0:
                value[t] = leaf_value[tree.label[t]]
                continue
            low = (1 << (tree.split[t] + 1)) - 1
            lo_mask, hi_mask = self.full[f] & low, self.full[f] & ~low
            left = self.node(f, [(lo_mask, 1), (hi_mask, 0)])
            right = self.node(f, [(lo_mask, 0), (hi_mask, 1)])
            value[t] = self.disj(self.conj(left, value[tree.left[t]]), self.conj(right, value[tree.right[t]]))
        return value[0]

    # ------------------------------------------------------------------ bulk (compiled)
    def _views(self) -> tuple[np.ndarray, ...]:
        """numpy views of the store's arrays for the kernels (drop them before the arrays grow)."""
        return tuple(np.frombuffer(a, a.typecode) for a in (self.var, self._first, self._mid, self._kid))

    def _rehash(self, size: int) -> None:
        var, first, mid, kid = self._views()
        self._table = dg_kernels.rehash(var, first, mid, kid, len(self.var), size)

    def _reserve(self, nodes: int, edges: int) -> None:
        """Room for ``nodes`` more nodes and ``edges`` more edges (zeros after the ends, cut by
        :meth:`_trim`), the unique table at most half full with them."""
        n = len(self.var)
        size = len(self._table)
        while 2 * (n + nodes) > size:
            size *= 2
        if size > len(self._table):
            self._rehash(size)
        self._room_for_edges(len(self._mid) + edges)
        for store, items in ((self.var, nodes), (self._first, nodes), (self._mid, edges), (self._kid, edges)):
            _extend(store, bytes(store.itemsize * items))

    def _trim(self, counts: np.ndarray) -> None:
        """Cut the reserved arrays to the ``counts`` (nodes, edges) the kernel left."""
        n, e = int(counts[0]), int(counts[1])
        _cut(self.var, n)
        _cut(self._first, n + 1)
        _cut(self._mid, e)
        _cut(self._kid, e)

    def intern_graph(
        self,
        var: np.ndarray,
        first: np.ndarray,
        count: np.ndarray,
        mask: np.ndarray,
        child: np.ndarray,
        leaves: tuple[int, int],
    ) -> np.ndarray:
        """Write a canonical ordered graph given as arrays into the store: nodes ``2..`` children
        first (``var``; edges ``first[x] .. first[x] + count[x]`` with mask ids ``mask`` and
        children ``child`` as the graph's own ids, ``0``/``1`` standing for ``leaves``).
        Returns the store id of every node of the graph."""
        n_new = len(var) - 2
        if self.max_nodes is not None and len(self.var) + n_new > self.max_nodes:
            raise CompilationTooLargeError(
                f"the decision graphs would pass the size budget of {self.max_nodes:,} nodes "
                "(max_nodes=); use a smaller forest, a larger max_nodes or the sat engine"
            )
        require(None, self.accounted_bytes() + self.growth_bytes(n_new, len(mask)), f"a graph of {n_new:,} nodes")
        counts = np.array([len(self.var), len(self._mid)], np.int64)
        ids = np.empty(len(var), np.int64)
        ids[:2] = leaves
        self._reserve(n_new, len(mask))
        views = self._views()
        failed = dg_kernels.intern_graph(*views, self._table, counts, var, first, count, mask, child, ids)
        del views
        self._trim(counts)
        if failed:
            raise ValueError(f"node {-1 - failed} of the graph written into the store is not reduced")
        return ids

    # ------------------------------------------------------------------ traversal
    def reachable(self, roots: Iterable[int]) -> list[int]:
        """Nodes reachable from ``roots`` in increasing (children-first) order.

        The last few answers are kept (nodes never change, so neither do they): the closed forms
        walk the same class formula for every instance."""
        roots = tuple(roots)
        hit = self._reachable.get(roots)
        if hit is not None:
            return hit
        out = self._reach(roots).tolist()
        self._reachable[roots] = out
        while len(self._reachable) > 8:
            del self._reachable[next(iter(self._reachable))]
        return out

    def _reach(self, roots: Iterable[int] | int) -> np.ndarray:
        _, first, _, kid = self._views()
        return dg_kernels.reachable(
            first, kid, np.asarray([roots] if isinstance(roots, int) else list(roots), np.int64)
        )

    def reachable_moving(self, roots: Iterable[int], states: Sequence[int], moving: int) -> list[int]:
        """Nodes reachable from ``roots`` (children first) when only the features in the bit
        mask ``moving`` may leave the instance ``states``: a node on another feature is left
        only by the edge holding its instance state."""
        bits = [1 << int(s) for s in states]
        edges, var = self.edges, self.var
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            if n > 1:
                x = var[n]
                if moving >> x & 1:
                    stack.extend(c for _, c in edges[n] if c not in seen)
                else:
                    bit = bits[x]
                    for s, c in edges[n]:
                        if s & bit:
                            stack.append(c)
                            break
        return sorted(seen)

    def size(self, roots: Iterable[int] | int) -> int:
        """Number of nodes (leaves included) reachable from ``roots``, counted by compiled code
        without keeping their list (which :meth:`reachable` keeps: 40 bytes a node)."""
        return len(self._reach(roots))

    def n_edges(self, roots: Iterable[int] | int) -> int:
        """Number of edges of the nodes reachable from ``roots``."""
        nodes = self._reach(roots)
        first = np.frombuffer(self._first, self._first.typecode)
        return int((first[nodes + 1] - first[nodes]).sum())

    def evaluate(self, root: int, states: Sequence[int]) -> bool:
        """Follow the edges matching ``states`` from ``root`` to a leaf."""
        n = root
        while n > 1:
            s = 1 << int(states[self.var[n]])
            for mask, child in self.edges[n]:
                if mask & s:
                    n = child
                    break
            else:
                raise ValueError(f"state vector {tuple(states)} falls off decision node {n}")
        return n == 1

    def negate(self, root: int) -> int:
        """The graph with true and false leaves swapped (same tests), by compiled code
        (:func:`~.dg_kernels.negate_graph`).

        Negation maps distinct nodes to distinct nodes and keeps every edge label, so each
        negated node is already reduced and needs only the unique table."""
        if root <= 1:
            return 1 - root
        neg = self._neg
        if len(neg) < len(self.var):
            _extend(neg, b"\xff" * (4 * (len(self.var) - len(neg))))
        if neg[root] >= 0:
            return neg[root]
        nodes = self._reach((root,))
        negs = np.frombuffer(neg, np.int32)
        nodes = nodes[negs[nodes] < 0]  # the nodes not negated yet
        first = np.frombuffer(self._first, self._first.typecode)
        n_edges = int((first[nodes + 1] - first[nodes]).sum())
        del first, negs
        if self.max_nodes is not None and len(self.var) + len(nodes) > self.max_nodes:
            raise CompilationTooLargeError(
                f"negating a graph of {len(nodes):,} nodes would pass the size budget of {self.max_nodes:,} "
                "nodes (max_nodes=); use a smaller forest, a larger max_nodes or the sat engine"
            )
        self._check_memory(len(nodes), n_edges, f"negating a graph of {len(nodes):,} nodes")
        counts = np.array([len(self.var), len(self._mid)], np.int64)
        self._reserve(len(nodes), n_edges)
        _extend(neg, b"\xff" * (4 * len(nodes)))
        views = self._views()
        negs = np.frombuffer(neg, np.int32)
        dg_kernels.negate_graph(*views, self._table, counts, negs, nodes)
        del views, negs
        self._trim(counts)
        _cut(neg, len(self.var))
        return neg[root]

    # ------------------------------------------------------------------ Algorithm 4
    def apply(self, op: str, a: int, b: int) -> int:
        """Algorithm 4, ``Apply(D1, D2, p, op)`` from the full path: ``a and b`` or ``a or b``."""
        if op not in ("and", "or"):
            raise ValueError(f"op must be one of ['and', 'or']. Got {op!r} instead.")
        return self.conj(a, b) if op == "and" else self.disj(a, b)

    def conj(self, a: int, b: int) -> int:
        return self._ordered(True, a, b) if self.ordered else self._apply(True, a, b, self.full)

    def disj(self, a: int, b: int) -> int:
        return self._ordered(False, a, b) if self.ordered else self._apply(False, a, b, self.full)

    def _ordered(self, is_and: bool, a: int, b: int) -> int:
        """Constants, equal operands and cache hits answered before Algorithm 4's machinery
        (the closed forms make millions of such calls)."""
        absorbing, neutral = (0, 1) if is_and else (1, 0)
        if a == b or b == neutral:
            return a
        if a == neutral:
            return b
        if a == absorbing or b == absorbing:
            return absorbing
        hit = (self._and_cache if is_and else self._or_cache).get((a, b) if a < b else (b, a))
        return self._apply_ordered(is_and, a, b) if hit is None else hit

    # comparator operations for the sorting networks
    and_ = conj
    or_ = disj

    def _apply_ordered(self, is_and: bool, a: int, b: int) -> int:
        """Algorithm 4 on ordered graphs: the root with the smaller variable is expanded, so the
        path never restricts a variable still tested below and ``p*`` is always the full domain."""
        var, edges = self.var, self.edges
        cache = self._and_cache if is_and else self._or_cache
        node = self.node
        rank = self.rank

        absorbing, neutral = (0, 1) if is_and else (1, 0)

        def start(a: int, b: int):
            if a == absorbing or b == absorbing:
                return absorbing
            if a == neutral or a == b:
                return b
            if b == neutral:
                return a
            if a > b:
                a, b = b, a
            hit = cache.get((a, b))
            if hit is not None:
                return hit
            va, vb = var[a], var[b]
            if va == vb:
                tasks = [(s1 & s2, c1, c2) for s1, c1 in edges[a] for s2, c2 in edges[b] if s1 & s2]
            elif rank[va] < rank[vb]:
                tasks = [(s1, c1, b) for s1, c1 in edges[a]]
            else:
                va = vb
                tasks = [(s2, a, c2) for s2, c2 in edges[b]]
            return [(a, b), va, tasks, 0, []]

        first = start(a, b)
        if isinstance(first, int):
            return first
        stack = [first]
        while True:
            if self._steps % _POLL == 0:  # at most a node and a cache entry per step until the next poll
                self._check_memory(_POLL, 4 * _POLL, "applying on decision graphs", python=True)
            self._steps += 1
            frame = stack[-1]
            tasks = frame[2]
            i = frame[3]
            if i < len(tasks):
                s, c1, c2 = tasks[i]
                sub = start(c1, c2)
                if isinstance(sub, int):
                    frame[4].append((s, sub))
                    frame[3] = i + 1
                else:
                    stack.append(sub)
                continue
            result = node(frame[1], frame[4])
            cache[frame[0]] = result
            stack.pop()
            if not stack:
                return result
            parent = stack[-1]
            parent[4].append((parent[2][parent[3]][0], result))
            parent[3] += 1

    def restrict(self, a: int, p: Sequence[int]) -> int:
        """``a`` with every edge label intersected with the path ``p`` (line 6 of Algorithm 4)."""
        return self._apply(True, a, 1, tuple(p))

    def _terminal(self, is_and: bool, a: int, b: int) -> tuple[int, int] | int:
        """Constant cases of Algorithm 4: a finished node id, or the pair to recurse on
        (``b == -1`` means: restrict ``a`` to the path)."""
        if a <= 1 or b <= 1:
            if is_and:
                if a == 0 or b == 0:
                    return 0
                if a == 1:
                    return 1 if b == 1 else (b, -1)
                return (a, -1)
            if a == 1 or b == 1:
                return 1
            if a == 0:
                return 0 if b == 0 else (b, -1)
            return (a, -1)
        if a > b:
            a, b = b, a
        return (a, b)

    def _vars_masks(self) -> list[int]:
        """The bit set of the variables each node's graph tests, extended to every node made so
        far (children first: a child's id is smaller). Only Algorithm 4 on unordered graphs (and
        :meth:`restrict`) reads it, so compiles into ordered graphs never pay for it (a Python int
        per node)."""
        masks, var, first, kid = self._vars_mask, self.var, self._first, self._kid
        for n in range(len(masks), len(var)):
            vm = 1 << var[n]
            for c in kid[first[n] : first[n + 1]]:
                vm |= masks[c]
            masks.append(vm)
        return masks

    def _apply(self, is_and: bool, a: int, b: int, p: tuple[int, ...]) -> int:
        # operands are always nodes made before this call (children of existing nodes), so the
        # masks extended here cover every node start() looks up
        var, edges, vars_mask, full = self.var, self.edges, self._vars_masks(), self.full
        cache = self._apply_cache
        node = self.node

        def start(a: int, b: int, p: tuple[int, ...]):
            """A finished id, or a new frame for the call (a, b, p)."""
            if b == -1:
                if a <= 1:
                    return a
            else:
                t = self._terminal(is_and, a, b)
                if isinstance(t, int):
                    return t
                a, b = t
            vm = vars_mask[a] if b < 0 else vars_mask[a] | vars_mask[b]
            pstar = tuple([p[i] for i in bits_of(vm)])
            if b < 0 and pstar == tuple([full[i] for i in bits_of(vm)]):
                return a  # nothing to restrict
            key = (None if b < 0 else is_and, a, b, pstar)
            hit = cache.get(key)
            if hit is not None:
                return hit
            if b >= 0 and var[b] < var[a]:
                a, b = b, a  # expand on the lower-indexed variable first
            v = var[a]
            pv = p[v]
            tasks = []
            if b >= 0 and var[b] == v:
                for s1, c1 in edges[a]:
                    s1 &= pv
                    if not s1:
                        continue
                    for s2, c2 in edges[b]:
                        s = s1 & s2
                        if s:
                            tasks.append((s, c1, c2))
            else:
                for s1, c1 in edges[a]:
                    s = s1 & pv
                    if s:
                        tasks.append((s, c1, b))
            # frame: [key, var, tasks, next task index, results, path]
            return [key, v, tasks, 0, [], p]

        first = start(a, b, p)
        if isinstance(first, int):
            return first
        stack = [first]
        while True:
            if self._steps % _POLL == 0:  # at most a node and a cache entry per step until the next poll
                self._check_memory(_POLL, 4 * _POLL, "applying on decision graphs", python=True)
            self._steps += 1
            frame = stack[-1]
            key, v, tasks, i, results, fp = frame
            if i < len(tasks):
                s, c1, c2 = tasks[i]
                p2 = fp[:v] + (s,) + fp[v + 1 :]
                sub = start(c1, c2, p2)
                if isinstance(sub, int):
                    results.append((s, sub))
                    frame[3] = i + 1
                else:
                    stack.append(sub)
                continue
            result = node(v, results)
            cache[key] = result
            stack.pop()
            if not stack:
                return result
            parent = stack[-1]
            parent[4].append((parent[2][parent[3]][0], result))
            parent[3] += 1
