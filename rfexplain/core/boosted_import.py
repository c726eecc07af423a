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
  (docs/design.md, section 1).

Missing values (NaN) are one more state of their feature, as for the forests
(:mod:`rfexplain.core.missing_routes`): every reader gives its trees as
:class:`~rfexplain.core.imported.NodeArrays`, each node's NaN direction the library's, and
:func:`~rfexplain.core.boosted_nodes.read_boosted` reads them as scikit-learn's trees are read.
HistGradientBoosting sends NaN by each node's ``missing_go_to_left`` (for a feature without NaN in
training, scikit-learn's rule: the child with more samples); a split of threshold ``+inf``
separates NaN from every number.
``GradientBoostingClassifier`` takes no NaN.

Native categorical features (``categorical_features``): scikit-learn reads them through its own
``OrdinalEncoder`` (the model's ``_preprocessor``, which also puts the categorical columns first,
in their order, then the numeric ones; the reader maps the trees' columns back), whose unknown
categories become NaN, and a categorical split sends a code left iff it is in the node's
``raw_left_cat_bitsets``, NaN and (after the encoder, none) unknown codes by
``missing_go_to_left``. The reader supports categories that are non-negative integers (the codes
the model saw) and strings (a DataFrame's ``category`` or ``object`` column); other categories
(numbers that are no codes) are refused. The feature is one categorical feature of the forest
(:mod:`rfexplain.core.boosted_nodes`). For integer categories its states are the integers ``0,
..., K - 1`` (``K`` one more than the largest category), labelled by themselves (``"3"``); for
string categories they are the encoder's codes ``0, ..., K - 1``, labelled by the categories
(state ``c`` is ``categories_[c]``, :func:`string_categories`), and the user gives the strings
(:meth:`Forest.matrix <rfexplain.core.forest.Forest.matrix>` reads a label as its state) while
every call back into the model gives it the categories
(:func:`~rfexplain.core.instances.model_input`). Then come ``"(other)"`` and the missing state;
an input that is not a category of the model (``"(other)"``, an unknown string, or a state below
``K`` the model did not see) goes where NaN goes, as scikit-learn's encoder (unknown categories
and NaN both encoded as NaN) and predictor send it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rfexplain.core.boosted_nodes import MAX_CODES, code_labels, leaf_vector, one_leaf, read_boosted
from rfexplain.core.errors import NotFittedError, UnsupportedModelError
from rfexplain.core.floats import nearest_float32
from rfexplain.core.imported import ImportedModel, NodeArrays

__all__ = ["BOOSTED", "is_boosted", "boosted_trees", "boosted_predict", "compares_float64", "string_categories"]

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


def compares_float64(model: Any) -> bool:
    """Whether ``model`` compares float64 inputs with float64 thresholds (a fitted
    ``HistGradientBoostingClassifier`` or LightGBM model, not in a pipeline): its decision on a
    float64 input can differ from the explained decision on its float32 rounding."""
    from rfexplain.core.lightgbm_import import is_lightgbm

    kind = type(model).__name__
    return (kind == "HistGradientBoostingClassifier" and type(model).__module__.startswith("sklearn.")) or is_lightgbm(
        model
    )


def boosted_predict(estimator: Any, X: np.ndarray) -> np.ndarray:
    """The labels ``estimator`` predicts for the rows of ``X``: its ``predict`` (any model), or for an
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


def boosted_trees(estimator: Any, names: Any, missing: Any = "learned", given_names: Any = None) -> ImportedModel:
    """The :class:`~rfexplain.core.imported.ImportedModel` of a fitted boosted classifier
    (module docstring): one raw tree per fitted tree, each leaf's ``proba`` its score vector, and
    the initial score last; ``own_vote`` is ``"additive"``. ``names`` are the feature names found
    on the model, or ``None``; ``missing`` chooses the features whose NaN the trees route as the
    model's ``predict`` does (:func:`rfexplain.core.missing_routes.missing_features`, its names
    ``given_names``, else the model's)."""
    from rfexplain.core.lightgbm_import import is_lightgbm, lightgbm_trees
    from rfexplain.core.xgboost_import import is_xgboost, xgboost_trees

    if is_xgboost(estimator):
        return xgboost_trees(estimator, missing, given_names)
    if is_lightgbm(estimator):
        return lightgbm_trees(estimator, missing, given_names)
    kind = type(estimator).__name__
    fitted = "estimators_" if kind == "GradientBoostingClassifier" else "_predictors"
    if not hasattr(estimator, fitted):
        raise NotFittedError(f"this {kind} is not fitted yet: call fit() before explaining it")
    classes = np.asarray(estimator.classes_).tolist()
    n_features = int(estimator.n_features_in_)
    shown = None
    codes: dict[int, list[str]] = {}
    if kind == "GradientBoostingClassifier":
        nodes, initial, reverse = _gradient_boosting(estimator)
        shown = False  # its predict refuses NaN
    else:
        nodes, initial, reverse = _hist_gradient_boosting(estimator, codes)
    known = given_names if given_names is not None else names
    trees, chosen, categories = read_boosted(nodes, n_features, missing, known, shown, codes)
    if chosen and shown is False:
        raise UnsupportedModelError(
            "GradientBoostingClassifier takes no missing values (its predict refuses NaN): read it with "
            "missing='learned' or 'none', or use HistGradientBoostingClassifier, which routes them"
        )
    trees.append(one_leaf(initial))
    return ImportedModel(
        trees=trees,
        n_features=n_features,
        classes=classes[::-1] if reverse else classes,
        feature_names=[str(n) for n in names] if names is not None else None,
        source=f"{kind}(n_trees={len(trees) - 1}, classes={len(classes)})",
        own_vote="additive",
        missing=chosen,
        categories=categories,
    )


def _gradient_boosting(model: Any) -> tuple[list[NodeArrays], list[float], bool]:
    """``GradientBoostingClassifier``: its trees, initial score vector, reversed classes."""
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
            trees.append(
                NodeArrays(
                    children_left=np.asarray(tree.children_left, dtype=np.intp),
                    children_right=np.asarray(tree.children_right, dtype=np.intp),
                    feature=np.asarray(tree.feature, dtype=np.intp),
                    threshold=np.asarray(tree.threshold, dtype=np.float64),
                    missing_go_to_left=np.zeros(tree.node_count, dtype=bool),
                    n_node_samples=np.asarray(tree.n_node_samples, dtype=np.int64),
                    vectors=np.asarray([leaf_vector(v, k, n_scores, reverse) for v in values.tolist()]),
                )
            )
    return trees, _vector_of(initial, n_scores, reverse), reverse


def _hist_gradient_boosting(model: Any, codes: dict[int, list[str]]) -> tuple[list[NodeArrays], list[float], bool]:
    """``HistGradientBoostingClassifier``: its trees, initial score vector, reversed classes;
    ``codes`` gets the labels of each categorical feature's codes (module docstring). A node
    sends NaN by its ``missing_go_to_left``, which scikit-learn sets, for a feature with no NaN
    in training, to the child with more training samples (its ``count``)."""
    column, known = _categories(model)
    strings = string_categories(model)
    codes.update({f: code_labels(strings.get(f, []), max(values, default=-1)) for f, values in known.items()})
    n_scores = int(model.n_trees_per_iteration_)
    initial = np.asarray(model._baseline_prediction, dtype=np.float64).reshape(-1)
    trees = []
    for iteration in model._predictors:
        for k, predictor in enumerate(iteration):
            nodes = predictor.nodes
            leaf = np.asarray(nodes["is_leaf"], dtype=bool)
            feature = column[np.asarray(nodes["feature_idx"], dtype=np.intp)]
            categorical = np.asarray(nodes["is_categorical"], dtype=bool) & ~leaf
            sets = None
            if categorical.any():
                bitsets = np.asarray(predictor.raw_left_cat_bitsets, dtype=np.uint32)
                sets = tuple(
                    _left_codes(
                        known[int(feature[n])],
                        bitsets[int(nodes["bitset_idx"][n])],
                        bool(nodes["missing_go_to_left"][n]),
                    )
                    if categorical[n]
                    else None
                    for n in range(len(leaf))
                )
            trees.append(
                NodeArrays(
                    children_left=np.where(leaf, -1, np.asarray(nodes["left"], dtype=np.intp)),
                    children_right=np.where(leaf, -1, np.asarray(nodes["right"], dtype=np.intp)),
                    feature=feature,
                    # float32(t), rounded to nearest (module docstring); from_raw_trees keeps a float32 number
                    threshold=nearest_float32(nodes["num_threshold"]),
                    missing_go_to_left=np.asarray(nodes["missing_go_to_left"], dtype=bool),
                    n_node_samples=np.asarray(nodes["count"], dtype=np.int64),
                    vectors=np.asarray([leaf_vector(v, k, n_scores) for v in np.asarray(nodes["value"]).tolist()]),
                    left_states=sets,
                )
            )
    return trees, _vector_of(initial, n_scores, False), False


def _encoded(model: Any) -> list[tuple[int, list[Any]]]:
    """Per categorical column of a ``HistGradientBoostingClassifier``, ``(column, categories)``:
    its encoder's categories but NaN, in the encoder's order (empty for another model)."""
    categorical = getattr(model, "is_categorical_", None)
    preprocessor = getattr(model, "_preprocessor", None)
    if type(model).__name__ != "HistGradientBoostingClassifier" or preprocessor is None or not np.any(categorical):
        return []
    encoder = preprocessor.named_transformers_["encoder"]
    return [
        (f, [v for v in values.tolist() if not (isinstance(v, float) and math.isnan(v))])
        for f, values in zip(np.flatnonzero(np.asarray(categorical, dtype=bool)).tolist(), encoder.categories_)
    ]


def string_categories(model: Any) -> dict[int, list[str]]:
    """Per categorical column of a ``HistGradientBoostingClassifier`` whose categories are strings
    (a DataFrame's ``category`` or ``object`` column), its categories in the encoder's order:
    category ``c`` is the state ``c`` of its feature (module docstring). Empty for another model."""
    return {f: values for f, values in _encoded(model) if values and all(isinstance(v, str) for v in values)}


def _categories(model: Any) -> tuple[np.ndarray, dict[int, list[int]]]:
    """Per column of the trees, the model's column (its encoder puts the categorical ones first),
    and per categorical column of the model its categories as codes in the encoder's order: the
    non-negative integers themselves, or, for string categories, their positions (module
    docstring)."""
    n_features = int(model.n_features_in_)
    encoded = _encoded(model)
    if not encoded:
        return np.arange(n_features), {}
    categorical = np.asarray(model.is_categorical_, dtype=bool)
    column = np.concatenate([np.flatnonzero(categorical), np.flatnonzero(~categorical)])
    strings = string_categories(model)
    known: dict[int, list[int]] = {}
    for f, values in encoded:
        if f in strings:
            if len(values) > MAX_CODES:
                raise UnsupportedModelError(
                    f"this HistGradientBoostingClassifier's categorical feature {f} has {len(values)} categories: "
                    f"up to {MAX_CODES} are supported"
                )
            known[f] = list(range(len(values)))
            continue
        integers = all(
            isinstance(v, (int, float, np.integer, np.floating))
            and not isinstance(v, bool)
            and float(v).is_integer()
            and 0 <= v < MAX_CODES
            for v in values
        )
        if not integers:
            raise UnsupportedModelError(
                f"this HistGradientBoostingClassifier's categorical feature {f} has categories that are neither "
                f"integer codes 0 to {MAX_CODES - 1} nor strings (e.g. {values[:3]}): fit it on the integer codes "
                "of the categories (for a DataFrame, X[col].cat.codes) or on string categories to explain it"
            )
        known[f] = [int(v) for v in values]
    return column, known


def _left_codes(categories: list[int], bitset: np.ndarray, nan_left: bool) -> frozenset[int]:
    """The codes a categorical split of ``bitset`` (over the encoder's codes of ``categories``)
    sends left, ``-1`` for the other codes when NaN goes left (module docstring)."""
    out = {-1} if nan_left else set()
    seen = dict(zip(categories, range(len(categories))))
    for v in range(max(categories, default=-1) + 1):
        code = seen.get(v)
        if nan_left if code is None else bool((int(bitset[code // 32]) >> (code % 32)) & 1):
            out.add(v)
    return frozenset(out)


def _vector_of(initial: np.ndarray, n_scores: int, reverse: bool) -> list[float]:
    """The initial raw scores as a score vector (see :func:`leaf_vector`)."""
    if n_scores == 1:
        return leaf_vector(float(initial[0]), 0, 1, reverse)
    return [float(v) for v in initial]
