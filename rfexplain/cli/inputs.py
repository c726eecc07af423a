"""The ``--input`` CSV of instances: read whole (:func:`read_input`) or row by row, a bad row
named instead of refusing the file (:func:`read_batch_input`, for ``rfexplain batch``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rfexplain.cli.options import UsageError

__all__ = ["existing_file", "read_input", "read_batch_input"]


def existing_file(path: str, what: str = "a model file") -> Path:
    """``path`` as a :class:`Path`, refused (:class:`UsageError`) when it is a directory (saying
    it is not ``what``) or absent."""
    file = Path(path)
    if file.is_dir():
        raise UsageError(f"{path} is a directory, not {what}")
    if not file.is_file():
        raise UsageError(f"no such file: {path}")
    return file


def read_input(path: str, forest: Any, model: Any) -> Any:
    """The instances of ``--input``: a numeric array in the forest's column order, or, for a
    pipeline explained in its original columns, a DataFrame of those columns (matched by name);
    either way one extra last column is a label and is ignored."""
    from rfexplain import datasets
    from rfexplain.pipelines import is_transforming_pipeline

    if model is not None and is_transforming_pipeline(model):
        from rfexplain.core.instances import pandas

        frame = pandas().read_csv(existing_file(path, "a CSV file of instances"), skipinitialspace=True)
        names = set(forest.feature_names)
        if len(frame.columns) == len(names) + 1 and frame.columns[-1] not in names:
            frame = frame.iloc[:, :-1]  # one extra last column is the label, as for a plain model
        return frame
    return datasets.read_instances(path, forest.feature_names)


def read_batch_input(path: str, forest: Any, model: Any) -> tuple[Any, dict[int, str]]:
    """``(instances, bad rows)`` of ``batch --input``: as :func:`read_input`, except that a row
    that is wrong on its own (too few or too many values, a value that is not a number) is kept
    as a placeholder and named in ``bad rows`` (row number -> what is wrong, with its line in the
    file), so that it gets its own error record. A header that does not name the model's columns
    concerns every row and is refused (:class:`~rfexplain.InvalidInstanceError`)."""
    import csv
    import io

    import numpy as np

    from rfexplain.core.instances import pandas, reorder_by_name
    from rfexplain.pipelines import is_transforming_pipeline

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
    if model is not None and is_transforming_pipeline(model):  # original columns, matched by name
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
