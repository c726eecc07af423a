"""General necessary reasons and shortest flips (Ji and Darwiche (2026), Section 4,
Algorithms 6 and 7 [JD26]; general reasons after Darwiche and Ji (2023) [DJ23]).

A clause is a tuple of ``(variable, state mask)`` pairs sorted by variable. The general reason is
*locally fixated* on the instance ``v``: every literal contains ``v``'s state, hence so does every
clause of its CNF and every resolvent, and a resolvent's variables are the union of its parents'
(Lemma 4 of the appendix). Two consequences drive this module:

- :func:`cnf_within_varsets` (Algorithm 6, ``scnf``) converts the general reason into CNF keeping
  only the clauses whose variables fit inside one of the given variable sets ``V`` (a clause
  that does not fit can never shrink into one that does).
- :func:`depleted` (Algorithm 7's loop) closes the clauses of one variable set under resolution
  by variable depletion, removing subsumed clauses.

With ``V`` = the variable sets of the *shortest* necessary reasons (Algorithm 5), the result is
every shortest general necessary reason, i.e. the shortest flips
(:func:`shortest_general_necessary_reasons`, ``sgnr``). With ``V`` = the variable sets of *all*
necessary reasons, it is every general necessary reason (:func:`general_necessary_reasons`,
``gnrs``): the variable-minimal prime implicates of the general reason have exactly the
necessary reasons' variable sets (see :func:`general_necessary_reasons` for the argument).

Paper issue (Algorithm 6, line 7): a literal whose variable fits in no ``v_i`` is replaced by
*false* in the paper. In CNF terms false is the empty clause, and ``alpha or false = alpha`` then
turns ``(x in A or y in B)`` into the non-implicate ``y in B``. Example: general reason
``(x in {0,1} or y = 0) and (y in {0,1})`` over ternary ``x, y`` at ``v = (0, 0)`` with
``V = {{y}}``: replacing the ``x``-literal by false yields ``y = 0`` and then the resolvent
``y = 0``, but ``y = 1, x = 0`` satisfies the general reason. The clause must be *dropped*
instead (the literal's CNF contributes no usable clause: true), which is what we do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rfexplain.circuit.compilers.nnf import AND, FALSE, LIT, TRUE, NNFManager
from rfexplain.core.bits import bits_of
from rfexplain.core.budget import Budget

__all__ = ["Clause", "scnf", "depleted", "sgnr", "gnrs", "clause_vars", "one_set_at_a_time"]

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


def _reduce(clauses: Iterable[Clause]) -> list[Clause]:
    """Remove duplicate and subsumed clauses (a clause can only be subsumed by one on a subset
    of its variables, which the variable masks test first)."""
    ordered = sorted(set(clauses), key=lambda c: (len(c), sum(m.bit_count() for _, m in c)))
    kept: list[tuple[int, dict[int, int], Clause]] = []
    for c in ordered:
        vc = clause_vars(c)
        dc = dict(c)
        for vk, dk, _ in kept:
            if vk & ~vc == 0 and all(m & ~dc[v] == 0 for v, m in dk.items()):
                break
        else:
            kept.append((vc, dc, c))
    return [c for _, _, c in kept]


def cnf_within_varsets(nnf: NNFManager, root: int, V: Sequence[int], budget: Budget | None = None) -> list[Clause]:
    """Algorithm 6: the CNF of ``root`` restricted to clauses whose variables fit in some set of
    ``V`` (bit masks), subsumed clauses removed; :class:`~rfexplain.core.budget.BudgetExpired`
    when the budget expires."""
    V = list(V)

    def fits(vm: int) -> bool:
        return any(vm & ~vi == 0 for vi in V)

    val: dict[int, list[Clause]] = {}
    kind, children, var, mask, full = nnf.kind, nnf.children, nnf.var, nnf.mask, nnf.full
    for count, n in enumerate(nnf.reachable([root])):
        if budget is not None and count % 64 == 0:
            budget.check("converting the general reason to CNF")
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


def depleted(
    clauses: list[Clause], variables: Sequence[int], full: Sequence[int], budget: Budget | None = None
) -> list[Clause]:
    """Close clauses over the same variables under resolution by variable depletion (Algorithm 7,
    lines 8-13): exhaustively on the first variable, then the next, removing subsumed clauses.

    All clauses share one variable set, so a clause is packed into one integer (its state masks
    side by side); each variable is saturated with a work list (every new clause is resolved
    once against every clause kept), not by rescanning all pairs.
    """
    names = [v for v, _ in clauses[0]] if clauses else []
    if len(names) == 1:
        # one variable: resolvents are intersections, all non-empty (every clause holds the
        # instance's state), so the closure's only unsubsumed clause is the intersection of all
        common = full[names[0]]
        for c in clauses:
            common &= c[0][1]
        return [((names[0], common),)]
    # a clause packed in one integer: the mask of its i-th variable at bit offset offsets[i],
    # so that implication is one "a & ~b == 0" and a resolvent a few integer operations
    offsets, fields, at = [], [], 0
    for v in names:
        offsets.append(at)
        fields.append(full[v] << at)
        at += len(bin(full[v])) - 2
    kept = []
    for c in _reduce(clauses):
        code = 0
        for (_, m), off in zip(c, offsets):
            code |= m << off
        kept.append(code)
    for x in variables:
        xf = fields[names.index(x)]
        work = list(kept)
        while work:
            if budget is not None:
                budget.check("closing clauses under resolution")
            a = work.pop()
            if a not in kept:
                continue
            ax = a & xf
            for b in list(kept):
                bx = b & xf
                both = ax & bx
                if both == ax or both == bx:
                    continue  # the resolvent is subsumed by a or b (or loses x when empty)
                r = ((a | b) & ~xf) | both
                if any(r & f == f for f in fields):
                    continue  # valid: not a resolvent (Definition 4)
                if any(k & ~r == 0 for k in kept):
                    continue
                kept = [k for k in kept if r & ~k != 0]
                kept.append(r)
                work.append(r)
                if a not in kept:
                    break
    return [tuple((v, (code & f) >> off) for v, f, off in zip(names, fields, offsets)) for code in kept]


def _by_varset(clauses: list[Clause], V: Sequence[int], full: Sequence[int], budget: Budget | None) -> list[Clause]:
    out: list[Clause] = []
    for vi in V:
        group = [c for c in clauses if clause_vars(c) == vi]
        variables = list(bits_of(vi))
        out.extend(depleted(group, variables, full, budget))
    return out


def shortest_general_necessary_reasons(
    nnf: NNFManager, general_root: int, V: Sequence[int], budget: Budget | None = None
) -> list[Clause]:
    """Algorithm 7: every shortest general necessary reason, from the general reason and the
    variable sets ``V`` of the shortest necessary reasons (Algorithm 5)."""
    clauses = cnf_within_varsets(nnf, general_root, V, budget)
    return _by_varset(clauses, V, nnf.full, budget)


def general_necessary_reasons(
    nnf: NNFManager, general_root: int, nr_varsets: Sequence[int], budget: Budget | None = None
) -> list[Clause]:
    """Every general necessary reason (variable-minimal prime implicate of the general reason).

    Their variable sets are exactly those of the necessary reasons: a general-reason implicate
    ``s`` yields the complete-reason implicate ``s restricted to v`` on the same variables (the
    complete reason implies the general one and only sees agreement with ``v``), and a necessary
    reason ``W`` with flip ``z`` yields the general-reason implicate ``OR_{f in W} x_f != z_f``.
    Resolution never shrinks a locally fixated clause, so the implicates on a minimal set ``W``
    come from the CNF clauses on exactly ``W``: Algorithm 7's procedure with ``V`` = all the
    necessary reasons' variable sets.
    """
    clauses = cnf_within_varsets(nnf, general_root, nr_varsets, budget)
    return _by_varset(clauses, nr_varsets, nnf.full, budget)


def one_set_at_a_time(
    algorithm: Callable[..., list[Clause]],
    nnf: NNFManager,
    general_on: Callable[[int], int],
    V: Sequence[int],
    budget: Budget | None = None,
) -> list[Clause]:
    """``algorithm`` (:func:`shortest_general_necessary_reasons` or
    :func:`general_necessary_reasons`) run on each variable set ``v_i`` of ``V`` alone, with
    ``general_on(v_i)`` the general reason restricted to ``v_i``'s features.

    The clauses on exactly ``v_i`` are the same as with all of ``V`` at once (a clause that
    fits ``v_i`` only ever combines clauses that fit it), and the general reason restricted to
    two or three features is a small part of the graph where the restriction to the union of
    ``V`` is a large one.
    """
    out: list[Clause] = []
    for vi in V:
        out.extend(algorithm(nnf, general_on(vi), [vi], budget))
    return out


# Deprecated short names (the papers' acronyms), kept for one release.
scnf = cnf_within_varsets
sgnr = shortest_general_necessary_reasons
gnrs = general_necessary_reasons
