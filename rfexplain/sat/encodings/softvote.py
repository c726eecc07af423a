"""The soft vote as exact pseudo-Boolean constraints over the trees' leaf weights.

Under the soft vote (docs/design.md, section 1) class ``w`` beats class ``l`` iff
``sum_t p_t(w) - p_t(l) >= 0`` when ``w < l`` and ``> 0`` when ``w > l`` (ties go to the lowest
class index), ``p_t`` the class-probability vector of the leaf tree ``t`` reaches. With the
forest's integer weights (:meth:`~rfexplain.core.vote.Vote.integer_weights`: every float64
probability times ``2**E``) this is the linear constraint over integers
``sum_t D_t >= delta`` (``D_t = W_t(w) - W_t(l)``, ``delta`` 0 or 1), decided exactly.

Variables. Each tree gets one *value* variable per distinct weight vector among its feasible
leaves (``val(t, a)``; a path implies its leaf's value, exactly one value holds, as the votes of
:mod:`.trees` do). A tree whose feasible leaves share one vector is a constant.

Constraint. Per comparison, ``D_t`` is shifted to ``y_t = D_t - min D_t >= 0`` and every ``y_t``
and the bound are divided by the gcd of all ``y_t``, which keeps the constraint exact and drops
the bits no leaf uses. The binary digits of ``y_t`` are literals defined from the value
variables (bit ``i`` is set iff the tree's value is one whose ``y`` has bit ``i``: two clauses,
given that exactly one value holds), and the sum ``S = sum_t y_t`` is built with full and half
adders column by column (the adder networks of Een and Soerensson (2006), "Translating
pseudo-Boolean constraints into SAT", Section 5.3; carry-save compression as in a Wallace tree),
then ``S >= K`` is the lexicographic comparison with the constant ``K`` (one clause per one-bit
of ``K``). Its size is linear in the number of input bits: about ``trees * log2(weight range)``
adders per comparison. Adders propagate poorly (a partial assignment rarely fixes a sum bit), so
a redundant rounded-up cardinality constraint (:func:`_coarse_implied`) is added, its number of
steps per tree adapted to the number of trees (``coarse``: the SAT engine's tuning,
``coarse_literals``).

Lazy exactness. Exact comparisons carry about 60 bits per tree weight. The formulas therefore
start from *relaxed* comparisons (``bits=``, 12 by default: every weight rounded up to 12
significant bits), which the exact ones imply, and the SAT engine checks each model against the
exact sums (:meth:`.cnf.ForestEncoding.refinement`): a model that the exact soft vote refutes brings
in the exact clauses of the comparisons it broke (counterexample-guided abstraction refinement),
so UNSAT answers of the relaxed formula are final and SAT answers are confirmed exactly.

Two formulas mirror :mod:`.votes`: :func:`soft_not_class` ("some class beats ``c``": one guarded
comparison per challenger, a clause picking one guard) and :func:`soft_predicts_class`.

The encodings measured against these (``pysat.pb``, a per-query formula of the reachable leaves)
and the figures behind the defaults are in ``docs/decisions.md`` ("SAT engine: the soft vote's
encoding").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rfexplain.core.forest import Tree
from rfexplain.sat.encodings.domains import range_literals
from rfexplain.sat.encodings.pool import Var, VarPool
from rfexplain.sat.encodings.votes import at_least
from rfexplain.sat.tuning import DEFAULT_TUNING

__all__ = [
    "TreeValues",
    "Comparison",
    "SoftFormula",
    "tree_value_clauses",
    "beats_clauses",
    "soft_not_class",
    "soft_predicts_class",
    "exact_comparison",
    "class_sums",
    "truth",
    "soft_winner",
]

Clause = list[int]


@dataclass(frozen=True)
class TreeValues:
    """The distinct integer weight vectors a tree's feasible leaves carry (``vectors``), and the
    variable of each (none when there is only one: the tree is a constant)."""

    index: int
    vectors: tuple[tuple[int, ...], ...]
    literals: tuple[int, ...]

    @property
    def constant(self) -> tuple[int, ...] | None:
        return self.vectors[0] if len(self.vectors) == 1 else None


def tree_value_clauses(
    pool: VarPool, index: int, tree: Tree, n_states: Sequence[int], weights: Mapping[int, tuple[int, ...]]
) -> tuple[list[Clause], TreeValues]:
    """Path clauses ``~L(R) | val(index, a)`` (Izza and Marques-Silva (2021), Eq. (3), with leaf
    values in place of votes) and exactly one value per tree."""
    paths = [(box, weights[leaf]) for box, leaf in tree.leaf_paths(n_states)]
    vectors = tuple(sorted({vector for _, vector in paths}))
    if len(vectors) == 1:
        return [], TreeValues(index, vectors, ())
    literal = {vector: pool.var(Var.aux("value", index, a)) for a, vector in enumerate(vectors)}
    clauses: list[Clause] = []
    for box, vector in paths:
        clause = [-lit for f, (lo, hi) in sorted(box.items()) for lit in range_literals(pool, f, lo, hi, n_states[f])]
        clauses.append(clause + [literal[vector]])
    lits = [literal[v] for v in vectors]
    clauses.append(list(lits))
    clauses.extend([-lits[a], -lits[b]] for a in range(len(lits)) for b in range(a + 1, len(lits)))
    return clauses, TreeValues(index, vectors, tuple(lits))


class _Adders:
    """Full and half adders with both directions of their definitions (sum and carry)."""

    def __init__(self, pool: VarPool, clauses: list[Clause]) -> None:
        self.pool = pool
        self.clauses = clauses

    def _fresh(self) -> int:
        return self.pool.fresh("adder", self.pool.top + 1)

    def full(self, a: int, b: int, c: int) -> tuple[int, int]:
        s, k = self._fresh(), self._fresh()
        for x in (a, -a):
            for y in (b, -b):
                for z in (c, -c):
                    parity = (x == a) + (y == b) + (z == c)
                    self.clauses.append([-x, -y, -z, s if parity % 2 else -s])
        self.clauses += [[-a, -b, k], [-a, -c, k], [-b, -c, k], [a, b, -k], [a, c, -k], [b, c, -k]]
        return s, k

    def half(self, a: int, b: int) -> tuple[int, int]:
        s, k = self._fresh(), self._fresh()
        self.clauses += [[-a, -b, -s], [a, b, -s], [-a, b, s], [a, -b, s]]
        self.clauses += [[-k, a], [-k, b], [-a, -b, k]]
        return s, k


def beats_clauses(
    pool: VarPool,
    trees: Sequence[TreeValues],
    winner: int,
    loser: int,
    *,
    bits: int | None = None,
    coarse: int = DEFAULT_TUNING.coarse_literals,
) -> list[Clause] | None:
    """Clauses for "``winner`` beats ``loser``" under the soft vote: ``[]`` when it always does,
    ``None`` when it never does (see the module docstring; ``coarse``: the size of the redundant
    constraint, :func:`_coarse_implied`).

    With ``bits``, the clauses are the *relaxed* comparison instead: every shifted weight ``y_t``
    rounded up to a multiple of ``s = 2**L`` (``L`` such that the largest keeps ``bits`` bits), so
    ``sum_t ceil(y_t / s) >= ceil(K / s)`` is implied by the exact ``sum_t y_t >= K`` and differs
    from it only when the exact sum falls short of ``K`` by less than ``trees * s``. ``[]`` and
    ``None`` stay exact answers (they are decided before rounding)."""
    delta = 1 if winner > loser else 0
    bound = delta
    terms: list[tuple[TreeValues, list[int]]] = []
    for tree in trees:
        diffs = [v[winner] - v[loser] for v in tree.vectors]
        low = min(diffs)
        bound -= low
        if tree.constant is None and max(diffs) > low:
            terms.append((tree, [d - low for d in diffs]))
    if bound <= 0:
        return []
    if not terms:
        return None
    if bits is not None:
        step = 1 << max(0, max(max(ys) for _, ys in terms).bit_length() - bits)
        terms = [(tree, [-(-y // step) for y in ys]) for tree, ys in terms]
        bound = -(-bound // step)
    g = math.gcd(*(y for _, ys in terms for y in ys))
    bound = -(-bound // g)
    terms = [(tree, [y // g for y in ys]) for tree, ys in terms]
    if sum(max(ys) for _, ys in terms) < bound:
        return None
    clauses = _coarse_implied(pool, terms, bound, coarse)
    if clauses is None:
        return None
    columns: dict[int, list[int]] = {}
    for tree, ys in terms:
        for i in range(max(ys).bit_length()):
            on = [lit for lit, y in zip(tree.literals, ys) if y >> i & 1]
            off = [lit for lit, y in zip(tree.literals, ys) if not y >> i & 1]
            bit = pool.fresh("bit", pool.top + 1)
            clauses.append([-bit] + on)
            clauses.append([bit] + off)
            columns.setdefault(i, []).append(bit)
    adders = _Adders(pool, clauses)
    i = 0
    while i <= max(columns, default=-1):
        column = columns.get(i, [])
        while len(column) >= 3:
            s, k = adders.full(column.pop(), column.pop(), column.pop())
            column.insert(0, s)
            columns.setdefault(i + 1, []).append(k)
        if len(column) == 2:
            s, k = adders.half(column.pop(), column.pop())
            column.append(s)
            columns.setdefault(i + 1, []).append(k)
        i += 1
    width = max(max(columns, default=0) + 1, bound.bit_length())
    digits = [columns[j][0] if columns.get(j) else None for j in range(width)]
    for i in range(width):
        if not bound >> i & 1:
            continue
        clause = [lit for j, lit in enumerate(digits) if lit is not None and (j == i or (j > i and not bound >> j & 1))]
        if not clause:
            return None
        clauses.append(clause)
    return clauses


def _coarse_implied(
    pool: VarPool, terms: Sequence[tuple[TreeValues, list[int]]], bound: int, coarse: int
) -> list[Clause] | None:
    """A redundant cardinality constraint implied by ``sum_t y_t >= bound``, for propagation.

    With ``s = 2**L`` such that every ``y_t / s`` is at most a few steps (about ``coarse`` unary
    literals in all, between 2 and 32 per tree: a cardinality network over thousands of
    literals costs more than it propagates), the rounded-up weights
    ``u_t = ceil(y_t / s)`` satisfy ``sum_t u_t >= ceil(bound / s)`` whenever the exact constraint
    holds. Each ``u_t`` is written in unary (literal ``j`` implies a value with ``u_t >= j``) and
    the sum goes through a cardinality network (:func:`.votes.at_least`), whose unit propagation
    refutes the comparison as soon as the fixed features leave it out of reach, which the adders
    alone propagate poorly. ``None`` when even the rounded-up weights cannot reach the bound.
    """
    top = max(max(ys) for _, ys in terms)
    steps = max(2, min(32, coarse // len(terms)))
    shift = max(0, top.bit_length() - steps.bit_length() + 1)
    step = 1 << shift
    need = -(-bound // step)
    clauses: list[Clause] = []
    unary: list[int] = []
    for tree, ys in terms:
        us = [-(-y // step) for y in ys]
        for j in range(1, max(us) + 1):
            lit = pool.fresh("coarse", pool.top + 1)
            clauses.append([-lit] + [v for v, u in zip(tree.literals, us) if u >= j])
            unary.append(lit)
    card = at_least(pool, unary, need, "cardnetwrk")
    return None if card is None else clauses + card


def _false(pool: VarPool) -> list[Clause]:
    x = pool.fresh("false", pool.top + 1)
    return [[x], [-x]]


@dataclass(frozen=True)
class Comparison:
    """One "``winner`` beats ``loser``" of a formula, encoded relaxed (``bits`` set) and made exact
    on demand; ``guard`` is the literal that switches it on (``None``: always on)."""

    winner: int
    loser: int
    guard: int | None


@dataclass(frozen=True)
class SoftFormula:
    """The clauses of a soft-vote condition and the comparisons in them that are only relaxed."""

    clauses: list[Clause]
    relaxed: tuple[Comparison, ...] = ()


def _comparison(
    pool: VarPool, trees: Sequence[TreeValues], winner: int, loser: int, bits: int | None, coarse: int
) -> tuple[list[Clause] | None, bool]:
    """``beats_clauses`` relaxed to ``bits`` where that is smaller, and whether it was relaxed."""
    if bits is not None:
        relaxed = beats_clauses(pool, trees, winner, loser, bits=bits, coarse=coarse)
        if relaxed:
            return relaxed, True
        if relaxed is None:
            return None, False
    return beats_clauses(pool, trees, winner, loser, coarse=coarse), False


def soft_not_class(
    pool: VarPool,
    trees: Sequence[TreeValues],
    n_classes: int,
    c: int,
    *,
    bits: int | None = None,
    coarse: int = DEFAULT_TUNING.coarse_literals,
) -> SoftFormula:
    """Clauses saying "the soft vote does not pick ``c``": some class beats ``c`` (each comparison
    relaxed to ``bits`` when given, see :func:`beats_clauses`)."""
    out: list[Clause] = []
    guards: list[int] = []
    relaxed: list[Comparison] = []
    for d in range(n_classes):
        if d == c:
            continue
        clauses, is_relaxed = _comparison(pool, trees, d, c, bits, coarse)
        if clauses is None:
            continue
        if not clauses:
            return SoftFormula([])
        if n_classes == 2:
            return SoftFormula(clauses, (Comparison(d, c, None),) if is_relaxed else ())
        guard = pool.var(Var.aux("soft_beats", d, c))
        guards.append(guard)
        out.extend([-guard] + cl for cl in clauses)
        if is_relaxed:
            relaxed.append(Comparison(d, c, guard))
    if not guards:
        return SoftFormula(_false(pool))
    out.append(guards)
    return SoftFormula(out, tuple(relaxed))


def soft_predicts_class(
    pool: VarPool,
    trees: Sequence[TreeValues],
    n_classes: int,
    t: int,
    *,
    bits: int | None = None,
    coarse: int = DEFAULT_TUNING.coarse_literals,
) -> SoftFormula:
    """Clauses saying "the soft vote picks ``t``": ``t`` beats every other class."""
    out: list[Clause] = []
    relaxed: list[Comparison] = []
    for d in range(n_classes):
        if d == t:
            continue
        clauses, is_relaxed = _comparison(pool, trees, t, d, bits, coarse)
        if clauses is None:
            return SoftFormula(_false(pool))
        out.extend(clauses)
        if is_relaxed:
            relaxed.append(Comparison(t, d, None))
    return SoftFormula(out, tuple(relaxed))


def exact_comparison(
    pool: VarPool, trees: Sequence[TreeValues], comparison: Comparison, *, coarse: int = DEFAULT_TUNING.coarse_literals
) -> list[Clause]:
    """The exact clauses of a relaxed ``comparison``, under its guard."""
    clauses = beats_clauses(pool, trees, comparison.winner, comparison.loser, coarse=coarse)
    if clauses is None:
        clauses = _false(pool)
    if comparison.guard is None:
        return clauses
    return [[-comparison.guard] + cl for cl in clauses]


def truth(model: Sequence[int]) -> Callable[[int], bool]:
    """Whether a solver model (python-sat's signed literals) sets a positive literal true; by
    index when the model lists every variable in order, as python-sat's solvers return it."""
    if model and abs(model[-1]) == len(model):
        return lambda lit: model[lit - 1] > 0
    true = {lit for lit in model if lit > 0}
    return true.__contains__


def class_sums(trees: Sequence[TreeValues], model: Sequence[int]) -> list[int]:
    """The exact integer soft-vote sum of every class at a solver model (python-sat's signed
    literals, ``model[v - 1]`` the literal of variable ``v``): each tree's value is the one whose
    literal the model sets."""
    holds = truth(model)
    sums: list[int] = []
    for tree in trees:
        vector = tree.constant
        if vector is None:
            vector = next(v for v, lit in zip(tree.vectors, tree.literals) if holds(lit))
        sums = [a + b for a, b in zip(sums, vector)] if sums else list(vector)
    return sums


def soft_winner(sums: Sequence[int]) -> int:
    """The class the soft vote picks from exact sums (ties to the lowest index)."""
    return max(range(len(sums)), key=lambda k: (sums[k], -k))
