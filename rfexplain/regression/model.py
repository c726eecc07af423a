"""A regression forest read from scikit-learn: its trees over states and its exact prediction.

``RandomForestRegressor``, ``ExtraTreesRegressor`` and ``DecisionTreeRegressor`` (one output)
are read as the classifiers are (:mod:`rfexplain.core.sklearn_import`: float32 inputs, ``<=``
splits, canonical thresholds, missing values as one more state), each leaf holding its value
``tree_.value[leaf, 0, 0]`` (a float64 number). The prediction is the mean of the trees' leaf
values; :meth:`RegressionForest.exact_prediction` gives it as an exact rational, which is how
every question about it is decided. scikit-learn's ``predict`` adds the same float64 numbers
(in the order its threads finish) and divides by ``T``, so it can land on the other side of a
bound only when the exact mean is within a few rounding errors of it (docs/design.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from rfexplain.core.errors import NotFittedError, UnsupportedModelError
from rfexplain.core.forest import Forest
from rfexplain.core.instances import check_feature_names
from rfexplain.core.sklearn_import import final_estimator, missing_features, read_tree
from rfexplain.core.tree import Tree
from rfexplain.regression.band import Band

__all__ = ["RegressionForest", "REGRESSORS", "tree_regressor"]

REGRESSORS = ("RandomForestRegressor", "ExtraTreesRegressor", "DecisionTreeRegressor")


def tree_regressor(model: Any) -> Any:
    """The fitted scikit-learn tree regressor inside ``model`` (itself or a pipeline's last step);
    :class:`UnsupportedModelError` for anything else, :class:`NotFittedError` when unfitted."""
    estimator = final_estimator(model)
    kind = type(estimator).__name__
    if kind not in REGRESSORS or not type(estimator).__module__.startswith("sklearn."):
        raise UnsupportedModelError(f"model must be one of {list(REGRESSORS)}. Got {kind} instead.")
    if not hasattr(estimator, "tree_" if kind == "DecisionTreeRegressor" else "estimators_"):
        raise NotFittedError(f"this {kind} is not fitted yet: call fit() before explaining it")
    if getattr(estimator, "n_outputs_", 1) != 1:
        raise UnsupportedModelError("multi-output regressors are not supported")
    return estimator


class RegressionForest:
    """The trees of a regression forest over states (``base``: a one-class additive forest whose
    leaf vectors are the leaf values) and the band forests that decide questions about it."""

    def __init__(self, base: Forest) -> None:
        self.base = base
        self.n_trees = base.n_trees
        self._values = [
            {i: float(v[0]) for i, v in enumerate(tree.proba or ()) if v is not None} for tree in base.trees
        ]

    @classmethod
    def from_sklearn(
        cls, model: Any, feature_names: Sequence[str] | None = None, missing: Any = "learned"
    ) -> RegressionForest:
        """Read a fitted scikit-learn tree regressor (``missing`` as for
        :meth:`Forest.from_sklearn <rfexplain.core.forest.Forest.from_sklearn>`)."""
        estimator = tree_regressor(model)
        kind = type(estimator).__name__
        members = [estimator] if kind == "DecisionTreeRegressor" else list(estimator.estimators_)
        names = getattr(estimator, "feature_names_in_", None)
        n_features = int(estimator.n_features_in_)
        given = check_feature_names(feature_names, None if names is None else [str(n) for n in names], n_features)
        known = given if given is not None else (None if names is None else [str(n) for n in names])
        chosen = missing_features(
            [t.tree_ for t in members], n_features, missing, known or [f"x{i}" for i in range(n_features)]
        )
        raw = [read_tree(t.tree_, np.asarray(t.tree_.value[:, 0, :1], dtype=np.float64), chosen) for t in members]
        base = Forest.from_raw_trees(
            raw,
            n_features=n_features,
            classes=["prediction"],
            feature_names=known,
            source=f"{kind}(n_trees={len(members)})",
            vote="additive",
            missing=sorted(chosen),
        )
        return cls(base)

    # ------------------------------------------------------------------ the prediction
    def leaf_value(self, tree: int, leaf: int) -> float:
        return self._values[tree][leaf]

    def leaves(self, states: Sequence[int]) -> list[int]:
        """The leaf each tree reaches on a state vector."""
        return [int(leaf) for leaf in self.base.flat.tree_leaves(np.asarray([states], dtype=np.int64))[0]]

    def exact_prediction(self, states: Sequence[int]) -> Fraction:
        """The mean of the leaf values on a state vector, exactly."""
        leaves = self.leaves(states)
        return sum((Fraction(self._values[t][leaf]) for t, leaf in enumerate(leaves)), Fraction(0)) / self.n_trees

    def predict(self, X: Any) -> np.ndarray:
        """The exact mean of each row's leaf values, rounded once to float64."""
        return np.asarray([float(self.exact_prediction(row)) for row in self.base.states(X)], dtype=np.float64)

    # ------------------------------------------------------------------ bands
    def band_forest(self, band: Band) -> Forest:
        """The classifier deciding ``band`` (:mod:`rfexplain.regression.band`)."""
        trees = [
            Tree(
                tree.feature,
                tree.split,
                tree.left,
                tree.right,
                tree.label,
                tuple(None if v is None else band.leaf_vector(v[0]) for v in tree.proba or ()),
            )
            for tree in self.base.trees
        ]
        trees += [Tree((-1,), (-1,), (-1,), (-1,), (0,), (vector,)) for vector in band.offsets(self.n_trees)]
        return Forest(
            thresholds=self.base.thresholds,
            trees=trees,
            classes=band.classes,
            feature_names=self.base.feature_names,
            source=f"{self.base.source}, prediction {band}",
            vote="additive",
        )

    def value_range(self) -> tuple[float, float]:
        """The smallest and largest leaf value of the forest."""
        values = [v for tree in self._values for v in tree.values()]
        return min(values), max(values)
