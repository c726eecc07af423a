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
round to the same float32 number. LightGBM reads every input ``|x| <= ZERO`` (``1e-35`` in
float32) as 0, so a threshold in ``[-ZERO, 0)`` is ``x < -ZERO`` and one in ``[0, ZERO)`` is ``x <=
ZERO``, exactly. A NaN goes to the ``default_left`` side of a split of ``missing_type`` NaN and is
read as 0 by one of ``missing_type`` None (:func:`rfexplain.core.boosted_nodes.read_boosted`).
Categorical splits (``decision_type == "=="``), zeros read as missing values (``missing_type ==
"Zero"``), linear trees, random-forest mode (``average_output``) and objectives other than binary
and multi-class classification are refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfexplain.core.boosted_nodes import leaf_vector, read_boosted
from rfexplain.core.errors import UnsupportedModelError
from rfexplain.core.floats import nearest_float32
from rfexplain.core.imported import ImportedModel, NodeArrays

__all__ = ["is_lightgbm", "lightgbm_trees"]

_OBJECTIVES = ("binary", "multiclass", "multiclassova")

#: LightGBM's ``kZeroThreshold`` (``1e-35f``): its ``predict`` reads every input ``x`` with
#: ``|x| <= ZERO`` as 0.
ZERO = float(np.float32(1e-35))


def is_lightgbm(model: Any) -> bool:
    """Whether ``model`` is a ``lightgbm.LGBMClassifier`` or ``lightgbm.Booster``."""
    return type(model).__module__.startswith("lightgbm.") and type(model).__name__ in ("LGBMClassifier", "Booster")


def lightgbm_trees(model: Any, missing: Any = "learned", given_names: Any = None) -> ImportedModel:
    """The :class:`~rfexplain.core.imported.ImportedModel` of a fitted LightGBM classifier (module
    docstring): one raw tree per tree of the dump, each leaf's ``proba`` its score vector;
    ``own_vote`` is ``"additive"``. ``missing`` chooses the features whose NaN the trees route as
    LightGBM does (:func:`rfexplain.core.boosted_nodes.read_boosted`; names in it
    ``given_names``, else the model's); the model shows training with missing values by a split
    of ``missing_type`` NaN."""
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
    n_features = int(dump["max_feature_idx"]) + 1
    shown: list[bool] = []
    nodes = [_node_arrays(info, k % n_scores, n_scores, shown) for k, info in enumerate(dump["tree_info"])]
    names = dump.get("feature_names")
    known = given_names if given_names is not None else names
    trees, chosen = read_boosted(nodes, n_features, missing, known, any(shown))
    classes = np.asarray(model.classes_).tolist() if hasattr(model, "classes_") else list(range(max(2, n_scores)))
    return ImportedModel(
        trees=trees,
        n_features=n_features,
        classes=classes,
        feature_names=[str(n) for n in names] if names else None,
        source=f"lightgbm.{type(model).__name__}(n_trees={len(trees)}, classes={len(classes)})",
        own_vote="additive",
        missing=chosen,
    )


def _node_arrays(info: dict[str, Any], k: int, n_scores: int, shown: list[bool]) -> NodeArrays:
    """One dumped tree as node arrays (nodes depth first, the left child first). A NaN goes to the
    ``default_left`` side of a split of ``missing_type`` NaN (one is appended to ``shown``), and
    is read as 0 by one of ``missing_type`` None."""
    if "is_linear" in info and info["is_linear"]:
        raise UnsupportedModelError("LightGBM linear trees are not supported")
    rows: list[tuple[int, float, int, int, bool, list[float]]] = []  # feature, threshold, left, right, NaN left, vector

    def add(node: dict[str, Any]) -> int:
        at = len(rows)
        rows.append((-1, 0.0, -1, -1, False, [0.0] * max(2, n_scores)))
        if "leaf_value" in node:
            rows[at] = (-1, 0.0, -1, -1, False, leaf_vector(float(node["leaf_value"]), k, n_scores))
            return at
        if node["decision_type"] != "<=":
            raise UnsupportedModelError(
                "LightGBM categorical splits are not supported yet: one-hot or ordinal encode the categories "
                "(and train without categorical_feature) instead"
            )
        if node["missing_type"] == "Zero":
            raise UnsupportedModelError(
                "LightGBM models reading zeros as missing values (zero_as_missing=True) are not supported"
            )
        if node["missing_type"] == "NaN":
            shown.append(True)
            nan_left = bool(node["default_left"])
        else:  # missing_type None: LightGBM reads NaN as 0
            nan_left = 0.0 <= float(node["threshold"])
        left, right = add(node["left_child"]), add(node["right_child"])
        threshold = _threshold(float(node["threshold"]))
        rows[at] = (int(node["split_feature"]), threshold, left, right, nan_left, rows[at][5])
        return at

    add(info["tree_structure"])
    return NodeArrays.of_rows(rows)


def _threshold(t: float) -> float:
    """The float32 threshold of LightGBM's split ``x <= t`` (module docstring): every ``|x| <=
    ZERO`` is read as 0, so a ``t`` in ``[-ZERO, 0)`` asks ``x < -ZERO`` and one in ``[0, ZERO)``
    asks ``x <= ZERO`` (both float32 numbers, exact); any other ``t`` is rounded to nearest."""
    if -ZERO <= t < 0:
        return float(np.nextafter(np.float32(-ZERO), np.float32(-np.inf)))
    if 0 <= t < ZERO:
        return ZERO
    return float(nearest_float32(t))
