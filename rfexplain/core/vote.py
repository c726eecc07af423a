"""How a forest's trees decide together: the vote as one object (docs/design.md, section 1).

A :class:`Vote` owns everything about turning the leaves the trees reach into a class: the exact
decision, the one tie rule (:func:`winning_class`: the largest score wins, ties to the lowest
class index, as scikit-learn's ``argmax``), the float64 near-tie tolerance (:data:`NEAR_TIE`),
each leaf's score vector as float64 numbers (what compiled loops add) and as exact integers
(what encodings and exact comparisons add), and whether it is the plain majority vote. Two
aggregations exist:

- :class:`HardMajority` (``"hard"``): each tree votes for the class of the leaf it reaches (the
  largest entry of ``tree_.value``, ties to the lowest class index) and the majority wins -- the
  semantics of the papers (Izza and Marques-Silva, 2021; Audemard et al., 2022). A leaf's score
  vector is the one-hot vector of its vote.
- :class:`SoftAverage` (``"soft"``): what ``RandomForestClassifier.predict`` and
  ``ExtraTreesClassifier.predict`` do, the argmax of the sum of the trees' leaf class-probability
  vectors. Each leaf keeps its vector exactly as the tree's ``predict_proba`` returns it, and the
  decision is taken in *exact* arithmetic: a float64 number is a dyadic rational ``m * 2**-e``,
  so with the forest's common denominator ``2**E`` (``E`` the largest ``e`` over all leaf
  entries) every entry is an integer weight (:meth:`Vote.integer_weights`) and sums of weights
  are exact. scikit-learn adds the vectors in float64, so at a near-tie (top two float sums within
  :data:`NEAR_TIE`) the two may differ; ``experiments/soft_vote.py`` measures how often.

Another aggregation (a boosted sum, a regression mean) is one more subclass. The verifier
(:mod:`rfexplain.verify`) keeps its own, independent evaluation of both rules.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar, Protocol

import numpy as np

from rfexplain.core.errors import InvalidForestError
from rfexplain.core.tree import Tree, proba_array

__all__ = [
    "NEAR_TIE",
    "Vote",
    "FlatArrays",
    "HardMajority",
    "SoftAverage",
    "AdditiveScores",
    "VOTE_NAMES",
    "vote_rule",
    "winning_class",
    "winning_classes",
    "exact_soft_winner",
    "soft_vote",
]

#: Float64 sums of class scores closer than this are compared again exactly (float64 summation of
#: at most a few thousand vectors of entries in [0, 1] errs by far less), and a float64 bound on
#: a margin counts as "no win" only when it is below ``-NEAR_TIE``.
NEAR_TIE = 1e-9

#: Integer weights per tree: ``weights[k][leaf]`` is the exact score vector of tree ``k``'s leaf.
LeafWeights = list[dict[int, tuple[int, ...]]]


def winning_class(scores: Sequence[int] | Sequence[float]) -> int:
    """The class with the largest score (vote count or exact sum), ties to the lowest class index
    (as scikit-learn's ``argmax``): the package's one tie rule; :func:`winning_classes` is its
    vectorised form.

    >>> winning_class((2, 3, 3)), winning_class((0, 0))
    (1, 0)
    """
    best = 0
    for c in range(1, len(scores)):
        if scores[c] > scores[best]:
            best = c
    return best


def winning_classes(scores: np.ndarray) -> np.ndarray:
    """:func:`winning_class` of every row of a ``(rows, classes)`` score array."""
    return np.argmax(scores, axis=1)


def exact_soft_winner(vectors: Sequence[Sequence[float]]) -> int:
    """The soft-vote decision on one row, in exact arithmetic: the class whose summed probability
    (over the trees' vectors, each a sequence of float64 numbers) is largest, ties to the lowest
    class index.

    >>> exact_soft_winner([(0.1, 0.9), (0.8, 0.2)]), exact_soft_winner([(0.5, 0.5), (0.5, 0.5)])
    (1, 0)
    """
    # every float64 is a whole number of units of 2**-1074 (its ``as_integer_ratio`` has a
    # power-of-two denominator): the sums in those units are exact integers
    sums = [0] * len(vectors[0])
    for vector in vectors:
        for c, p in enumerate(vector):
            numerator, denominator = float(p).as_integer_ratio()
            sums[c] += numerator << (1075 - denominator.bit_length())
    return winning_class(sums)


def soft_vote(probas: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """The exact soft-vote decision (class index) of every row, from the trees' class-probability
    arrays (one ``(rows, classes)`` float64 array per tree, as each tree's ``predict_proba``):
    float64 sums, and rows whose top two sums are within :data:`NEAR_TIE` decided again by
    :func:`exact_soft_winner`."""
    stacked = np.asarray(probas, dtype=np.float64)
    totals = stacked.sum(axis=0)
    winners = np.argmax(totals, axis=1)
    if totals.shape[1] < 2:
        return winners
    top_two = np.sort(totals, axis=1)[:, -2:]
    for row in np.flatnonzero(top_two[:, 1] - top_two[:, 0] <= NEAR_TIE):
        winners[row] = exact_soft_winner(stacked[:, row, :].tolist())
    return winners


class FlatArrays(Protocol):
    """What a vote reads of a forest's trees laid end to end
    (:class:`~rfexplain.core.flat.FlatForest`): per node the voted class and the leaf's score
    vector, and where each tree starts."""

    label: np.ndarray
    first_nodes: np.ndarray

    @property
    def scores(self) -> np.ndarray: ...


class Vote(ABC):
    """The aggregation of a forest's trees (see the module docstring); built once per forest by
    :func:`vote_rule` and read by the forest's decision, the engines' encodings and deciders."""

    #: The vote mode's name (``Forest.vote``).
    name: ClassVar[str]
    #: See :data:`NEAR_TIE`.
    near_tie: ClassVar[float] = NEAR_TIE
    #: How this rule decides, for messages ("this forest decides by ...").
    described: ClassVar[str] = "majority vote"

    def __init__(self, trees: Sequence[Tree], n_classes: int) -> None:
        self.trees = tuple(trees)
        self.n_classes = n_classes
        self._weights: tuple[int, LeafWeights] | None = None
        self._scores: list[np.ndarray] | None = None

    @functools.cached_property
    def is_majority(self) -> bool:
        """Whether this vote is the same function as the hard majority vote, whatever the input
        (engines then use the majority vote's cardinality encodings, bounds and compiled walks)."""
        return self._is_majority()

    @abstractmethod
    def _is_majority(self) -> bool:
        """See :attr:`is_majority`."""

    @abstractmethod
    def _leaf_score_vectors(self) -> list[np.ndarray]:
        """Each tree's ``(nodes, classes)`` float64 score array (zeros at internal nodes)."""

    @abstractmethod
    def _integer_weights(self) -> tuple[int, LeafWeights]:
        """See :meth:`integer_weights`."""

    def leaf_scores(self) -> list[np.ndarray]:
        """Each tree's leaf score vectors as a ``(nodes, classes)`` float64 array (zeros at
        internal nodes): one-hot votes under the majority, class probabilities under the average.
        Computed once; do not modify."""
        if self._scores is None:
            self._scores = self._leaf_score_vectors()
        return self._scores

    def integer_weights(self) -> tuple[int, LeafWeights]:
        """The leaves' score vectors as exact integers over a common denominator ``2**E``:
        ``(E, weights)``, ``weights[k][leaf]`` the vector of tree ``k``'s leaf times ``2**E``, so
        that class ``c`` wins iff its integer sum is largest (ties to the lowest index). Computed
        once; do not modify."""
        if self._weights is None:
            self._weights = self._integer_weights()
        return self._weights

    def decide(self, leaves: Sequence[int]) -> int:
        """The class decided when tree ``k`` reaches node ``leaves[k]``, exactly."""
        sums = [0] * self.n_classes
        for weights, leaf in zip(self.integer_weights()[1], leaves):
            for c, w in enumerate(weights[leaf]):
                sums[c] += w
        return winning_class(sums)

    @abstractmethod
    def decide_rows(self, leaves: np.ndarray, flat: FlatArrays) -> np.ndarray:
        """The class decided for every row of a ``(rows, trees)`` array of reached leaves (node
        index within each tree), read from the forest's flat arrays ``flat`` (its trees' labels
        and score vectors laid end to end)."""


class HardMajority(Vote):
    """Each tree votes for its leaf's class; the most votes win, ties to the lowest class index."""

    name = "hard"

    def _is_majority(self) -> bool:
        return True

    def _leaf_score_vectors(self) -> list[np.ndarray]:
        out = []
        for tree in self.trees:
            scores = np.zeros((tree.n_nodes, self.n_classes), dtype=np.float64)
            leaves = [i for i in range(tree.n_nodes) if tree.is_leaf(i)]
            scores[leaves, [tree.label[i] for i in leaves]] = 1.0
            out.append(scores)
        return out

    def _integer_weights(self) -> tuple[int, LeafWeights]:
        one_hot = [tuple(int(c == k) for c in range(self.n_classes)) for k in range(self.n_classes)]
        return 0, [{i: one_hot[t.label[i]] for i in range(t.n_nodes) if t.is_leaf(i)} for t in self.trees]

    def decide(self, leaves: Sequence[int]) -> int:
        counts = [0] * self.n_classes
        for tree, leaf in zip(self.trees, leaves):
            counts[tree.label[leaf]] += 1
        return winning_class(counts)

    def decide_rows(self, leaves: np.ndarray, flat: FlatArrays) -> np.ndarray:
        votes = flat.label[np.asarray(leaves, dtype=np.int64) + flat.first_nodes]
        counts = np.stack([(votes == c).sum(axis=1) for c in range(self.n_classes)], axis=1)
        return winning_classes(counts)


class SoftAverage(Vote):
    """The largest summed class probability wins, in exact arithmetic, ties to the lowest class
    index (scikit-learn's ``predict`` of a random forest)."""

    name = "soft"
    described = "soft vote (its leaves are impure)"

    def __init__(self, trees: Sequence[Tree], n_classes: int) -> None:
        if any(t.proba is None for t in trees):
            raise InvalidForestError("a soft-vote forest needs the class-probability vector of every leaf")
        super().__init__(trees, n_classes)

    def _is_majority(self) -> bool:
        """True when every leaf votes for the argmax of its vector (ties to the lowest index) and,
        with more than one tree, every leaf vector is one-hot (pure leaves: the summed vectors
        are then the vote counts)."""
        for tree in self.trees:
            assert tree.proba is not None
            leaves = [leaf for leaf, vector in enumerate(tree.proba) if vector is not None]
            vectors = np.array([tree.proba[leaf] for leaf in leaves], dtype=np.float64).reshape(len(leaves), -1)
            labels = np.array([tree.label[leaf] for leaf in leaves], dtype=np.int64)
            if np.any(winning_classes(vectors) != labels):
                return False
            one_hot = np.all((vectors == 0.0) | (vectors == 1.0), axis=1) & (np.sum(vectors == 1.0, axis=1) == 1)
            if len(self.trees) > 1 and not np.all(one_hot):
                return False
        return True

    def _leaf_score_vectors(self) -> list[np.ndarray]:
        return [proba_array(t, self.n_classes) for t in self.trees]

    def _integer_weights(self) -> tuple[int, LeafWeights]:
        return exact_leaf_weights(self.trees)

    def decide_rows(self, leaves: np.ndarray, flat: FlatArrays) -> np.ndarray:
        scores, nodes = flat.scores, np.asarray(leaves, dtype=np.int64) + flat.first_nodes
        step = 10_000  # bounds the (rows, trees, classes) array of vectors
        parts = [soft_vote(np.swapaxes(scores[nodes[i : i + step]], 0, 1)) for i in range(0, len(nodes), step)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def exact_leaf_weights(trees: Sequence[Tree]) -> tuple[int, LeafWeights]:
    """Every leaf vector of ``trees`` (``Tree.proba``, float64 entries of any sign) as exact
    integers over the common denominator ``2**E``: ``(E, weights)`` as
    :meth:`Vote.integer_weights` gives them (``E >= 0``).

    A finite float64 ``p`` is ``m * 2**e`` with ``m`` an odd integer (or ``p = 0``); ``E`` is the
    largest ``-e`` (at least 0) and each weight is ``p * 2**E``, an integer. Computed on whole
    arrays; the weights as Python integers, since they may not fit in 64 bits."""
    leaves = [[i for i, v in enumerate(tree.proba or ()) if v is not None and tree.feature[i] < 0] for tree in trees]
    vectors = [tree.proba[i] for tree, ids in zip(trees, leaves) if tree.proba is not None for i in ids]
    values = np.asarray(vectors, dtype=np.float64).reshape(len(vectors), -1) if vectors else np.zeros((0, 0))
    exponent = int(max(0, -int(_binary_exponents(values).min(initial=0))))
    with np.errstate(over="ignore"):
        largest = float(np.ldexp(np.max(np.abs(values), initial=0.0), exponent))
    if largest < 2.0**62:
        scaled = np.ldexp(values, exponent).astype(np.int64).tolist()  # exact: a power-of-two scaling
    else:
        ratios = (map(float.as_integer_ratio, row) for row in values.tolist())
        scaled = [[(num << exponent) // den for num, den in row] for row in ratios]
    weights: LeafWeights = []
    at = 0
    for ids in leaves:
        weights.append({i: tuple(scaled[at + k]) for k, i in enumerate(ids)})
        at += len(ids)
    return exponent, weights


def _binary_exponents(values: np.ndarray) -> np.ndarray:
    """Per entry ``p`` of ``values``, the ``e`` of ``p = m * 2**e`` with ``m`` an odd integer
    (``0`` for ``p = 0``)."""
    fraction, power = np.frexp(values)  # p = f * 2**k, 0.5 <= |f| < 1
    mantissa = np.abs(np.ldexp(fraction, 53)).astype(np.int64)  # |p| = M * 2**(k - 53), M < 2**53
    lowest = mantissa & -mantissa  # 2**(trailing zeros of M)
    zeros = np.where(mantissa > 0, np.frexp(lowest.astype(np.float64))[1] - 1, 0)
    return np.where(mantissa > 0, power - 53 + zeros, 0)


class AdditiveScores(SoftAverage):
    """The largest sum of the trees' leaf score vectors wins, in exact arithmetic, ties to the
    lowest class index: the raw-score decision of a gradient-boosted classifier (Friedman, 2001
    [Fri01]; Chen and Guestrin, 2016 [CG16]), its initial score a tree with one leaf.

    Entries may have any sign and magnitude. The argmax of a sum does not change when every entry
    is multiplied by the same power of two, and in float64 such a product is exact (but for
    subnormal results, rounded far below :data:`NEAR_TIE`); the float64 vectors the compiled loops
    add (:meth:`leaf_scores`) and the exact integers (whose exponent ``E`` then grows or shrinks by
    the same power) are therefore those of the entries scaled so that the largest magnitude lies
    in ``[1/4, 1/2)``. A leaf's margin of one class over another
    is then in ``[-1, 1]``, as under the soft average, and the soft average's bounds, lattices and
    tolerance :data:`NEAR_TIE` apply unchanged. A forest whose float64 sums could err by more
    than a quarter of :data:`NEAR_TIE` (the bound of recursive summation, Higham 2002 [Hig02],
    section 4.2) is refused: some thousands of trees per class.

    The decision is that of the exact sum; a library adding the same numbers in float64 (or
    float32) can decide otherwise only where its rounded sums of two classes are that close
    (docs/design.md, section 1, measures how often).

    [Fri01] Friedman, "Greedy function approximation: a gradient boosting machine", Annals of
    Statistics, 2001. [CG16] Chen and Guestrin, "XGBoost: A Scalable Tree Boosting System", KDD
    2016. [Hig02] Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM, 2002.

    >>> from rfexplain.core.tree import Tree
    >>> stump = Tree((0, -1, -1), (0, -1, -1), (1, -1, -1), (2, -1, -1), (-1, 0, 1), (None, (0.0, -3.0), (0.0, 5.0)))
    >>> offset = Tree((-1,), (-1,), (-1,), (-1,), (1,), ((0.0, 1.5),))
    >>> vote = AdditiveScores([stump, offset], 2)
    >>> vote.decide([1, 0]), vote.decide([2, 0])
    (0, 1)
    """

    name = "additive"
    described = "the additive vote of a boosted model (signed leaf scores)"

    def __init__(self, trees: Sequence[Tree], n_classes: int) -> None:
        super().__init__(trees, n_classes)
        largest = max((abs(p) for t in self.trees for v in (t.proba or ()) if v is not None for p in v), default=0.0)
        #: The power of two the entries are multiplied by (see the class docstring).
        self.scale_exponent = 0 if largest == 0.0 else -math.frexp(largest)[1] - 1
        if self.summation_error() > NEAR_TIE / 4:
            raise InvalidForestError(
                "the trees' float64 score sums could err by more than the near-tie tolerance "
                f"({self.summation_error():.3g} > {NEAR_TIE / 4:g}): too many trees per class"
            )

    def summation_error(self) -> float:
        """A bound on the error of any float64 sum of one class's scaled scores over the trees,
        one leaf per tree, in any order: ``(n - 1) u`` times the sum of every tree's largest
        magnitude, ``n`` the trees with a nonzero entry for the class, ``u = 2**-53``."""
        worst = 0.0
        for c in range(self.n_classes):
            tops = [max(abs(v[c]) for v in t.proba if v is not None) for t in self.trees if t.proba is not None]
            nonzero = [m for m in tops if m > 0.0]
            scaled = math.ldexp(math.fsum(nonzero), self.scale_exponent)
            worst = max(worst, max(len(nonzero) - 1, 0) * 2.0**-53 * scaled)
        return worst

    def _is_majority(self) -> bool:
        return False

    def _leaf_score_vectors(self) -> list[np.ndarray]:
        return [np.ldexp(proba_array(t, self.n_classes), self.scale_exponent) for t in self.trees]

    def _integer_weights(self) -> tuple[int, LeafWeights]:
        # ``w / 2**E`` is an entry, ``w / 2**(E - k)`` the entry times ``2**k``
        exponent, weights = exact_leaf_weights(self.trees)
        if exponent >= self.scale_exponent:
            return exponent - self.scale_exponent, weights
        shift = self.scale_exponent - exponent  # scaled up past whole numbers: the integers grow
        return 0, [{i: tuple(w << shift for w in v) for i, v in leaves.items()} for leaves in weights]


_RULES: dict[str, type[Vote]] = {rule.name: rule for rule in (HardMajority, SoftAverage, AdditiveScores)}
#: The names of the aggregations (``Forest.vote``).
VOTE_NAMES: tuple[str, ...] = tuple(_RULES)


def vote_rule(name: str, trees: Sequence[Tree], n_classes: int) -> Vote:
    """The aggregation called ``name`` (``"hard"``, ``"soft"`` or ``"additive"``) over ``trees``."""
    if name not in _RULES:
        raise InvalidForestError(f"vote must be one of {sorted(_RULES)}. Got {name!r} instead.")
    return _RULES[name](trees, n_classes)
