"""Complete reasons in canonical form: reduced ordered BDDs (Bryant, 1986 [Bry86]) over "the
feature keeps its state".

The complete reason of a decision (Darwiche and Ji (2022), Proposition 7, Equation 1 [DJ22]) only
mentions the instance's own states, so it is a *monotone Boolean function* of one variable per feature: "this
feature keeps the instance's state". Equation 1 writes it as an NNF circuit with one node per node
of the decision graph, and structural hash-consing merges few of them: on the shuttle forest
(50 trees) the circuit has ~30,000 nodes over 9 variables, although a function of 9 variables has
at most 512 subfunctions. Every pass that enumerates reasons then pays for those nodes.

:class:`KeptBDD` computes the same function as a reduced ordered BDD (in the decision graph's
variable order), where each distinct subfunction is one node, by running Equation 1 with BDD
operations. :meth:`KeptBDD.to_nnf` writes it back as an NNF by the monotone expansion

    f = f_kept and (x or f_changed)        (f_changed implies f_kept, since f is monotone)

which is monotone and or-decomposable (``f_changed`` does not mention ``x``), as the reason
enumerations of :mod:`.implicants` require, and whose size is linear in the BDD's.

A :class:`~rfexplain.circuit.compilers.dgraph.DGManager` with two-state variables would hold the same
graphs; this binary specialisation (nodes as ``(var, low, high)``, no edge merging or sorting)
exists because the complete reason is rebuilt for every explained instance, where the general
manager is slower.

Example
-------
>>> b = KeptBDD([0, 1, 2])
>>> f = b.conj(b.or_var(b.var_node(2), 0), b.var_node(1))    # (x0 or x2) and x1
>>> [b.evaluate(f, kept) for kept in (0b010, 0b011, 0b110, 0b101)]
[False, True, True, False]
"""

from __future__ import annotations

from collections.abc import Sequence

from rfexplain.circuit.compilers.nnf import NNFManager

__all__ = ["KeptBDD"]

FALSE, TRUE = 0, 1


class KeptBDD:
    """Reduced ordered BDDs over one Boolean variable per feature (``1`` = keeps its state).

    ``rank[x]`` is the position of feature ``x`` in the order; node ``0`` is false, ``1`` true,
    and a node's children have smaller ids than the node.
    """

    def __init__(self, rank: Sequence[int]) -> None:
        self.rank = list(rank)
        self.top: list[int] = [len(self.rank), len(self.rank)]  # rank of the node's variable
        self.var: list[int] = [-1, -1]
        self.low: list[int] = [FALSE, TRUE]
        self.high: list[int] = [FALSE, TRUE]
        self._unique: dict[tuple[int, int, int], int] = {}
        self._cache: dict[tuple[bool, int, int], int] = {}

    def __len__(self) -> int:
        return len(self.var)

    def node(self, x: int, low: int, high: int) -> int:
        """The node ``x ? high : low`` (reduced: equal children give the child)."""
        if low == high:
            return low
        key = (x, low, high)
        n = self._unique.get(key)
        if n is None:
            n = len(self.var)
            self.top.append(self.rank[x])
            self.var.append(x)
            self.low.append(low)
            self.high.append(high)
            self._unique[key] = n
        return n

    def var_node(self, x: int) -> int:
        return self.node(x, FALSE, TRUE)

    def or_var(self, a: int, x: int) -> int:
        """``a or x``; a single node when ``x`` comes before every variable of ``a``."""
        if self.rank[x] < self.top[a]:
            return self.node(x, a, TRUE)
        return self._apply(False, a, self.var_node(x))

    def conj(self, a: int, b: int) -> int:
        if a == b or b == TRUE:
            return a
        if a == TRUE:
            return b
        if a == FALSE or b == FALSE:
            return FALSE
        hit = self._cache.get((True, a, b) if a < b else (True, b, a))
        return self._apply(True, a, b) if hit is None else hit

    def _apply(self, is_and: bool, a: int, b: int) -> int:
        """``a and b`` or ``a or b`` with a memo, by an explicit stack."""
        top, var, low, high, cache = self.top, self.var, self.low, self.high, self._cache

        def start(a: int, b: int) -> int | list:
            if a == b:
                return a
            if a <= TRUE or b <= TRUE:
                if is_and:
                    return FALSE if FALSE in (a, b) else (b if a == TRUE else a)
                return TRUE if TRUE in (a, b) else (b if a == FALSE else a)
            if a > b:
                a, b = b, a
            hit = cache.get((is_and, a, b))
            if hit is not None:
                return hit
            ta, tb = top[a], top[b]
            if ta == tb:
                return [(a, b), var[a], (low[a], low[b]), (high[a], high[b]), None]
            if ta < tb:
                return [(a, b), var[a], (low[a], b), (high[a], b), None]
            return [(a, b), var[b], (a, low[b]), (a, high[b]), None]

        first = start(a, b)
        if isinstance(first, int):
            return first
        # frame: [key, variable, low pair, high pair, low result]
        stack = [first]
        while True:
            frame = stack[-1]
            pair = frame[2] if frame[4] is None else frame[3]
            sub = start(*pair)
            if not isinstance(sub, int):
                stack.append(sub)
                continue
            while True:  # sub finished: give it to its parent frame
                frame = stack[-1]
                if frame[4] is None:
                    frame[4] = sub
                    break
                result = self.node(frame[1], frame[4], sub)
                cache[(is_and, frame[0][0], frame[0][1])] = result
                stack.pop()
                if not stack:
                    return result
                sub = result

    def evaluate(self, root: int, kept: int) -> bool:
        """The function's value when the features in the bit mask ``kept`` keep their state."""
        n = root
        while n > TRUE:
            n = self.high[n] if kept >> self.var[n] & 1 else self.low[n]
        return n == TRUE

    def to_nnf(self, root: int, nnf: NNFManager, states: Sequence[int]) -> int:
        """The function as a monotone, or-decomposable NNF over the literals ``x = states[x]``."""
        memo = {FALSE: nnf.false, TRUE: nnf.true}
        seen = {root}
        stack = [root]
        while stack:  # the nodes below root, then built children first (smaller ids)
            n = stack.pop()
            if n > TRUE:
                for c in (self.low[n], self.high[n]):
                    if c not in seen:
                        seen.add(c)
                        stack.append(c)
        for n in sorted(seen):
            if n > TRUE:
                x = self.var[n]
                memo[n] = nnf.conj_all((memo[self.high[n]], nnf.or2(nnf.state(x, int(states[x])), memo[self.low[n]])))
        return memo[root]
