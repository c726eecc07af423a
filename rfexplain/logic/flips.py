"""General necessary reasons and shortest flips (paper ``000``, Section 4, Algorithms 6 and 7).

A clause is a tuple of ``(variable, state mask)`` pairs sorted by variable. The general reason is
*locally fixated* on the instance ``v``: every literal contains ``v``'s state, hence so does every
clause of its CNF and every resolvent, and a resolvent's variables are the union of its parents'
(Lemma 4 of the appendix). Two consequences drive this module:

- :func:`scnf` (Algorithm 6) converts the general reason into CNF keeping only the clauses whose
  variables fit inside one of the given variable sets ``V`` (a clause that does not fit can never
  shrink into one that does).
- :func:`depleted` (Algorithm 7's loop) closes the clauses of one variable set under resolution
  by variable depletion, removing subsumed clauses.

With ``V`` = the variable sets of the *shortest* necessary reasons (Algorithm 5), the result is
every shortest general necessary reason, i.e. the shortest flips (:func:`sgnr`). With ``V`` =
the variable sets of *all* necessary reasons, it is every general necessary reason
(:func:`gnrs`): the variable-minimal prime implicates of the general reason have exactly the
necessary reasons' variable sets (see :func:`gnrs` for the argument).

Paper issue (Algorithm 6, line 7): a literal whose variable fits in no ``v_i`` is replaced by
*false* in the paper. In CNF terms false is the empty clause, and ``alpha or false = alpha`` then
turns ``(x in A or y in B)`` into the non-implicate ``y in B``. Example: general reason
``(x in {0,1} or y = 0) and (y in {0,1})`` over ternary ``x, y`` at ``v = (0, 0)`` with
``V = {{y}}``: replacing the ``x``-literal by false yields ``y = 0`` and then the resolvent
``y = 0``, but ``y = 1, x = 0`` satisfies the general reason. The clause must be *dropped*
instead (the literal's CNF contributes no usable clause: true), which is what we do.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from ..budget import Budget
from ..compilers.nnf import AND, FALSE, LIT, TRUE, NNFManager

__all__ = ["Clause", "scnf", "depleted", "sgnr", "gnrs", "clause_vars"]

Clause = tuple[tuple[int, int], ...]


def clause_vars(c: Clause) -> int:
    m = 0
    for v, _ in c:
        m |= 1 << v
    return m


def _merge(a: Clause, b: Clause, full: Sequence[int]) -> Clause | None:
    """The disjunction of two clauses (literals of one variable united); None if valid."""
    d = dict(a)
    for v, m in b:
        d[v] = d.get(v, 0) | m
    for v, m in d.items():
        if m == full[v]:
            return None
    return tuple(sorted(d.items()))


def _subsumes(a: Clause, b: Clause) -> bool:
    """Clause ``a`` implies clause ``b``."""
    db = dict(b)
    for v, m in a:
        mb = db.get(v)
        if mb is None or m & ~mb:
            return False
    return True


def _reduce(clauses: Iterable[Clause]) -> list[Clause]:
    """Remove duplicate and subsumed clauses."""
    ordered = sorted(set(clauses), key=lambda c: (len(c), sum(m.bit_count() for _, m in c)))
    kept: list[Clause] = []
    for c in ordered:
        if not any(_subsumes(k, c) for k in kept):
            kept.append(c)
    return kept


def scnf(nnf: NNFManager, root: int, V: Sequence[int], budget: Budget | None = None) -> list[Clause] | None:
    """Algorithm 6: the CNF of ``root`` restricted to clauses whose variables fit in some set of
    ``V`` (bit masks), subsumed clauses removed. ``None`` when the budget expires."""
    V = list(V)

    def fits(vm: int) -> bool:
        return any(vm & ~vi == 0 for vi in V)

    val: dict[int, list[Clause]] = {}
    kind, children, var, mask, full = nnf.kind, nnf.children, nnf.var, nnf.mask, nnf.full
    for count, n in enumerate(nnf.reachable([root])):
        if budget is not None and count % 64 == 0 and budget.expired():
            return None
        k = kind[n]
        if k == TRUE:
            val[n] = []
        elif k == FALSE:
            val[n] = [()]
        elif k == LIT:
            val[n] = [((var[n], mask[n]),)] if fits(1 << var[n]) else []  # see the module note
        elif k == AND:
            val[n] = _reduce(c for ch in children[n] for c in val[ch])
        else:
            acc: list[Clause] = [()]
            for ch in children[n]:
                nxt = []
                for a in acc:
                    for b in val[ch]:
                        c = _merge(a, b, full)
                        if c is not None and fits(clause_vars(c)):
                            nxt.append(c)
                acc = _reduce(nxt)
                if not acc:
                    break
            val[n] = acc
    return val[root]


def depleted(clauses: list[Clause], variables: Sequence[int], full: Sequence[int],
             budget: Budget | None = None) -> list[Clause] | None:
    """Close clauses over the same variables under resolution by variable depletion (Algorithm 7,
    lines 8-13): exhaustively on the first variable, then the next, removing subsumed clauses."""
    s = _reduce(clauses)
    for x in variables:
        while True:
            if budget is not None and budget.expired():
                return None
            found = None
            for i in range(len(s)):
                a = s[i]
                for j in range(i):
                    c = _resolve(a, s[j], x, full)
                    if c is not None and not any(_subsumes(k, c) for k in s):
                        found = c
                        break
                if found is not None:
                    break
            if found is None:
                break
            s = [k for k in s if not _subsumes(found, k)]
            s.append(found)
    return s


def _resolve(a: Clause, b: Clause, x: int, full: Sequence[int]) -> Clause | None:
    """The ``x``-resolvent of two clauses on the same variables (Definition 4 of the appendix):
    the ``x``-literals intersected, the others united; None when it would be valid or lose ``x``
    (impossible for locally fixated clauses)."""
    out = []
    for (v, ma), (w, mb) in zip(a, b):
        if v != w:
            return None
        m = ma & mb if v == x else ma | mb
        if m == 0 or m == full[v]:
            return None
        out.append((v, m))
    return tuple(out)


def _by_varset(clauses: list[Clause], V: Sequence[int], full: Sequence[int], budget: Budget | None) -> list[Clause] | None:
    out: list[Clause] = []
    for vi in V:
        group = [c for c in clauses if clause_vars(c) == vi]
        variables = [f for f in range(vi.bit_length()) if vi >> f & 1]
        closed = depleted(group, variables, full, budget)
        if closed is None:
            return None
        out.extend(closed)
    return out


def sgnr(nnf: NNFManager, general_root: int, V: Sequence[int], budget: Budget | None = None) -> list[Clause] | None:
    """Algorithm 7: every shortest general necessary reason, from the general reason and the
    variable sets ``V`` of the shortest necessary reasons (Algorithm 5)."""
    clauses = scnf(nnf, general_root, V, budget)
    if clauses is None:
        return None
    return _by_varset(clauses, V, nnf.full, budget)


def gnrs(nnf: NNFManager, general_root: int, nr_varsets: Sequence[int], budget: Budget | None = None) -> list[Clause] | None:
    """Every general necessary reason (variable-minimal prime implicate of the general reason).

    Their variable sets are exactly those of the necessary reasons: a general-reason implicate
    ``s`` yields the complete-reason implicate ``s restricted to v`` on the same variables (the
    complete reason implies the general one and only sees agreement with ``v``), and a necessary
    reason ``W`` with flip ``z`` yields the general-reason implicate ``OR_{f in W} x_f != z_f``.
    Resolution never shrinks a locally fixated clause, so the implicates on a minimal set ``W``
    come from the CNF clauses on exactly ``W``: Algorithm 7's procedure with ``V`` = all the
    necessary reasons' variable sets.
    """
    clauses = scnf(nnf, general_root, nr_varsets, budget)
    if clauses is None:
        return None
    return _by_varset(clauses, nr_varsets, nnf.full, budget)
