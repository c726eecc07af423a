"""A matplotlib figure as inline SVG text for HTML (no XML prolog, no DTD URL, no metadata)."""

from __future__ import annotations

import io
import re
from typing import Any

__all__ = ["figure_svg"]

_PROLOG = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*|<metadata>.*?</metadata>\s*", re.S)


def figure_svg(fig: Any) -> str:
    """``fig`` as an ``<svg>`` element: text kept as text (small), stable ids, nothing external."""
    import matplotlib

    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "rfexplain"}):
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    return _PROLOG.sub("", out.getvalue()).strip()
