"""Batch results as a pandas DataFrame, and as Parquet.

:func:`records_to_frame` gives one row per instance: readable columns (each reason's text, the
feature names each mentions, robustness) in typed columns beside the exact result as JSON
(``result_json``), from which :func:`frame_to_records` rebuilds the records unchanged. The
frame's index is the user's (``index=``: the rows' own labels, so that ``X.join(frame)`` lines
up), and its ``attrs["rfexplain"]`` holds the run's metadata (:mod:`rfexplain.viz.run_metadata`),
which :func:`write_parquet` stores in the Parquet file. :mod:`rfexplain.viz.long_frame` gives the
tidy table: one row per condition.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from rfexplain.core.records import BatchRecord
from rfexplain.viz.extras import require
from rfexplain.viz.run_metadata import METADATA_KEY

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
    "band_low",
    "band_high",
)
#: The pandas dtype of each typed column (the others hold labels or lists).
_DTYPES = {
    "index": "int64",
    "query": "string",
    "engine": "string",
    "prediction_index": "Int64",
    "n_reasons": "Int64",
    "value": "float64",
    "time": "float64",
    "complete": "boolean",
    "stopped_by": "string",
    "error": "string",
    "result_json": "string",
    "band_low": "float64",
    "band_high": "float64",
}


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _row(record: Any) -> dict[str, Any]:
    is_reasons = isinstance(record.result, list)
    reasons = record.reasons
    value = math.nan
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
        "reasons": [r.get("text", "") for r in reasons] if is_reasons else None,
        "features": [list(r.get("feature_names") or map(str, r["features"])) for r in reasons] if is_reasons else None,
        "sizes": [len(r["features"]) for r in reasons] if is_reasons else None,
        "value": value,
        "time": record.time,
        "complete": record.complete,
        "stopped_by": record.stopped_by,
        "error": record.error,
        "result_json": json.dumps(record.result),
        "band_low": _band_end(record, 0),
        "band_high": _band_end(record, 1),
    }


def _band_end(record: Any, end: int) -> float:
    """An end of a regression record's band (NaN when unbounded, or for a classifier)."""
    band = getattr(record, "band", None)
    return math.nan if band is None or band[end] is None else float(band[end])


def records_to_frame(records: Iterable[Any], *, index: Any = None, metadata: Mapping[str, Any] | None = None) -> Any:
    """One DataFrame row per :class:`~rfexplain.core.records.BatchRecord` (needs ``rfexplain[frames]``).

    Parameters
    ----------
    records : iterable of BatchRecord
        The records, one per instance.
    index : pandas Index or sequence, optional
        The frame's index, one label per record (``explain_many(X, as_frame=True)`` passes
        ``X.index`` for a DataFrame ``X``); by default a range.
    metadata : mapping, optional
        The run's metadata, kept in ``frame.attrs["rfexplain"]`` (and in Parquet files).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`FRAME_COLUMNS`: ``index`` the record's index; ``reasons`` the reasons'
        texts and ``features`` each reason's feature names (lists, ``None`` for a query that
        gives no reasons); ``sizes`` their sizes; ``value`` a robustness (float, ``inf`` when
        nothing flips the decision, NaN for other queries); ``complete`` a nullable boolean;
        ``result_json`` the record's exact result; ``band_low`` and ``band_high`` a regression
        record's band (NaN for an unbounded end, and for a classifier's record).
    """
    pd = require("pandas", "frames", "a DataFrame of results")
    rows = [_row(r) for r in records]
    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS)).astype(_DTYPES)
    if index is not None:
        frame.index = index if isinstance(index, pd.Index) else pd.Index(list(index))
    if metadata is not None:
        frame.attrs[METADATA_KEY] = dict(metadata)
    return frame


def _cell(value: Any) -> Any:
    """A frame cell as plain Python (``None`` for missing values)."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
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
                query=str(row["query"]),
                engine=str(row["engine"]),
                prediction=_cell(row["prediction"]),
                prediction_index=None if prediction_index is None else int(prediction_index),
                sklearn_prediction=_cell(row["sklearn_prediction"]),
                result=json.loads(row["result_json"]),
                time=float(row["time"]),
                complete=None if complete is None else bool(complete),
                stopped_by=_cell(row["stopped_by"]),
                error=_cell(row["error"]),
                band=_band(row),
            )
        )
    return out


def _band(row: dict[str, Any]) -> tuple[float | None, float | None] | None:
    """The band of a frame row (``None`` for a classifier's record, which has neither end)."""
    low, high = _cell(row.get("band_low")), _cell(row.get("band_high"))
    if low is None and high is None:
        return None
    return (None if low is None else float(low), None if high is None else float(high))


def write_parquet(records: Iterable[Any], path: str, *, metadata: Mapping[str, Any] | None = None) -> None:
    """The frame of :func:`records_to_frame` as a Parquet file (needs ``rfexplain[parquet]``).

    ``records`` is a list of records or a frame of :func:`records_to_frame` (its index and
    metadata kept). The run's ``metadata`` (by default the frame's ``attrs["rfexplain"]``) is
    stored in the file's schema under the key ``rfexplain``, as JSON
    (:func:`~rfexplain.viz.run_metadata.parquet_metadata` reads it back), and pandas gives it
    back as ``read_parquet(path).attrs["rfexplain"]``.
    """
    pa = require("pyarrow", "parquet", "writing Parquet")
    pq = require("pyarrow.parquet", "parquet", "writing Parquet")
    pd = require("pandas", "frames", "a DataFrame of results")
    frame = records if isinstance(records, pd.DataFrame) else records_to_frame(records)
    if metadata is not None:
        frame = frame.copy()
        frame.attrs[METADATA_KEY] = dict(metadata)
    table = pa.Table.from_pandas(frame)  # a range index as metadata, any other as columns
    if frame.attrs:
        stored = dict(table.schema.metadata or {})
        stored[b"PANDAS_ATTRS"] = json.dumps(frame.attrs, default=str).encode()  # pandas reads attrs from it
        if METADATA_KEY in frame.attrs:
            stored[METADATA_KEY.encode()] = json.dumps(frame.attrs[METADATA_KEY], default=str).encode()
        table = table.replace_schema_metadata(stored)
    pq.write_table(table, path)
