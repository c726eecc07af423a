"""Where the displays draw: new figures (through pyplot or detached from it), a user's Axes divided
into panels, and :class:`Display`, the attributes every display keeps (``figure_``, ``axes_``,
``ax_``, ``bounding_ax_``), as scikit-learn's displays do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rfexplain.viz.extras import require

__all__ = ["Display", "axes_grid", "new_figure", "pyplot"]


def pyplot() -> Any:
    return require("matplotlib.pyplot", "plot", "plotting")


def new_figure(figsize: tuple[float, float], detached: bool) -> Any:
    """A figure with constrained layout: through pyplot (so a notebook shows it inline, and
    ``plt.show()`` draws it), or ``detached`` from pyplot (reports and notebook tables, which
    render it to SVG themselves and must not leave figures in pyplot's registry)."""
    if detached:
        return require("matplotlib.figure", "plot", "plotting").Figure(figsize=figsize, layout="constrained")
    return pyplot().figure(figsize=figsize, layout="constrained")


def axes_grid(ax: Any, nrows: int, ncols: int, *, width_ratios: Sequence[float] | None = None) -> tuple[Any, Any, Any]:
    """The Axes to draw ``nrows x ncols`` panels into, from what the user passed as ``ax``.

    ``ax`` is either one Axes per panel (a sequence or array of ``nrows * ncols`` Axes, used as
    they are), or a single Axes whose area is divided into the panels (it is turned off and
    kept as the bounding Axes, as scikit-learn's ``PartialDependenceDisplay`` does). Returns
    ``(figure, axes as an (nrows, ncols) array, bounding Axes or None)``."""
    import numpy as np

    flat = np.asarray(ax, dtype=object).ravel()
    if flat.size > 1 or (flat.size == 1 and np.ndim(ax) > 0):
        if flat.size != nrows * ncols:
            raise ValueError(f"ax must be one Axes or {nrows * ncols} Axes (one per panel). Got {flat.size} instead.")
        return flat[0].figure, flat.reshape(nrows, ncols), None
    bounding = flat[0]
    fig = bounding.figure
    bounding.set_axis_off()
    spec = bounding.get_subplotspec()
    if spec is not None:
        grid = spec.subgridspec(nrows, ncols, width_ratios=width_ratios)
        axes = np.asarray([[fig.add_subplot(grid[r, c]) for c in range(ncols)] for r in range(nrows)], dtype=object)
    else:  # an Axes placed by hand: panels as insets of its area
        widths = list(width_ratios or [1.0] * ncols)
        total = sum(widths)
        lefts = [sum(widths[:c]) / total for c in range(ncols)]
        axes = np.asarray(
            [
                [
                    bounding.inset_axes((lefts[c], 1 - (r + 1) / nrows, widths[c] / total, 1 / nrows))
                    for c in range(ncols)
                ]
                for r in range(nrows)
            ],
            dtype=object,
        )
    return fig, axes, bounding


class Display:
    """What the displays share: the matplotlib objects of their last :meth:`plot`, and, for code
    written when the plotting functions returned a ``Figure``, the figure's attributes
    (``savefig``, ``axes``, ...) read through the display."""

    figure_: Any
    axes_: Any
    ax_: Any
    bounding_ax_: Any

    def __getattr__(self, name: str) -> Any:
        figure = self.__dict__.get("figure_")
        if name.startswith("_") or name.endswith("_") or figure is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(figure, name)

    def _set_axes(self, fig: Any, axes: Any, bounding: Any) -> None:
        self.figure_ = fig
        self.axes_ = axes
        self.bounding_ax_ = bounding
        self.ax_ = bounding if bounding is not None else axes.flat[0]
