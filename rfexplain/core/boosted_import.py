"""Reading fitted scikit-learn gradient-boosted classifiers into raw trees of the additive vote
(docs/design.md, section 1).

A boosted classifier decides by the argmax of its *raw scores*: per class, the initial score plus
the values of the leaves its trees reach (one tree per class per round; a binary model has one
tree per round and one raw score). The reader gives every leaf the vector the model adds to the
raw scores there, and the initial score a tree with a single leaf (the last tree), so that the
forest's additive vote (:class:`~rfexplain.core.vote.AdditiveScores`) is the model's decision,
in exact arithmetic:

- ``GradientBoostingClassifier``: its ``predict`` casts the input to float32 and adds, in
  float64, ``learning_rate * value`` of each regression tree's leaf (``x <= threshold`` goes
  left) to the initial estimator's raw prediction; the leaf's entry is that float64 product,
  computed as scikit-learn computes it. The initial raw prediction is read with the model's own
  ``_raw_predict_init``; it must not depend on the input (``init=None``, the default prior, or
  ``"zero"``). A binary model predicts the second class iff the raw score is ``>= 0``: its forest
  lists the two classes in reverse order (``classes_[1]`` first, scoring the raw score, then
  ``classes_[0]``, scoring 0), so that the tie rule (ties to the lowest index) gives ties to
  ``classes_[1]`` as scikit-learn does.
- ``HistGradientBoostingClassifier``: its predictors' leaf ``value`` (the learning rate already
  applied) added to ``_baseline_prediction`` in float64; ``x <= num_threshold`` goes left. A
  binary model predicts ``classes_[1]`` iff the raw score is ``> 0``: classes in their order,
  ``classes_[0]`` scoring 0, ties to it. scikit-learn compares *float64* inputs with float64
  thresholds, and rfexplain's states are intervals of float32 inputs (as for every forest; an
  input is explained as its float32 rounding): no float32 reading of ``x <= t`` agrees with it on
  every float64 input. The reader uses ``float32(x) <= float32(t)`` (``t`` rounded to nearest),
  which agrees on every ``x <= t`` -- in particular on inputs equal to a threshold, common since
  the model's bin thresholds are often values of its training data -- and on every ``x`` above
  ``t`` by more than half a float32 step; it disagrees on the inputs strictly above ``t`` that
  round to ``float32(t)`` (a float64 input within half a float32 step above a threshold that is
  not a float32 number, or that float32 number itself when it lies above ``t``). ``experiments
  boosted`` measures the agreement with ``predict``; an exact float64 state space is future work
  (docs/design.md, section 1). A split that sends every
  non-missing value left (threshold ``+inf``, the missing values right) is its left child, as the
  explained inputs have no missing values; native categorical splits and a model reading its
  categories through its own encoder (``categorical_features``) are refused for now.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from rfexplain.core.errors import NotFittedError, UnsupportedModelError
from rfexplain.core.imported import ImportedModel, live_nodes

__all__ = ["BOOSTED", "is_boosted", "boosted_trees", "boosted_predict"]

#: The gradient-boosted classifiers the readers take (XGBoost's: :mod:`rfexplain.core.xgboost_import`,
#: LightGBM's: :mod:`rfexplain.core.lightgbm_import`; a ``Booster`` of either).
BOOSTED = ("GradientBoostingClassifier", "HistGradientBoostingClassifier", "XGBClassifier", "LGBMClassifier", "Booster")


def is_boosted(estimator: Any) -> bool:
    """Whether ``estimator`` is one of the gradient-boosted classifiers read here
    (:data:`BOOSTED`, scikit-learn's, XGBoost's)."""
    from rfexplain.core.lightgbm_import import is_lightgbm
    from rfexplain.core.xgboost_import import is_xgboost

    sklearn = type(estimator).__name__ in BOOSTED and type(estimator).__module__.startswith("sklearn.")
    return sklearn or is_xgboost(estimator) or is_lightgbm(estimator)


def boosted_predict(estimator: Any, X: np.ndarray) -> np.ndarray:
    """The labels a boosted ``estimator`` predicts for the rows of ``X``: its ``predict``, or for an
    ``xgboost.Booster`` or ``lightgbm.Booster`` (whose ``predict`` gives probabilities) what
    their classifiers' ``predict`` make of them (class 1 above 0.5, else the argmax)."""
    if type(estimator).__name__ != "Booster":
        return np.asarray(estimator.predict(X))
    if type(estimator).__module__.startswith("xgboost."):
        import xgboost

        probabilities = np.asarray(estimator.predict(xgboost.DMatrix(X)))
    else:  # lightgbm's Booster: probabilities too
        probabilities = np.asarray(estimator.predict(X))
    if probabilities.ndim == 1:
        return (probabilities > 0.5).astype(np.int64)
    return np.argmax(probabilities, axis=1)


def boosted_trees(estimator: Any, names: Any) -> ImportedModel:
    """The :class:`~rfexplain.core.imported.ImportedModel` of a fitted boosted classifier
    (module docstring): one raw tree per fitted tree, each leaf's ``proba`` its score vector, and
    the initial score last; ``own_vote`` is ``"additive"``. ``names`` are the feature names found
    on the model, or ``None``."""
    from rfexplain.core.lightgbm_import import is_lightgbm, lightgbm_trees
    from rfexplain.core.xgboost_import import is_xgboost, xgboost_trees

    if is_xgboost(estimator):
        return xgboost_trees(estimator)
    if is_lightgbm(estimator):
        return lightgbm_trees(estimator)
    kind = type(estimator).__name__
    fitted = "estimators_" if kind == "GradientBoostingClassifier" else "_predictors"
    if not hasattr(estimator, fitted):
        raise NotFittedError(f"this {kind} is not fitted yet: call fit() before explaining it")
    classes = np.asarray(estimator.classes_).tolist()
    if kind == "GradientBoostingClassifier":
        trees, initial, reverse = _gradient_boosting(estimator)
    else:
        trees, initial, reverse = _hist_gradient_boosting(estimator)
    trees.append(_one_leaf(initial))
    return ImportedModel(
        trees=trees,
        n_features=int(estimator.n_features_in_),
        classes=classes[::-1] if reverse else classes,
        feature_names=[str(n) for n in names] if names is not None else None,
        source=f"{kind}(n_trees={len(trees) - 1}, classes={len(classes)})",
        own_vote="additive",
    )


def _vector(value: float, k: int, n_scores: int, reverse: bool) -> list[float]:
    """The score vector of a leaf adding ``value`` to raw score ``k`` of ``n_scores``: a binary
    model's one raw score is the second class's score (the first's when ``reverse``)."""
    if n_scores == 1:
        return [float(value), 0.0] if reverse else [0.0, float(value)]
    vector = [0.0] * n_scores
    vector[k] = float(value)
    return vector


def _one_leaf(vector: list[float]) -> dict[str, Any]:
    return {"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [0], "proba": [vector]}


def _raw_tree(
    children_left: np.ndarray,
    children_right: np.ndarray,
    feature: np.ndarray,
    threshold: np.ndarray,
    leaf_vectors: np.ndarray,
) -> dict[str, Any]:
    """A raw tree (:meth:`Forest.from_raw_trees <rfexplain.core.forest.Forest.from_raw_trees>`)
    from node arrays (``-1`` children at leaves), without the splits no finite input passes."""

    nodes = SimpleNamespace(children_left=children_left, children_right=children_right, threshold=threshold)
    keep, left, right = live_nodes(nodes)
    internal = left >= 0
    vectors = leaf_vectors[keep]
    return {
        "feature": np.where(internal, feature[keep], -1).tolist(),
        "threshold": np.where(internal, threshold[keep], 0.0).tolist(),
        "left": left.tolist(),
        "right": right.tolist(),
        # a leaf's label: its vector's largest entry (ties to the lowest index)
        "label": np.where(internal, -1, np.argmax(vectors, axis=1)).tolist(),
        "proba": [None if inner else row for inner, row in zip(internal.tolist(), vectors.tolist())],
    }


def _gradient_boosting(model: Any) -> tuple[list[dict[str, Any]], list[float], bool]:
    """``GradientBoostingClassifier``: raw trees, initial score vector, reversed classes."""
    init = model.init_
    if not (isinstance(init, str) and init == "zero") and type(init).__name__ != "DummyClassifier":
        raise UnsupportedModelError(
            f"this GradientBoostingClassifier starts from a {type(init).__name__} (init=...), whose "
            "prediction depends on the input: only the default prior (init=None) or 'zero' is supported"
        )
    n_scores = model.estimators_.shape[1]
    reverse = n_scores == 1
    probe = np.zeros((1, int(model.n_features_in_)), dtype=np.float32)
    initial = np.asarray(model._raw_predict_init(probe), dtype=np.float64)[0]
    scale = np.float64(model.learning_rate)
    trees = []
    for stage in model.estimators_:
        for k, regressor in enumerate(stage):
            tree = regressor.tree_
            values = scale * np.asarray(tree.value[:, 0, 0], dtype=np.float64)  # as predict_stages computes
            vectors = np.asarray([_vector(v, k, n_scores, reverse) for v in values.tolist()])
            children = np.asarray(tree.children_left, dtype=np.intp), np.asarray(tree.children_right, dtype=np.intp)
            trees.append(_raw_tree(*children, np.asarray(tree.feature), np.asarray(tree.threshold), vectors))
    return trees, _vector_of(initial, n_scores, reverse), reverse


def _hist_gradient_boosting(model: Any) -> tuple[list[dict[str, Any]], list[float], bool]:
    """``HistGradientBoostingClassifier``: raw trees, initial score vector, reversed classes."""
    categorical = getattr(model, "is_categorical_", None)
    if getattr(model, "_preprocessor", None) is not None or (categorical is not None and np.any(categorical)):
        raise UnsupportedModelError(
            "HistGradientBoostingClassifier with categorical features (native categorical splits) is not "
            "supported yet: one-hot or ordinal encode them in a Pipeline before the model instead"
        )
    n_scores = int(model.n_trees_per_iteration_)
    initial = np.asarray(model._baseline_prediction, dtype=np.float64).reshape(-1)
    trees = []
    for iteration in model._predictors:
        for k, predictor in enumerate(iteration):
            nodes = predictor.nodes
            leaf = np.asarray(nodes["is_leaf"], dtype=bool)
            if np.any(np.asarray(nodes["is_categorical"], dtype=bool) & ~leaf):
                raise UnsupportedModelError("native categorical splits are not supported yet")
            children_left = np.where(leaf, -1, np.asarray(nodes["left"], dtype=np.intp))
            children_right = np.where(leaf, -1, np.asarray(nodes["right"], dtype=np.intp))
            vectors = np.asarray([_vector(v, k, n_scores, False) for v in np.asarray(nodes["value"]).tolist()])
            feature = np.asarray(nodes["feature_idx"], dtype=np.intp)
            # float32(t), rounded to nearest (module docstring); from_raw_trees keeps a float32 number
            threshold = np.asarray(nodes["num_threshold"], dtype=np.float64).astype(np.float32).astype(np.float64)
            trees.append(_raw_tree(children_left, children_right, feature, threshold, vectors))
    return trees, _vector_of(initial, n_scores, False), False


def _vector_of(initial: np.ndarray, n_scores: int, reverse: bool) -> list[float]:
    """The initial raw scores as a score vector (see :func:`_vector`)."""
    if n_scores == 1:
        return _vector(float(initial[0]), 0, 1, reverse)
    return [float(v) for v in initial]
