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

from rfexplain.core.errors import InvalidArgumentError, NotFittedError, UnsupportedModelError
from rfexplain.core.imported import ImportedModel, live_nodes
from rfexplain.core.missing_routes import route_missing

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


def missing_features(
    trees: list[Any], n_features: int, missing: Any, names: Any = None, shown: bool | None = None
) -> frozenset[int]:
    """The tested features whose missing values an explanation covers.

    ``missing`` is ``"learned"`` (the default): every tested feature when the model was trained
    with missing values, none otherwise; ``"all"``: every tested feature; ``"none"``: no feature
    (NaN refused everywhere); or a sequence of feature indices or names. A feature no tree tests
    never gets a missing state (the model ignores it).

    Every split of a model trained with missing values holds a NaN direction (scikit-learn's
    ``predict`` routes NaN in every feature): the one learned from the NaN that reached it, or,
    where none did, the child with more training samples. The model does not store which
    features had NaN; it shows that it was trained with some by a split whose threshold is
    infinite (it separates NaN from every number) or whose ``missing_go_to_left`` differs from
    the rule for a split no NaN reached (``n_node_samples[left] > n_node_samples[right]``). A
    model trained with so few NaN that it shows neither is read with ``"all"``. ``shown``, when
    given, is whether the model shows training with missing values, for a library whose trees
    show it otherwise (:mod:`rfexplain.core.boosted_import`).
    """
    tested: set[int] = set()
    learned = False
    for tree in trees:
        feature = np.asarray(tree.feature)
        inner = np.asarray(tree.children_left) >= 0
        tested.update(int(f) for f in feature[inner])
        if missing != "learned" or shown is not None:
            continue
        left = np.asarray(tree.children_left)[inner]
        right = np.asarray(tree.children_right)[inner]
        samples = np.asarray(tree.n_node_samples)
        go_left = np.asarray(getattr(tree, "missing_go_to_left", np.zeros(len(feature), dtype=bool)))[inner]
        shows = np.isinf(np.asarray(tree.threshold)[inner]) | (go_left.astype(bool) != (samples[left] > samples[right]))
        learned = learned or bool(shows.any())
    if missing == "learned":
        return frozenset(tested) if (learned if shown is None else shown) else frozenset()
    if missing == "none" or missing is None:
        return frozenset()
    if missing == "all":
        return frozenset(tested)
    if isinstance(missing, str) or not hasattr(missing, "__iter__"):
        raise InvalidArgumentError(
            f"missing must be 'learned', 'all', 'none' or a sequence of features. Got {missing!r} instead."
        )
    index = {str(n): i for i, n in enumerate(names)} if names is not None else {}
    chosen: set[int] = set()
    for item in missing:
        if isinstance(item, (int, np.integer)) and not isinstance(item, bool) and 0 <= int(item) < n_features:
            chosen.add(int(item))
        elif str(item) in index:
            chosen.add(index[str(item)])
        else:
            raise InvalidArgumentError(f"missing names an unknown feature: {item!r}")
    return frozenset(chosen & tested)


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


def read_tree(tree: Any, vectors: np.ndarray, missing: frozenset[int] = frozenset()) -> dict[str, Any]:
    """A raw tree (see :meth:`Forest.from_raw_trees <rfexplain.core.forest.Forest.from_raw_trees>`)
    of the ``sklearn.tree._tree.Tree`` ``tree``, each node's vector (``proba``) the row of
    ``vectors`` of the node it copies and its label that row's argmax; NaN of the features in
    ``missing`` routed as scikit-learn routes it (:func:`route_missing`), splits no number passes
    dropped for the others (:func:`live_nodes`)."""
    if missing:
        routed = route_missing(tree, missing)
        return {
            "feature": routed.feature,
            "threshold": routed.threshold,
            "left": routed.left,
            "right": routed.right,
            "label": np.argmax(vectors[routed.source], axis=1).tolist(),
            "proba": vectors[routed.source].tolist(),
        }
    keep, left, right = live_nodes(tree)
    feature = left >= 0
    return {
        "feature": np.where(feature, tree.feature[keep], -1).tolist(),
        "threshold": np.where(feature, tree.threshold[keep], 0.0).tolist(),
        "left": left.tolist(),
        "right": right.tolist(),
        "label": np.argmax(vectors[keep], axis=1).tolist(),
        "proba": vectors[keep].tolist(),
    }


def _normalises_proba() -> bool:
    """Whether this scikit-learn's ``predict_proba`` divides ``tree_.value`` by its row sums
    (before 1.4, when ``tree_.value`` held weighted counts)."""
    import sklearn

    major, minor = (int(part) for part in sklearn.__version__.split(".")[:2])
    return (major, minor) < (1, 4)
