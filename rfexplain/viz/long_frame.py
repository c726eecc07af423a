"""Batch results as a tidy table: one row per condition of every reason (:func:`records_to_long_frame`).

A reason's literal ``x in S`` is one condition per maximal run of consecutive states: an
interval of a numeric feature, or a set of a categorical feature's categories. Each row says
which record (its ``index`` and the frame's index, the user's row label), which reason of it
(``reason``, its ``kind``, whether it is ``inflated``, its ``target``), which feature, and the
condition: ``lower``/``upper`` with ``lower_strict``/``upper_strict`` (``x > lower`` or
``x >= lower``, ``x < upper`` or ``x <= upper``: the exact bounds the text prints,
:func:`~rfexplain.core.reasons.printed_bounds`; infinite where open) or ``categories``. So
``long[long.feature == "age"]`` or a group-by on ``feature`` needs no parsing of text. A bound is
a float32 number written as its shortest decimal: compare inputs with it as float32 numbers,
as the trees do (``np.float32(x) <= np.float32(upper)``); read as float64, ``0.5999999`` is
below the float32 number ``0.59999996...`` it stands for.

Example
-------
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> from rfexplain import Explainer
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
>>> records = Explainer(model, engine="oracle").explain_many(X[:2], n_jobs=1)
>>> long = records_to_long_frame(records)
>>> list(long.columns[:4]), int(long["index"].max())
(['index', 'query', 'reason', 'kind'], 1)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from rfexplain.core.reasons import printed_bounds
from rfexplain.viz.extras import require

__all__ = ["LONG_COLUMNS", "records_to_long_frame"]

#: Columns of :func:`records_to_long_frame`, in order.
LONG_COLUMNS = (
    "index",
    "query",
    "reason",
    "kind",
    "inflated",
    "target",
    "feature",
    "feature_index",
    "part",
    "lower",
    "lower_strict",
    "upper",
    "upper_strict",
    "categories",
    "condition",
)
_DTYPES = {
    "index": "int64",
    "query": "string",
    "reason": "int64",
    "kind": "string",
    "inflated": "bool",
    "feature": "string",
    "feature_index": "int64",
    "part": "int64",
    "lower": "float64",
    "lower_strict": "boolean",
    "upper": "float64",
    "upper_strict": "boolean",
    "condition": "string",
}


def _bound(value: Any) -> float:
    """A JSON interval bound (the shortest decimal of a float32 number, ``"inf"`` or ``"-inf"``)
    as the float32 number it stands for (read as a float64, the decimal may lie just below it)."""
    return float(np.float32(float(value)))


def _conditions(record: Any, label: Any) -> Iterable[tuple[Any, dict[str, Any]]]:
    for k, reason in enumerate(record.reasons):
        base = {
            "index": record.index,
            "query": record.query,
            "reason": k,
            "kind": reason["kind"],
            "inflated": bool(reason.get("inflated", False)),
            "target": reason.get("target"),
        }
        for literal in reason["literals"]:
            row = dict(
                base,
                feature=literal.get("name", f"x{literal['feature']}"),
                feature_index=literal["feature"],
                condition=literal.get("condition"),
            )
            if "categories" in literal:
                yield label, dict(row, part=0, lower=math.nan, upper=math.nan, categories=list(literal["categories"]))
                continue
            intervals = literal.get("intervals") or []
            for part, (low, high) in enumerate(intervals):
                lower, lower_strict, upper, upper_strict = printed_bounds(_bound(low), _bound(high))
                yield (
                    label,
                    dict(
                        row,
                        part=part,
                        lower=lower,
                        lower_strict=lower_strict,
                        upper=upper,
                        upper_strict=upper_strict,
                        categories=None,
                    ),
                )


def records_to_long_frame(records: Iterable[Any], *, index: Any = None) -> Any:
    """One DataFrame row per condition of every reason of ``records`` (needs ``rfexplain[frames]``).

    Parameters
    ----------
    records : iterable of BatchRecord
        The records, one per instance (records without reasons, such as robustness or an
        error, give no rows).
    index : pandas Index or sequence, optional
        One label per record (the rows' own labels); each condition row carries its record's,
        so the table joins on the user's index. By default the records' ``index``.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`LONG_COLUMNS` (see the module docstring), typed: ``lower``/``upper``
        floats (NaN for a categorical condition), the strict flags nullable booleans,
        ``categories`` a list of category names (``None`` for a numeric condition).
    """
    pd = require("pandas", "frames", "a DataFrame of results")
    records = list(records)
    labels = [r.index for r in records] if index is None else list(index)
    if len(labels) != len(records):
        raise ValueError(f"index has {len(labels)} labels for {len(records)} records")
    pairs = [pair for record, label in zip(records, labels) for pair in _conditions(record, label)]
    frame = pd.DataFrame([row for _, row in pairs], columns=list(LONG_COLUMNS)).astype(_DTYPES)
    name = index.name if isinstance(index, pd.Index) else None
    frame.index = pd.Index([label for label, _ in pairs], name=name)
    return frame
