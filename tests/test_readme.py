"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_python_api_example_runs() -> None:
    text = README.read_text()
    block = re.search(r"## Python API\n\n```python\n(.*?)```", text, re.S)
    assert block, "the README has a Python API example"
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), "README.md", "exec"), namespace)
    assert namespace["d"].prediction == "versicolor"  # type: ignore[attr-defined]
