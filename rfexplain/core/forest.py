"""The discretised, solver-neutral forest model (docs/design.md, section 1).

A :class:`Forest` is the classifier every engine, the oracle and the command line explain. It
holds, for every feature ``f``, the sorted distinct thresholds ``t_1 < ... < t_n`` used on ``f``
anywhere in the forest; ``f`` is then a discrete variable with ``n + 1`` *states*
``(-inf, t_1], (t_1, t_2], ..., (t_n, +inf)``, and the state of a value is the number of
thresholds strictly below it. A tree node testing ``x[f] <= t_j`` sends a state vector left iff
``state[f] <= j`` (0-based ``j``), which is exactly scikit-learn's test
``float64(float32(x[f])) <= t_j`` on the raw value.

Thresholds are stored *canonically*: each scikit-learn threshold ``t`` is replaced by the largest
float32 number not above it, which is the same test on float32 inputs. Two thresholds with no
float32 number between them (possible with ExtraTrees' random thresholds) thereby become one, so
every state contains a float32 value (its upper threshold, or the next float32 above the last
threshold) and no explanation ever mentions a state no input can reach.

A feature may also be *missing* (NaN), for a model trained with missing values: its last
threshold is then ``+inf`` and its last state, the one above it, is "missing" (a number is never
above ``+inf``; :meth:`Forest.accepts_missing`). A split ``x <= inf`` asks whether ``x`` is a
number, every other split sends NaN right, and the reader of scikit-learn models rewrites its
splits that send NaN left accordingly (:mod:`rfexplain.core.missing_routes`). Instances may hold
NaN in those features only.

The forest decides under one of three vote modes (``Forest.vote``), each an aggregation object
(:mod:`rfexplain.core.vote`, ``Forest.aggregation``): ``"hard"``, the majority vote of the
papers, ``"soft"``, the exact average of the leaves' class-probability vectors that
scikit-learn's ``predict`` takes, and ``"additive"``, the exact argmax of summed leaf scores of
any sign (a gradient-boosted model's raw scores). The trees as flat node arrays, which the
engines' compiled loops walk, are derived on first use (``Forest.flat``, :mod:`rfexplain.core.flat`).

Example
-------
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
>>> forest = Forest.from_sklearn(model)
>>> bool((forest.predict(X) == model.predict(X)).mean() > 0.9)
True
"""

from __future__ import annotations

import bisect
import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfexplain.core.errors import ForestFormatError, InvalidForestError, InvalidInstanceError
from rfexplain.core.flat import FlatForest
from rfexplain.core.floats import largest_float32_at_most
from rfexplain.core.instances import as_matrix, check_feature_names, duplicated_names, model_input
from rfexplain.core.pyvalues import to_python
from rfexplain.core.set_splits import category_thresholds, category_values
from rfexplain.core.space import FeatureSpace, has_missing_state
from rfexplain.core.tree import Tree, leaf_vectors
from rfexplain.core.vote import (
    VOTE_NAMES,
    Vote,
    exact_soft_winner,
    soft_vote,
    vote_rule,
    winning_class,
    winning_classes,
)

__all__ = [
    "Tree",
    "Forest",
    "FeatureSpace",
    "Agreement",
    "FOREST_FORMAT_VERSION",
    "largest_float32_at_most",
    "winning_class",
    "winning_classes",
    "soft_vote",
    "exact_soft_winner",
    "VOTE_MODES",
]

#: Version 2 adds the leaves' class-probability vectors and the vote mode; version 1 documents
#: (no vectors) load as hard-vote forests. Version 3 adds ``missing``, the features that may be
#: missing (their threshold ``+inf`` is not written among the finite ``thresholds``).
FOREST_FORMAT_VERSION = 3
#: The vote modes of :meth:`Forest.from_sklearn` (``"auto"`` resolves to one of the other two).
VOTE_MODES: tuple[str, ...] = ("auto", "soft", "hard")
_FORMAT_NAME = "rfexplain-forest"


@dataclass(frozen=True)
class Agreement:
    """How often the forest's hard vote equals a scikit-learn model's own ``predict``."""

    fraction: float
    disagreeing_rows: np.ndarray

    def __str__(self) -> str:
        return f"{self.fraction:.4f} ({len(self.disagreeing_rows)} rows differ)"


class Forest:
    """A discretised random forest with exact scikit-learn decision semantics.

    Parameters
    ----------
    thresholds : sequence of sequences of float
        For each feature, its distinct thresholds in strictly increasing order.
    trees : sequence of Tree
        The trees, whose ``split`` entries index into ``thresholds``.
    classes : sequence
        The class labels in the order of ``classes_`` (ties go to the lowest index).
    feature_names : sequence of str, optional
        Distinct names (:class:`InvalidForestError` naming any duplicate); defaults to
        ``x0, x1, ...``.
    source : str, optional
        A free-form description of where the forest came from.
    categories : sequence, optional
        One entry per feature: ``None`` for a numeric feature, or the labels of a categorical
        feature's states, whose thresholds are then ``0.5, 1.5, ...`` (state ``s`` is value ``s``),
        and ``+inf`` when it may be missing (its last label, that of the missing state). Its values
        are integers (:meth:`check_instances`).
    bounds : sequence, optional
        One entry per feature: ``None``, or the inclusive range ``(low, high)`` of the values the
        feature may take (a domain constraint, see :mod:`rfexplain.core.domain`): instances
        outside it are refused and state representatives (witness values) are taken inside it.
    vote : str
        ``"hard"`` (default), ``"soft"`` (needs every tree's leaf vectors) or ``"additive"`` (a
        boosted sum: every tree's leaf score vectors, of any sign, in ``proba``); see the module
        docstring.
    """

    def __init__(
        self,
        *,
        thresholds: Sequence[Sequence[float]],
        trees: Sequence[Tree],
        classes: Sequence[Any],
        feature_names: Sequence[str] | None = None,
        source: str = "",
        categories: Sequence[Sequence[str] | None] | None = None,
        bounds: Sequence[tuple[float, float] | None] | None = None,
        vote: str = "hard",
    ) -> None:
        self.bounds: tuple[tuple[float, float] | None, ...] = (
            tuple(None if b is None else (float(b[0]), float(b[1])) for b in bounds) if bounds else ()
        )
        self.categories: tuple[tuple[str, ...] | None, ...] = (
            tuple(None if c is None else tuple(str(v) for v in c) for c in categories) if categories else ()
        )
        self.thresholds: tuple[tuple[float, ...], ...] = tuple(tuple(float(t) for t in ts) for ts in thresholds)
        self.trees: tuple[Tree, ...] = tuple(trees)
        self.classes: tuple[Any, ...] = tuple(classes)
        n = len(self.thresholds)
        if feature_names is None:
            feature_names = [f"x{i}" for i in range(n)]
        self.feature_names: tuple[str, ...] = tuple(str(name) for name in feature_names)
        self.source = source
        if vote not in VOTE_NAMES:
            raise InvalidForestError(f"vote must be one of {list(VOTE_NAMES)}. Got {vote!r} instead.")
        self._validate(signed=vote == "additive")
        #: How the trees decide together (:mod:`rfexplain.core.vote`).
        self.aggregation: Vote = vote_rule(vote, self.trees, self.n_classes)
        self.space = FeatureSpace(
            self.feature_names, self.thresholds, self.classes, self.categories, self.bounds, self.vote
        )
        self._threshold_arrays = [np.asarray(ts, dtype=np.float64) for ts in self.thresholds]
        self._missing = any(map(has_missing_state, self.thresholds))
        #: per feature, its finite thresholds (the thresholds but a last +inf)
        self._numbers = [ts[:-1] if has_missing_state(ts) else ts for ts in self.thresholds]
        self._json: str | None = None  # the compact JSON text, once written (:meth:`to_json`)
        self._categorical = [f for f, labels in enumerate(self.categories) if labels is not None]
        #: per feature, whether an instance may hold NaN there (:meth:`check_instances`)
        self._nan_allowed = np.asarray(
            [has_missing_state(ts) or (self._missing and not ts) for ts in self.thresholds], dtype=bool
        )

    # ------------------------------------------------------------------ construction
    def _validate(self, *, signed: bool) -> None:
        if len(self.feature_names) != len(self.thresholds):
            raise InvalidForestError(
                f"feature_names has {len(self.feature_names)} names for {len(self.thresholds)} features"
            )
        duplicated = duplicated_names(self.feature_names)
        if duplicated:
            raise InvalidForestError(f"feature names must be distinct, got duplicate feature names {duplicated}")
        if len(self.classes) < 1:
            raise InvalidForestError("a forest needs at least one class")
        if len(set(self.classes)) != len(self.classes):
            raise InvalidForestError(f"class labels must be distinct, got {list(self.classes)}")
        if not self.trees:
            raise InvalidForestError("a forest needs at least one tree")
        for f, ts in enumerate(self.thresholds):
            numbers = np.asarray(ts[:-1] if has_missing_state(ts) else ts, dtype=np.float64)
            if not np.all(np.isfinite(numbers)) or np.any(np.diff(np.asarray(ts, dtype=np.float64)) <= 0):
                raise InvalidForestError(
                    f"thresholds of feature {f} must be finite (but for a last +inf, missing values) "
                    "and strictly increasing"
                )
            with np.errstate(over="ignore"):  # a number past the float32 range is not one
                rounded = numbers.astype(np.float32).astype(np.float64)
            if np.any(rounded != numbers):
                raise InvalidForestError(
                    f"thresholds of feature {f} must be float32 numbers (use Forest.from_raw_trees, "
                    "which makes them canonical)"
                )
        if self.categories and len(self.categories) != len(self.thresholds):
            raise InvalidForestError(
                f"categories has {len(self.categories)} entries for {len(self.thresholds)} features"
            )
        if self.bounds and len(self.bounds) != len(self.thresholds):
            raise InvalidForestError(f"bounds has {len(self.bounds)} entries for {len(self.thresholds)} features")
        for f, labels in enumerate(self.categories):
            ts = self.thresholds[f]
            if labels is not None and ts != category_thresholds(len(labels), has_missing_state(ts)):
                raise InvalidForestError(
                    f"categorical feature {f} must have the thresholds 0.5, 1.5, ... (one per state; +inf last "
                    "for the missing state)"
                )
        n_thresholds = np.array([len(ts) for ts in self.thresholds], dtype=np.int64)
        for k, tree in enumerate(self.trees):
            sizes = {len(a) for a in (tree.feature, tree.split, tree.left, tree.right, tree.label)}
            if len(sizes) != 1 or tree.n_nodes == 0:
                raise InvalidForestError(f"tree {k}: node arrays must be non-empty and of equal length")
            self._validate_nodes(k, tree, n_thresholds)
            if tree.proba is not None:
                self._validate_proba(k, tree, signed)

    def _validate_nodes(self, k: int, tree: Tree, n_thresholds: np.ndarray) -> None:
        """Refuse tree ``k``'s first node (in node order) with a class, feature, threshold or
        child out of range, checked on whole node arrays."""
        feature, split, left, right, label = (
            np.fromiter(a, dtype=np.int64, count=tree.n_nodes)
            for a in (tree.feature, tree.split, tree.left, tree.right, tree.label)
        )
        node = np.arange(tree.n_nodes)
        leaf = feature < 0
        bad_class = leaf & ((label < 0) | (label >= len(self.classes)))
        bad_feature = ~leaf & (feature >= len(self.thresholds))
        tested = np.where(leaf | bad_feature, 0, feature)
        bad_split = ~leaf & ~bad_feature & ((split < 0) | (split >= n_thresholds[tested]))
        bad_child = ~leaf & ~((node < left) & (left < tree.n_nodes) & (node < right) & (right < tree.n_nodes))
        wrong = bad_class | bad_feature | bad_split | bad_child
        if not wrong.any():
            return
        i = int(np.argmax(wrong))
        if bad_class[i]:
            raise InvalidForestError(f"tree {k}, leaf {i}: class index {tree.label[i]} out of range")
        if bad_feature[i]:
            raise InvalidForestError(f"tree {k}, node {i}: feature {tree.feature[i]} out of range")
        if bad_split[i]:
            raise InvalidForestError(f"tree {k}, node {i}: threshold index {tree.split[i]} out of range")
        raise InvalidForestError(f"tree {k}, node {i}: children must follow their parent")

    def _validate_proba(self, k: int, tree: Tree, signed: bool) -> None:
        assert tree.proba is not None
        if len(tree.proba) != tree.n_nodes:
            raise InvalidForestError(f"tree {k}: proba must have one entry per node")
        n_classes = len(self.classes)
        leaves = [i for i, f in enumerate(tree.feature) if f < 0]
        for i in leaves:
            vector = tree.proba[i]
            if vector is None or len(vector) != n_classes:
                raise InvalidForestError(f"tree {k}, leaf {i}: needs a probability for each of the {n_classes} classes")
        values = np.array([tree.proba[i] for i in leaves], dtype=np.float64).reshape(len(leaves), n_classes)
        wrong = ~np.isfinite(values) | (False if signed else values < 0)
        if wrong.any():
            i = leaves[int(np.argmax(wrong.any(axis=1)))]
            raise InvalidForestError(
                f"tree {k}, leaf {i}: "
                + ("scores must be finite" if signed else "probabilities must be finite and non-negative")
            )

    @property
    def has_proba(self) -> bool:
        """Whether every tree keeps its leaves' class-probability vectors (needed by the soft vote)."""
        return all(t.proba is not None for t in self.trees)

    def with_vote(self, vote: str) -> Forest:
        """The same forest (categories and bounds included) deciding under ``vote`` (``"soft"`` or
        ``"hard"``)."""
        return Forest(
            thresholds=self.thresholds,
            trees=self.trees,
            classes=self.classes,
            feature_names=self.feature_names,
            source=self.source,
            categories=self.categories,
            bounds=self.bounds,
            vote=vote,
        )

    @property
    def vote(self) -> str:
        """The vote mode's name, ``"hard"``, ``"soft"`` or ``"additive"`` (:attr:`aggregation`'s)."""
        return self.aggregation.name

    @functools.cached_property
    def flat(self) -> FlatForest:
        """The trees as flat node arrays (:mod:`rfexplain.core.flat`), built on first use."""
        return FlatForest(self.trees, self.states_per_feature, self.aggregation)

    @classmethod
    def from_raw_trees(
        cls,
        raw_trees: Sequence[Mapping[str, Sequence[Any]]],
        *,
        n_features: int,
        classes: Sequence[Any],
        feature_names: Sequence[str] | None = None,
        source: str = "",
        vote: str = "hard",
        missing: Sequence[int] = (),
        categories: Sequence[Sequence[str] | None] = (),
    ) -> Forest:
        """Build a forest from trees with raw thresholds.

        Each raw tree is a mapping with equal-length sequences ``feature`` (``-1`` or any negative
        number at leaves), ``threshold`` (float, ignored at leaves), ``left``, ``right`` and
        ``label`` (class index, used at leaves), and optionally ``proba`` (each leaf's
        class-probability vector, anything at internal nodes; required by ``vote="soft"``). Nodes
        go left iff ``float32(x[feature]) <= threshold``; thresholds are made canonical (see the
        module docstring). A threshold ``+inf`` asks whether the value is a number (NaN goes
        right); the features in ``missing`` may be missing even where no split asks so (every
        split sends their NaN right). ``categories`` (optional, see :class:`Forest`) gives every
        categorical feature all its thresholds ``0.5, 1.5, ...``, tested or not.
        """
        per_feature: list[set[float]] = [set() for _ in range(n_features)]
        for raw in raw_trees:
            for f, t in zip(raw["feature"], raw["threshold"]):
                if f >= 0:
                    if f >= n_features:
                        raise InvalidForestError(f"feature index {f} out of range for {n_features} features")
                    per_feature[int(f)].add(largest_float32_at_most(float(t)))
        for f in missing:
            per_feature[int(f)].add(math.inf)
        for f, labels in enumerate(categories):
            if labels is not None:
                per_feature[f].update(category_thresholds(len(labels), math.inf in per_feature[f]))
        thresholds = [tuple(sorted(s)) for s in per_feature]
        index = [{t: j for j, t in enumerate(ts)} for ts in thresholds]
        trees = []
        for raw in raw_trees:
            feature = tuple(int(f) if f >= 0 else -1 for f in raw["feature"])
            trees.append(
                Tree(
                    feature=feature,
                    split=tuple(
                        index[f][largest_float32_at_most(float(t))] if f >= 0 else -1
                        for f, t in zip(feature, raw["threshold"])
                    ),
                    left=tuple(int(c) if f >= 0 else -1 for f, c in zip(feature, raw["left"])),
                    right=tuple(int(c) if f >= 0 else -1 for f, c in zip(feature, raw["right"])),
                    label=tuple(int(c) if f < 0 else -1 for f, c in zip(feature, raw["label"])),
                    proba=leaf_vectors(feature, raw["proba"]) if raw.get("proba") is not None else None,
                )
            )
        return cls(
            thresholds=thresholds,
            trees=trees,
            classes=classes,
            feature_names=feature_names,
            source=source,
            vote=vote,
            categories=categories or None,
        )

    @classmethod
    def from_sklearn(
        cls, model: Any, feature_names: Sequence[str] | None = None, vote: str = "auto", missing: Any = "learned"
    ) -> Forest:
        """Discretise a fitted scikit-learn tree classifier.

        Accepts ``RandomForestClassifier``, ``ExtraTreesClassifier``, ``DecisionTreeClassifier``,
        the gradient-boosted ``GradientBoostingClassifier`` and ``HistGradientBoostingClassifier``
        (:mod:`rfexplain.core.boosted_import`), ``xgboost.XGBClassifier`` and ``Booster``
        (:mod:`rfexplain.core.xgboost_import`), ``lightgbm.LGBMClassifier`` and ``Booster``
        (:mod:`rfexplain.core.lightgbm_import`), all under the additive vote, and a fitted
        ``Pipeline`` whose only real step is one of them. Feature names come from
        ``feature_names``, else ``feature_names_in_``, else ``x0, x1, ...``; ``feature_names``
        must be a sequence (not a string) of distinct names and agree with ``feature_names_in_``
        when the model has them (:class:`InvalidInstanceError` otherwise). ``vote`` is
        ``"auto"`` (what the model's own ``predict`` does: soft for random forests and extra
        trees, hard -- the argmax of ``tree_.value`` -- for a single decision tree), ``"soft"`` or
        ``"hard"``; the leaves' class-probability vectors are kept whatever the mode. ``missing``
        names the features whose missing values (NaN) instances may hold, routed as the model's
        ``predict`` routes them (:func:`rfexplain.core.missing_routes.missing_features`):
        ``"learned"`` (default; every tested feature of a model trained with missing values, none
        for one trained without), ``"all"``, ``"none"``, or a sequence of names or indices.

        Raises
        ------
        UnsupportedModelError
            For any other estimator, multi-output models, or pipelines with transformers.
        NotFittedError
            For a model that has not been fitted.
        """
        from rfexplain.core.sklearn_import import raw_trees_of

        if vote not in VOTE_MODES:
            raise InvalidForestError(f"vote must be one of {list(VOTE_MODES)}. Got {vote!r} instead.")
        imported = raw_trees_of(model, missing, feature_names)
        if imported.own_vote == "additive" and vote not in ("auto", "additive"):
            raise InvalidForestError(
                f"a gradient-boosted model decides by its summed scores: vote must be 'auto'. Got {vote!r} instead."
            )
        given = check_feature_names(feature_names, imported.feature_names, imported.n_features)
        names = given if given is not None else imported.feature_names
        return cls.from_raw_trees(
            imported.trees,
            n_features=imported.n_features,
            classes=imported.classes,
            feature_names=names,
            source=imported.source,
            vote=imported.own_vote if vote == "auto" else vote,
            missing=imported.missing,
            categories=imported.categories,
        )

    # ------------------------------------------------------------------ sizes
    @property
    def n_features(self) -> int:
        return len(self.thresholds)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_trees(self) -> int:
        return len(self.trees)

    def n_states(self, feature: int) -> int:
        """Number of states (intervals) of ``feature``: its number of thresholds plus one."""
        return len(self.thresholds[feature]) + 1

    def accepts_missing(self, feature: int) -> bool:
        """Whether ``feature`` may be missing (NaN): its last state, above a threshold ``+inf``."""
        return has_missing_state(self.thresholds[feature])

    @property
    def states_per_feature(self) -> tuple[int, ...]:
        return tuple(len(ts) + 1 for ts in self.thresholds)

    @property
    def tested_features(self) -> tuple[int, ...]:
        """Features some tree tests: the only ones that can appear in a reason."""
        return tuple(f for f, ts in enumerate(self.thresholds) if ts)

    def depth_weights(self) -> list[float]:
        """For every feature, the sum of ``2**-depth`` over the tree nodes that test it: high for
        features tested near the roots of many trees (a variable-order heuristic)."""
        weight = [0.0] * self.n_features
        for tree in self.trees:
            stack = [(0, 1.0)]
            while stack:
                node, w = stack.pop()
                f = tree.feature[node]
                if f >= 0:
                    weight[f] += w
                    stack += [(tree.left[node], w / 2), (tree.right[node], w / 2)]
        return weight

    def statistics(self) -> dict[str, Any]:
        """Size statistics: trees, nodes, leaves, depth, thresholds and states per feature."""
        return {
            "trees": self.n_trees,
            "nodes": sum(t.n_nodes for t in self.trees),
            "leaves": sum(t.n_leaves for t in self.trees),
            "max_depth": max(t.depth() for t in self.trees),
            "features": self.n_features,
            "tested_features": len(self.tested_features),
            "classes": self.n_classes,
            "thresholds": sum(len(ts) for ts in self.thresholds),
            "states_per_feature": dict(zip(self.feature_names, self.states_per_feature)),
            "state_vectors": math.prod(self.states_per_feature),
        }

    # ------------------------------------------------------------------ semantics
    def check_instances(self, X: Any) -> np.ndarray:
        """Validate raw instances and cast them to float32 exactly as scikit-learn does.

        Accepts one instance (1-D) or many (2-D): arrays, lists, pandas rows or frames; pandas
        input with string labels is matched by name to :attr:`feature_names`
        (:func:`rfexplain.core.instances.as_matrix`). Returns a 2-D float32 array. Raises
        :class:`InvalidInstanceError` for a wrong number of features, missing, duplicated or
        unknown names, non-numeric values, NaN in a feature that cannot be missing
        (:meth:`accepts_missing`; a feature no tree tests may be, once some feature may), or an
        infinite value or one beyond the float32 range (naming the feature): one policy for every
        forest, whether read from scikit-learn or from JSON, and the one scikit-learn's own
        ``predict`` applies; for a value outside a feature's :attr:`bounds`; and for a value of a
        categorical feature (:attr:`categories`) that is not an integer. A categorical feature
        whose last state but the missing one is :data:`~rfexplain.core.set_splits.OTHER` reads
        every integer beyond its states as that state, negative ones too (a boosted model's
        unknown category codes, :mod:`rfexplain.core.boosted_nodes`). A categorical feature's value
        may also be given as the label of its state (a category: ``"red"``; another string is the
        ``OTHER`` state, :func:`rfexplain.core.instances.labelled_values`), and a string is read
        as 0 in a feature no tree tests of a forest with categorical features.
        """
        arr = self.matrix(X)
        if arr.ndim != 2:
            raise InvalidInstanceError(f"expected a 1-D instance or a 2-D array, got {arr.ndim} dimensions")
        if arr.shape[1] != self.n_features:
            raise InvalidInstanceError(f"expected {self.n_features} features, got {arr.shape[1]}")
        missing = np.isnan(arr)
        # NaN where a state stands for it, and in the features no tree tests once some feature may be
        # missing (the trees ignore them, as scikit-learn's predict does)
        bad = missing & ~self._nan_allowed if missing.any() else missing
        if bad.any():
            row, col = map(int, np.argwhere(bad)[0])
            raise InvalidInstanceError(
                f"instance {row} has NaN in feature {col} ({self.feature_names[col]!r}); "
                + (
                    "missing values of this feature are not covered: the forest was read without them "
                    "(Forest.from_sklearn(model, missing=[...]) names the features that may be missing)"
                    if any(map(has_missing_state, self.thresholds))
                    else "missing values are not supported: the model shows no sign of training with missing "
                    "values (Forest.from_sklearn(model, missing='all') reads them as its predict routes them)"
                )
            )
        with np.errstate(over="ignore"):
            arr32 = arr.astype(np.float32)
        bad = ~np.isfinite(arr32) & ~missing
        if bad.any():
            row, col = map(int, np.argwhere(bad)[0])
            raise InvalidInstanceError(
                f"instance {row} has {float(arr[row, col])!r} in feature {col} ({self.feature_names[col]!r}); "
                "infinite values and values beyond the float32 range are refused, as scikit-learn refuses them"
            )
        for f in self._categorical:
            labels = self.categories[f]
            assert labels is not None
            arr32[:, f] = category_values(arr[:, f], labels, len(self._numbers[f]), self.feature_names[f])
        for f, bound in enumerate(self.bounds):
            if bound is not None:
                outside = (arr32[:, f] < bound[0]) | (arr32[:, f] > bound[1])
                if outside.any():
                    row = int(np.flatnonzero(outside)[0])
                    raise InvalidInstanceError(
                        f"instance {row} has {self.feature_names[f]} = {float(arr32[row, f])!r}, outside its "
                        f"bounds [{bound[0]!r}, {bound[1]!r}]"
                    )
        return arr32

    def matrix(self, X: Any) -> np.ndarray:
        """Raw instances as a 2-D float64 array in the order of :attr:`feature_names`, not checked
        (:func:`rfexplain.core.instances.as_matrix`): a categorical feature's value may be given
        as its label, and a string is read as 0 in a feature no tree tests (of a forest with
        categorical features)."""
        labels = [c if c is not None or ts else () for c, ts in zip(self.categories, self.thresholds)]
        return as_matrix(X, self.feature_names, labels)

    def states(self, X: Any) -> np.ndarray:
        """The state matrix of raw instances: entry ``[i, f]`` is the state of ``X[i, f]`` (NaN is
        the last state, above the threshold ``+inf`` of a feature that may be missing)."""
        return self.checked_states(self.check_instances(X))

    def checked_states(self, values: np.ndarray) -> np.ndarray:
        """:meth:`states` of a matrix :meth:`check_instances` returned (not checked again). One
        row is looked up with :func:`bisect.bisect_left` on each feature's thresholds, more rows
        with one :func:`numpy.searchsorted` per feature (the same states)."""
        x64 = np.asarray(values).astype(np.float64)
        if x64.shape[0] == 1:
            row = x64[0].tolist()
            return np.asarray(
                [[len(ts) if v != v else bisect.bisect_left(ts, v) for ts, v in zip(self.thresholds, row)]],
                dtype=np.int64,
            ).reshape(1, len(row))
        out = np.empty(x64.shape, dtype=np.int64)
        for f, ts in enumerate(self._threshold_arrays):
            out[:, f] = np.searchsorted(ts, x64[:, f], side="left")
        return out

    def predict_states(self, S: np.ndarray) -> np.ndarray:
        """Class index decided under the forest's vote (ties to the lowest index) for each state
        row (:meth:`Vote.decide_rows <rfexplain.core.vote.Vote.decide_rows>`)."""
        S = np.asarray(S, dtype=np.int64).reshape(-1, self.n_features)
        flat = self.flat
        return self.aggregation.decide_rows(flat.tree_leaves(S), flat)

    def decide(self, states: Sequence[int]) -> int:
        """The class index decided on one state vector under the forest's vote: a plain walk down
        each tree (cheaper than :meth:`predict_states` for one row), then the vote's exact
        decision (:meth:`Vote.decide <rfexplain.core.vote.Vote.decide>`)."""
        leaves = []
        for tree in self.trees:
            node = 0
            feature, split, left, right = tree.feature, tree.split, tree.left, tree.right
            while feature[node] >= 0:
                node = left[node] if states[feature[node]] <= split[node] else right[node]
            leaves.append(node)
        return self.aggregation.decide(leaves)

    def predict_index(self, X: Any) -> np.ndarray:
        """Class index of the decision for raw instances."""
        return self.predict_states(self.states(X))

    def predict(self, X: Any) -> np.ndarray:
        """Class labels of the decision for raw instances, under the forest's vote mode."""
        return np.asarray(self.classes, dtype=object)[self.predict_index(X)].astype(np.asarray(self.classes).dtype)

    def class_index(self, label: Any) -> int:
        """Index of a class label in :attr:`classes`; :class:`UnknownClassError` otherwise."""
        from rfexplain.core.errors import UnknownClassError

        for i, c in enumerate(self.classes):
            if c == label or str(c) == str(label):
                return i
        raise UnknownClassError(f"class must be one of {list(self.classes)}. Got {label!r} instead.")

    def agreement(self, X: Any, model: Any) -> Agreement:
        """Fraction of rows of ``X`` where the forest's decision equals ``model.predict``."""
        from rfexplain.core.boosted_import import boosted_predict

        ours = self.predict(X)
        theirs = boosted_predict(model, model_input(model, self.check_instances(X)))
        same = np.array([a == b for a, b in zip(ours.tolist(), theirs.tolist())], dtype=bool)
        fraction = float(same.mean()) if len(same) else 1.0
        return Agreement(fraction, np.flatnonzero(~same))

    # ------------------------------------------------------------------ raw values of states
    def state_interval(self, feature: int, state: int) -> tuple[float, float]:
        """The raw interval ``(low, high]`` of a state (``-inf``/``inf`` at the ends; ``(inf, inf)``
        for the missing state)."""
        ts = self.thresholds[feature]
        low = ts[state - 1] if state > 0 else -math.inf
        high = ts[state] if state < len(ts) else math.inf
        return low, high

    def state_value(self, feature: int, state: int) -> float:
        """A float32 raw value whose state is ``state``: NaN for the missing state, else the middle
        of the interval when one is at hand, else its upper threshold (or the next float32 above
        the last threshold).

        An end state (unbounded on one side) is represented one neighbouring interval's width
        beyond its threshold, so a witness stays on the scale of the feature's thresholds (a
        feature split at 0.08 and 0.10 gets 0.06, not -0.92); with a single threshold, one unit
        or the threshold's magnitude is the step."""
        low, high = self.state_interval(feature, state)
        if low == math.inf:  # the missing state
            return math.nan
        if self.categories and self.categories[feature] is not None:  # its value is its state
            return float(state)
        bound = self.bounds[feature] if self.bounds else None
        if bound is not None:  # the part of the state inside the bounds (never empty)
            low = max(low, float(np.nextafter(np.float32(bound[0]), np.float32(-np.inf))))
            high = min(high, bound[1])
        ts = self._numbers[feature]
        if math.isinf(low) and math.isinf(high):
            candidates = [0.0]
        elif math.isinf(low):
            steps = [ts[1] - ts[0]] if len(ts) > 1 else []
            candidates = [high - step for step in [*steps, max(1.0, abs(high))]] + [high]
        elif math.isinf(high):
            steps = [ts[-1] - ts[-2]] if len(ts) > 1 else []
            above = float(np.nextafter(np.float32(low), np.float32(np.inf)))
            candidates = [low + step for step in [*steps, max(1.0, abs(low))]] + [above]
        else:
            candidates = [(low + high) / 2, high]
        for value in candidates:
            with np.errstate(over="ignore"):  # a step past the float32 range is skipped below
                v32 = float(np.float32(value))
            if low < v32 <= high and math.isfinite(v32):
                return v32
        raise ValueError(f"state {state} of feature {self.feature_names[feature]!r} holds no float32 value")

    def values_for_states(self, states: Sequence[int], base_values: Sequence[float]) -> tuple[float, ...]:
        """Raw values realising ``states``: ``base_values`` where their state already matches,
        a representative of the state elsewhere (used to build witness instances)."""
        base_states = self.states(np.asarray(base_values, dtype=np.float64))[0]
        return tuple(
            float(np.float32(b)) if int(s) == int(bs) else self.state_value(f, int(s))
            for f, (s, b, bs) in enumerate(zip(states, base_values, base_states))
        )

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description of the forest (see :meth:`to_json`)."""
        return {
            "format": _FORMAT_NAME,
            "version": FOREST_FORMAT_VERSION,
            "source": self.source,
            "vote": self.vote,
            "classes": [to_python(c) for c in self.classes],
            "feature_names": list(self.feature_names),
            "thresholds": [[t for t in ts if math.isfinite(t)] for ts in self.thresholds],
            **({"missing": [f for f in range(self.n_features) if self.accepts_missing(f)]} if self._missing else {}),
            **({"categories": [None if c is None else list(c) for c in self.categories]} if self.categories else {}),
            **({"bounds": [None if b is None else list(b) for b in self.bounds]} if self.bounds else {}),
            "trees": [
                {
                    "feature": list(t.feature),
                    "split": list(t.split),
                    "left": list(t.left),
                    "right": list(t.right),
                    "label": list(t.label),
                    **({"proba": [list(v) if v is not None else None for v in t.proba]} if t.proba is not None else {}),
                }
                for t in self.trees
            ],
        }

    def to_json(self, indent: int | None = None) -> str:
        """Serialise losslessly (floats are written with ``repr`` precision). The compact text is
        kept: a batch fingerprints the forest and hands it to its workers."""
        if indent is not None:
            return json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if self._json is None:
            self._json = json.dumps(self.to_dict(), allow_nan=False)
        return self._json

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Forest:
        if not isinstance(doc, Mapping) or doc.get("format") != _FORMAT_NAME:
            raise ForestFormatError("not an rfexplain forest document (missing format field)")
        version = doc.get("version")
        if not isinstance(version, int) or version < 1:
            raise ForestFormatError(f"invalid forest format version {version!r}")
        if version > FOREST_FORMAT_VERSION:
            raise ForestFormatError(
                f"forest format version {version} is newer than this release supports "
                f"({FOREST_FORMAT_VERSION}); upgrade rfexplain"
            )
        try:
            trees = [
                Tree(
                    **{key: tuple(map(int, t[key])) for key in ("feature", "split", "left", "right", "label")},
                    proba=leaf_vectors(t["feature"], t["proba"]) if t.get("proba") is not None else None,
                )
                for t in doc["trees"]
            ]
            missing = set(doc.get("missing", ())) if version >= 3 else set()
            return cls(
                thresholds=[[*ts, math.inf] if f in missing else ts for f, ts in enumerate(doc["thresholds"])],
                trees=trees,
                classes=doc["classes"],
                feature_names=doc["feature_names"],
                source=str(doc.get("source", "")),
                categories=doc.get("categories"),
                bounds=doc.get("bounds"),
                vote=str(doc.get("vote", "hard")) if version >= 2 else "hard",
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ForestFormatError(f"corrupt forest document: {exc}") from None

    @classmethod
    def from_json(cls, text: str) -> Forest:
        """Read a forest written by :meth:`to_json`; :class:`ForestFormatError` when corrupt."""
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ForestFormatError(f"corrupt forest JSON: {exc}") from None
        return cls.from_dict(doc)

    # ------------------------------------------------------------------ value semantics
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Forest):
            return NotImplemented
        return (
            self.thresholds == other.thresholds
            and self.trees == other.trees
            and self.classes == other.classes
            and self.feature_names == other.feature_names
            and self.categories == other.categories
            and self.bounds == other.bounds
            and self.vote == other.vote
        )

    def __hash__(self) -> int:
        return hash(
            (self.thresholds, self.trees, self.classes, self.feature_names, self.categories, self.bounds, self.vote)
        )

    def __repr__(self) -> str:
        return (
            f"Forest(trees={self.n_trees}, features={self.n_features}, classes={list(self.classes)}, "
            f"thresholds={sum(len(ts) for ts in self.thresholds)}, vote={self.vote!r})"
        )
