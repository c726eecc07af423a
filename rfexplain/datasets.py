"""Datasets: scikit-learn's bundled ones, the benchmark suite shipped with the package, other CSVs,
and training a forest on them.

``load("iris")`` (also ``wine``, ``breast_cancer``, ``digits``) needs no download. The 19 benchmark
datasets of the papers (``ann-thyroid``, ``magic``, ``ring``, ...; :func:`benchmark_names`) ship
with the package, gzipped, in ``rfexplain/data/benchmarks/`` (:func:`benchmark_dir`), with the SAT
paper's sample instances (:func:`load_samples`); they come from the RFxpl authors' MIT-licensed
benchmark bundle (see that folder's ``README.md``). Any other name is read as ``<name>.csv`` (or
``<name>.csv.gz``) from a folder given by the ``data_dir`` argument (the command line's ``--data``)
or the environment variable ``RFEXPLAIN_DATA``; a CSV there overrides the built-in copy of the same
name. Benchmark CSVs have a header row, numeric features and the label in the last column; labels
may be strings and cells may carry leading spaces. Classes are the sorted distinct labels, as
scikit-learn's ``classes_``.

:func:`read_csv` is the one CSV reader of the package (datasets, the command line's ``--input``,
the benchmarks); :func:`train_forest` is the one "load, split, fit, convert" recipe.

Example
-------
>>> data = load("iris")
>>> data.X.shape, data.class_names[:2]
((150, 4), ('setosa', 'versicolor'))
>>> trained = train_forest("iris", trees=3, depth=2, test_size=0.2)
>>> len(trained.X_train), len(trained.X_test), trained.forest.n_trees
(120, 30, 3)
>>> load("ann-thyroid")
Dataset('ann-thyroid', rows=7200, features=21, classes=3)
>>> load_samples("ann-thyroid").shape
(720, 21)
"""

from __future__ import annotations

import csv
import gzip
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rfexplain.core.errors import CSVFormatError, DataDirError, TrainingOptionError, UnknownDatasetError
from rfexplain.core.forest import Forest
from rfexplain.core.instances import reorder_by_name

__all__ = [
    "Dataset",
    "CSVTable",
    "TrainedForest",
    "load",
    "available",
    "find_data_dir",
    "benchmark_dir",
    "benchmark_names",
    "load_samples",
    "read_csv",
    "loans",
    "read_instances",
    "train_forest",
    "BUILTIN",
    "ENV_VAR",
    "DataDirError",
    "CSVFormatError",
    "TrainingOptionError",
]

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
        return (
            f"Dataset({self.name!r}, rows={len(self.X)}, features={self.X.shape[1]}, classes={len(self.class_names)})"
        )


_HOW = f"give data_dir= (the command line's --data) or set the environment variable {ENV_VAR}"


def benchmark_dir() -> Path:
    """The folder of the benchmark suite shipped with the package: ``<name>.csv.gz`` for each of
    the 19 datasets and ``samples/<name>.samples.gz``, with a ``README.md`` naming their source."""
    return Path(__file__).resolve().parent / "data" / "benchmarks"


def benchmark_names() -> list[str]:
    """The names of the built-in benchmark datasets, sorted (``ann-thyroid`` ... ``xd6``)."""
    return sorted(_csv_names(benchmark_dir()))


def find_data_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The benchmark CSV directory: ``path``, else ``$RFEXPLAIN_DATA``, else the built-in
    :func:`benchmark_dir`.

    Raises :class:`~rfexplain.core.errors.DataDirError` (an ``UnknownDatasetError``) when the
    folder given (``path`` or ``$RFEXPLAIN_DATA``) does not exist.
    """
    return _configured_data_dir(path) or benchmark_dir()


def _configured_data_dir(path: str | os.PathLike[str] | None) -> Path | None:
    """The folder given (``path``, else ``$RFEXPLAIN_DATA``), ``None`` when none is (a missing one raises)."""
    if path is not None:
        chosen, origin = Path(path), "data_dir"
    elif os.environ.get(ENV_VAR):
        chosen, origin = Path(os.environ[ENV_VAR]), ENV_VAR
    else:
        return None
    if not chosen.is_dir():
        raise DataDirError(f"the benchmark CSV directory {str(chosen)!r} ({origin}) does not exist: {_HOW}")
    return chosen


def _csv_names(directory: Path) -> set[str]:
    return {p.name[: -len(".csv")] for p in directory.glob("*.csv")} | {
        p.name[: -len(".csv.gz")] for p in directory.glob("*.csv.gz")
    }


def _csv_file(directory: Path, name: str) -> Path | None:
    """``<name>.csv``, else ``<name>.csv.gz``, in ``directory``; ``None`` when neither is a file."""
    for file in (directory / f"{name}.csv", directory / f"{name}.csv.gz"):
        if file.is_file():
            return file
    return None


def available(path: str | os.PathLike[str] | None = None) -> list[str]:
    """Names :func:`load` accepts: the scikit-learn datasets, then the built-in benchmark datasets
    and the CSVs of the folder given or configured, sorted."""
    directory = _configured_data_dir(path)
    csvs = _csv_names(benchmark_dir()) | (_csv_names(directory) if directory else set())
    return list(BUILTIN) + sorted(name for name in csvs if name not in BUILTIN)


def _source(name: str, data_dir: str | os.PathLike[str] | None) -> Path | None:
    """The CSV :func:`load` reads for ``name`` (``None``: scikit-learn's dataset)."""
    directory = _configured_data_dir(data_dir)
    found = _csv_file(directory, name) if directory is not None else None
    if found is not None or name in BUILTIN:
        return found
    found = _csv_file(benchmark_dir(), name)
    if found is None:
        where = f" (nor in the folder {str(directory)!r})" if directory is not None else ""
        raise UnknownDatasetError(
            f"dataset must be one of {available(data_dir)}. Got {name!r} instead{where}; other CSVs: {_HOW}."
        )
    return found


def load(name: str, data_dir: str | os.PathLike[str] | None = None) -> Dataset:
    """Load a dataset by name (see the module docstring).

    A CSV of that name in ``data_dir`` (else ``$RFEXPLAIN_DATA``) comes first. Else a
    scikit-learn name (``iris``, ``wine``, ...) is served by scikit-learn, any other by the
    built-in benchmark suite (whose own ``iris`` is ``load("iris", benchmark_dir())``).

    Raises :class:`~rfexplain.core.errors.UnknownDatasetError` listing the available names, and
    :class:`~rfexplain.core.errors.DataDirError` when the folder given does not exist.
    """
    if name in BUILTIN and data_dir is None:
        return _load_builtin(name)
    source = _source(name, data_dir)
    return _load_builtin(name) if source is None else _load_csv(source, name)


def load_samples(name: str, data_dir: str | os.PathLike[str] | None = None) -> np.ndarray | None:
    """The sample instances of a benchmark dataset (the instances the SAT paper explained), as a
    float64 array with one row per instance; ``None`` when there are none.

    They are read from ``samples/<name>.samples`` (or ``.samples.gz``) beside the CSV
    :func:`load` reads (``load(name, data_dir)``): the built-in suite has them for its 19 datasets.
    """
    source = _source(name, data_dir) if name not in BUILTIN or data_dir is not None else None
    if source is None:
        return None
    for file in (source.parent / "samples" / f"{name}.samples", source.parent / "samples" / f"{name}.samples.gz"):
        if file.is_file():
            return np.loadtxt(file, delimiter=",", ndmin=2, dtype=np.float64)
    return None


def _load_builtin(name: str) -> Dataset:
    from sklearn import datasets as skd

    bunch = getattr(skd, f"load_{name}")()
    class_names = tuple(np.asarray(bunch.target_names).tolist())
    y = np.asarray(class_names, dtype=object)[bunch.target]
    y = y.astype(type(class_names[0]) if isinstance(class_names[0], str) else np.asarray(class_names).dtype)
    names = tuple(str(n) for n in getattr(bunch, "feature_names", [f"x{i}" for i in range(bunch.data.shape[1])]))
    return Dataset(name, np.asarray(bunch.data, dtype=np.float64), y, names, class_names)


@dataclass(frozen=True)
class CSVTable:
    """A numeric CSV: its header (``None`` when it has none), features, and labels when present."""

    header: tuple[str, ...] | None
    X: np.ndarray
    labels: tuple[str, ...] | None


def read_csv(path: str | os.PathLike[str], n_features: int | None = None, *, header: bool | None = None) -> CSVTable:
    """Read a CSV of instances (gzipped when its name ends in ``.gz``): cells stripped of spaces and
    quotes, an optional header row.

    With ``n_features=None`` every row's last column is its label (the benchmark format). With
    ``n_features`` given, rows have that many feature columns and optionally one more, the label.
    The first row is a header when ``header`` is true, or, with ``header=None``, when its feature
    cells are not all numbers. Raises
    :class:`~rfexplain.core.errors.CSVFormatError` on a missing file or a directory, a row of the
    wrong width, a non-numeric feature or no rows at all.
    """
    file = Path(path)
    if file.is_dir():
        raise CSVFormatError(f"{file} is a directory, not a CSV file")
    if not file.is_file():
        raise CSVFormatError(f"no such file: {file}")
    opened = gzip.open(file, "rt", newline="") if file.name.endswith(".gz") else file.open(newline="")
    with opened as handle:
        rows = [[cell.strip().strip('"') for cell in row] for row in csv.reader(handle) if row]
    width = n_features if n_features is not None else (len(rows[0]) - 1 if rows else 0)
    names: tuple[str, ...] | None = None
    if rows and (header if header is not None else not _all_numbers(rows[0][:width])):
        names, rows = tuple(rows[0]), rows[1:]
    if not rows:
        raise CSVFormatError(f"{file} has no data rows")
    allowed = (width, width + 1) if n_features is not None else (width + 1,)
    features: list[list[float]] = []
    labels: list[str] = []
    for k, row in enumerate(rows, start=1):
        if len(row) not in allowed:
            raise CSVFormatError(f"{file}: row {k} has {len(row)} columns, expected {' or '.join(map(str, allowed))}")
        try:
            features.append([float(cell) for cell in row[:width]])
        except ValueError as exc:
            raise CSVFormatError(f"{file}: row {k} has a non-numeric feature value ({exc})") from None
        if len(row) > width:
            labels.append(row[width])
    has_labels = len(labels) == len(rows)
    return CSVTable(
        names, np.asarray(features, dtype=np.float64).reshape(len(rows), width), tuple(labels) if has_labels else None
    )


def read_instances(path: str | os.PathLike[str], feature_names: Sequence[str]) -> np.ndarray:
    """The instances of a CSV file, as a float64 array in the order of ``feature_names``.

    A file with a header is matched **by name** (its columns may come in any order; one extra
    last column is a label and is ignored); missing, duplicated or unknown names are an
    :class:`~rfexplain.core.errors.InvalidInstanceError` naming them. A file without a header is
    read by position.
    """
    table = read_csv(path, len(feature_names))
    if table.header is None:
        return table.X
    header = list(table.header[: len(feature_names)])
    return reorder_by_name(table.X, header, feature_names, what=f"CSV file {os.fspath(path)!r}")


def _all_numbers(cells: list[str]) -> bool:
    try:
        [float(cell) for cell in cells]
    except ValueError:
        return False
    return True


def _load_csv(path: Path, name: str) -> Dataset:
    table = read_csv(path, header=True)
    if table.header is None or table.labels is None:
        raise CSVFormatError(f"{path}: a benchmark CSV has a header row and a label column")
    raw_labels = list(table.labels)
    labels: np.ndarray
    try:
        numeric = [float(v) for v in raw_labels]
        labels = np.asarray([int(v) for v in numeric] if all(v.is_integer() for v in numeric) else numeric)
    except ValueError:
        labels = np.asarray(raw_labels)
    class_names = tuple(np.unique(labels).tolist())
    return Dataset(name, table.X, labels, table.header[:-1], class_names)


@dataclass(frozen=True)
class TrainedForest:
    """A forest trained by :func:`train_forest`: the data, the split, the model and its Forest.

    ``train_rows`` and ``test_rows`` are row numbers of ``data`` in the order scikit-learn's
    ``train_test_split`` gives them (``test_rows`` is empty when nothing was held out).
    """

    data: Dataset
    model: Any
    forest: Forest
    train_rows: np.ndarray
    test_rows: np.ndarray

    @property
    def X_train(self) -> np.ndarray:
        return self.data.X[self.train_rows]

    @property
    def y_train(self) -> np.ndarray:
        return self.data.y[self.train_rows]

    @property
    def X_test(self) -> np.ndarray:
        return self.data.X[self.test_rows]

    @property
    def y_test(self) -> np.ndarray:
        return self.data.y[self.test_rows]


def train_forest(
    data: str | Dataset,
    *,
    trees: int,
    depth: int | None,
    seed: int = 0,
    test_size: float | None = None,
    stratify: bool = False,
    data_dir: str | os.PathLike[str] | None = None,
    vote: str = "auto",
    **model_options: Any,
) -> TrainedForest:
    """Load (by name, or take) a dataset, hold out a test split, fit a random forest, convert it.

    ``RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed,
    **model_options)`` is fitted on the training rows; the split is
    ``train_test_split(test_size=test_size, random_state=seed)`` (stratified by label with
    ``stratify=True``), and no split at all when ``test_size`` is ``None``. Raises
    :class:`~rfexplain.core.errors.TrainingOptionError` on a non-positive size. ``vote`` is the
    Forest's vote mode (:meth:`~rfexplain.Forest.from_sklearn`; the papers' tables use ``"hard"``).
    """
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    if trees < 1 or (depth is not None and depth < 1):
        raise TrainingOptionError(f"trees and depth must be positive, got trees={trees}, depth={depth}")
    if test_size is not None and not 0 < test_size < 1:
        raise TrainingOptionError(f"test_size must be in (0, 1), got {test_size}")
    dataset = load(data, data_dir) if isinstance(data, str) else data
    rows = np.arange(len(dataset.X))
    if test_size is None:
        train, test = rows, rows[:0]
    else:
        train, test = train_test_split(
            rows, test_size=test_size, random_state=seed, stratify=dataset.y if stratify else None
        )
    model = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed, **model_options)
    model.fit(dataset.X[train], dataset.y[train])
    forest = Forest.from_sklearn(model, feature_names=list(dataset.feature_names), vote=vote)
    return TrainedForest(dataset, model, forest, train, test)


def loans() -> tuple[Any, Any]:
    """The built-in mixed-type example: ``(X, y)``, a DataFrame of 600 synthetic loan
    applications (four numeric and four categorical columns) and the Series ``approved``
    (``"yes"``/``"no"``). Shipped with the package (``rfexplain/data/loans.csv``, written by
    ``python -m experiments.make_loans_csv`` with a fixed seed); needs pandas."""
    from importlib.resources import files

    from rfexplain.core.instances import pandas

    with files("rfexplain").joinpath("data/loans.csv").open() as handle:
        frame = pandas().read_csv(handle)
    return frame.drop(columns=["approved"]), frame["approved"]
