"""The ``--input`` CSV of instances, read row by row, a bad row named instead of refusing the
file (:func:`read_batch_input`, for ``rfexplain batch`` and ``rfexplain report``). A
pipeline explained in its original columns, and a model fitted on a DataFrame's string
categories, read the file as a table of the user's columns, matched by the header's names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rfexplain.cli.options import UsageError

__all__ = ["existing_file", "read_batch_input", "reads_columns"]


def existing_file(path: str, what: str = "a model file") -> Path:
    """``path`` as a :class:`Path`, refused (:class:`UsageError`) when it is a directory (saying
    it is not ``what``) or absent."""
    file = Path(path)
    if file.is_dir():
        raise UsageError(f"{path} is a directory, not {what}")
    if not file.is_file():
        raise UsageError(f"no such file: {path}")
    return file


def reads_columns(model: Any) -> bool:
    """Whether ``model``'s instances are rows of the user's columns, read by name from a CSV
    file's header: a pipeline explained in its original columns, or a model whose categories are
    strings (:func:`~rfexplain.core.boosted_import.string_categories`)."""
    from rfexplain.core.boosted_import import string_categories
    from rfexplain.pipelines import is_transforming_pipeline

    return model is not None and (is_transforming_pipeline(model) or bool(string_categories(model)))


def read_batch_input(path: str, forest: Any, model: Any) -> tuple[Any, dict[int, str]]:
    """``(instances, bad rows)`` of ``--input``: a numeric array in the forest's column order, or,
    where :func:`reads_columns`, a DataFrame of the user's columns (matched by name); either way
    one extra last column is a label and is ignored. A row that is wrong on its own (too few or
    too many values, a value that is not a number) is kept as a placeholder and named in ``bad
    rows`` (row number -> what is wrong, with its line in the file), so that it gets its own
    error record. A header that does not name the model's columns
    concerns every row and is refused (:class:`~rfexplain.InvalidInstanceError`)."""
    import csv
    import io

    import numpy as np

    from rfexplain.core.instances import pandas, reorder_by_name

    file = existing_file(path, "a CSV file of instances")
    with file.open(newline="") as handle:
        reader = csv.reader(handle)
        lines = [(reader.line_num, row) for row in reader if row]
    if not lines:
        raise UsageError(f"{path} has no data rows")
    names = list(forest.feature_names)
    width = len(names)
    name = file.name
    bad: dict[int, str] = {}
    if reads_columns(model):  # the user's columns, matched by name
        columns = [cell.strip() for cell in lines[0][1]]
        keep = columns[:-1] if len(columns) == width + 1 and columns[-1] not in set(names) else columns
        good: list[list[str]] = []
        for k, (line, row) in enumerate(lines[1:]):
            if len(row) != len(columns):
                bad[k] = f"line {line} of {name} has {len(row)} values, expected {len(columns)} (its header's)"
            else:
                good.append(row[: len(keep)])
        text = io.StringIO()
        csv.writer(text).writerows([keep] + good)
        frame = pandas().read_csv(io.StringIO(text.getvalue()), skipinitialspace=True)
        positions = [k for k in range(len(lines) - 1) if k not in bad]
        frame.index = positions
        frame = frame.reindex(range(len(lines) - 1))
        return frame, bad

    def number(cell: str) -> float | None:
        try:
            return float(cell.strip().strip('"'))
        except ValueError:
            return None

    first = [cell.strip().strip('"') for cell in lines[0][1]]
    numbers = [number(cell) for cell in first[:width]]
    header: list[str] | None = None
    if any(v is None for v in numbers) and (set(first) & set(names) or all(v is None for v in numbers)):
        header, lines = first, lines[1:]
    if not lines:
        raise UsageError(f"{path} has no data rows")
    X = np.full((len(lines), width), np.nan)
    for k, (line, row) in enumerate(lines):
        if len(row) not in (width, width + 1):
            bad[k] = f"line {line} of {name} has {len(row)} values, expected {width} (or {width + 1} with a label)"
            continue
        values = [number(cell) for cell in row[:width]]
        wrong = [j for j, v in enumerate(values) if v is None]
        if wrong:
            column = (header or names)[wrong[0]]
            bad[k] = f"line {line} of {name}: {column!r} is not a number: {row[wrong[0]].strip()!r}"
            continue
        X[k] = values
    if header is not None:
        X = reorder_by_name(X, header[:width], names, what=f"CSV file {path!r}")
    return X, bad
