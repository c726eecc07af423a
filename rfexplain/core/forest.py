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

Each tree votes for the class of the leaf it reaches (the largest entry of ``tree_.value``, ties
to the lowest class index); the forest decides by hard majority, ties to the lowest class index.

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

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfexplain.core.errors import ForestFormatError, InvalidForestError, InvalidInstanceError
from rfexplain.core.pyvalues import to_python

__all__ = [
    "Tree",
    "Forest",
    "FeatureSpace",
    "Agreement",
    "FOREST_FORMAT_VERSION",
    "largest_float32_at_most",
    "winning_class",
    "winning_classes",
]

FOREST_FORMAT_VERSION = 1
_FORMAT_NAME = "rfexplain-forest"


def winning_class(votes: Sequence[int]) -> int:
    """The hard-majority decision on one row of vote counts (one per class): the class with the
    most votes, ties going to the lowest class index (as scikit-learn's ``argmax``).

    The package's one tie rule; :func:`winning_classes` is its vectorised form.

    >>> winning_class((2, 3, 3)), winning_class((0, 0))
    (1, 0)
    """
    best = 0
    for c in range(1, len(votes)):
        if votes[c] > votes[best]:
            best = c
    return best


def winning_classes(votes: np.ndarray) -> np.ndarray:
    """:func:`winning_class` of every row of a ``(rows, classes)`` vote-count array."""
    return np.argmax(votes, axis=1)


@dataclass(frozen=True)
class Tree:
    """One decision tree over discretised features, as parallel node arrays.

    Node 0 is the root. At an internal node, ``feature[i] >= 0`` is the tested feature and
    ``split[i]`` the index ``j`` of the threshold in the forest's sorted thresholds of that
    feature: states ``<= j`` go to ``left[i]``, the others to ``right[i]``. At a leaf,
    ``feature[i] == -1`` and ``label[i]`` is the class index the tree votes for.
    """

    feature: tuple[int, ...]
    split: tuple[int, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    label: tuple[int, ...]

    @property
    def n_nodes(self) -> int:
        return len(self.feature)

    @property
    def n_leaves(self) -> int:
        return sum(1 for f in self.feature if f < 0)

    def is_leaf(self, node: int) -> bool:
        return self.feature[node] < 0

    def depth(self) -> int:
        """Length of the longest root-to-leaf path (0 for a single leaf)."""
        best = 0
        stack = [(0, 0)]
        while stack:
            node, d = stack.pop()
            if self.is_leaf(node):
                best = max(best, d)
            else:
                stack.append((self.left[node], d + 1))
                stack.append((self.right[node], d + 1))
        return best

    def paths(self, n_states: Sequence[int]) -> Iterator[tuple[dict[int, tuple[int, int]], int]]:
        """Yield every *feasible* root-to-leaf path as ``(box, label)``.

        ``box`` maps each feature tested on the path to the inclusive range ``(lo, hi)`` of states
        that follow the path; a path whose range becomes empty on some feature can be reached by
        no input and is not yielded.
        """
        stack: list[tuple[int, dict[int, tuple[int, int]]]] = [(0, {})]
        while stack:
            node, box = stack.pop()
            f = self.feature[node]
            if f < 0:
                yield box, self.label[node]
                continue
            lo, hi = box.get(f, (0, n_states[f] - 1))
            j = self.split[node]
            if lo <= min(hi, j):
                stack.append((self.left[node], {**box, f: (lo, min(hi, j))}))
            if max(lo, j + 1) <= hi:
                stack.append((self.right[node], {**box, f: (max(lo, j + 1), hi)}))


@dataclass(frozen=True)
class FeatureSpace:
    """What is needed to turn states back into conditions on raw values: names and thresholds."""

    feature_names: tuple[str, ...]
    thresholds: tuple[tuple[float, ...], ...]
    classes: tuple[Any, ...]

    def n_states(self, feature: int) -> int:
        return len(self.thresholds[feature]) + 1


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
        Defaults to ``x0, x1, ...``.
    source : str, optional
        A free-form description of where the forest came from.
    """

    def __init__(
        self,
        *,
        thresholds: Sequence[Sequence[float]],
        trees: Sequence[Tree],
        classes: Sequence[Any],
        feature_names: Sequence[str] | None = None,
        source: str = "",
    ) -> None:
        self.thresholds: tuple[tuple[float, ...], ...] = tuple(tuple(float(t) for t in ts) for ts in thresholds)
        self.trees: tuple[Tree, ...] = tuple(trees)
        self.classes: tuple[Any, ...] = tuple(classes)
        n = len(self.thresholds)
        if feature_names is None:
            feature_names = [f"x{i}" for i in range(n)]
        self.feature_names: tuple[str, ...] = tuple(str(name) for name in feature_names)
        self.source = source
        self._validate()
        self.space = FeatureSpace(self.feature_names, self.thresholds, self.classes)
        self._threshold_arrays = [np.asarray(ts, dtype=np.float64) for ts in self.thresholds]
        self._node_arrays = [
            tuple(np.asarray(a, dtype=np.int64) for a in (t.feature, t.split, t.left, t.right, t.label))
            for t in self.trees
        ]

    # ------------------------------------------------------------------ construction
    def _validate(self) -> None:
        if len(self.feature_names) != len(self.thresholds):
            raise InvalidForestError(
                f"feature_names has {len(self.feature_names)} names for {len(self.thresholds)} features"
            )
        if len(self.classes) < 1:
            raise InvalidForestError("a forest needs at least one class")
        if len(set(self.classes)) != len(self.classes):
            raise InvalidForestError(f"class labels must be distinct, got {list(self.classes)}")
        if not self.trees:
            raise InvalidForestError("a forest needs at least one tree")
        for f, ts in enumerate(self.thresholds):
            if any(not math.isfinite(t) for t in ts) or any(a >= b for a, b in zip(ts, ts[1:])):
                raise InvalidForestError(f"thresholds of feature {f} must be finite and strictly increasing")
            if any(float(np.float32(t)) != t for t in ts):
                raise InvalidForestError(
                    f"thresholds of feature {f} must be float32 numbers (use Forest.from_raw_trees, "
                    "which makes them canonical)"
                )
        for k, tree in enumerate(self.trees):
            sizes = {len(a) for a in (tree.feature, tree.split, tree.left, tree.right, tree.label)}
            if len(sizes) != 1 or tree.n_nodes == 0:
                raise InvalidForestError(f"tree {k}: node arrays must be non-empty and of equal length")
            for i in range(tree.n_nodes):
                f = tree.feature[i]
                if f < 0:
                    if not 0 <= tree.label[i] < len(self.classes):
                        raise InvalidForestError(f"tree {k}, leaf {i}: class index {tree.label[i]} out of range")
                    continue
                if f >= len(self.thresholds):
                    raise InvalidForestError(f"tree {k}, node {i}: feature {f} out of range")
                if not 0 <= tree.split[i] < len(self.thresholds[f]):
                    raise InvalidForestError(f"tree {k}, node {i}: threshold index {tree.split[i]} out of range")
                if not (i < tree.left[i] < tree.n_nodes and i < tree.right[i] < tree.n_nodes):
                    raise InvalidForestError(f"tree {k}, node {i}: children must follow their parent")

    @classmethod
    def from_raw_trees(
        cls,
        raw_trees: Sequence[Mapping[str, Sequence[Any]]],
        *,
        n_features: int,
        classes: Sequence[Any],
        feature_names: Sequence[str] | None = None,
        source: str = "",
    ) -> Forest:
        """Build a forest from trees with raw thresholds.

        Each raw tree is a mapping with equal-length sequences ``feature`` (``-1`` or any negative
        number at leaves), ``threshold`` (float, ignored at leaves), ``left``, ``right`` and
        ``label`` (class index, used at leaves). Nodes go left iff ``float32(x[feature]) <=
        threshold``; thresholds are made canonical (see the module docstring).
        """
        per_feature: list[set[float]] = [set() for _ in range(n_features)]
        for raw in raw_trees:
            for f, t in zip(raw["feature"], raw["threshold"]):
                if f >= 0:
                    if f >= n_features:
                        raise InvalidForestError(f"feature index {f} out of range for {n_features} features")
                    per_feature[int(f)].add(largest_float32_at_most(float(t)))
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
                )
            )
        return cls(thresholds=thresholds, trees=trees, classes=classes, feature_names=feature_names, source=source)

    @classmethod
    def from_sklearn(cls, model: Any, feature_names: Sequence[str] | None = None) -> Forest:
        """Discretise a fitted scikit-learn tree classifier.

        Accepts ``RandomForestClassifier``, ``ExtraTreesClassifier``, ``DecisionTreeClassifier``
        and a fitted ``Pipeline`` whose only real step is one of them. Feature names come from
        ``feature_names``, else ``feature_names_in_``, else ``x0, x1, ...``.

        Raises
        ------
        UnsupportedModelError
            For any other estimator, multi-output models, or pipelines with transformers.
        NotFittedError
            For a model that has not been fitted.
        """
        from rfexplain.core.sklearn_import import raw_trees_of

        imported = raw_trees_of(model)
        names = feature_names if feature_names is not None else imported.feature_names
        if names is not None and len(names) != imported.n_features:
            raise InvalidInstanceError(
                f"feature_names has {len(names)} names but the model has {imported.n_features} features"
            )
        return cls.from_raw_trees(
            imported.trees,
            n_features=imported.n_features,
            classes=imported.classes,
            feature_names=names,
            source=imported.source,
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

        Accepts one instance (1-D) or many (2-D): arrays, lists, pandas rows or frames. Returns a
        2-D float32 array. Raises :class:`InvalidInstanceError` for a wrong number of features,
        non-numeric values, NaN, or an infinite value or one beyond the float32 range (naming the
        feature): one policy for every forest, whether read from scikit-learn or from JSON, and
        the one scikit-learn's own ``predict`` applies.
        """
        if hasattr(X, "to_numpy"):
            X = X.to_numpy()
        try:
            arr = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidInstanceError(f"instances must be numeric: {exc}") from None
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2:
            raise InvalidInstanceError(f"expected a 1-D instance or a 2-D array, got {arr.ndim} dimensions")
        if arr.shape[1] != self.n_features:
            raise InvalidInstanceError(f"expected {self.n_features} features, got {arr.shape[1]}")
        bad = np.isnan(arr)
        if bad.any():
            row, col = map(int, np.argwhere(bad)[0])
            raise InvalidInstanceError(
                f"instance {row} has NaN in feature {col} ({self.feature_names[col]!r}); "
                "missing values are not supported"
            )
        with np.errstate(over="ignore"):
            out = arr.astype(np.float32)
        bad = ~np.isfinite(out)
        if bad.any():
            row, col = map(int, np.argwhere(bad)[0])
            raise InvalidInstanceError(
                f"instance {row} has {arr[row, col]!r} in feature {col} ({self.feature_names[col]!r}); "
                "infinite values and values beyond the float32 range are refused, as scikit-learn refuses them"
            )
        return out

    def states(self, X: Any) -> np.ndarray:
        """The state matrix of raw instances: entry ``[i, f]`` is the state of ``X[i, f]``."""
        x64 = self.check_instances(X).astype(np.float64)
        out = np.empty(x64.shape, dtype=np.int64)
        for f, ts in enumerate(self._threshold_arrays):
            out[:, f] = np.searchsorted(ts, x64[:, f], side="left")
        return out

    def tree_votes(self, S: np.ndarray) -> np.ndarray:
        """Class index each tree votes for, for every row of a state matrix: shape (rows, trees)."""
        S = np.asarray(S, dtype=np.int64)
        if S.ndim == 1:
            S = S[None, :]
        rows = np.arange(S.shape[0])
        votes = np.empty((S.shape[0], self.n_trees), dtype=np.int64)
        for k, (feature, split, left, right, label) in enumerate(self._node_arrays):
            node = np.zeros(S.shape[0], dtype=np.int64)
            while True:
                f = feature[node]
                internal = f >= 0
                if not internal.any():
                    break
                go_left = S[rows, np.where(internal, f, 0)] <= split[node]
                node = np.where(internal, np.where(go_left, left[node], right[node]), node)
            votes[:, k] = label[node]
        return votes

    def vote_counts(self, S: np.ndarray) -> np.ndarray:
        """Votes per class for every row of a state matrix: shape (rows, classes)."""
        votes = self.tree_votes(S)
        counts = np.zeros((votes.shape[0], self.n_classes), dtype=np.int64)
        for c in range(self.n_classes):
            counts[:, c] = (votes == c).sum(axis=1)
        return counts

    def predict_states(self, S: np.ndarray) -> np.ndarray:
        """Class index decided by hard majority (ties to the lowest index) for each state row."""
        return winning_classes(self.vote_counts(S))

    def predict_index(self, X: Any) -> np.ndarray:
        """Class index of the hard-vote decision for raw instances."""
        return self.predict_states(self.states(X))

    def predict(self, X: Any) -> np.ndarray:
        """Class labels of the hard-vote decision for raw instances (docs/design.md, section 1)."""
        return np.asarray(self.classes, dtype=object)[self.predict_index(X)].astype(np.asarray(self.classes).dtype)

    def class_index(self, label: Any) -> int:
        """Index of a class label in :attr:`classes`; :class:`UnknownClassError` otherwise."""
        from rfexplain.core.errors import UnknownClassError

        for i, c in enumerate(self.classes):
            if c == label or str(c) == str(label):
                return i
        raise UnknownClassError(f"class must be one of {list(self.classes)}. Got {label!r} instead.")

    def agreement(self, X: Any, model: Any) -> Agreement:
        """Fraction of rows of ``X`` where the hard vote equals ``model.predict`` (soft vote)."""
        ours = self.predict(X)
        theirs = np.asarray(model.predict(self.check_instances(X)))
        same = np.array([a == b for a, b in zip(ours.tolist(), theirs.tolist())], dtype=bool)
        fraction = float(same.mean()) if len(same) else 1.0
        return Agreement(fraction, np.flatnonzero(~same))

    # ------------------------------------------------------------------ raw values of states
    def state_interval(self, feature: int, state: int) -> tuple[float, float]:
        """The raw interval ``(low, high]`` of a state (``-inf``/``inf`` at the ends)."""
        ts = self.thresholds[feature]
        low = ts[state - 1] if state > 0 else -math.inf
        high = ts[state] if state < len(ts) else math.inf
        return low, high

    def state_value(self, feature: int, state: int) -> float:
        """A float32 raw value whose state is ``state`` (a round number inside the interval when
        one is at hand, else the interval's upper threshold or the next float32 above the last)."""
        low, high = self.state_interval(feature, state)
        if math.isinf(low) and math.isinf(high):
            candidates = [0.0]
        elif math.isinf(low):
            candidates = [high - max(1.0, abs(high)), high]
        elif math.isinf(high):
            candidates = [low + max(1.0, abs(low)), float(np.nextafter(np.float32(low), np.float32(np.inf)))]
        else:
            candidates = [(low + high) / 2, high]
        for value in candidates:
            v32 = float(np.float32(value))
            if low < v32 <= high:
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
            "classes": [to_python(c) for c in self.classes],
            "feature_names": list(self.feature_names),
            "thresholds": [list(ts) for ts in self.thresholds],
            "trees": [
                {
                    "feature": list(t.feature),
                    "split": list(t.split),
                    "left": list(t.left),
                    "right": list(t.right),
                    "label": list(t.label),
                }
                for t in self.trees
            ],
        }

    def to_json(self, indent: int | None = None) -> str:
        """Serialise losslessly (floats are written with ``repr`` precision)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

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
                Tree(**{key: tuple(int(v) for v in t[key]) for key in ("feature", "split", "left", "right", "label")})
                for t in doc["trees"]
            ]
            return cls(
                thresholds=doc["thresholds"],
                trees=trees,
                classes=doc["classes"],
                feature_names=doc["feature_names"],
                source=str(doc.get("source", "")),
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
        )

    def __hash__(self) -> int:
        return hash((self.thresholds, self.trees, self.classes, self.feature_names))

    def __repr__(self) -> str:
        return (
            f"Forest(trees={self.n_trees}, features={self.n_features}, classes={list(self.classes)}, "
            f"thresholds={sum(len(ts) for ts in self.thresholds)})"
        )


def largest_float32_at_most(t: float) -> float:
    """The largest float32 number not above ``t`` (as a float): the same test ``x <= t`` for
    every float32 ``x``."""
    f = np.float32(t)
    if float(f) > t:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)
