"""Odd-even sorting networks (Ji and Darwiche (2026), Algorithms 1 and 2 [JD26];
Batcher, 1968 [Bat68]).

The network is written once, over abstract comparator operations: any object with ``or_(a, b)``
(the maximum) and ``and_(a, b)`` (the minimum) can run it. Booleans sort bits, an
:class:`~rfexplain.circuit.compilers.nnf.NNFManager` builds NNF circuits, and a decision-graph manager
runs Algorithm 4 (``Apply``) at every comparator. Outputs are sorted in *decreasing* order: output
``k`` (1-based) is true iff at least ``k`` inputs are.

Because only one output of a network is ever needed (the ``k``-th, for a vote threshold), and
Apply is far from constant time, :func:`threshold` first runs the network on symbolic wires to
record its comparators, then evaluates only the cone of gates the wanted output depends on,
with constant inputs (the padding) simplified away.

Example
-------
>>> class Bits:
...     def or_(self, a, b): return a or b
...     def and_(self, a, b): return a and b
>>> sortnet([False, True, False, True], Bits())
[True, True, False, False]
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol, TypeVar

__all__ = ["ComparatorOps", "sortnet", "merge", "threshold", "next_power_of_two"]

T = TypeVar("T")


class ComparatorOps(Protocol):
    """Maximum (``or_``) and minimum (``and_``) of two values."""

    def or_(self, a: Any, b: Any) -> Any: ...
    def and_(self, a: Any, b: Any) -> Any: ...


def next_power_of_two(n: int) -> int:
    m = 1
    while m < n:
        m *= 2
    return m


def sortnet(x: Sequence[T], ops: ComparatorOps) -> list[T]:
    """Algorithm 1: sort ``x`` (length a power of two) in decreasing order.

    The recursion depth is ``log2(len(x))``, so it is safe for any practical input count.
    """
    n = len(x)
    if n & (n - 1):
        raise ValueError(f"sortnet needs a power of two inputs, got {n}")
    if n == 1:
        return list(x)
    m = n // 2
    a = sortnet(x[:m], ops)
    b = sortnet(x[m:], ops)
    return merge(a, b, ops)


def merge(a: Sequence[T], b: Sequence[T], ops: ComparatorOps) -> list[T]:
    """Algorithm 2: merge two sorted lists of the same power-of-two length ``m``."""
    m = len(a)
    if m == 1:
        return [ops.or_(a[0], b[0]), ops.and_(a[0], b[0])]
    # 1-based odd positions A[1,3,...] are 0-based even indices
    c = merge(a[0::2], b[0::2], ops)
    d = merge(a[1::2], b[1::2], ops)
    y = [c[0]]
    for i in range(1, m):
        y.append(ops.or_(c[i], d[i - 1]))
        y.append(ops.and_(c[i], d[i - 1]))
    y.append(d[m - 1])
    return y


class _Symbolic:
    """Records the comparators of a network as a hash-consed gate DAG over input wires.

    Node 0 is the constant false (padding), nodes ``1..n`` the inputs, later nodes gates
    ``(op, a, b)``; constant false and idempotence are simplified on the fly.
    """

    def __init__(self, n_inputs: int) -> None:
        self.gates: list[tuple[str, int, int]] = [("false", 0, 0)] + [("in", i, 0) for i in range(n_inputs)]
        self._unique: dict[tuple[str, int, int], int] = {}

    def _gate(self, op: str, a: int, b: int) -> int:
        if a > b:
            a, b = b, a
        key = (op, a, b)
        g = self._unique.get(key)
        if g is None:
            g = len(self.gates)
            self.gates.append(key)
            self._unique[key] = g
        return g

    def or_(self, a: int, b: int) -> int:
        if a == 0:
            return b
        if b == 0 or a == b:
            return a
        return self._gate("or", a, b)

    def and_(self, a: int, b: int) -> int:
        if a == 0 or b == 0:
            return 0
        if a == b:
            return a
        return self._gate("and", a, b)


@lru_cache(maxsize=64)
def _cone(n_inputs: int, k: int) -> tuple[tuple[tuple[str, int, int], ...], int]:
    """The gates (in topological order) that output ``k`` of a padded network on ``n_inputs``
    real inputs depends on, and the output's gate index."""
    size = next_power_of_two(max(1, n_inputs))
    sym = _Symbolic(n_inputs)
    wires = list(range(1, n_inputs + 1)) + [0] * (size - n_inputs)
    out = sortnet(wires, sym)[k - 1]
    needed = set()
    stack = [out]
    while stack:
        g = stack.pop()
        if g in needed:
            continue
        needed.add(g)
        op, a, b = sym.gates[g]
        if op in ("or", "and"):
            stack.extend((a, b))
    return tuple(sym.gates[g] if g in needed else ("unused", 0, 0) for g in range(max(needed) + 1)), out


def threshold(inputs: Sequence[T], k: int, ops: ComparatorOps, false: T) -> T:
    """Output ``k`` (1-based) of Algorithm 1 on ``inputs`` padded with ``false`` to a power of two:
    true iff at least ``k`` inputs are. Only the gates that output depends on are evaluated."""
    n = len(inputs)
    if k <= 0:
        raise ValueError("threshold k must be positive")
    if k > n:
        return false
    gates, out = _cone(n, k)
    values: list[Any] = [None] * len(gates)
    for g, (op, a, b) in enumerate(gates):
        if op == "false":
            values[g] = false
        elif op == "in":
            values[g] = inputs[a]
        elif op == "or":
            values[g] = ops.or_(values[a], values[b])
        elif op == "and":
            values[g] = ops.and_(values[a], values[b])
    return values[out]
