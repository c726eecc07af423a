"""Reading a fitted LightGBM classifier (``lightgbm.LGBMClassifier`` or ``lightgbm.Booster``) into
raw trees of the additive vote (docs/design.md, section 1), from ``Booster.dump_model()``.

LightGBM's ``predict`` sums, in float64, the leaf values (shrinkage applied, the initial score
folded into the first trees' leaves) of one tree per class per round (tree ``i`` adds to class
``i % num_tree_per_iteration``), then takes the argmax of the (monotone) sigmoid or softmax of
the raw scores: a binary model predicts class 1 iff its raw score is above 0 (ties, as
``argmax([1 - p, p])``, to class 0). A numeric split sends ``x <= threshold`` left, comparing the
float64 input with a float64 threshold; as for scikit-learn's ``HistGradientBoostingClassifier``
(:mod:`rfexplain.core.boosted_import`), the reader rounds each threshold to the nearest float32
number, which agrees with LightGBM on every input but those strictly above a threshold that
round to the same float32 number. Categorical splits (``decision_type == "=="``), zeros read as
missing values (``missing_type == "Zero"``), linear trees, random-forest mode
(``average_output``) and objectives other than binary and multi-class classification are
refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfexplain.core.errors import UnsupportedModelError
from rfexplain.core.imported import ImportedModel

__all__ = ["is_lightgbm", "lightgbm_trees"]

_OBJECTIVES = ("binary", "multiclass", "multiclassova")


def is_lightgbm(model: Any) -> bool:
    """Whether ``model`` is a ``lightgbm.LGBMClassifier`` or ``lightgbm.Booster``."""
    return type(model).__module__.startswith("lightgbm.") and type(model).__name__ in ("LGBMClassifier", "Booster")


def lightgbm_trees(model: Any) -> ImportedModel:
    """The :class:`~rfexplain.core.imported.ImportedModel` of a fitted LightGBM classifier (module
    docstring): one raw tree per tree of the dump, each leaf's ``proba`` its score vector;
    ``own_vote`` is ``"additive"``."""
    booster = model.booster_ if type(model).__name__ == "LGBMClassifier" else model
    dump = booster.dump_model()
    objective = str(dump.get("objective", "")).split(" ")[0]
    if objective not in _OBJECTIVES:
        raise UnsupportedModelError(
            f"LightGBM objective must be one of {list(_OBJECTIVES)}. Got {objective!r} instead."
        )
    if dump.get("average_output"):
        raise UnsupportedModelError("LightGBM in random-forest mode (average_output) is not supported")
    n_scores = int(dump["num_tree_per_iteration"])
    trees = [_raw_tree(info, k % n_scores, n_scores) for k, info in enumerate(dump["tree_info"])]
    classes = np.asarray(model.classes_).tolist() if hasattr(model, "classes_") else list(range(max(2, n_scores)))
    names = dump.get("feature_names")
    return ImportedModel(
        trees=trees,
        n_features=int(dump["max_feature_idx"]) + 1,
        classes=classes,
        feature_names=[str(n) for n in names] if names else None,
        source=f"lightgbm.{type(model).__name__}(n_trees={len(trees)}, classes={len(classes)})",
        own_vote="additive",
    )


def _raw_tree(info: dict[str, Any], k: int, n_scores: int) -> dict[str, Any]:
    """One dumped tree as a raw tree (nodes depth first, the left child first)."""
    tree: dict[str, list[Any]] = {key: [] for key in ("feature", "threshold", "left", "right", "label", "proba")}
    if "is_linear" in info and info["is_linear"]:
        raise UnsupportedModelError("LightGBM linear trees are not supported")

    def add(node: dict[str, Any]) -> int:
        at = len(tree["feature"])
        for key in tree:
            tree[key].append(None)
        if "leaf_value" in node:
            vector = [0.0] * max(2, n_scores)
            vector[k if n_scores > 1 else 1] = float(node["leaf_value"])
            tree["feature"][at], tree["threshold"][at], tree["left"][at], tree["right"][at] = -1, 0.0, -1, -1
            tree["label"][at] = max(range(len(vector)), key=lambda c: (vector[c], -c))
            tree["proba"][at] = vector
            return at
        if node["decision_type"] != "<=":
            raise UnsupportedModelError("LightGBM categorical splits are not supported yet")
        if node["missing_type"] == "Zero":
            raise UnsupportedModelError("LightGBM models reading zeros as missing values are not supported")
        tree["feature"][at] = int(node["split_feature"])
        # float32(t), rounded to nearest (module docstring)
        tree["threshold"][at] = float(np.float32(float(node["threshold"])))
        tree["label"][at] = -1
        tree["left"][at] = add(node["left_child"])
        tree["right"][at] = add(node["right_child"])
        return at

    add(info["tree_structure"])
    return tree
