"""Where the tests find the benchmark CSVs: ``$RFEXPLAIN_DATA``, else ``shared/datasets`` beside
this checkout (the project's layout); ``None`` when neither exists, and the tests needing them skip.

The package itself never guesses this folder (see :func:`rfexplain.datasets.find_data_dir`).
"""

from __future__ import annotations

import os
from pathlib import Path

from rfexplain.datasets import ENV_VAR


def benchmark_dir() -> Path | None:
    """The benchmark CSV folder for the tests, or ``None``."""
    for candidate in (os.environ.get(ENV_VAR), Path(__file__).resolve().parents[2] / "shared" / "datasets"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None
