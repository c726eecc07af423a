"""Reading fitted scikit-learn tree classifiers into raw trees (docs/design.md, section 1).

Missing values: scikit-learn (1.3 on) routes a NaN at each split by its ``missing_go_to_left``
flag. For the features that may be missing (:func:`missing_features`) the trees are rewritten so
that NaN is one more state of the feature, the one above a threshold ``+inf`` (``x <= inf`` holds
for every number, never for NaN): :mod:`rfexplain.core.missing_routes`.

scikit-learn itself is imported lazily: JSON-only workflows and ``rfexplain --help`` never pay
for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfexplain.core.errors import NotFittedError, UnsupportedModelError
from rfexplain.core.imported import ImportedModel, live_nodes
from rfexplain.core.missing_routes import missing_features, read_tree

__all__ = [
    "ImportedModel",
    "raw_trees_of",
    "final_estimator",
    "tree_classifier",
    "live_nodes",
    "missing_features",
    "read_tree",
]

_SUPPORTED = ("RandomForestClassifier", "ExtraTreesClassifier", "DecisionTreeClassifier")


def final_estimator(model: Any) -> Any:
    """The tree classifier inside ``model`` (the model itself, or a pipeline's last step).

    A pipeline is accepted only when every step before the classifier is absent
    (``None`` or ``"passthrough"``): otherwise the forest sees transformed features, and the
    explanation must be computed on those.
    """
    steps = getattr(model, "steps", None)
    if steps is None or not isinstance(steps, list):
        return model
    transforming = transforming_step(model)
    if transforming is not None:
        name, step = transforming
        raise UnsupportedModelError(
            f"the pipeline transforms its input in step {name!r} ({type(step).__name__}) before the "
            "forest: explain the final forest (pipeline[-1]) on the transformed features "
            "(pipeline[:-1].transform(X)) instead"
        )
    return steps[-1][1]


def transforming_step(model: Any) -> tuple[str, Any] | None:
    """The first step of a pipeline ``model`` that transforms its input before the classifier
    (``(name, step)``), or ``None`` (not a pipeline, or only absent steps before it)."""
    steps = getattr(model, "steps", None)
    if not isinstance(steps, list):
        return None
    return next(((name, step) for name, step in steps[:-1] if step is not None and step != "passthrough"), None)


def tree_classifier(model: Any, *, expected: str = "model must be one of", also: tuple[str, ...] = ()) -> Any:
    """The fitted scikit-learn tree classifier inside ``model`` (see :func:`final_estimator`).

    Raises :class:`UnsupportedModelError` for anything else, its message starting with
    ``expected`` followed by the supported kinds (and the kinds ``also`` supported elsewhere),
    and :class:`NotFittedError` for an unfitted one.
    """
    estimator = final_estimator(model)
    kind = type(estimator).__name__
    if kind not in _SUPPORTED or not _is_sklearn(estimator):
        kinds = [*_SUPPORTED, *also]
        hint = ""
        if kind in ("RandomForestRegressor", "ExtraTreesRegressor", "DecisionTreeRegressor"):
            hint = " (a tree regressor is explained by rfexplain.RegressionExplainer)"
        raise UnsupportedModelError(f"{expected} {kinds} (or a Pipeline ending in one). Got {kind} instead{hint}.")
    if not hasattr(estimator, "tree_" if kind == "DecisionTreeClassifier" else "estimators_"):
        raise NotFittedError(f"this {kind} is not fitted yet: call fit() before explaining it")
    return estimator


def raw_trees_of(model: Any, missing: Any = "learned", given_names: Any = None) -> ImportedModel:
    """Extract the trees of a fitted scikit-learn classifier as raw node arrays (a gradient-boosted
    one through :func:`rfexplain.core.boosted_import.boosted_trees`).

    ``missing`` chooses the features whose NaN the trees route as the model's ``predict`` does
    (:func:`missing_features`; names in it are ``given_names``, else the model's, else
    ``x0, x1, ...``); the others' missing-value routing is dropped."""
    from rfexplain.core.boosted_import import BOOSTED, boosted_trees, is_boosted

    if is_boosted(final_estimator(model)):
        estimator = final_estimator(model)
        names = getattr(estimator, "feature_names_in_", None)
        names = names if names is not None else getattr(model, "feature_names_in_", None)
        return boosted_trees(estimator, names, missing, given_names)
    estimator = tree_classifier(model, also=BOOSTED)
    kind = type(estimator).__name__
    trees = [estimator] if kind == "DecisionTreeClassifier" else list(estimator.estimators_)
    if getattr(estimator, "n_outputs_", 1) != 1:
        raise UnsupportedModelError("multi-output classifiers are not supported")
    classes = np.asarray(estimator.classes_).tolist()
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        names = getattr(model, "feature_names_in_", None)
    n_features = int(estimator.n_features_in_)
    known = given_names if given_names is not None else names
    known = [f"x{i}" for i in range(n_features)] if known is None else [str(n) for n in known]
    chosen = missing_features([t.tree_ for t in trees], n_features, missing, known)
    raw = [_raw_tree(t.tree_, len(classes), chosen) for t in trees]
    return ImportedModel(
        trees=raw,
        n_features=n_features,
        classes=classes,
        feature_names=[str(n) for n in names] if names is not None else None,
        source=f"{kind}(n_trees={len(trees)})",
        own_vote="hard" if kind == "DecisionTreeClassifier" else "soft",
        missing=tuple(sorted(chosen)),
    )


def _is_sklearn(estimator: Any) -> bool:
    return type(estimator).__module__.startswith("sklearn.")


def _raw_tree(tree: Any, n_classes: int, missing: frozenset[int] = frozenset()) -> dict[str, Any]:
    """Node arrays of one fitted ``sklearn.tree._tree.Tree``.

    A leaf votes for ``argmax(tree.value[leaf, 0, :])`` (lowest index on ties), which is what the
    tree's own ``predict`` returns; its class-probability vector (``proba``) is what
    ``DecisionTreeClassifier.predict_proba`` returns there, bit for bit: ``tree_.value`` itself
    from scikit-learn 1.4 on (it stores fractions), ``value / value.sum()`` computed with the same
    numpy operations before.
    """
    if tree.value.shape[2] != n_classes:
        raise UnsupportedModelError(
            f"a tree has {tree.value.shape[2]} class columns but the model has {n_classes} classes"
        )
    proba = np.array(tree.value[:, 0, :n_classes], dtype=np.float64)
    if _normalises_proba():
        normalizer = proba.sum(axis=1)[:, np.newaxis]
        normalizer[normalizer == 0.0] = 1.0
        proba /= normalizer
    return read_tree(tree, proba, missing)


def _normalises_proba() -> bool:
    """Whether this scikit-learn's ``predict_proba`` divides ``tree_.value`` by its row sums
    (before 1.4, when ``tree_.value`` held weighted counts)."""
    import sklearn

    major, minor = (int(part) for part in sklearn.__version__.split(".")[:2])
    return (major, minor) < (1, 4)
