"""Datasets: scikit-learn's bundled ones and the benchmark CSV suite.

``load("iris")`` (also ``wine``, ``breast_cancer``, ``digits``) needs no download. Any other name
is read as ``<name>.csv`` from the benchmark directory: the ``data_dir`` argument, else the
environment variable ``RFEXPLAIN_DATA``, else ``../shared/datasets`` beside the project checkout.
Benchmark CSVs have a header row, numeric features and the label in the last column; labels may be
strings and cells may carry leading spaces. Classes are the sorted distinct labels, as
scikit-learn's ``classes_``.

Example
-------
>>> data = load("iris")
>>> data.X.shape, data.class_names[:2]
((150, 4), ('setosa', 'versicolor'))
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rfexplain.core.errors import UnknownDatasetError

__all__ = ["Dataset", "load", "available", "find_data_dir", "BUILTIN"]

BUILTIN = ("iris", "wine", "breast_cancer", "digits")
ENV_VAR = "RFEXPLAIN_DATA"


@dataclass(frozen=True)
class Dataset:
    """Features ``X`` (float64), labels ``y`` (as the classifier should see them), names."""

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: tuple[str, ...]
    class_names: tuple[Any, ...]

    def __repr__(self) -> str:
        return f"Dataset({self.name!r}, rows={len(self.X)}, features={self.X.shape[1]}, classes={len(self.class_names)})"


def find_data_dir(path: str | os.PathLike[str] | None = None) -> Path | None:
    """The benchmark CSV directory: ``path``, ``$RFEXPLAIN_DATA``, or ``../shared/datasets``
    beside the project checkout (or the current directory); ``None`` when none exists."""
    candidates = []
    if path is not None:
        candidates.append(Path(path))
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]))
    candidates.append(Path(__file__).resolve().parent.parent.parent / "shared" / "datasets")
    candidates.append(Path.cwd().parent / "shared" / "datasets")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return None


def available(path: str | os.PathLike[str] | None = None) -> list[str]:
    """Names :func:`load` accepts: the built-in datasets and the CSVs of the benchmark directory."""
    directory = find_data_dir(path)
    csvs = sorted(p.stem for p in directory.glob("*.csv")) if directory else []
    return list(BUILTIN) + [name for name in csvs if name not in BUILTIN]


def load(name: str, data_dir: str | os.PathLike[str] | None = None) -> Dataset:
    """Load a dataset by name (see the module docstring).

    A built-in name is served by scikit-learn unless ``data_dir`` is given and holds a CSV of
    that name (the benchmark suite has its own ``iris.csv``).

    Raises :class:`~rfexplain.core.errors.UnknownDatasetError` listing the available names.
    """
    directory = find_data_dir(data_dir)
    if name in BUILTIN and data_dir is None:
        return _load_builtin(name)
    if directory is not None and (directory / f"{name}.csv").is_file():
        return _load_csv(directory / f"{name}.csv")
    if name in BUILTIN:
        return _load_builtin(name)
    where = f" (benchmark directory: {directory})" if directory else f" (set {ENV_VAR} to the benchmark CSV directory)"
    raise UnknownDatasetError(
        f"dataset must be one of {available(data_dir)}. Got {name!r} instead{where}."
    )


def _load_builtin(name: str) -> Dataset:
    from sklearn import datasets as skd

    bunch = getattr(skd, f"load_{name}")()
    class_names = tuple(np.asarray(bunch.target_names).tolist())
    y = np.asarray(class_names, dtype=object)[bunch.target]
    y = y.astype(type(class_names[0]) if isinstance(class_names[0], str) else np.asarray(class_names).dtype)
    names = tuple(str(n) for n in getattr(bunch, "feature_names", [f"x{i}" for i in range(bunch.data.shape[1])]))
    return Dataset(name, np.asarray(bunch.data, dtype=np.float64), y, names, class_names)


def _load_csv(path: Path) -> Dataset:
    with path.open(newline="") as handle:
        rows = [[cell.strip() for cell in row] for row in csv.reader(handle) if row]
    if len(rows) < 2:
        raise UnknownDatasetError(f"{path} has no data rows")
    header, body = rows[0], rows[1:]
    try:
        X = np.asarray([[float(cell) for cell in row[:-1]] for row in body], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{path}: non-numeric feature value ({exc})") from None
    raw_labels = [row[-1] for row in body]
    labels: np.ndarray
    try:
        numeric = [float(v) for v in raw_labels]
        labels = np.asarray(
            [int(v) for v in numeric] if all(v.is_integer() for v in numeric) else numeric
        )
    except ValueError:
        labels = np.asarray(raw_labels)
    class_names = tuple(np.unique(labels).tolist())
    return Dataset(path.stem, X, labels, tuple(header[:-1]), class_names)
