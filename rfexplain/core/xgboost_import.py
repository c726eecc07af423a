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
measures how often). Categorical splits, ``dart`` and ``gblinear`` boosters, several parallel
trees per round and other objectives are refused. The explained inputs have no missing values,
so the ``missing`` direction of a node plays no part.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from rfexplain.core.errors import UnsupportedModelError
from rfexplain.core.imported import ImportedModel

__all__ = ["is_xgboost", "xgboost_trees"]

_OBJECTIVES = ("binary:logistic", "binary:logitraw", "multi:softprob", "multi:softmax")


def is_xgboost(model: Any) -> bool:
    """Whether ``model`` is an ``xgboost.XGBClassifier`` or ``xgboost.Booster``."""
    return type(model).__module__.startswith("xgboost.") and type(model).__name__ in ("XGBClassifier", "Booster")


def xgboost_trees(model: Any) -> ImportedModel:
    """The :class:`~rfexplain.core.imported.ImportedModel` of a fitted XGBoost classifier
    (module docstring): one raw tree per dumped tree, each leaf's ``proba`` its score vector, the
    base margin a last tree with a single leaf; ``own_vote`` is ``"additive"``."""

    booster = model.get_booster() if type(model).__name__ == "XGBClassifier" else model
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
    trees = [
        _raw_tree(json.loads(dump), index, k % n_scores, n_scores)
        for k, dump in enumerate(booster.get_dump(dump_format="json"))
    ]
    trees.append(_one_leaf(_base_margin(learner, objective, n_scores)))
    classes = np.asarray(model.classes_).tolist() if hasattr(model, "classes_") else list(range(max(2, n_scores)))
    return ImportedModel(
        trees=trees,
        n_features=n_features,
        classes=classes,
        feature_names=list(names) if names else None,
        source=f"xgboost.{type(model).__name__}(n_trees={len(trees) - 1}, classes={len(classes)})",
        own_vote="additive",
    )


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


def _one_leaf(vector: list[float]) -> dict[str, Any]:
    return {"feature": [-1], "threshold": [0.0], "left": [-1], "right": [-1], "label": [0], "proba": [vector]}


def _raw_tree(root: dict[str, Any], index: dict[str, int], k: int, n_scores: int) -> dict[str, Any]:
    """A dumped tree as a raw tree: nodes in depth-first order (the ``yes`` child first, a parent
    before its children), ``x < s`` as ``x <= (float32 number below s)``."""
    tree: dict[str, list[Any]] = {key: [] for key in ("feature", "threshold", "left", "right", "label", "proba")}

    def add(node: dict[str, Any]) -> int:
        at = len(tree["feature"])
        for key in tree:
            tree[key].append(None)
        if "leaf" in node:
            vector = [0.0] * max(2, n_scores)
            vector[k if n_scores > 1 else 1] = float(np.float32(node["leaf"]))
            tree["feature"][at], tree["threshold"][at], tree["left"][at], tree["right"][at] = -1, 0.0, -1, -1
            tree["label"][at] = max(range(len(vector)), key=lambda c: (vector[c], -c))
            tree["proba"][at] = vector
            return at
        if "split_condition" not in node or node["split"] not in index:
            raise UnsupportedModelError("XGBoost categorical splits are not supported yet")
        split = np.float32(node["split_condition"])
        tree["feature"][at] = index[node["split"]]
        tree["threshold"][at] = float(np.nextafter(split, np.float32(-np.inf)))
        tree["label"][at] = -1
        children = {child["nodeid"]: child for child in node["children"]}
        tree["left"][at] = add(children[node["yes"]])
        tree["right"][at] = add(children[node["no"]])
        return at

    add(root)
    return tree
