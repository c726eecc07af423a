"""Regenerates the README's pictures from the README's own code: ``python docs/make_figures.py``.

The "See it" section's Python block is run as written (it saves ``docs/images/decision.png``), so
the picture always shows what that code draws.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def see_it_code() -> str:
    """The Python block of the README's "See it" section."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"## See it\n.*?```python\n(.*?)```", text, re.DOTALL)
    if block is None:
        raise SystemExit("README.md has no Python block under '## See it'")
    return block.group(1)


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    os.chdir(ROOT)
    exec(compile(see_it_code(), "README.md", "exec"), {})


if __name__ == "__main__":
    main()
