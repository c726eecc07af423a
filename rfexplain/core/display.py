"""Hooks through which the core's objects are drawn, without the core importing a front end.

:meth:`Reason.plot`, :meth:`Reason._repr_html_` and :meth:`Enumeration._repr_html_` call
:func:`render` by name; :mod:`rfexplain.viz` registers the renderers when the package is imported
(``import rfexplain`` does it), so the core stays free of matplotlib and of the front ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rfexplain.core.errors import RFExplainError

__all__ = ["register_renderer", "render"]

_RENDERERS: dict[str, Callable[..., Any]] = {}


def register_renderer(name: str, func: Callable[..., Any]) -> None:
    """Make ``render(name, ...)`` call ``func``."""
    _RENDERERS[name] = func


def render(name: str, *args: Any, **kwargs: Any) -> Any:
    """Call the renderer registered as ``name``."""
    func = _RENDERERS.get(name)
    if func is None:
        raise RFExplainError(f"no renderer {name!r} is registered (import rfexplain.viz)")
    return func(*args, **kwargs)
