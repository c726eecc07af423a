"""A matplotlib figure as inline SVG text for HTML (no XML prolog, no DTD URL, no metadata).

Several figures share one HTML document, so every ``id`` of a figure (and every reference to
it: ``url(#...)``, ``href="#..."``) gets a prefix unique to the figure.
"""

from __future__ import annotations

import io
import itertools
import re
from typing import Any

__all__ = ["figure_svg"]

_PROLOG = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*|<metadata>.*?</metadata>\s*", re.S)
_IDS = re.compile(r'(\bid=")([^"]+")|(url\(#)([^)]+\))|(href="#)([^"]+")')
_FIGURES = itertools.count(1)


def figure_svg(fig: Any, prefix: str | None = None) -> str:
    """``fig`` as an ``<svg>`` element: text kept as text (small), ids prefixed with ``prefix``
    (by default ``svgN-``, N counting the figures converted in this process), nothing external."""
    import matplotlib

    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "rfexplain"}):
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    tag = prefix if prefix is not None else f"svg{next(_FIGURES)}-"
    text = _PROLOG.sub("", out.getvalue()).strip()
    return _IDS.sub(lambda m: "".join(g if k % 2 == 0 else tag + g for k, g in enumerate(m.groups()) if g), text)
