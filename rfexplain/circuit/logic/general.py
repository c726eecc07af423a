"""General sufficient reasons and witness search on decision graphs.

**General sufficient reasons** (Darwiche and Ji, 2023 [DJ23]) are the variable-minimal prime
implicants of the general reason: maximal *boxes* (one state set per feature) inside the general
reason, whose set of constrained features is subset-minimal. Two facts make them computable from the sufficient reasons:

1. Their feature sets are exactly the sufficient reasons' (docs/design.md, section 2): fixing a
   GSR's features to the instance's states is sufficient, and an AXp's box ``{v[f]}`` is inside the
   general reason, so the minimal feature sets coincide.
2. A box ``B`` that contains the instance ``v`` lies inside the general reason iff it lies inside
   the class formula: every hybrid of a point of ``B`` and ``v`` is again in ``B``.

So for each AXp ``S`` we need the maximal boxes over ``S`` containing ``v`` that avoid every
counter-example of the class formula with the other features free. For a class formula given as
a conjunction of weak test-once decision graphs, those counter-examples are the paths to a false
leaf, and the projection of a path onto ``S`` is a box (the last label of each ``S``-feature on the
path). :func:`false_projections` collects them bottom-up; :func:`maximal_boxes` enumerates the
maximal boxes avoiding them (each projection must be cut by one feature whose instance state it
does not contain).

:func:`find_world` finds a state vector reaching a given leaf under fixed states; it builds the
witnesses of every reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rfexplain.circuit.compilers.dgraph import DGManager
from rfexplain.core.bits import bits_of, lowest_bit
from rfexplain.core.budget import Budget

__all__ = ["false_projections", "maximal_boxes", "find_world"]


def _antichain(boxes: set[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """Keep the inclusion-maximal boxes."""
    ordered = sorted(boxes, key=lambda b: -sum(m.bit_count() for m in b))
    kept: list[tuple[int, ...]] = []
    for b in ordered:
        if not any(all(x & ~y == 0 for x, y in zip(b, k)) for k in kept):
            kept.append(b)
    return set(kept)


def false_projections(
    dg: DGManager, roots: Sequence[int], features: Sequence[int], budget: Budget | None = None, *, target: int = 0
) -> set[tuple[int, ...]]:
    """Projections onto ``features`` of the paths to the ``target`` leaf of any graph in
    ``roots`` (inclusion-maximal ones only)."""
    index = {f: i for i, f in enumerate(features)}
    top = tuple(dg.full[f] for f in features)
    memo: dict[int, set[tuple[int, ...]]] = {target: {top}, 1 - target: set()}
    for count, n in enumerate(dg.reachable(roots)):
        if budget is not None and count % 64 == 0:
            budget.check("projecting paths to false")
        if n <= 1:
            continue
        x = dg.var[n]
        i = index.get(x)
        out: set[tuple[int, ...]] = set()
        for s, c in dg.edges[n]:
            for box in memo[c]:
                if i is None:
                    out.add(box)
                else:
                    m = box[i] & s
                    if m:
                        out.add(box[:i] + (m,) + box[i + 1 :])
        memo[n] = _antichain(out)
    result: set[tuple[int, ...]] = set()
    for r in roots:
        result |= memo[r]
    return _antichain(result)


def maximal_boxes(
    projections: set[tuple[int, ...]], v: Sequence[int], full: Sequence[int], budget: Budget | None = None
) -> list[tuple[int, ...]]:
    """Maximal boxes containing ``v`` (a tuple of states, one per box feature) that are disjoint
    from every projection; ``full`` holds each feature's full mask."""
    ps = sorted(projections)
    k = len(v)
    vbits = [1 << s for s in v]
    results: set[tuple[int, ...]] = set()
    seen: set[tuple[int, tuple[int, ...]]] = set()
    stack: list[tuple[int, tuple[int, ...]]] = [(0, tuple(full))]
    count = 0
    while stack:
        count += 1
        if budget is not None and count % 256 == 0:
            budget.check("enumerating maximal boxes")
        i, box = stack.pop()
        while i < len(ps) and any(box[f] & ps[i][f] == 0 for f in range(k)):
            i += 1
        if i == len(ps):
            results.add(box)
            continue
        p = ps[i]
        for f in range(k):
            if not p[f] & vbits[f]:
                nb = box[:f] + (box[f] & ~p[f],) + box[f + 1 :]
                key = (i + 1, nb)
                if key not in seen:
                    seen.add(key)
                    stack.append(key)

    def inside(box: tuple[int, ...]) -> bool:
        return all(any(box[f] & p[f] == 0 for f in range(k)) for p in ps)

    maximal = []
    for box in results:
        grown = False
        for f in range(k):
            for s in bits_of(full[f] & ~box[f]):
                if inside(box[:f] + (box[f] | 1 << s,) + box[f + 1 :]):
                    grown = True
                    break
            if grown:
                break
        if not grown:
            maximal.append(box)
    return sorted(maximal)


def find_world(
    dg: DGManager,
    roots: Sequence[int],
    leaf: int,
    fixed: Mapping[int, int],
    base: Sequence[int],
    allowed: Mapping[int, int] | None = None,
) -> tuple[int, ...] | None:
    """A state vector that reaches ``leaf`` in one of the graphs ``roots`` and takes the states
    ``fixed`` prescribes, and, with ``allowed`` (feature -> bit mask of states), one of the states
    allowed; other features keep ``base``'s state when the path allows it (``base`` must lie in
    ``allowed``).

    Depth-first search from the root with an explicit stack, remembering the nodes from which the
    leaf is unreachable under ``fixed`` (so each node is expanded at most once per call)."""
    dead: set[int] = {1 - leaf}
    for root in roots:
        if root <= 1:
            if root == leaf:
                return tuple(int(s) for s in base)
            continue
        stack = [(root, 0)]
        found = False
        while stack:
            n, i = stack[-1]
            if n == leaf:
                found = True
                break
            edges = dg.edges[n]
            fx = fixed.get(dg.var[n])
            mask = -1 if allowed is None else allowed.get(dg.var[n], -1)
            while i < len(edges):
                s, c = edges[i]
                if c not in dead and (fx is None or s >> fx & 1) and s & mask:
                    break
                i += 1
            if i == len(edges):
                dead.add(n)
                stack.pop()
                if stack:
                    pn, pi = stack[-1]
                    stack[-1] = (pn, pi + 1)
                continue
            stack[-1] = (n, i)
            stack.append((edges[i][1], 0))
        if not found:
            continue
        world = [int(s) for s in base]
        for f, s in fixed.items():
            world[f] = int(s)
        last: dict[int, int] = {}
        for n, i in stack[:-1]:
            last[dg.var[n]] = dg.edges[n][i][0]
        for x, s in last.items():
            if x in fixed:
                continue
            if allowed is not None and x in allowed:
                s &= allowed[x]
            if not s >> world[x] & 1:
                world[x] = lowest_bit(s)
        return tuple(world)
    return None
