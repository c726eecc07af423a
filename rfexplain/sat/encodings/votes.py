"""The majority vote with cardinality constraints, with the exact tie rule.

Let ``N_j`` be the number of trees voting for class ``j``. The forest predicts ``c`` iff every
class ``j < c`` has ``N_j < N_c`` and every class ``j > c`` has ``N_j <= N_c`` (ties go to the
lowest class index; docs/design.md, section 1). So "class ``w`` beats ``l``" reads
``N_w - N_l >= delta`` with ``delta = 0`` when ``w < l`` and ``delta = 1`` when ``w > l``; written
over vote literals it is the cardinality constraint of Izza and Marques-Silva (2021),
Eqs. (5)-(6) [IM21]::

    sum_k vote(k, w) + sum_k ~vote(k, l) >= delta + |trees that can vote l| + const_l - const_w

(trees that always vote one class contribute constants). Every cardinality constraint goes
through python-sat's :class:`~pysat.card.CardEnc` with the encoding chosen by ``card``
(the engine's default is the modulo totalizer of Ogawa et al., 2013; the paper's
footnote 9 uses cardinality networks, Asín et al., 2011 [Asi11]).

Three formulas are built on this:

- :func:`not_class` -- "the forest does not predict ``c``": some challenger beats ``c``. With two
  classes it is one constraint on the votes for ``c`` (the paper's remark after eq. (6)). With more,
  two constructions are available: ``"challengers"`` (one guarded constraint per challenger and a
  clause picking one guard) and ``"selectors"`` (the paper's construction: two constraints over
  free count variables, each linked by a selector to one challenger below / above ``c``, one of
  the two allowed to be a guaranteed winner). ``"selectors"`` is the default (the smaller
  formula); the ``sat_cards`` table of ``experiments/sat_table1.py`` compares them on every
  dataset.
- :func:`predicts_class` -- "the forest predicts ``t``": ``t`` beats every other class.
"""

from __future__ import annotations

from collections.abc import Sequence

from pysat.card import CardEnc, EncType

from rfexplain.core.errors import InvalidOptionError
from rfexplain.sat.encodings.pool import Var, VarPool
from rfexplain.sat.encodings.trees import TreeVotes

__all__ = ["CARD_ENCODINGS", "MULTICLASS_CONSTRUCTIONS", "at_least", "not_class", "predicts_class", "beats"]

Clause = list[int]

#: The cardinality encodings one may choose with ``card=`` (python-sat ``EncType`` names).
CARD_ENCODINGS: tuple[str, ...] = ("cardnetwrk", "seqcounter", "sortnetwrk", "totalizer", "mtotalizer", "kmtotalizer")
#: How "some challenger beats c" is built with three classes or more.
MULTICLASS_CONSTRUCTIONS: tuple[str, ...] = ("challengers", "selectors")


def at_least(pool: VarPool, lits: Sequence[int], bound: int, card: str) -> list[Clause] | None:
    """Clauses for ``sum(lits) >= bound``; ``[]`` when trivially true, ``None`` when impossible."""
    lits = list(lits)
    if bound <= 0:
        return []
    if bound > len(lits):
        return None
    if bound == len(lits):
        return [[lit] for lit in lits]
    if bound == 1:
        return [lits]
    enc = CardEnc.atleast(lits=lits, bound=bound, vpool=pool.idpool, encoding=getattr(EncType, card))
    return list(enc.clauses)


def _false(pool: VarPool) -> list[Clause]:
    """An unsatisfiable pair of unit clauses (python-sat solvers dislike the empty clause)."""
    x = pool.fresh("false", len(pool.idpool.obj2id))
    return [[x], [-x]]


class _Counts:
    """Vote literals and constants per class, from the trees' :class:`TreeVotes`."""

    def __init__(self, pool: VarPool, trees: Sequence[TreeVotes], n_classes: int) -> None:
        self.pool = pool
        self.n_trees = len(trees)
        self.n_classes = n_classes
        self.const = [0] * n_classes
        self.lits: list[list[int]] = [[] for _ in range(n_classes)]
        self.variable_trees = 0
        for t in trees:
            if t.constant is not None:
                self.const[t.constant] += 1
                continue
            self.variable_trees += 1
            for c in sorted(t.labels):
                self.lits[c].append(pool.var(Var.vote(t.index, c)))

    def vote_literal(self, tree: TreeVotes, cls: int) -> int | bool:
        """The literal "tree votes cls", or a constant."""
        if tree.constant is not None:
            return tree.constant == cls
        if cls not in tree.labels:
            return False
        return self.pool.var(Var.vote(tree.index, cls))


def beats(counts: _Counts, winner: int, loser: int) -> tuple[list[int], int]:
    """``(lits, bound)`` such that ``sum(lits) >= bound`` iff ``winner`` beats ``loser``."""
    delta = 1 if winner > loser else 0
    if counts.n_classes == 2:
        # N_w = M - N_l, so N_w - N_l >= delta iff N_l <= (M - delta) // 2: count trees not voting l.
        allowed = (counts.n_trees - delta) // 2 - counts.const[loser]
        return [-v for v in counts.lits[loser]], counts.variable_trees - allowed
    lits = list(counts.lits[winner]) + [-v for v in counts.lits[loser]]
    bound = delta + len(counts.lits[loser]) + counts.const[loser] - counts.const[winner]
    return lits, bound


def _guarded(clauses: list[Clause], guard: int) -> list[Clause]:
    return [[-guard] + cl for cl in clauses]


def not_class(
    pool: VarPool, trees: Sequence[TreeVotes], n_classes: int, c: int, *, card: str, construction: str = "challengers"
) -> list[Clause]:
    """Clauses saying "the forest does not predict class ``c``" (see the module docstring)."""
    counts = _Counts(pool, trees, n_classes)
    if n_classes < 2:
        return _false(pool)
    if n_classes == 2:
        lits, bound = beats(counts, 1 - c, c)
        clauses = at_least(pool, lits, bound, card)
        return _false(pool) if clauses is None else clauses
    # Implied constraint: a class with at least N_c votes besides c means N_c <= M // 2.
    # Redundant, but it lets the solver rule out c's clear majorities at once.
    lits = [-v for v in counts.lits[c]]
    implied = at_least(pool, lits, len(lits) - (counts.n_trees // 2 - counts.const[c]), card)
    if implied is None:
        return _false(pool)
    if construction == "selectors":
        return implied + _not_class_selectors(pool, trees, counts, c, card)
    if construction != "challengers":
        raise InvalidOptionError(
            f"construction must be one of {list(MULTICLASS_CONSTRUCTIONS)}. Got {construction!r} instead."
        )
    out: list[Clause] = []
    guards: list[int] = []
    for j in range(n_classes):
        if j == c:
            continue
        lits, bound = beats(counts, j, c)
        clauses = at_least(pool, lits, bound, card)
        if clauses is None:
            continue
        if not clauses:
            return []  # j beats c whatever the input: nothing to say
        guard = pool.var(Var.aux("beats", j, c))
        guards.append(guard)
        out.extend(_guarded(clauses, guard))
    if not guards:
        return _false(pool)
    out.append(guards)
    return implied + out


def _not_class_selectors(pool: VarPool, trees: Sequence[TreeVotes], counts: _Counts, c: int, card: str) -> list[Clause]:
    """The paper's two-constraint construction (section 4, after eq. (6)).

    For each side (challengers below ``c``, needing ``N_k >= N_c``; above ``c``, needing
    ``N_k > N_c``) free count variables ``z_i`` (one per tree) are tied by a pick ``p_k`` to the
    votes for ``k`` (``p_k -> (z_i <-> vote(i, k))``), and one constraint says that the picked
    counts beat ``c``. Each side may instead pick a dummy "guaranteed winner" ``d`` (all ``z_i``
    true, plus one extra unit in the sum so that the strict side holds too), but not both sides.
    """
    out: list[Clause] = []
    dummies = []
    for side, members, delta in (("below", range(c), 0), ("above", range(c + 1, counts.n_classes), 1)):
        side_id = 0 if side == "below" else 1
        z = [pool.var(Var.aux("z", c, side_id, i)) for i in range(counts.n_trees)]
        dummy = pool.var(Var.aux("dummy", c, side_id))
        dummies.append(dummy)
        picks = [dummy]
        for i in range(counts.n_trees):
            out.append([-dummy, z[i]])
        for k in members:
            p = pool.var(Var.aux("pick", c, k))
            picks.append(p)
            for i, tree in enumerate(trees):
                lit = counts.vote_literal(tree, k)
                if lit is True:
                    out.append([-p, z[i]])
                elif lit is False:
                    out.append([-p, -z[i]])
                else:
                    out.append([-p, -z[i], lit])
                    out.append([-p, z[i], -lit])
        out.append(list(picks))
        for a in range(len(picks)):
            for b in range(a + 1, len(picks)):
                out.append([-picks[a], -picks[b]])
        lits = z + [dummy] + [-v for v in counts.lits[c]]
        bound = delta + len(counts.lits[c]) + counts.const[c]
        clauses = at_least(pool, lits, bound, card)
        if clauses is None:  # cannot happen: the dummy always satisfies it
            raise AssertionError("selector construction: unsatisfiable side constraint")
        out.extend(clauses)
    out.append([-dummies[0], -dummies[1]])
    return out


def predicts_class(pool: VarPool, trees: Sequence[TreeVotes], n_classes: int, t: int, *, card: str) -> list[Clause]:
    """Clauses saying "the forest predicts class ``t``": ``t`` beats every other class."""
    counts = _Counts(pool, trees, n_classes)
    out: list[Clause] = []
    for j in range(n_classes):
        if j == t:
            continue
        lits, bound = beats(counts, t, j)
        clauses = at_least(pool, lits, bound, card)
        if clauses is None:
            return _false(pool)
        out.extend(clauses)
        if n_classes == 2:
            break
    return out
