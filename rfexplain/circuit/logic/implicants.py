"""Prime implicants and implicates of monotone, or-decomposable NNFs (Darwiche and Ji, 2022 [DJ22]).

A complete reason mentions only the instance's own states, one per variable, so a term or clause
over it is just a *set of variables*; we keep such sets as integer bit masks (bit ``f`` =
feature ``f``). All passes are bottom-up folds over the circuit in topological order with a memo
(no recursion), and they poll an optional :class:`~rfexplain.core.budget.Budget`: when it expires they
raise :class:`~rfexplain.core.budget.BudgetExpired`.

- :func:`prime_implicants` (sufficient reasons): ``or`` = union, ``and`` = cross product, with
  subsumed terms removed at both (the "sr" algorithm of the evaluation of [DJ22]).
- :func:`prime_implicates` (necessary reasons): ``and`` = union with subsumption removal, ``or``
  = cross product *without* subsumption checks, which or-decomposability makes unnecessary
  (the "nr" algorithm).
- :func:`robustness` (Ji and Darwiche (2026), Algorithm 5 [JD26]) and :func:`implicate_min_length`
  (``iml``, Darwiche and Ji (2022), Proposition 12 [DJ22]).
- :func:`shortest_prime_implicates` (``snr``, Darwiche and Ji (2022), Algorithm 1 [DJ22]): all
  shortest implicates, output-polynomial.
- :func:`shortest_prime_implicants` (``ssr``, Darwiche and Ji (2022), Algorithm 2 [DJ22]): all
  shortest implicants, by iterative deepening on the bound ``k`` of "``k``-implicants"
  (unsubsumed implicants of length at most ``k``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from rfexplain.circuit.compilers.nnf import AND, FALSE, LIT, OR, TRUE, NNFManager
from rfexplain.core.budget import Budget, active_or

__all__ = [
    "minimal_sets",
    "prime_implicants",
    "prime_implicates",
    "robustness",
    "implicate_min_length",
    "snr",
    "ssr",
    "holds",
]

_POLL = 64


def minimal_sets(masks: Iterable[int]) -> list[int]:
    """The subset-minimal masks (duplicates removed), by increasing size."""
    ordered = sorted(set(masks), key=lambda m: (m.bit_count(), m))
    kept: list[int] = []
    for m in ordered:
        for k in kept:
            if k & m == k:
                break
        else:
            kept.append(m)
    return kept


def _product(a: list[int], b: list[int]) -> list[int]:
    return list({x | y for x in a for y in b})


def _poll(budget: Budget | None, count: int) -> None:
    """Check ``budget`` (or else the active one) every ``_POLL`` steps
    (:class:`~rfexplain.core.budget.BudgetExpired`)."""
    if count % _POLL == 0:
        budget = active_or(budget)
        if budget is not None:
            budget.check("enumerating implicants")


def holds(nnf: NNFManager, root: int, kept: int) -> bool:
    """Value of a monotone circuit over instance states when the features in ``kept`` keep the
    instance's state and every other feature takes another state."""
    var = nnf.var
    return nnf.evaluate_literals(root, lambda n: bool(kept >> var[n] & 1))


def prime_implicants(nnf: NNFManager, root: int, budget: Budget | None = None) -> list[int]:
    """All prime implicants of a monotone NNF over instance states (sufficient reasons)."""
    val: dict[int, list[int]] = {}
    kind, children, var = nnf.kind, nnf.children, nnf.var
    for count, n in enumerate(nnf.reachable([root])):
        _poll(budget, count)
        k = kind[n]
        if k == FALSE:
            val[n] = []
        elif k == TRUE:
            val[n] = [0]
        elif k == LIT:
            val[n] = [1 << var[n]]
        elif k == OR:
            val[n] = minimal_sets(x for c in children[n] for x in val[c])
        else:
            acc = [0]
            for c in sorted(children[n], key=lambda c: len(val[c])):
                acc = minimal_sets(_product(acc, val[c]))
                if budget is not None:
                    budget.check("enumerating implicants")
            val[n] = acc
    return val[root]


def prime_implicates(nnf: NNFManager, root: int, budget: Budget | None = None) -> list[int]:
    """All prime implicates of a monotone, or-decomposable NNF over instance states (necessary
    reasons)."""
    val: dict[int, list[int]] = {}
    kind, children, var = nnf.kind, nnf.children, nnf.var
    for count, n in enumerate(nnf.reachable([root])):
        _poll(budget, count)
        k = kind[n]
        if k == FALSE:
            val[n] = [0]
        elif k == TRUE:
            val[n] = []
        elif k == LIT:
            val[n] = [1 << var[n]]
        elif k == AND:
            val[n] = minimal_sets(x for c in children[n] for x in val[c])
        else:
            acc = [0]
            for c in children[n]:
                acc = _product(acc, val[c])  # disjoint variables: no subsumption possible
            val[n] = acc
    return minimal_sets(val[root])


def robustness(nnf: NNFManager, root: int) -> tuple[float, list[int]]:
    """Ji and Darwiche (2026), Algorithm 5 [JD26]: the robustness ``r`` of the decision (the length of its
    shortest necessary reasons, ``inf`` when the complete reason is valid) and the set ``V`` of
    the variable sets of the shortest necessary reasons, from the complete reason."""
    val: dict[int, tuple[float, set[int]]] = {}
    kind, children, var = nnf.kind, nnf.children, nnf.var
    for count, n in enumerate(nnf.reachable([root])):
        _poll(None, count)
        k = kind[n]
        if k == TRUE:
            val[n] = (math.inf, set())
        elif k == FALSE:
            val[n] = (0, {0})
        elif k == LIT:
            val[n] = (1, {1 << var[n]})
        elif k == AND:
            best = min(val[c][0] for c in children[n])
            vs: set[int] = set()
            for c in children[n]:
                if val[c][0] == best:
                    vs |= val[c][1]
            val[n] = (best, vs)
        else:
            r: float = 0
            acc = {0}
            for c in children[n]:
                r += val[c][0]
                acc = {a | b for a in acc for b in val[c][1]}
            val[n] = (r, acc)
    r, vs = val[root]
    return r, sorted(vs, key=lambda m: (m.bit_count(), m))


def implicate_min_length(nnf: NNFManager, root: int) -> dict[int, float]:
    """``iml`` of every node (Darwiche and Ji (2022), Proposition 12 [DJ22])."""
    out: dict[int, float] = {}
    kind, children = nnf.kind, nnf.children
    for count, n in enumerate(nnf.reachable([root])):
        _poll(None, count)
        k = kind[n]
        if k == TRUE:
            out[n] = math.inf
        elif k == FALSE:
            out[n] = 0
        elif k == LIT:
            out[n] = 1
        elif k == AND:
            out[n] = min(out[c] for c in children[n])
        else:
            out[n] = sum(out[c] for c in children[n])
    return out


def shortest_prime_implicates(nnf: NNFManager, root: int, budget: Budget | None = None) -> list[int]:
    """Darwiche and Ji (2022), Algorithm 1 [DJ22]: all shortest implicates (shortest necessary reasons).

    The ``iml`` pass prunes the conjuncts whose ``iml`` exceeds their conjunction's (line 9);
    the cross products at disjunctions need no subsumption check.
    """
    iml = implicate_min_length(nnf, root)
    if iml[root] == math.inf:
        return []
    val: dict[int, list[int]] = {}
    kind, children, var = nnf.kind, nnf.children, nnf.var
    # only nodes reachable through unpruned edges are needed
    needed: set[int] = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if n in needed:
            continue
        needed.add(n)
        if kind[n] == AND:
            stack.extend(c for c in children[n] if iml[c] == iml[n])
        elif kind[n] == OR:
            stack.extend(children[n])
    for count, n in enumerate(sorted(needed)):
        _poll(budget, count)
        k = kind[n]
        if k == FALSE:
            val[n] = [0]
        elif k == LIT:
            val[n] = [1 << var[n]]
        elif k == OR:
            acc = [0]
            for c in children[n]:
                acc = [a | b for a in acc for b in val[c]]
            val[n] = acc
        elif k == AND:
            val[n] = list({x for c in children[n] if iml[c] == iml[n] for x in val[c]})
        else:  # TRUE cannot be reached through an unpruned edge of a non-valid node
            val[n] = []
    return sorted(set(val[root]))


def shortest_prime_implicants(nnf: NNFManager, root: int, budget: Budget | None = None) -> list[int]:
    """All shortest implicants (shortest sufficient reasons), after Darwiche and Ji (2022), Algorithm 2 [DJ22].

    For ``k = 0, 1, ...`` it computes the ``k``-implicants of every node bottom-up (a literal has
    ``{x}`` when ``k >= 1``; a disjunction the unsubsumed union; a conjunction the unsubsumed
    cross product restricted to length ``<= k``) and stops at the first ``k`` for which the root
    has one. This is Algorithm 2's first technique (bounding by ``k``); its second, conditioning
    the second conjunct on the first's implicant (``Delta|sigma``, lines 21-22), is replaced by
    the length filter so that the pass stays a non-recursive fold.
    """
    kind, children, var = nnf.kind, nnf.children, nnf.var
    order = nnf.reachable([root])
    if root == FALSE:
        return []
    k = 0
    n_vars = len(nnf.variables(root))
    while k <= n_vars:
        val: dict[int, list[int]] = {}
        for count, n in enumerate(order):
            _poll(budget, count)
            t = kind[n]
            if t == FALSE:
                val[n] = []
            elif t == TRUE:
                val[n] = [0]
            elif t == LIT:
                val[n] = [1 << var[n]] if k >= 1 else []
            elif t == OR:
                val[n] = minimal_sets(x for c in children[n] for x in val[c])
            else:
                acc = [0]
                for c in sorted(children[n], key=lambda c: len(val[c])):
                    acc = minimal_sets(x | y for x in acc for y in val[c] if (x | y).bit_count() <= k)
                    if not acc:
                        break
                val[n] = acc
        if val[root]:
            return sorted(val[root])
        k += 1
    return []


# Deprecated short names (the papers' acronyms), kept for one release.
snr = shortest_prime_implicates
ssr = shortest_prime_implicants
