"""A batch checked before any work: its arguments, its rows, and the rows refused on their own.

The query, its arguments (``limit=``, ``target=``: no other keyword), ``timeout`` and ``n_jobs``
are checked once, before any work, and refused with a
:class:`~rfexplain.core.errors.RFExplainError`, and so is a problem of every row (unknown or
missing column names). A row that is not a valid instance (wrong length, not numbers, NaN or
infinite, for a pipeline an unknown category or a string in a numeric column) gets its own error
record, which names its row number (``"InvalidInstanceError: row 3 has NaN in feature 1 ..."``;
``"row 3 (index 'b')"`` for a DataFrame indexed otherwise, ``"row 17"`` by its index when
``indices`` are given); the other rows are answered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfexplain.batch.worker import ExplainerLike, Item
from rfexplain.core.budget import check_limit, check_timeout
from rfexplain.core.errors import InvalidInstanceError, QueryArgumentError
from rfexplain.core.instances import in_model_order, mapping_rows, model_input
from rfexplain.core.pyvalues import to_python
from rfexplain.core.queries import query as query_named
from rfexplain.core.records import BatchRecord

__all__ = ["Plan", "make_plan", "index_labels"]


def _rows(X: Any, feature_names: Sequence[str]) -> list[Any]:
    """The rows of ``X`` in the model's feature order (named input is matched by name); a list of
    rows of different lengths stays a list (each row is then checked on its own), and so do rows
    given as mappings of feature names to values (each matched by name when it is explained)."""
    mappings = mapping_rows(X)
    if mappings is not None:
        return mappings
    X = in_model_order(X, feature_names)
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    if not isinstance(X, np.ndarray) and isinstance(X, (list, tuple)):
        if X and all(isinstance(row, (list, tuple, np.ndarray)) for row in X):
            return [np.asarray(row, dtype=object) for row in X]
    arr = np.asarray(X, dtype=object if not isinstance(X, np.ndarray) else None)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise InvalidInstanceError(f"X must be a 2-D array of instances, got {arr.ndim} dimensions")
    return [np.asarray(row) for row in arr]


def _check_arguments(
    explainer: ExplainerLike, query: str, query_args: dict[str, Any], timeout: Any, n_jobs: Any, chunk_size: Any
) -> dict[str, Any]:
    """The query's arguments, checked once before any work (limit as a plain int), and the
    runner's (``timeout``, ``n_jobs``, ``chunk_size``)."""
    spec = query_named(query)  # UnknownQueryError
    allowed = {"limit"} if spec.enumerates else set()
    if spec.takes_target:
        allowed.add("target")
    unknown = sorted(set(query_args) - allowed)
    if "limit" in unknown:
        raise QueryArgumentError(f"{query} takes no limit= (it answers one result)")
    if unknown:
        takes = f"takes only {sorted(allowed)}" if allowed else "takes no argument"
        raise QueryArgumentError(f"{query} {takes}; got {unknown}")
    args = dict(query_args)
    if spec.takes_target:
        if args.get("target") is None:
            raise QueryArgumentError(f"{query} needs a target class")
        explainer.forest.class_index(args["target"])  # UnknownClassError
    if "limit" in args:
        args["limit"] = check_limit(args["limit"])
    check_timeout(timeout)
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0):
        raise QueryArgumentError(f"n_jobs must be a non-zero integer or None. Got {n_jobs!r} instead.")
    if chunk_size is not None and (
        isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1
    ):
        raise QueryArgumentError(f"chunk_size must be a positive integer or None. Got {chunk_size!r} instead.")
    return args


def _sklearn_predictions(explainer: ExplainerLike, rows: list[np.ndarray]) -> list[Any]:
    """scikit-learn's own (soft-vote) predictions, in one call; row by row if some row is invalid."""
    if explainer.model is None or not rows:
        return [None] * len(rows)
    model = explainer.model

    def predict(values: np.ndarray) -> np.ndarray:
        own = getattr(explainer, "sklearn_predict", None)  # an Explainer knows its model's inputs
        if own is not None:
            return np.asarray(own(values))
        return np.asarray(model.predict(model_input(model, np.asarray(values, dtype=np.float32))))

    try:
        return [to_python(v) for v in predict(np.asarray(rows, dtype=np.float64))]
    except Exception:
        pass
    out: list[Any] = []
    for row in rows:
        try:
            out.append(to_python(predict(np.asarray([row], dtype=np.float64))[0]))
        except Exception:
            out.append(None)
    return out


@dataclass
class Plan:
    """A batch checked and ready: its arguments, the instances to answer, the rows refused."""

    args: dict[str, Any]
    ids: list[int]
    items: list[Item]
    refused: list[BatchRecord]


def index_labels(X: Any) -> list[Any] | None:
    """A DataFrame's index labels, when they are not its row numbers."""
    index = getattr(X, "index", None)
    if index is None or getattr(X, "ndim", 0) != 2 or not hasattr(X, "iloc"):
        return None
    labels = [to_python(v) for v in index]
    return None if labels == list(range(len(labels))) else labels


def _where(position: int, index: int, labels: Sequence[Any] | None, indexed: bool) -> str:
    """A row as its errors name it: ``"row 3"`` (its row number in ``X``), ``"row 3 (index
    'b')"`` when a DataFrame's index label is not its row number, or, with ``indices`` given,
    ``"row 17"`` by its index (the caller's own row numbers, e.g. the command line's)."""
    if indexed:
        return f"row {index}"
    label = labels[position] if labels is not None else position
    return f"row {position}" if label == position else f"row {position} (index {label!r})"


def make_plan(
    explainer: ExplainerLike,
    X: Any,
    query: str,
    query_args: dict[str, Any],
    timeout: Any,
    n_jobs: Any,
    chunk_size: Any,
    indices: Sequence[int] | None,
    row_errors: Mapping[int, str] | None,
    labels: Sequence[Any] | None,
) -> Plan:
    """Everything checked before any work: the arguments (refused once), the rows (a problem of
    every row, such as unknown column names, refuses the batch), the rows known to be bad
    (``row_errors``: their error records, without work)."""
    args = _check_arguments(explainer, query, query_args, timeout, n_jobs, chunk_size)
    rows = _rows(X, explainer.forest.feature_names)
    if labels is None:
        labels = index_labels(X)
    elif len(labels) != len(rows):
        raise InvalidInstanceError(f"labels has {len(labels)} entries for {len(rows)} instances")
    ids = list(range(len(rows))) if indices is None else [int(i) for i in indices]
    if len(ids) != len(rows):
        raise InvalidInstanceError(f"indices has {len(ids)} entries for {len(rows)} instances")
    if len(set(ids)) != len(ids):
        raise InvalidInstanceError("indices must be distinct")
    errors = {int(k): str(v) for k, v in (row_errors or {}).items() if 0 <= int(k) < len(rows)}
    good = [k for k in range(len(rows)) if k not in errors]
    sk = _sklearn_predictions(explainer, [rows[k] for k in good])
    items = [(ids[k], rows[k], s, _where(k, ids[k], labels, indices is not None)) for k, s in zip(good, sk)]
    refused = [
        BatchRecord(
            index=ids[k],
            query=query,
            engine=explainer.engine_name,
            error=f"InvalidInstanceError: {_where(k, ids[k], labels, indices is not None)}: {message}",
        )
        for k, message in sorted(errors.items())
    ]
    return Plan(args, ids, items, refused)
