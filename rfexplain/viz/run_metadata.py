"""What a batch run was, kept with its results: the package version, the engine and its options,
the vote, a fingerprint of the model, the query and its arguments.

:func:`run_metadata` builds it from an explainer; DataFrames keep it in
``frame.attrs["rfexplain"]`` and Parquet files in their schema's ``rfexplain`` key
(:func:`parquet_metadata` reads it back).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from rfexplain.core.pyvalues import to_python
from rfexplain.viz.extras import require

__all__ = ["METADATA_KEY", "parquet_metadata", "run_metadata"]

#: The key of the metadata in ``DataFrame.attrs`` and in a Parquet file's schema.
METADATA_KEY = "rfexplain"


def _package_version() -> str:
    try:
        return version("rfexplain")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


def run_metadata(explainer: Any, query: str, arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The metadata of a run of ``query`` (with its ``arguments``) by ``explainer``: plain JSON
    values. ``model_fingerprint`` is the SHA-256 of the explained forest's JSON (its trees,
    thresholds, classes, feature names, bounds and vote), so two runs on the same model share it."""
    forest = explainer.forest
    names = forest.feature_names
    options = {k: to_python(v) for k, v in sorted(getattr(explainer, "options", {}).items())}
    return {
        "package": "rfexplain",
        "version": _package_version(),
        "engine": explainer.engine_name,
        "vote": forest.vote,
        "model_fingerprint": hashlib.sha256(forest.to_json().encode()).hexdigest(),
        "model": type(explainer.model).__name__ if getattr(explainer, "model", None) is not None else "Forest",
        "n_trees": forest.n_trees,
        "feature_names": list(names),
        "classes": [to_python(c) for c in forest.classes],
        "options": json.loads(json.dumps(options, default=str)),
        "immutable": [names[f] for f in getattr(explainer, "immutable", ())],
        "query": query,
        "arguments": json.loads(json.dumps({k: to_python(v) for k, v in (arguments or {}).items()}, default=str)),
    }


def parquet_metadata(path: str) -> dict[str, Any] | None:
    """The run's metadata stored in a Parquet file by :func:`~rfexplain.viz.frames.write_parquet`
    (``None`` if it has none); needs ``rfexplain[parquet]``."""
    pq = require("pyarrow.parquet", "parquet", "reading Parquet")
    stored = pq.read_schema(path).metadata or {}
    text = stored.get(METADATA_KEY.encode())
    return None if text is None else json.loads(text)
