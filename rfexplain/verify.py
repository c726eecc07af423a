"""Checking a reason with nothing but the model's own trees: a verifier that can fail.

``verify(reason, model)`` reads the trees of the scikit-learn model (``tree_.feature``,
``threshold``, ``children_left``/``children_right`` and ``value``; a gradient-boosted model's
trees as :mod:`rfexplain.core.boosted_import` reads them, each leaf's score vector, decided by the
largest sum; or the trees of a :class:`~rfexplain.core.forest.Forest`) and proves or refutes
every claim the reason makes. It
imports no engine and no encoding: its one search, :class:`BoxSearch`, is its own.

The feature axis is cut at every threshold of the model and of the reason's feature space, so
each *cell* is an interval of float32 inputs on which every tree takes the same branch and every
literal of the reason is either true or false. A *box* gives each feature a set of cells.
``BoxSearch.find(box, classes)`` answers exactly whether some input of the box is decided as one
of ``classes``: branch and bound over the trees' leaves, each leaf's box of cells read off its
path once. A box is closed when, for every class of ``classes``, some class ``e`` beats it on
every input: the sum over trees of the least ``value[e] - value[c]`` among the tree's leaves
meeting the box is positive (under the hard vote, ``value`` is the leaf's vote, and zero suffices
when ``e`` comes first and wins the tie). Otherwise the feature that most of those leaves end
inside is split at the median of their ends, the more promising half searched first; a box where
every tree has one leaf left is decided by the vote rule, the one function :func:`decide`, and
every witness is then classified by the model itself (a scikit-learn model's ``predict`` for a
soft vote, its trees' hard majority otherwise). The loop over boxes is compiled
(:mod:`rfexplain.verify_kernels`).

A feature the reason's space lets be missing (docs/design.md, section 1) has one more cell, NaN,
after its numbers; a split whose ``missing_go_to_left`` sends NaN left gives that cell a box of
its own down the left branch (so a leaf may have several boxes, disjoint), one sending it right
keeps the cells an interval. A categorical feature's cells are represented by the integers in
them, its category codes or state indices (a boosted model reads a code; ``0.5`` would be no
category, or another one once truncated).

Checks, one :class:`Check` each (the semantics are those of docs/design.md, section 2):

- *describes*: the model decides the reason's instance as the reason says, and the instance
  satisfies every literal of an instance-bound reason (sufficient, necessary, contrastive);
- *sufficient* (sufficient, general sufficient): no input satisfying the literals (each widened
  by the instance's own state, the hybrids of the general reason of Darwiche and Ji (2023) [DJ23]) is
  decided otherwise; proven by the search;
- *minimal* (one per literal): an input agreeing with the other literals, violating this one, that
  the model decides otherwise; *prime* (general sufficient reasons, one per literal): no state can
  be added to the literal;
- *flips* (necessary, contrastive): an input differing from the instance only on the reason's
  features, outside every literal, decided otherwise (as the target, for a contrastive reason);
  *minimal* (one per literal): freeing every other feature of the reason never flips the decision;
- *witness* (one per witness the reason carries): the model classifies it as it claims, and it
  breaks what it claims to break.

The inputs the minimal, prime and flips checks ask for are the reason's own witnesses when one
lies in the box asked about and the model itself classifies it as asked (a search can take
long), else found by the search.

General necessary reasons get the describes, witness and flips checks only; their minimality is
a statement about every hybrid of an input and the instance, which this verifier does not prove.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from rfexplain import verify_kernels as kernels
from rfexplain.core.boosted_import import BOOSTED, boosted_predict, boosted_trees, is_boosted
from rfexplain.core.budget import Budget
from rfexplain.core.errors import InvalidArgumentError, InvalidOptionError, UnsupportedModelError
from rfexplain.core.forest import Forest
from rfexplain.core.instances import model_input
from rfexplain.core.reasons import Reason
from rfexplain.core.sklearn_import import final_estimator, transforming_step, tree_classifier

__all__ = ["verify", "Verification", "Check", "model_vote", "decide", "BoxSearch"]

Box = list[tuple[int, ...]]


@dataclass(frozen=True)
class Check:
    """One claim of a reason: ``what`` it says, whether it was ``proven``, and ``how``."""

    name: str
    what: str
    proven: bool
    how: str

    def __str__(self) -> str:
        return f"[{'ok' if self.proven else 'FAILED'}] {self.what}: {self.how}"


@dataclass(frozen=True)
class Verification:
    """The outcome of :func:`verify`: ``ok`` when every check was proven."""

    checks: tuple[Check, ...]
    witnesses_checked: int = 0
    searched_boxes: int = field(default=0, compare=False)

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.proven for c in self.checks)

    @property
    def problems(self) -> tuple[str, ...]:
        """The failed checks, as sentences."""
        return tuple(f"{c.what}: {c.how}" for c in self.checks if not c.proven)

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return "\n".join(str(c) for c in self.checks)


# ------------------------------------------------------------------------------ the model's trees
@dataclass(frozen=True)
class _Trees:
    """The model's trees as raw node arrays (threshold on raw values, leaf class distributions)."""

    feature: list[np.ndarray]
    threshold: list[np.ndarray]
    left: list[np.ndarray]
    right: list[np.ndarray]
    value: list[np.ndarray]  # per node, the class distribution (rows sum to 1 at leaves)
    n_features: int
    n_classes: int
    nan_left: list[np.ndarray]  # per node, whether a missing value (NaN) goes left


def _trees_of(model: Any, missing: frozenset[int] = frozenset()) -> _Trees:
    """The trees of ``model``; a gradient-boosted model's with the NaN of the features in
    ``missing`` routed as its ``predict`` routes it."""
    if isinstance(model, Forest):
        feats, thrs, lefts, rights, values = [], [], [], [], []
        for tree in model.trees:
            f = np.asarray(tree.feature, dtype=np.int64)
            thr = np.asarray(
                [model.space.thresholds[fi][si] if fi >= 0 else 0.0 for fi, si in zip(tree.feature, tree.split)]
            )
            v = np.zeros((len(f), model.n_classes))
            for node, label in enumerate(tree.label):
                if f[node] < 0:
                    if tree.proba is not None and tree.proba[node] is not None:
                        v[node] = tree.proba[node]  # the leaf's class-probability vector (soft vote)
                    else:
                        v[node, label] = 1.0
            feats.append(f)
            thrs.append(thr)
            lefts.append(np.asarray(tree.left, dtype=np.int64))
            rights.append(np.asarray(tree.right, dtype=np.int64))
            values.append(v)
        nan_left = [np.zeros(len(f), dtype=bool) for f in feats]  # NaN <= t is false: NaN goes right
        return _Trees(feats, thrs, lefts, rights, values, model.n_features, model.n_classes, nan_left)
    estimator = final_estimator(model)
    if is_boosted(estimator):
        return _boosted_trees_of(estimator, missing)
    members = getattr(estimator, "estimators_", [estimator])
    feats, thrs, lefts, rights, values, nan_left = [], [], [], [], [], []
    for member in members:
        t = member.tree_
        nan_left.append(np.asarray(getattr(t, "missing_go_to_left", np.zeros(t.node_count)), dtype=bool))
        raw = np.asarray(t.value)[:, 0, :].astype(np.float64)
        totals = raw.sum(axis=1, keepdims=True)
        feats.append(np.asarray(t.feature, dtype=np.int64))
        thrs.append(np.asarray(t.threshold, dtype=np.float64))
        lefts.append(np.asarray(t.children_left, dtype=np.int64))
        rights.append(np.asarray(t.children_right, dtype=np.int64))
        values.append(raw / np.where(totals > 0, totals, 1.0))
    return _Trees(feats, thrs, lefts, rights, values, int(estimator.n_features_in_), len(estimator.classes_), nan_left)


def _boosted_trees_of(estimator: Any, missing: frozenset[int]) -> _Trees:
    """A gradient-boosted model's trees as the reader gives them (each leaf's score vector, the
    initial score a one-leaf tree; :mod:`rfexplain.core.boosted_import`), for the sum rule; the
    NaN of the features in ``missing`` routed by tests ``x <= inf`` (NaN goes right)."""
    imported = boosted_trees(estimator, None, sorted(missing))
    feats, thrs, lefts, rights, values = [], [], [], [], []
    for raw in imported.trees:
        f = np.asarray(raw["feature"], dtype=np.int64)
        feats.append(f)
        thrs.append(np.asarray(raw["threshold"], dtype=np.float64))
        lefts.append(np.asarray(raw["left"], dtype=np.int64))
        rights.append(np.asarray(raw["right"], dtype=np.int64))
        values.append(np.asarray([v if v is not None else [0.0] * len(imported.classes) for v in raw["proba"]]))
    nan_left = [np.zeros(len(f), dtype=bool) for f in feats]  # NaN <= t is false: NaN goes right
    return _Trees(feats, thrs, lefts, rights, values, imported.n_features, len(imported.classes), nan_left)


def decide(leaf_distributions: np.ndarray, vote: str = "hard") -> int:
    """The vote rule: the class decided from the trees' leaf distributions (one row per tree).

    ``"hard"``: each tree votes for its leaf's largest class, the most votes win; ``"soft"``: the
    largest mean distribution wins (scikit-learn's ``predict``). Ties go to the lowest class index.
    """
    if vote == "soft":  # exactly, not in rounded float64 sums (the forest model's documented rule)
        rows = np.asarray(leaf_distributions, dtype=np.float64)
        sums = rows.sum(axis=0)
        top_two = np.sort(sums)[-2:]
        if len(sums) > 1 and top_two[1] - top_two[0] <= kernels.CLOSE:  # a near tie: decided in rationals
            exact = [sum((Fraction(float(p)) for p in rows[:, c]), Fraction(0)) for c in range(len(sums))]
            return max(range(len(exact)), key=lambda c: (exact[c], -c))
        return int(np.argmax(sums))
    votes = np.argmax(leaf_distributions, axis=1)
    return int(np.argmax(np.bincount(votes, minlength=leaf_distributions.shape[1])))


def model_vote(model: Any, X: np.ndarray, vote: str = "hard") -> np.ndarray:
    """Class indices the model itself gives the rows of ``X`` (float32 inputs): scikit-learn's
    ``predict`` for ``vote="soft"``, its trees' own ``predict`` and :func:`decide` for ``"hard"``."""
    X32 = np.asarray(X, dtype=np.float32)
    if isinstance(model, Forest):
        return model.predict_index(X32)
    estimator = final_estimator(model)
    if is_boosted(estimator):  # in the forest's class order (reversed for a binary GradientBoostingClassifier)
        classes = boosted_trees(estimator, None, "none").classes
        labels = boosted_predict(estimator, model_input(estimator, X32)).tolist()
        return np.asarray([classes.index(label) for label in labels], dtype=np.int64)
    classes = list(np.asarray(estimator.classes_).tolist())
    members = getattr(estimator, "estimators_", None)
    if vote == "soft" or members is None:
        labels = np.asarray(estimator.predict(model_input(estimator, X32))).tolist()
        return np.asarray([classes.index(label) for label in labels], dtype=np.int64)
    votes = np.stack([np.asarray(t.predict(model_input(t, X32))).astype(np.int64) for t in members], axis=1)
    counts = np.stack([(votes == c).sum(axis=1) for c in range(len(classes))], axis=1)
    return np.argmax(counts, axis=1)


def _largest_f32_at_most(t: float) -> float:
    f = np.float32(t)
    if float(f) > t:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


# ------------------------------------------------------------------------------ the search
#: Boxes the compiled search examines between two polls of the budget.
SEARCH_SLICE = 1024


class BoxSearch:
    """Exact search for an input of a box decided as one of some classes (see the module doc)."""

    def __init__(
        self,
        trees: _Trees,
        extra_cuts: Sequence[Sequence[float]],
        vote: str,
        budget: Budget,
        nan_features: frozenset[int] = frozenset(),
        integer_features: frozenset[int] = frozenset(),
    ) -> None:
        self.trees = trees
        self.vote = vote
        self.budget = budget
        self.boxes = 0
        #: the features whose last cell is NaN (missing values)
        self.nan_features = nan_features
        self.cuts: list[np.ndarray] = []
        self.reps: list[np.ndarray] = []
        for f in range(trees.n_features):
            used = [thr[feat == f] for feat, thr in zip(trees.feature, trees.threshold)]
            cuts = np.unique(np.concatenate([*used, np.asarray(extra_cuts[f], dtype=np.float64)]))
            cuts = cuts[np.isfinite(cuts)]  # an infinite threshold sends every number one way
            reps: list[float] = []
            for c in range(len(cuts) + 1):
                if f in integer_features:  # a categorical feature: the integer of the cell
                    rep = float(
                        math.floor(cuts[c]) if c < len(cuts) else (math.floor(cuts[-1]) + 1 if len(cuts) else 0)
                    )
                elif c < len(cuts):
                    rep = _largest_f32_at_most(float(cuts[c]))
                elif len(cuts):
                    rep = float(np.nextafter(np.float32(_largest_f32_at_most(float(cuts[-1]))), np.float32(np.inf)))
                else:
                    rep = 0.0
                if c == 0 or rep > cuts[c - 1]:  # a cell holding no float32 is dropped
                    reps.append(rep)
            if f in nan_features:  # NaN sorts last, after every number (numpy's searchsorted too)
                reps.append(np.nan)
            self.cuts.append(cuts)
            self.reps.append(np.asarray(reps))
        # node -> number of cells going left (cells are sorted by value)
        self.split_at = [
            np.asarray(
                [int(np.searchsorted(self.reps[f], thr, side="right")) if f >= 0 else 0 for f, thr in zip(feat, thrs)]
            )
            for feat, thrs in zip(trees.feature, trees.threshold)
        ]
        # plain lists: the search walks them node by node
        self._nodes = [
            (feat.tolist(), left.tolist(), right.tolist(), split.tolist())
            for feat, left, right, split in zip(trees.feature, trees.left, trees.right, self.split_at)
        ]
        self._leaf_boxes()
        #: hard vote: each leaf's vote as a one-hot row (the per-tree bounds count votes)
        self._votes = np.eye(trees.n_classes)[np.argmax(self._value, axis=1)]

    def n_cells(self, f: int) -> int:
        return len(self.reps[f])

    def cell_of(self, f: int, value: float) -> int:
        """The cell holding the float32 input ``value`` (NaN: the feature's NaN cell, its last)."""
        last = len(self.reps[f]) - 1
        if math.isnan(value):
            return last
        cell = int(np.searchsorted(self.reps[f], float(np.float32(value)), side="left"))
        return min(cell, last - 1 if f in self.nan_features else last)

    def _leaf_boxes(self) -> None:
        """Every leaf's box in cells (``_lo``/``_hi``, one row per leaf, one column per feature),
        its tree (``_tree``, rows grouped by tree) and class distribution (``_value``); a leaf
        whose box holds no cell is left out (no float32 input reaches it)."""
        n = self.trees.n_features
        lows, highs, trees, values = [], [], [], []
        for k, (feat, left, right, split) in enumerate(self._nodes):
            nan_left = self.trees.nan_left[k]
            self.budget.check("reading the trees' leaves")
            stack = [(0, [0] * n, [len(r) - 1 for r in self.reps])]
            while stack:
                node, lo, hi = stack.pop()
                f = feat[node]
                if f < 0:
                    if all(a <= b for a, b in zip(lo, hi)):
                        lows.append(lo)
                        highs.append(hi)
                        trees.append(k)
                        values.append(self.trees.value[k][node])
                    continue
                left_hi, right_lo = list(hi), list(lo)
                left_hi[f] = min(hi[f], split[node] - 1)  # cells below the split go left
                right_lo[f] = max(lo[f], split[node])
                if f in self.nan_features and nan_left[node]:  # the NaN cell goes left: a box of its own
                    nan = len(self.reps[f]) - 1
                    if lo[f] <= nan <= hi[f]:
                        nan_lo, nan_hi = list(lo), list(hi)
                        nan_lo[f] = nan_hi[f] = nan
                        stack.append((left[node], nan_lo, nan_hi))
                    right_hi = list(hi)
                    right_hi[f] = min(hi[f], nan - 1)
                    stack.append((right[node], right_lo, right_hi))
                else:
                    stack.append((right[node], right_lo, hi))
                stack.append((left[node], lo, left_hi))
        self._lo = np.asarray(lows, dtype=np.int32).reshape(len(lows), n)
        self._hi = np.asarray(highs, dtype=np.int32).reshape(len(highs), n)
        self._tree = np.asarray(trees, dtype=np.int64)
        self._value = np.asarray(values, dtype=np.float64).reshape(len(values), self.trees.n_classes)

    def find(self, box: Box, classes: frozenset[int]) -> list[int] | None:
        """A point (one cell per feature) of ``box`` decided as one of ``classes``, or ``None``
        when the box has none. An empty cell set makes the box empty."""
        if any(not cells for cells in box):
            return None
        sorted_cells = [np.asarray(sorted(cells), dtype=np.int64) for cells in box]
        rows = np.arange(len(self._tree))
        for f, cells in enumerate(sorted_cells):
            rows = rows[(self._lo[rows, f] <= cells[-1]) & (self._hi[rows, f] >= cells[0])]
        scores = self._value if self.vote == "soft" else self._votes
        wanted = np.asarray(sorted(classes), dtype=np.int64)
        soft = self.vote == "soft"
        chance, decided = kernels.chances(rows, len(rows), self._tree, scores, soft, wanted)
        if chance == -np.inf:
            return None
        n = self.trees.n_features
        offset = np.concatenate(([0], np.cumsum([len(c) for c in sorted_cells]))).astype(np.int64)
        flat = np.concatenate(sorted_cells) if n else np.zeros(0, dtype=np.int64)
        stack_a = np.zeros((64, n), dtype=np.int64)
        stack_b = np.zeros((64, n), dtype=np.int64)
        stack_b[0] = np.diff(offset)
        stack_rows = np.zeros((64, 3), dtype=np.int64)
        stack_rows[0] = (0, len(rows), int(decided))
        pool = np.zeros(max(4 * len(rows), 1), dtype=np.int64)
        pool[: len(rows)] = rows
        state = np.asarray([1, 0, 0], dtype=np.int64)
        point = np.zeros(n, dtype=np.int64)
        while True:
            self.budget.check("verifying a reason")
            status, examined = kernels.search(
                self._lo, self._hi, self._tree, scores, soft, wanted, flat, offset,
                stack_a, stack_b, stack_rows, pool, state, point, SEARCH_SLICE,
            )  # fmt: skip
            self.boxes += examined
            if status == kernels.EXHAUSTED:
                return None
            if status == kernels.DECIDED:  # one leaf per tree: the whole box is decided alike
                leaves = pool[state[kernels.ROWS_START] : state[kernels.ROWS_END]]
                if decide(self._value[leaves], self.vote) in classes:
                    return [int(c) for c in point]
            elif status == kernels.GROW:
                stack_a, stack_b, stack_rows, pool = (
                    np.concatenate((array, np.zeros_like(array))) for array in (stack_a, stack_b, stack_rows, pool)
                )

    def classify(self, points: Sequence[Sequence[int]]) -> list[int]:
        """The vote rule on the trees' leaves for whole points (cell indices)."""
        out = []
        for point in points:
            dists = []
            for k, (feat, left, right, split) in enumerate(self._nodes):
                node = 0
                while feat[node] >= 0:
                    node = left[node] if point[feat[node]] < split[node] else right[node]
                dists.append(self.trees.value[k][node])
            out.append(decide(np.asarray(dists), self.vote))
        return out


# ------------------------------------------------------------------------------ the checks
def _vote_of(reason: Reason, model: Any) -> str:
    """The rule the verifier decides under: the largest summed leaf vector (``"soft"``) for the
    soft average and the additive (boosted) vote alike, else the majority (``"hard"``)."""
    vote = getattr(reason.space, "vote", None) or getattr(model, "vote", None)
    return "soft" if vote in ("soft", "additive") else "hard"


def verify(reason: Reason, model: Any, *, vote: str | None = None, timeout: float | None = None) -> Verification:
    """Prove or refute every claim of ``reason`` with ``model``'s own trees (a fitted scikit-learn
    forest or tree, a pipeline of nothing but one, or a :class:`~rfexplain.core.forest.Forest`).
    A pipeline that transforms its input first is refused (``UnsupportedModelError``): verify its
    reasons against ``explainer.forest``, its trees read over the original columns.

    ``vote`` (``"soft"`` or ``"hard"``) is the decision rule the claims are checked under; by
    default the one the reason was computed under. ``timeout`` bounds the call: reading the
    trees' leaves and the searches (a :class:`~rfexplain.core.budget.BudgetExpired` past it).

    Anything but a :class:`~rfexplain.core.reasons.Reason` as ``reason`` is an
    :class:`~rfexplain.core.errors.InvalidArgumentError`, anything but a forest or a fitted tree
    classifier as ``model`` an ``UnsupportedModelError`` (``NotFittedError`` when unfitted).
    """
    if not isinstance(reason, Reason):
        raise InvalidArgumentError(
            "verify checks a Reason (an answer of a Decision's queries), "
            f"got {type(reason).__name__} {_short_repr(reason)}"
        )
    if vote is not None and vote not in ("soft", "hard", "additive"):
        raise InvalidOptionError(f"vote must be 'soft', 'hard' or 'additive'. Got {vote!r} instead.")
    if transforming_step(model) is not None:
        raise UnsupportedModelError(
            "verify reads a forest's own trees, and this pipeline transforms its input before its forest: "
            "verify the reason against the forest the explainer read from the pipeline, over its original "
            "columns (rx.verify(reason, explainer.forest))"
        )
    if not isinstance(model, Forest) and not is_boosted(final_estimator(model)):
        tree_classifier(model, expected="verify needs a Forest or a fitted model among", also=BOOSTED)
    if reason.instance is None or reason.decision is None or reason.space is None:
        return Verification((Check("describes", "the reason names its instance", False, "it carries none"),))
    rule = "soft" if vote == "additive" else vote  # the same rule: the largest summed leaf vector
    return _Verifier(reason, model, Budget.of(timeout), rule).run()


def _short_repr(value: Any, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


class _Verifier:
    def __init__(self, reason: Reason, model: Any, budget: Budget, vote: str | None = None) -> None:
        self.reason = reason
        self.model = model
        self.vote = vote or _vote_of(reason, model)
        assert reason.space is not None and reason.instance is not None and reason.decision is not None
        self.space = reason.space
        missing = frozenset(f for f in range(len(self.space.thresholds)) if self.space.accepts_missing(f))
        self.trees = _trees_of(model, missing)
        #: who classifies the witnesses, as the checks' reports name it
        self.judge = "the forest model" if isinstance(model, Forest) else "the scikit-learn model"
        self.checks: list[Check] = []
        self.instance = reason.instance
        self.decision = reason.decision
        categorical = frozenset(
            f for f in range(len(self.space.thresholds)) if self.space.category_labels(f) is not None
        )
        self.search = BoxSearch(self.trees, self.space.thresholds, self.vote, budget, missing, categorical)
        self.n = self.trees.n_features
        self._witness_inputs: list[tuple[tuple[float, ...], list[int], int]] | None = None
        self._states_of_cells: dict[int, np.ndarray] = {}

    def add(self, name: str, what: str, proven: bool, how: str) -> None:
        self.checks.append(Check(name, what, proven, how))

    # ---- cells and values
    def states_of_cells(self, f: int) -> np.ndarray:
        """The reason space's state of each cell of feature ``f`` (computed once per feature)."""
        if f not in self._states_of_cells:
            thresholds = np.asarray(self.space.thresholds[f], dtype=np.float64)
            self._states_of_cells[f] = np.searchsorted(thresholds, self.search.reps[f], side="left")
        return self._states_of_cells[f]

    def space_state(self, f: int, cell: int) -> int:
        return int(self.states_of_cells(f)[cell])

    def cells_in(self, f: int, states: frozenset[int]) -> tuple[int, ...]:
        return tuple(np.flatnonzero(np.isin(self.states_of_cells(f), list(states))).tolist())

    def cells_out(self, f: int, states: frozenset[int]) -> tuple[int, ...]:
        return tuple(np.flatnonzero(~np.isin(self.states_of_cells(f), list(states))).tolist())

    def all_cells(self, f: int) -> tuple[int, ...]:
        return tuple(range(self.search.n_cells(f)))

    def instance_cell(self, f: int) -> tuple[int, ...]:
        return (self.search.cell_of(f, self.instance[f]),)

    def values(self, point: Sequence[int]) -> list[float]:
        """An input for a point: the instance's own value where the point keeps its cell."""
        return [
            float(self.instance[f]) if c == self.instance_cell(f)[0] else float(self.search.reps[f][c])
            for f, c in enumerate(point)
        ]

    def model_class(self, rows: Sequence[Sequence[float]]) -> list[int]:
        return [int(c) for c in model_vote(self.model, np.asarray(rows, dtype=np.float64), self.vote)]

    def text(self, values: Sequence[float]) -> str:
        return "(" + ", ".join(f"{float(np.float32(v)):.6g}" for v in values) + ")"

    def witness_found(self, box: Box, classes: frozenset[int]) -> tuple[bool, str]:
        """An input of ``box`` of ``classes``, confirmed by the model itself: one of the reason's
        own witnesses when one lies in the box, else one the search finds."""
        for given, cells, got in self.witness_inputs():
            if got in classes and all(cell in box[f] for f, cell in enumerate(cells)):
                return True, (f"the reason's witness {self.text(given)}, classified {got} by {self.judge} itself")
        point = self.search.find(box, classes)
        if point is None:
            return False, f"no such input exists (branch and bound over the trees, {self.search.boxes} boxes)"
        values = self.values(point)
        got = self.model_class([values])[0]
        if got not in classes:
            return False, f"the trees' witness {self.text(values)} is classified {got} by the model itself"
        return True, f"witness {self.text(values)}, classified {got} by {self.judge} itself"

    def witness_inputs(self) -> list[tuple[tuple[float, ...], list[int], int]]:
        """The reason's witnesses that fit the model, each with its cells and the class the model
        gives it (asked once for all)."""
        if self._witness_inputs is None:
            rows = [tuple(float(v) for v in w.values) for w in self.reason.witnesses if len(w.values) == self.n]
            got = self.model_class(rows) if rows else []
            cells = [[self.search.cell_of(f, v) for f, v in enumerate(row)] for row in rows]
            self._witness_inputs = list(zip(rows, cells, got))
        return self._witness_inputs

    def none_found(self, box: Box, classes: frozenset[int]) -> tuple[bool, str]:
        point = self.search.find(box, classes)
        if point is None:
            return True, f"proven by branch and bound over the trees' reachable leaves ({self.search.boxes} boxes)"
        values = self.values(point)
        return False, f"counterexample {self.text(values)}, classified {self.model_class([values])[0]}"

    # ---- the checks
    def run(self) -> Verification:
        reason, n = self.reason, self.n
        if len(self.instance) != n or any(f >= n or f < 0 for f in reason.features):
            self.add("describes", "the reason fits the model", False, f"the model has {n} features")
            return Verification(tuple(self.checks))
        got = self.model_class([list(self.instance)])[0]
        self.add(
            "describes",
            f"the model decides the instance as class {self.decision}",
            got == self.decision,
            f"{self.judge} ({self.vote} vote) gives class {got}",
        )
        literals = reason.literals
        if reason.kind in ("sufficient", "necessary", "contrastive"):
            outside = [f for f, s in literals.items() if self.instance_cell(f)[0] not in self.cells_in(f, s)]
            self.add(
                "describes",
                "the instance satisfies every literal",
                not outside,
                f"it violates the literals on features {outside}" if outside else "checked on its values",
            )
        self.check_witnesses()
        if reason.is_conjunction:
            self.check_conjunction()
        else:
            self.check_disjunction()
        return Verification(tuple(self.checks), len(reason.witnesses), self.search.boxes)

    def others(self) -> frozenset[int]:
        return frozenset(range(self.trees.n_classes)) - {self.decision}

    def conj_box(self, skip: int | None = None) -> Box:
        box: Box = []
        inst = self.instance
        for f in range(self.n):
            states = self.reason.literals.get(f)
            if states is None or f == skip:
                box.append(self.all_cells(f))
            else:
                box.append(tuple(sorted(set(self.cells_in(f, states)) | {self.search.cell_of(f, inst[f])})))
        return box

    def check_conjunction(self) -> None:
        literals = self.reason.literals
        ok, how = self.none_found(self.conj_box(), self.others())
        self.add("sufficient", "no input satisfying the literals is decided otherwise", ok, how)
        for f, states in literals.items():
            box = self.conj_box()
            box[f] = tuple(c for c in self.cells_out(f, states) if c != self.instance_cell(f)[0])
            ok, how = self.witness_found(box, self.others())
            self.add("minimal", f"the literal on feature {f} is needed", ok, how)
            if self.reason.inflated:
                self.check_maximal(f, states)
            if self.reason.kind != "general_sufficient":
                continue
            extra = sorted({self.space_state(f, c) for c in box[f]})
            for s in extra:
                box[f] = tuple(sorted(set(self.conj_box()[f]) | set(self.cells_in(f, frozenset({s})))))
                ok, how = self.witness_found(box, self.others())
                self.add("prime", f"state {s} cannot be added to the literal on feature {f}", ok, how)

    def check_maximal(self, f: int, states: frozenset[int]) -> None:
        """An inflated reason: no bound of the literal on ``f`` can move one state further (a
        numeric feature), no category can be added (a categorical one)."""
        space = self.reason.space
        n = len(space.thresholds[f]) + 1 if space is not None else max(states) + 1
        if space is not None and space.category_labels(f) is not None:
            beyond = [s for s in range(n) if s not in states]
        else:
            beyond = [s for s in (min(states) - 1, max(states) + 1) if 0 <= s < n]
        for s in beyond:
            box = self.conj_box()
            box[f] = tuple(sorted(set(box[f]) | set(self.cells_in(f, frozenset({s})))))
            ok, how = self.witness_found(box, self.others())
            self.add("maximal", f"the literal on feature {f} cannot take state {s} too", ok, how)

    def disj_box(self, free: frozenset[int], outside: frozenset[int]) -> Box:
        literals = self.reason.literals
        box: Box = []
        for f in range(self.n):
            if f in outside:
                box.append(self.cells_out(f, literals[f]))
            elif f in free:
                box.append(self.all_cells(f))
            else:
                box.append(self.instance_cell(f))
        return box

    def flip_classes(self) -> frozenset[int]:
        if self.reason.kind == "contrastive" and self.reason.target is not None:
            return frozenset({self.reason.target})
        return self.others()

    def check_disjunction(self) -> None:
        features = self.reason.features
        goal = self.flip_classes()
        ok, how = self.witness_found(self.disj_box(frozenset(), features), goal)
        self.add("flips", "changing the reason's features (outside every literal) flips the decision", ok, how)
        if self.reason.kind == "general_necessary":
            return
        for f in sorted(features):
            ok, how = self.none_found(self.disj_box(features - {f}, frozenset()), goal)
            self.add("minimal", f"the other features cannot flip the decision without feature {f}", ok, how)

    def check_witnesses(self) -> None:
        reason = self.reason
        if not reason.witnesses:
            return
        if any(len(w.values) != self.n for w in reason.witnesses):
            self.add("witness", "the witnesses fit the model", False, f"the model has {self.n} features")
            return
        literals = reason.literals
        for k, (w, (_, cells, got)) in enumerate(zip(reason.witnesses, self.witness_inputs()), start=1):
            wrong: list[str] = []
            if got != w.prediction:
                wrong.append(f"the model classifies it {got}, not {w.prediction}")
            if got == self.decision:
                wrong.append("it keeps the explained decision")
            if reason.kind == "contrastive" and got != reason.target:
                wrong.append(f"it is not the target {reason.target}")
            if reason.is_conjunction:
                if w.dropped not in literals:
                    wrong.append(f"it names feature {w.dropped}, not in the reason")
                else:
                    broken = [
                        f for f, s in literals.items() if f != w.dropped and self.space_state(f, cells[f]) not in s
                    ]
                    if broken:
                        wrong.append(f"it violates the other literals on features {broken}")
                    if self.space_state(w.dropped, cells[w.dropped]) in literals[w.dropped]:
                        wrong.append(f"it satisfies the literal on feature {w.dropped} it should break")
            else:
                moved = {f for f in range(self.n) if cells[f] != self.instance_cell(f)[0]}
                if not moved <= reason.features:
                    wrong.append(f"it changes features {sorted(moved - reason.features)} outside the reason")
                if reason.kind == "general_necessary":
                    inside = [f for f, s in literals.items() if self.space_state(f, cells[f]) in s]
                    if inside:
                        wrong.append(f"it satisfies the literals on features {inside}")
            self.add(
                "witness",
                f"witness {k} {self.text(w.values)}",
                not wrong,
                "; ".join(wrong) if wrong else f"classified {got} by {self.judge} itself",
            )
