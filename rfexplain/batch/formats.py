"""Batch records as text: JSON lines (:func:`write_jsonl`) and a flat CSV (:func:`write_csv`)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from typing import IO, Any

from rfexplain.core.pyvalues import to_python
from rfexplain.core.records import BatchRecord

__all__ = ["CSV_COLUMNS", "write_jsonl", "write_csv", "csv_row", "csv_line", "records_to_text"]


#: Columns of :func:`write_csv`.
CSV_COLUMNS = (
    "index",
    "query",
    "engine",
    "prediction",
    "sklearn_prediction",
    "n_reasons",
    "features",
    "reasons",
    "value",
    "time",
    "complete",
    "stopped_by",
    "error",
    "band_low",
    "band_high",
)


def write_jsonl(records: Iterable[BatchRecord], stream: IO[str]) -> None:
    """One JSON object per record and line (``BatchRecord.to_dict``)."""
    for record in records:
        stream.write(json.dumps(record.to_dict(), default=str) + "\n")


def csv_row(r: BatchRecord) -> list[Any]:
    """The cells of one record in :func:`write_csv`'s columns (:data:`CSV_COLUMNS`)."""
    is_reasons = isinstance(r.result, list)
    value = "" if is_reasons or r.result is None else ("inf" if r.result == math.inf else r.result)
    return [
        r.index,
        r.query,
        r.engine,
        to_python(r.prediction) if r.prediction is not None else "",
        to_python(r.sklearn_prediction) if r.sklearn_prediction is not None else "",
        len(r.result) if is_reasons else "",
        json.dumps([sorted(f) for f in r.feature_sets()]) if is_reasons else "",
        " | ".join(d.get("text", "") for d in r.reasons) if is_reasons else "",
        value,
        f"{r.time:.6f}",
        "" if r.complete is None else r.complete,
        r.stopped_by or "",
        r.error or "",
        *_band_ends(r),
    ]


def _band_ends(r: BatchRecord) -> tuple[Any, Any]:
    """A regression record's band ends as CSV cells (empty for an unbounded end or a classifier)."""
    low, high = r.band if r.band is not None else (None, None)
    return ("" if low is None else low, "" if high is None else high)


def write_csv(records: Iterable[BatchRecord], stream: IO[str]) -> None:
    """A flat CSV: reason feature sets as JSON lists, reason texts joined by `` | ``."""
    writer = csv.writer(stream)
    writer.writerow(CSV_COLUMNS)
    for r in records:
        writer.writerow(csv_row(r))


def records_to_text(records: Iterable[BatchRecord], fmt: str = "jsonl") -> str:
    """The records as JSON lines (``"jsonl"``) or CSV (``"csv"``) text."""
    out = io.StringIO()
    (write_csv if fmt == "csv" else write_jsonl)(records, out)
    return out.getvalue()


def csv_line(cells: Sequence[Any]) -> str:
    """One CSV row as text, its line end included."""
    out = io.StringIO()
    csv.writer(out).writerow(cells)
    return out.getvalue()
