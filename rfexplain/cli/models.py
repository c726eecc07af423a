"""The model and the rows to explain: a saved forest or model, or one trained here on a dataset;
the dataset's rows or those of ``--input``."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from rfexplain.cli.inputs import existing_file, read_batch_input
from rfexplain.cli.options import UsageError

__all__ = ["load_forest_or_model", "is_regressor", "train_forest", "train_split", "instance_pool", "rows_read_whole"]


#: Bytes read from the start of a model file to tell forest JSON from joblib/pickle.
_HEAD_BYTES = 4096


def load_forest_or_model(path: str) -> tuple[Any, Any]:
    """``(forest, model)`` from a forest JSON (``model`` is None) or a joblib/pickle model file.

    An empty file, a directory and a file that is neither forest JSON nor a readable
    joblib/pickle model are each refused (:class:`UsageError`) with a message saying so.
    """
    from rfexplain.core.forest import Forest

    file = existing_file(path)
    with file.open("rb") as handle:
        head = handle.read(_HEAD_BYTES).lstrip()
    if not head and file.stat().st_size <= _HEAD_BYTES:
        raise UsageError(f"{path} is empty: not a forest or a model file")
    if head[:1] in (b"{", b""):
        return Forest.from_json(file.read_text()), None
    import joblib

    try:
        model = joblib.load(file)
    except (ImportError, AttributeError) as exc:  # pickled from a library or version this Python lacks
        raise UsageError(
            f"cannot read {path}: its model needs what this Python lacks ({type(exc).__name__}: {exc})"
        ) from None
    except Exception as exc:  # unpickling reports every kind of corruption differently (e.g. "KeyError: 208")
        raise UsageError(
            f"cannot read {path}: it is not a readable joblib/pickle model (unpickling failed with "
            f"{type(exc).__name__}) nor forest JSON"
        ) from None
    from rfexplain.pipelines import PipelineModel, is_transforming_pipeline

    if is_transforming_pipeline(model):  # explained in its original columns
        return PipelineModel(model).forest, model
    if is_regressor(model):  # its trees, each leaf holding its value (rfexplain.regression)
        from rfexplain.regression import RegressionForest

        return RegressionForest.from_sklearn(model).base, model
    return Forest.from_sklearn(model), model


def is_regressor(model: Any) -> bool:
    """Whether ``model`` is (or ends in) a scikit-learn tree regressor."""
    from rfexplain.regression.model import REGRESSORS

    steps = getattr(model, "steps", None)
    last = steps[-1][1] if isinstance(steps, list) and steps else model
    return model is not None and type(last).__name__ in REGRESSORS


def train_forest(args: argparse.Namespace, test_size: float | None = None) -> Any:
    """Fit a RandomForestClassifier on ``args.dataset`` (see :func:`rfexplain.datasets.train_forest`)."""
    from rfexplain import datasets

    if args.trees < 1 or args.depth < 1:
        raise UsageError("--trees and --depth must be positive")
    return datasets.train_forest(
        args.dataset, trees=args.trees, depth=args.depth, seed=args.seed, test_size=test_size, data_dir=args.data
    )


def instance_pool(args: argparse.Namespace, path: str | None, bad: dict[int, str]) -> tuple[Any, Any, Any, list[int]]:
    """``(forest, model, rows, row ids)`` of ``batch`` and ``report``: a saved model or a forest
    trained on ``--dataset``, and the rows to explain (``--input`` CSV, else the dataset's rows).
    An ``--input`` row that is wrong on its own is named in ``bad`` (row number -> what is wrong,
    :func:`read_batch_input`) instead of refusing the file."""
    from rfexplain import datasets

    pool: Any = None
    pool_ids: list[int] = []
    if path:
        forest, model = load_forest_or_model(path)
        if args.dataset and not args.input:
            pool = datasets.load(args.dataset, args.data).X
            pool_ids = list(range(len(pool)))
    elif args.dataset:
        forest, model, pool, pool_ids = train_split(args)
    else:
        raise UsageError("give a model file or --dataset")
    if args.input:
        pool, found = read_batch_input(args.input, forest, model)
        bad.update(found)
        pool_ids = list(range(len(pool)))
    if pool is None:
        raise UsageError("give the instances: --dataset (its rows) or --input CSV")
    return forest, model, pool, pool_ids


def train_split(args: argparse.Namespace) -> tuple[Any, Any, Any, list[int]]:
    """Fit on a train split of ``args.dataset``: ``(forest, model, test rows, their row numbers)``."""
    import numpy as np

    if not 0 < args.test_size < 1:
        raise UsageError(f"--test-size must be in (0, 1), got {args.test_size}")
    trained = train_forest(args, test_size=args.test_size)
    test = np.sort(trained.test_rows)
    return trained.forest, trained.model, trained.data.X[test], [int(i) for i in test]


def rows_read_whole(pool: Any, bad: Mapping[int, str]) -> Any:
    """The rows of ``pool`` but those named in ``bad`` (their placeholders): the rows
    ``--bounds data`` takes its ranges from."""
    good = [k for k in range(len(pool)) if k not in bad]
    return pool.iloc[good] if hasattr(pool, "iloc") else pool[good]
