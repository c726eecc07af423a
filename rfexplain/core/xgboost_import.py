"""Reading a fitted XGBoost classifier (``xgboost.XGBClassifier`` or ``xgboost.Booster``) into raw
trees of the additive vote (docs/design.md, section 1), from its JSON dump
(``Booster.get_dump(dump_format="json")``) and its configuration (``Booster.save_config()``).

XGBoost's ``predict`` casts the input to float32, sends ``x < split_condition`` to the ``yes``
child (float32 numbers both), and adds the leaves' float32 values to the base margin, one tree
per class per round (tree ``i`` adds to class ``i % num_class``), then takes the argmax of the
margins (multi-class) or predicts class 1 iff the sigmoid of the margin is above 0.5 (binary). On
float32 inputs ``x < s`` is ``x <= s'`` with ``s'`` the float32 number below ``s``: the reader's
thresholds, exact. The base margin is ``base_score`` for ``multi:softprob``, ``multi:softmax``
and ``binary:logitraw``, and its logit ``-log(1 / base_score - 1)`` in float32 for
``binary:logistic`` (as XGBoost computes it). Each leaf's entry is its float32 value, exactly;
the decision is the exact sum's, while XGBoost adds in float32 (and rounds the sigmoid): the two
can differ where two margins are within float32 rounding of each other (``experiments boosted``
measures how often). A NaN goes to each node's ``missing`` child (its default direction), NaN
being the missing value (an ``XGBClassifier`` with a number as ``missing=`` is refused); the model
shows training with missing values by a default direction other than the one its updater gives a
split no NaN reached (right for the histogram updaters, left for ``exact``).

A categorical feature (``enable_categorical=True``, feature type ``"c"``): a split's
``split_condition`` lists the category codes going to its ``yes`` child; XGBoost truncates the
float32 input to an integer code, sends NaN to the ``missing`` child and every other code
(negative, not listed, beyond the largest one) to the ``no`` child. The feature is one
categorical feature of the forest (:mod:`rfexplain.core.boosted_nodes`): its states are the codes
``0, ..., K - 1`` (``K`` one more than the largest code a split lists), labelled by the codes,
or by the categories XGBoost keeps for a model fitted on a DataFrame of ``category`` dtype
(``Booster.get_categories``, code ``c`` the ``c``-th category), then ``"(other)"``, then the
missing state; its values are the integer codes that ``predict`` reads from a numeric array
(such a model is explained on ``X[col].cat.codes``). ``dart`` and ``gblinear`` boosters, several parallel trees per
round and other objectives are refused.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from rfexplain.core.boosted_nodes import MAX_CODES, code_labels, leaf_vector, one_leaf, read_boosted
from rfexplain.core.errors import UnsupportedModelError
from rfexplain.core.imported import ImportedModel, NodeArrays

__all__ = ["is_xgboost", "xgboost_trees"]

_OBJECTIVES = ("binary:logistic", "binary:logitraw", "multi:softprob", "multi:softmax")


def is_xgboost(model: Any) -> bool:
    """Whether ``model`` is an ``xgboost.XGBClassifier`` or ``xgboost.Booster``."""
    return type(model).__module__.startswith("xgboost.") and type(model).__name__ in ("XGBClassifier", "Booster")


def xgboost_trees(model: Any, missing: Any = "learned", given_names: Any = None) -> ImportedModel:
    """The :class:`~rfexplain.core.imported.ImportedModel` of a fitted XGBoost classifier
    (module docstring): one raw tree per dumped tree, each leaf's ``proba`` its score vector, the
    base margin a last tree with a single leaf; ``own_vote`` is ``"additive"``. ``missing``
    chooses the features whose NaN the trees route by their default directions
    (:func:`rfexplain.core.boosted_nodes.read_boosted`; names in it ``given_names``, else the
    model's)."""

    booster = model.get_booster() if type(model).__name__ == "XGBClassifier" else model
    value = getattr(model, "missing", math.nan)
    if value is not None and not math.isnan(float(value)):
        raise UnsupportedModelError(
            f"this XGBClassifier reads a number as a missing value (missing={value!r}): only missing=np.nan "
            "(the default) is supported; replace that number by NaN and train with missing=np.nan"
        )
    config = json.loads(booster.save_config())
    learner = config["learner"]
    booster_name = learner["gradient_booster"]["name"]
    if booster_name != "gbtree":
        raise UnsupportedModelError(f"XGBoost booster {booster_name!r} is not supported: only 'gbtree'")
    objective = learner["objective"]["name"]
    if objective not in _OBJECTIVES:
        raise UnsupportedModelError(f"XGBoost objective must be one of {list(_OBJECTIVES)}. Got {objective!r} instead.")
    parallel = int(learner["gradient_booster"]["gbtree_model_param"].get("num_parallel_tree", "1"))
    if parallel != 1:
        raise UnsupportedModelError("XGBoost models with several parallel trees per round are not supported")
    n_features = int(learner["learner_model_param"]["num_feature"])
    n_scores = max(1, int(learner["learner_model_param"]["num_class"]))
    names = booster.feature_names
    index = {name: f for f, name in enumerate(names)} if names else {f"f{f}": f for f in range(n_features)}
    largest: dict[int, int] = {}  # per categorical feature, its largest code in a split
    nodes = [
        _node_arrays(json.loads(dump), index, k % n_scores, n_scores, largest)
        for k, dump in enumerate(booster.get_dump(dump_format="json"))
    ]
    if any(top >= MAX_CODES for top in largest.values()):
        raise UnsupportedModelError(
            f"an XGBoost categorical split lists a code above {MAX_CODES - 1}: such codes are not supported"
        )
    # where no NaN reached a split, the exact updater sends NaN left, the histogram ones right
    unseen_left = "grow_colmaker" in str(learner["gradient_booster"].get("gbtree_train_param", {}).get("updater", ""))
    shown = any(bool(np.any(tree.missing_go_to_left[tree.children_left >= 0] != unseen_left)) for tree in nodes)
    known = given_names if given_names is not None else names
    kept = _kept_categories(booster)
    codes = {f: code_labels(kept.get(f) or [], top) for f, top in largest.items()}
    trees, chosen, categories = read_boosted(nodes, n_features, missing, known, shown, codes)
    trees.append(one_leaf(_base_margin(learner, objective, n_scores)))
    classes = np.asarray(model.classes_).tolist() if hasattr(model, "classes_") else list(range(max(2, n_scores)))
    return ImportedModel(
        trees=trees,
        n_features=n_features,
        classes=classes,
        feature_names=list(names) if names else None,
        source=f"xgboost.{type(model).__name__}(n_trees={len(trees) - 1}, classes={len(classes)})",
        own_vote="additive",
        missing=chosen,
        categories=categories,
    )


def _kept_categories(booster: Any) -> dict[int, list[str] | None]:
    """Per feature, the categories XGBoost keeps for a model fitted on a DataFrame of ``category``
    dtype, else ``None`` (every feature's, when this XGBoost keeps none or cannot export them
    without pyarrow)."""
    n_features = booster.num_features()
    none: dict[int, list[str] | None] = dict.fromkeys(range(n_features))
    getter = getattr(booster, "get_categories", None)
    if getter is None:
        return none
    try:
        kept = getter(export_to_arrow=True).to_arrow()
    except ImportError:  # pyarrow is not installed
        return none
    return {f: None if values is None else [str(v) for v in values.to_pylist()] for f, (_, values) in enumerate(kept)}


def _base_margin(learner: dict[str, Any], objective: str, n_scores: int) -> list[float]:
    """The base margin of every class (module docstring)."""
    text = str(learner["learner_model_param"]["base_score"]).strip("[]")
    scores = [float(np.float32(float(v))) for v in text.split(",")]
    if objective == "binary:logistic":
        p = np.float32(scores[0])
        scores = [float(np.float32(-math.log(float(np.float32(1.0) / p - np.float32(1.0)))))]
    if n_scores == 1:
        return [0.0, scores[0]]
    return scores if len(scores) == n_scores else [scores[0]] * n_scores


def _node_arrays(
    root: dict[str, Any], index: dict[str, int], k: int, n_scores: int, largest: dict[int, int]
) -> NodeArrays:
    """A dumped tree as node arrays: nodes in depth-first order (the ``yes`` child first, a parent
    before its children), ``x < s`` as ``x <= (float32 number below s)``, NaN sent to the
    ``missing`` child; a categorical split sends its listed codes to the ``yes`` child, its
    feature's largest code noted in ``largest``."""
    rows: list[tuple[int, float, int, int, bool, list[float]]] = []  # feature, threshold, yes, no, NaN yes, vector
    listed: dict[int, frozenset[int]] = {}  # per categorical split, the codes going to its yes child

    def add(node: dict[str, Any]) -> int:
        at = len(rows)
        rows.append((-1, 0.0, -1, -1, False, [0.0] * max(2, n_scores)))
        if "leaf" in node:
            rows[at] = (-1, 0.0, -1, -1, False, leaf_vector(float(np.float32(node["leaf"])), k, n_scores))
            return at
        if node["split"] not in index:
            raise UnsupportedModelError(f"an XGBoost split tests the unknown feature {node['split']!r}")
        f = index[node["split"]]
        children = {child["nodeid"]: child for child in node["children"]}
        condition = node["split_condition"]
        if isinstance(condition, list):
            listed[at] = frozenset(int(c) for c in condition)
            largest[f] = max(largest.get(f, 0), *listed[at])
            threshold = 0.0
        else:
            threshold = float(np.nextafter(np.float32(condition), np.float32(-np.inf)))
        yes, no = add(children[node["yes"]]), add(children[node["no"]])
        rows[at] = (f, threshold, yes, no, node["missing"] == node["yes"], rows[at][5])
        return at

    add(root)
    return NodeArrays.of_rows(rows, listed)
