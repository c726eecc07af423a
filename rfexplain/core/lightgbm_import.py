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

A categorical split (``decision_type == "=="``, a feature of ``categorical_feature``) sends left
the codes listed in its ``threshold`` (``"0||2||5"``): LightGBM casts the input to ``int``
(truncating), sends a negative code right and one in the list left, every other right, and a NaN
right whatever the ``missing_type`` (LightGBM 4's ``Tree::CategoricalDecision``). The feature is
one categorical feature of the forest (:mod:`rfexplain.core.boosted_nodes`): its states are the
codes ``0, ..., K - 1`` (``K`` one more than the largest code a split lists), labelled by the
codes, or by the pandas categories when the model was fitted on a DataFrame of ``category``
dtype (the ``pandas_categorical`` LightGBM keeps: code ``c`` is the ``c``-th category), then
``"(other)"`` (every other integer code: right at every split), then the missing state. Its
values are integer codes (what LightGBM's ``predict`` reads from a numeric array); a
non-integer code is refused, as truncation would read it otherwise than its float32 state.

A model reading zeros as missing values (``zero_as_missing=True``) has splits of ``missing_type``
Zero: LightGBM 4's ``Tree::NumericalDecision`` reads NaN as 0 there and sends the *zero band*
``|x| <= ZERO`` by ``default_left``, every other number by ``x <= threshold``. Such a split is a
set split (:mod:`rfexplain.core.set_splits`) over the numeric states of its feature, the
intervals between the float32 thresholds of the feature's Zero splits and the band's edges
``x < -ZERO`` and ``x <= ZERO`` (so that the band ``[-ZERO, ZERO]`` is a state of its own): it
sends left the states at most its threshold but the band, and the band and NaN when
``default_left``. :func:`~rfexplain.core.boosted_nodes.read_boosted` rewrites it as threshold
tests, as it does the categorical splits. The zero band is always read; NaN, which such a split
reads as 0 as a split of ``missing_type`` None does, is read where ``missing`` chooses (by
default, ``"learned"``, only when a split of ``missing_type`` NaN shows training with missing
values).

Linear trees, random-forest mode (``average_output``) and objectives other than binary and
multi-class classification are refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rfexplain.core.boosted_nodes import MAX_CODES, code_labels, leaf_vector, read_boosted
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
    of ``missing_type`` NaN (NaN is read as 0 at the others)."""
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
    largest: dict[int, int] = {}  # per categorical feature, its largest code in a split
    bands = _zero_bands(dump["tree_info"])
    nodes = [
        _node_arrays(info, k % n_scores, n_scores, shown, largest, bands) for k, info in enumerate(dump["tree_info"])
    ]
    names = dump.get("feature_names")
    known = given_names if given_names is not None else names
    trees, chosen, categories = read_boosted(
        nodes, n_features, missing, known, any(shown), _labels_of(booster, largest), bands
    )
    classes = np.asarray(model.classes_).tolist() if hasattr(model, "classes_") else list(range(max(2, n_scores)))
    return ImportedModel(
        trees=trees,
        n_features=n_features,
        classes=classes,
        feature_names=[str(n) for n in names] if names else None,
        source=f"lightgbm.{type(model).__name__}(n_trees={len(trees)}, classes={len(classes)})",
        own_vote="additive",
        missing=chosen,
        categories=categories,
    )


def _labels_of(booster: Any, largest: dict[int, int]) -> dict[int, list[str]]:
    """The labels of the codes ``0, ..., K - 1`` of each categorical feature (module docstring)."""
    kept = getattr(booster, "pandas_categorical", None) or []
    order = sorted(largest)
    out: dict[int, list[str]] = {}
    for f, top in largest.items():
        if top >= MAX_CODES:
            raise UnsupportedModelError(
                f"a LightGBM categorical split lists the code {top}: category codes up to {MAX_CODES - 1} are supported"
            )
        names = [str(c) for c in kept[order.index(f)]] if len(kept) == len(order) else []
        out[f] = code_labels(names, top)
    return out


def _zero_bands(infos: list[dict[str, Any]]) -> dict[int, tuple[float, ...]]:
    """Per feature with splits of ``missing_type`` Zero, the thresholds of its states (module
    docstring): the float32 thresholds of those splits and the zero band's ``-ZERO`` (below) and
    ``ZERO``, in increasing order."""
    found: dict[int, set[float]] = {}
    stack = [info["tree_structure"] for info in infos]
    while stack:
        node = stack.pop()
        if "leaf_value" in node:
            continue
        if node["missing_type"] == "Zero" and node["decision_type"] != "==":
            found.setdefault(int(node["split_feature"]), {_BELOW_ZERO, ZERO}).add(_threshold(float(node["threshold"])))
        stack.extend((node["left_child"], node["right_child"]))
    return {f: tuple(sorted(thresholds)) for f, thresholds in found.items()}


def _node_arrays(
    info: dict[str, Any],
    k: int,
    n_scores: int,
    shown: list[bool],
    largest: dict[int, int],
    bands: dict[int, tuple[float, ...]],
) -> NodeArrays:
    """One dumped tree as node arrays (nodes depth first, the left child first). A NaN goes to the
    ``default_left`` side of a split of ``missing_type`` NaN (one is appended to ``shown``), and
    is read as 0 by one of ``missing_type`` None; a split of ``missing_type`` Zero sends left the
    states of ``bands`` (its feature's) at most its threshold but the zero band, and the zero band
    and NaN by ``default_left`` (module docstring); a categorical split sends its codes left (NaN
    right), its feature's largest code noted in ``largest``."""
    if "is_linear" in info and info["is_linear"]:
        raise UnsupportedModelError("LightGBM linear trees are not supported")
    rows: list[tuple[int, float, int, int, bool, list[float]]] = []  # feature, threshold, left, right, NaN left, vector
    listed: dict[int, frozenset[int]] = {}  # per categorical split, the codes going left

    def add(node: dict[str, Any]) -> int:
        at = len(rows)
        rows.append((-1, 0.0, -1, -1, False, [0.0] * max(2, n_scores)))
        if "leaf_value" in node:
            rows[at] = (-1, 0.0, -1, -1, False, leaf_vector(float(node["leaf_value"]), k, n_scores))
            return at
        f = int(node["split_feature"])
        if node["missing_type"] == "NaN":
            shown.append(True)
        if node["decision_type"] == "==":
            codes = frozenset(int(c) for c in str(node["threshold"]).split("||"))
            largest[f] = max(largest.get(f, 0), *codes)
            listed[at] = codes
            nan_left, threshold = False, 0.0
        elif node["missing_type"] == "Zero":
            nan_left, threshold = bool(node["default_left"]), _threshold(float(node["threshold"]))
            cuts = bands[f]
            zero = cuts.index(ZERO)  # the zero band's state, (-ZERO-, ZERO]
            below = {s for s in range(cuts.index(threshold) + 1) if s != zero}
            listed[at] = frozenset(below | ({zero} if nan_left else set()))
        elif node["missing_type"] == "NaN":
            nan_left, threshold = bool(node["default_left"]), _threshold(float(node["threshold"]))
        else:  # missing_type None: LightGBM reads NaN as 0
            nan_left, threshold = 0.0 <= float(node["threshold"]), _threshold(float(node["threshold"]))
        left, right = add(node["left_child"]), add(node["right_child"])
        rows[at] = (f, threshold, left, right, nan_left, rows[at][5])
        return at

    add(info["tree_structure"])
    return NodeArrays.of_rows(rows, listed)


#: The float32 number below ``-ZERO``: ``x <= _BELOW_ZERO`` is ``x < -ZERO``.
_BELOW_ZERO = float(np.nextafter(np.float32(-ZERO), np.float32(-np.inf)))


def _threshold(t: float) -> float:
    """The float32 threshold of LightGBM's split ``x <= t`` (module docstring): every ``|x| <=
    ZERO`` is read as 0, so a ``t`` in ``[-ZERO, 0)`` asks ``x < -ZERO`` and one in ``[0, ZERO)``
    asks ``x <= ZERO`` (both float32 numbers, exact); any other ``t`` is rounded to nearest."""
    if -ZERO <= t < 0:
        return _BELOW_ZERO
    if 0 <= t < ZERO:
        return ZERO
    return float(nearest_float32(t))
