"""Instances matched by name: the one place where user rows become the forest's column order.

Every instance enters rfexplain through :func:`as_matrix` (the API, the batch runner, the
command line's CSV files and :meth:`~rfexplain.core.forest.Forest.agreement`), and every call
back into a scikit-learn model goes through :func:`model_input`.

The rule is scikit-learn's own: a pandas ``DataFrame`` (or ``Series``) whose column (index)
labels are all strings is matched **by name** to the expected feature names, whatever its column
order, and so is a mapping of names to values (one row) or a list of such mappings; a missing,
duplicated or unknown name is an :class:`~rfexplain.core.errors.InvalidInstanceError` naming it.
Anything without string labels (arrays, lists, frames with a default ``RangeIndex``) is read by
position. Reading a named frame by position would silently permute the features, which is what
this module prevents.

Example
-------
>>> import pandas as pd
>>> as_matrix(pd.Series({"b": 2.0, "a": 1.0}), ("a", "b")).tolist()
[[1.0, 2.0]]
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rfexplain.core.errors import InvalidInstanceError

__all__ = [
    "as_matrix",
    "labelled_values",
    "mapping_rows",
    "in_model_order",
    "named_labels",
    "reorder_by_name",
    "model_input",
    "check_feature_names",
    "duplicated_names",
    "pandas",
]


def named_labels(X: Any) -> list[str] | None:
    """The string column labels of a DataFrame (index labels of a Series), else ``None``."""
    if hasattr(X, "columns") and hasattr(X, "to_numpy"):
        labels = list(X.columns)
    elif hasattr(X, "index") and hasattr(X, "to_numpy") and getattr(X, "ndim", 0) == 1:
        labels = list(X.index)
    else:
        return None
    if labels and all(isinstance(label, str) for label in labels):
        return labels
    return None


def reorder_by_name(
    rows: np.ndarray,
    header: Sequence[str],
    expected: Sequence[str],
    *,
    what: str = "instance",
    by_position: bool = True,
) -> np.ndarray:
    """Columns of ``rows`` (2-D, labelled by ``header``) put in the order of ``expected``.

    Raises :class:`InvalidInstanceError` naming duplicated, missing and unknown names (and, when
    ``by_position``, saying that a plain array is read by position instead).
    """
    header = [str(h) for h in header]
    expected = [str(e) for e in expected]
    duplicated = sorted(name for name, n in Counter(header).items() if n > 1)
    missing = [name for name in expected if name not in header]
    unknown = [name for name in header if name not in set(expected)]
    problems = []
    if duplicated:
        problems.append(f"duplicated {duplicated}")
    if missing:
        problems.append(f"missing {missing}")
    if unknown:
        problems.append(f"unknown {unknown}")
    if problems:
        raise InvalidInstanceError(
            f"the {what}'s feature names do not match the model's ({'; '.join(problems)}); "
            f"expected {expected}." + (" Pass a plain array to use the columns by position." if by_position else "")
        )
    position = {name: k for k, name in enumerate(header)}
    return rows[:, [position[name] for name in expected]]


def in_model_order(X: Any, feature_names: Sequence[str], *, by_position: bool = True) -> Any:
    """A named DataFrame with its columns put in the order of ``feature_names`` (checked as in
    :func:`reorder_by_name`); any other input unchanged. Values are not converted, so one bad
    row stays one bad row."""
    labels = named_labels(X)
    if labels is None or getattr(X, "ndim", 2) != 2:
        return X
    order = reorder_by_name(
        np.arange(len(labels))[None, :], labels, feature_names, what="frame", by_position=by_position
    )[0]
    return X.iloc[:, [int(k) for k in order]]


def as_matrix(X: Any, feature_names: Sequence[str], categories: Sequence[Sequence[str] | None] = ()) -> np.ndarray:
    """One instance (1-D) or many (2-D) as a 2-D float64 array in the order of ``feature_names``.

    Named pandas input is matched by name (see the module docstring); other input is taken by
    position. Values are not validated here beyond being numeric, but for the categorical
    features of ``categories`` (per feature, ``None`` or the labels of its states, as
    :attr:`Forest.categories <rfexplain.core.forest.Forest.categories>`), whose value may be given
    as a label (:func:`labelled_values`).
    """
    mappings = mapping_rows(X)
    if mappings is not None:
        what = "instance" if isinstance(X, Mapping) else "rows"
        return _mapping_matrix(mappings, feature_names, categories, what=what)
    labels = named_labels(X)
    one = labels is not None and getattr(X, "ndim", 2) == 1
    raw = X.to_numpy() if hasattr(X, "to_numpy") else X
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        if not any(c is not None for c in categories):
            raise InvalidInstanceError(f"instances must be numeric: {exc}") from None
        arr = np.asarray(raw, dtype=object)
    if arr.ndim == 1:
        arr = arr[None, :]
    if labels is not None and arr.ndim == 2:
        arr = reorder_by_name(arr, labels, feature_names, what="instance" if one else "frame")
    return labelled_values(arr, categories, feature_names) if arr.dtype == object else arr


def labelled_values(
    rows: np.ndarray, categories: Sequence[Sequence[str] | None], feature_names: Sequence[str]
) -> np.ndarray:
    """The 2-D object array ``rows`` as float64 numbers: a categorical feature's value given as
    one of its state labels (a category, as the model was fitted on it) is that state's index,
    :data:`~rfexplain.core.set_splits.MISSING`, ``None`` and ``pandas.NA`` are NaN, and any other string is the
    :data:`~rfexplain.core.set_splits.OTHER` state where the feature has one (a category the model
    did not see); a string is 0 for a feature whose labels are empty (one no tree tests, whose
    value is not read); every other value must be a number."""
    from rfexplain.core.set_splits import MISSING, OTHER

    if rows.ndim != 2 or rows.shape[1] != len(categories):
        raise InvalidInstanceError(f"instances must be numeric rows of {len(categories)} features")
    out = np.empty(rows.shape, dtype=np.float64)
    for f, labels in enumerate(categories):
        index = {label: k for k, label in enumerate(labels or ())}
        for r, value in enumerate(rows[:, f].tolist()):
            if value is None or type(value).__name__ == "NAType" or (labels is not None and value == MISSING):
                out[r, f] = np.nan
            elif labels == () and isinstance(value, str):
                out[r, f] = 0.0
            elif labels is not None and isinstance(value, str):
                if value not in index and OTHER not in index:
                    raise InvalidInstanceError(
                        f"instance {r} has the unknown category {value!r} in feature {feature_names[f]!r} "
                        f"(known: {[v for v in labels if v != MISSING]})"
                    )
                out[r, f] = index.get(value, index.get(OTHER, 0))
            else:
                try:
                    out[r, f] = float(value)
                except (TypeError, ValueError):
                    kind = "a category or a number" if labels is not None else "a number"
                    raise InvalidInstanceError(
                        f"instance {r} has {value!r} in feature {feature_names[f]!r}, which must be {kind}"
                    ) from None
    return out


def mapping_rows(X: Any) -> list[Mapping[Any, Any]] | None:
    """The rows of ``X`` when it is given as mappings of feature names to values (one mapping, or
    a non-empty list or tuple of them), else ``None``."""
    if isinstance(X, Mapping):
        return [X]
    if isinstance(X, (list, tuple)) and X and all(isinstance(row, Mapping) for row in X):
        return list(X)
    return None


def _mapping_matrix(
    rows: Sequence[Mapping[Any, Any]],
    feature_names: Sequence[str],
    categories: Sequence[Sequence[str] | None],
    *,
    what: str,
) -> np.ndarray:
    """Rows given as mappings of feature names to values, in the order of ``feature_names``
    (categories given by label as in :func:`as_matrix`)."""
    out = np.empty((len(rows), len(feature_names)), dtype=np.float64)
    for k, row in enumerate(rows):
        names = list(row.keys())
        if not all(isinstance(name, str) for name in names):
            raise InvalidInstanceError(
                f"a row given as a mapping must be keyed by feature names (strings), got {names}"
            )
        try:
            values = np.asarray([list(row.values())], dtype=np.float64)
        except (TypeError, ValueError) as exc:
            if not any(c is not None for c in categories):
                raise InvalidInstanceError(f"instances must be numeric: {exc}") from None
            values = np.asarray([list(row.values())], dtype=object)
        ordered = reorder_by_name(values, names, feature_names, what=what)
        out[k] = (labelled_values(ordered, categories, feature_names) if ordered.dtype == object else ordered)[0]
    return out


def duplicated_names(names: Sequence[str]) -> list[str]:
    """The names that occur more than once in ``names``, in the order of their first occurrence."""
    counts = Counter(names)
    return [name for name in counts if counts[name] > 1]


def check_feature_names(given: Any, model_names: Sequence[str] | None, n_features: int) -> list[str] | None:
    """Validate ``feature_names=`` given with a model: a sequence of ``n_features`` distinct
    strings that agrees with the model's ``feature_names_in_`` when it has them."""
    if given is None:
        return None
    if isinstance(given, (str, bytes)):
        raise InvalidInstanceError(f"feature_names must be a sequence of names, not the string {given!r}")
    names = [str(n) for n in given]
    if len(names) != n_features:
        raise InvalidInstanceError(f"feature_names has {len(names)} names but the model has {n_features} features")
    duplicated = duplicated_names(names)
    if duplicated:
        raise InvalidInstanceError(
            f"feature_names must be distinct, got duplicate feature names {duplicated} in {names}"
        )
    if model_names is not None and list(model_names) != names:
        raise InvalidInstanceError(
            f"feature_names {names} contradict the model's feature_names_in_ {list(model_names)}: "
            "the model was fitted on named columns, whose names are used"
        )
    return names


def pandas() -> Any:
    """The pandas module (imported on demand: rfexplain does not need it for arrays)."""
    return importlib.import_module("pandas")


def model_input(model: Any, X32: np.ndarray) -> Any:
    """``X32`` (rows in the model's column order) as the model wants it: a DataFrame with its
    ``feature_names_in_`` when it was fitted on one (no "valid feature names" warning), else the
    array itself; the columns of a ``HistGradientBoostingClassifier``'s string categories hold
    the categories (:func:`~rfexplain.core.boosted_import.string_categories`: a value that is the
    code of one, its category, any other value NaN, which its encoder reads as it reads an unknown
    category)."""
    from rfexplain.core.boosted_import import string_categories

    names = getattr(model, "feature_names_in_", None)
    strings = string_categories(model)
    if strings:
        rows = np.asarray(X32, dtype=np.float64)
        X32 = rows.astype(object)
        for f, values in strings.items():
            code = rows[:, f]
            known = (code == np.floor(code)) & (code >= 0) & (code < len(values))
            X32[:, f] = [values[int(c)] if k else np.nan for c, k in zip(code.tolist(), known.tolist())]
    if names is None:
        return X32
    pd = pandas()  # fitted on a DataFrame, so pandas is installed
    return pd.DataFrame(X32 if strings else np.asarray(X32), columns=list(names))
