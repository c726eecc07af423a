"""Vote thresholds compiled straight into ordered decision graphs (a product construction).

Ji and Darwiche (2026), Algorithm 3B [JD26], obtains the graph of a vote threshold such as
``N_i >= N_j`` by running a sorting network whose every comparator is an Apply (Algorithm 4).
When every graph tests the variables in one fixed order (what :class:`~.classformula.ClassFormulas`
does by default), the reduced graph of a Boolean function is *canonical*: whatever builds it,
the hash-consed :class:`~.dgraph.DGManager` returns the same node. This module builds that same
node without the network, by walking the forest once, top-down in the variable order:

- a *residual* of a tree is the tree restricted by the states read so far (a hash-consed
  decision tree whose leaves carry the tree's weight: ``+1`` for a vote for ``i``, ``-1`` for a
  vote for ``j``, ``0`` otherwise);
- a graph node is a pair (sorted tuple of the residuals still undecided, votes still needed);
  it is true as soon as the smallest reachable sum meets the need and false as soon as the
  largest cannot;
- otherwise it tests the first variable in the order that any residual tests, with one edge per
  interval between the thresholds the residuals use on it, and every residual restricted to the
  interval.

Pairs are memoised, the graph is built children first through :meth:`DGManager.node` (so it is
reduced and shared with every other graph of the manager), and the walk uses an explicit stack.
The result equals Algorithm 3B's node for node (a test builds both and compares the ids); it is
only faster, because it never materialises the network's intermediate graphs.

Example
-------
>>> from rfexplain.core.forest import Forest
>>> def stump(t):  # x0 <= t votes class 0, else class 1
...     return {"feature": [0, -1, -1], "threshold": [t, 0, 0], "left": [1, -1, -1],
...             "right": [2, -1, -1], "label": [0, 0, 1]}
>>> forest = Forest.from_raw_trees([stump(1.0), stump(2.0), stump(3.0)], n_features=1, classes=[0, 1])
>>> dg = DGManager(forest.states_per_feature)
>>> root = VoteCounter(forest, dg).at_least({0: 1}, 2)        # at least 2 votes for class 0
>>> [dg.evaluate(root, (s,)) for s in range(4)]               # x0 <= 2.0
[True, True, False, False]
"""

from __future__ import annotations

from collections.abc import Mapping

from rfexplain.circuit.compilers.dgraph import DGManager
from rfexplain.core.budget import Budget, require
from rfexplain.core.forest import Forest

__all__ = ["VoteCounter"]

_LEAF = -1
_UNBOUNDED = 1 << 60
#: Estimated bytes of one entry of the counter's Python containers (the object, its share of the
#: container's table and the ints it holds): a residual (its key, unique-table entry and four
#: list items), a restriction, a sweep, a split list, a product memo entry of :meth:`threshold`
_PY_RESIDUAL, _PY_RESTRICTED, _PY_SWEEP, _PY_SPLITS, _PY_MEMO = 300, 170, 250, 150, 250


class VoteCounter:
    """Builds ``[sum over trees of weight(vote) >= need]`` as an ordered graph in ``dg``.

    ``dg.rank`` gives the variable order; every graph it returns tests variables in that order,
    each at most once on a path, with edge labels partitioning the variable's whole domain.
    """

    def __init__(self, forest: Forest, dg: DGManager) -> None:
        self.forest = forest
        self.dg = dg
        # hash-consed weighted decision trees: node -> (var, split, low child, high child),
        # a leaf is (_LEAF, weight, 0, 0)
        self._key: list[tuple[int, int, int, int]] = []
        self._unique: dict[tuple[int, int, int, int], int] = {}
        self._min: list[int] = []
        self._max: list[int] = []
        self._splits: dict[tuple[int, int], tuple[int, ...]] = {}
        #: bit mask of the variables tested in the node's subtree
        self._vars: list[int] = []
        self._restricted: dict[tuple[int, int, int], int] = {}
        self._sweeps: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}
        #: the smallest rank of a variable tested in the node's subtree (len(rank) for a leaf),
        #: and the variable of every rank
        self._first_rank: list[int] = []
        self._by_rank = [0] * len(dg.rank)
        for v, r in enumerate(dg.rank):
            self._by_rank[r] = v

    def accounted_bytes(self) -> int:
        """The bytes the memory budget counts for the counter's residual trees: its containers'
        entries times an estimate of an entry's bytes."""
        return (
            _PY_RESIDUAL * len(self._key)
            + _PY_RESTRICTED * len(self._restricted)
            + _PY_SWEEP * len(self._sweeps)
            + _PY_SPLITS * len(self._splits)
        )

    # ------------------------------------------------------------------ weighted trees
    def _node(self, var: int, split: int, low: int, high: int) -> int:
        if var != _LEAF and low == high:
            return low
        key = (var, split, low, high)
        n = self._unique.get(key)
        if n is None:
            n = len(self._key)
            self._key.append(key)
            self._unique[key] = n
            if var == _LEAF:
                self._min.append(split)
                self._max.append(split)
                self._vars.append(0)
                self._first_rank.append(len(self.dg.rank))
            else:
                self._min.append(min(self._min[low], self._min[high]))
                self._max.append(max(self._max[low], self._max[high]))
                self._vars.append(self._vars[low] | self._vars[high] | 1 << var)
                self._first_rank.append(min(self.dg.rank[var], self._first_rank[low], self._first_rank[high]))
        return n

    def weighted_tree(self, tree_index: int, weights: Mapping[int, int]) -> int:
        """Tree ``tree_index`` with each leaf replaced by ``weights.get(class, 0)``."""
        tree = self.forest.trees[tree_index]
        value: dict[int, int] = {}
        for t in range(tree.n_nodes - 1, -1, -1):  # children have larger indices than parents
            if tree.feature[t] < 0:
                w = weights.get(tree.label[t], 0)
                value[t] = self._node(_LEAF, w, 0, 0)
            else:
                value[t] = self._node(tree.feature[t], tree.split[t], value[tree.left[t]], value[tree.right[t]])
        return value[0]

    def _splits_of(self, n: int, var: int) -> tuple[int, ...]:
        """The sorted splits on ``var`` anywhere below ``n``."""
        hit = self._splits.get((n, var))
        if hit is not None:
            return hit
        found: set[int] = set()
        stack = [n]
        key, tested = self._key, self._vars
        while stack:
            m = stack.pop()
            if tested[m] >> var & 1:  # leaves and subtrees without var are skipped
                v, s, lo, hi = key[m]
                if v == var:
                    found.add(s)
                stack += (lo, hi)
        out = tuple(sorted(found))
        self._splits[(n, var)] = out
        return out

    def _restrict(self, n: int, var: int, low: int) -> int:
        """``n`` with every test on ``var`` decided for an interval of states starting at ``low``
        that no split on ``var`` below ``n`` cuts."""
        memo = self._restricted
        hit = memo.get((n, var, low))
        if hit is not None:
            return hit
        key = self._key
        # iterative post-order: the tree may be deep
        stack = [(n, False)]
        while stack:
            m, done = stack.pop()
            if (m, var, low) in memo:
                continue
            v, s, lo, hi = key[m]
            if not self._vars[m] >> var & 1:
                memo[(m, var, low)] = m
                continue
            if v == var:
                child = lo if low <= s else hi
                r = memo.get((child, var, low))
                if r is None:
                    stack.append((m, False))
                    stack.append((child, False))
                else:
                    memo[(m, var, low)] = r
                continue
            if not done:
                stack.append((m, True))
                stack.append((lo, False))
                stack.append((hi, False))
                continue
            memo[(m, var, low)] = self._node(v, s, memo[(lo, var, low)], memo[(hi, var, low)])
        return memo[(n, var, low)]

    # ------------------------------------------------------------------ the product
    def at_least(self, weights: Mapping[int, int], need: int, budget: Budget | None = None) -> int:
        """The graph of ``sum_t weights[vote of tree t] >= need`` (missing classes weigh 0).

        Raises :class:`~rfexplain.core.budget.BudgetExpired` when ``budget`` expires first."""
        roots = [self.weighted_tree(t, weights) for t in range(self.forest.n_trees)]
        return self.threshold(roots, need, budget)

    def threshold(self, residuals: list[int], need: int, budget: Budget | None = None) -> int:
        """The graph of ``sum of the weighted trees residuals >= need``.

        Memo entries carry the whole interval of needs for which the residuals give the same
        graph (the interval technique of Abio et al., "BDDs for pseudo-Boolean constraints --
        revisited", SAT 2011): a leaf is true for every need up to the smallest sum and false
        for every need above the largest, and a node keeps the intersection of its children's
        intervals, shifted by the votes each edge decided.
        """
        dg = self.dg
        key_of, mins, maxs = self._key, self._min, self._max
        #: residuals -> [(lowest need, highest need, graph node)]
        memo: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
        open_ = []
        for r in residuals:
            if key_of[r][0] == _LEAF:
                need -= key_of[r][1]
            else:
                open_.append(r)
        lo, hi = sum(mins[r] for r in open_), sum(maxs[r] for r in open_)
        if lo >= need:
            return dg.true
        if hi < need:
            return dg.false
        make, expand = dg.node, self._frame
        true, false = dg.true, dg.false
        stack = [expand(tuple(sorted(open_)), need)]
        frames = 1
        while True:
            # frame: [residuals, need, var, children, done edges, lowest need, highest need]
            frame = stack[-1]
            children, done = frame[3], frame[4]
            while len(done) < len(children):
                mask, res, child_need, lo, hi = children[len(done)]
                if lo >= child_need:
                    done.append((mask, true))
                    lo += frame[1] - child_need
                    if lo < frame[6]:
                        frame[6] = lo
                    continue
                if hi < child_need:
                    done.append((mask, false))
                    hi += 1 + frame[1] - child_need
                    if hi > frame[5]:
                        frame[5] = hi
                    continue
                for low, high, node in memo.get(res, ()):
                    if low <= child_need <= high:
                        done.append((mask, node))
                        shift = frame[1] - child_need
                        if low + shift > frame[5]:
                            frame[5] = low + shift
                        if high + shift < frame[6]:
                            frame[6] = high + shift
                        break
                else:
                    break
            else:
                result = make(frame[2], done)
                memo.setdefault(frame[0], []).append((frame[5], frame[6], result))
                stack.pop()
                if not stack:
                    return result
                parent = stack[-1]
                shift = parent[1] - frame[1]
                parent[4].append((parent[3][len(parent[4])][0], result))
                if frame[5] + shift > parent[5]:
                    parent[5] = frame[5] + shift
                if frame[6] + shift < parent[6]:
                    parent[6] = frame[6] + shift
                continue
            stack.append(expand(res, child_need))
            frames += 1
            if frames % 1024 == 0:
                doing = f"a vote graph ({frames} product nodes expanded)"
                held = self.accounted_bytes() + dg.accounted_bytes() + _PY_MEMO * len(memo)
                if budget is not None:
                    budget.check(doing)
                require(budget, held, doing)

    def _segments(self, n: int, var: int) -> tuple[tuple[int, int], ...]:
        """``n`` restricted to each interval of ``var`` between its splits below ``n``: pairs
        ``(last state of the interval, restricted node)``; empty when ``n`` does not test ``var``."""
        hit = self._sweeps.get((n, var))
        if hit is None:
            cuts = self._splits_of(n, var)
            if not cuts:
                hit = ()
            else:
                ends = list(cuts) + [self.dg.n_states[var] - 1]
                starts = [0] + [c + 1 for c in cuts]
                hit = tuple((e, self._restrict(n, var, b)) for b, e in zip(starts, ends))
            self._sweeps[(n, var)] = hit
        return hit

    def _frame(self, res: tuple[int, ...], need: int) -> list:
        """Expand the product node ``(res, need)``: its variable and, per interval of that
        variable, the edge mask, the child's residuals and need, and the child's bounds.

        Only the residuals that test the variable change, and each only at its own splits, so
        the intervals are swept once, updating the children incrementally.
        """
        key_of, mins, maxs = self._key, self._min, self._max
        var = self._by_rank[min(map(self._first_rank.__getitem__, res))]
        segments, sweeps, tested = self._segments, self._sweeps, self._vars
        passive: list[int] = []
        cur: dict[int, int] = {}  # slot -> current non-leaf restriction of an active residual
        events: dict[int, list[tuple[int, int, int]]] = {}  # last state -> (slot, new, old restriction)
        lo = hi = leaf = 0
        for slot, r in enumerate(res):
            if not tested[r] >> var & 1:
                passive.append(r)
                lo += mins[r]
                hi += maxs[r]
                continue
            segs = sweeps.get((r, var)) or segments(r, var)
            first = segs[0][1]
            if key_of[first][0] == _LEAF:
                leaf += key_of[first][1]
            else:
                cur[slot] = first
                lo += mins[first]
                hi += maxs[first]
            for k in range(len(segs) - 1):
                events.setdefault(segs[k][0], []).append((slot, segs[k + 1][1], segs[k][1]))
        children = []
        low = 0
        for s in sorted(events) + [self.dg.n_states[var] - 1]:
            mask = (1 << (s + 1)) - (1 << low)
            child_need = need - leaf
            decided = lo >= child_need or hi < child_need  # a leaf: no residuals needed
            children.append((mask, () if decided else tuple(sorted(passive + list(cur.values()))), child_need, lo, hi))
            for slot, new, old in events.get(s, ()):
                if key_of[old][0] == _LEAF:
                    leaf -= key_of[old][1]
                else:
                    lo -= mins[old]
                    hi -= maxs[old]
                if key_of[new][0] == _LEAF:
                    leaf += key_of[new][1]
                    cur.pop(slot, None)
                else:
                    cur[slot] = new
                    lo += mins[new]
                    hi += maxs[new]
            low = s + 1
        return [res, need, var, children, [], -_UNBOUNDED, _UNBOUNDED]
