"""Batch results as a pandas DataFrame, and as Parquet.

:func:`records_to_frame` gives one row per instance: readable columns (the reasons' text, the
feature names they mention, robustness) beside the exact result as JSON (``result_json``), from
which :func:`frame_to_records` rebuilds the records unchanged.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

from rfexplain.core.records import BatchRecord
from rfexplain.viz.extras import require

__all__ = ["FRAME_COLUMNS", "frame_to_records", "records_to_frame", "write_parquet"]

#: Columns of :func:`records_to_frame`, in order.
FRAME_COLUMNS = (
    "index",
    "query",
    "engine",
    "prediction",
    "prediction_index",
    "sklearn_prediction",
    "n_reasons",
    "reasons",
    "features",
    "sizes",
    "value",
    "time",
    "complete",
    "stopped_by",
    "error",
    "result_json",
)


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _row(record: Any) -> dict[str, Any]:
    is_reasons = isinstance(record.result, list)
    reasons = record.reasons
    value = None
    if not is_reasons and isinstance(record.result, (int, float)):
        value = float(record.result)
    return {
        "index": record.index,
        "query": record.query,
        "engine": record.engine,
        "prediction": _plain(record.prediction),
        "prediction_index": record.prediction_index,
        "sklearn_prediction": _plain(record.sklearn_prediction),
        "n_reasons": len(reasons) if is_reasons else None,
        "reasons": " | ".join(r.get("text", "") for r in reasons) if is_reasons else None,
        "features": [list(r.get("feature_names") or map(str, r["features"])) for r in reasons] if is_reasons else None,
        "sizes": [len(r["features"]) for r in reasons] if is_reasons else None,
        "value": value,
        "time": record.time,
        "complete": record.complete,
        "stopped_by": record.stopped_by,
        "error": record.error,
        "result_json": json.dumps(record.result),
    }


def records_to_frame(records: Iterable[Any]) -> Any:
    """One DataFrame row per :class:`~rfexplain.core.records.BatchRecord` (needs ``rfexplain[frames]``).

    ``reasons`` joins the reasons' text with `` | ``; ``features`` lists each reason's feature
    names; ``sizes`` their sizes; ``value`` is a robustness (``inf`` when nothing flips the
    decision); ``result_json`` is the record's exact result.
    """
    pd = require("pandas", "frames", "a DataFrame of results")
    return pd.DataFrame([_row(r) for r in records], columns=list(FRAME_COLUMNS))


def _cell(value: Any) -> Any:
    """A frame cell as plain Python (``None`` for missing values)."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return _plain(value)


def frame_to_records(frame: Any) -> list[BatchRecord]:
    """The records a frame of :func:`records_to_frame` (or its Parquet file) was made of."""
    out = []
    for row in frame.to_dict("records"):
        complete = _cell(row["complete"])
        prediction_index = _cell(row["prediction_index"])
        out.append(
            BatchRecord(
                index=int(row["index"]),
                query=row["query"],
                engine=row["engine"],
                prediction=_cell(row["prediction"]),
                prediction_index=None if prediction_index is None else int(prediction_index),
                sklearn_prediction=_cell(row["sklearn_prediction"]),
                result=json.loads(row["result_json"]),
                time=float(row["time"]),
                complete=None if complete is None else bool(complete),
                stopped_by=_cell(row["stopped_by"]),
                error=_cell(row["error"]),
            )
        )
    return out


def write_parquet(records: Iterable[Any], path: str) -> None:
    """The frame of :func:`records_to_frame` as a Parquet file (needs ``rfexplain[parquet]``)."""
    require("pyarrow", "parquet", "writing Parquet")
    records_to_frame(records).to_parquet(path, index=False)
