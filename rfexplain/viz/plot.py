"""Explanations as pictures: each feature a reason mentions on its own axis.

A sufficient reason of a forest's decision is a box in feature space around the instance (Izza
and Marques-Silva (2021), abductive explanations; Audemard et al. (2022), majoritary and
sufficient reasons); its general counterpart is a wider box (Ji and Darwiche (2023), general
sufficient reasons), and a shortest flip names the nearest boundaries whose crossing changes the
decision. One row per feature: the feature's thresholds in the forest as tick marks below the
axis (one line collection, gid ``thresholds-f<feature>``), the instance's value as a black
diamond (artist gid ``instance-f<feature>``), the sufficient reason's interval shaded, the
general sufficient reason's wider interval shaded lighter (rectangles with gid
``<kind>-f<feature>-<k>``), the boundaries of a shortest flip as dashed red lines (gid
``flip-f<feature>-...``).

Every row is drawn by a *row painter* chosen per feature (:func:`_painter`). A numeric feature is
drawn as above. A categorical feature (a pipeline's column, :mod:`rfexplain.pipelines`) is a strip
of one cell per category: the cell of state ``s`` spans ``s - 0.5 .. s + 0.5`` on the x axis,
its tick at ``s`` labelled with the category's name, an empty outlined cell with gid
``category-f<feature>-<s>``. A reason's literal on it is a set of states, so each category it
allows is a shaded cell (gid ``<kind>-f<feature>-<s>``, same colours as the intervals), each
category of a shortest flip's literal (the set to leave) a dashed red outline (gid
``flip-f<feature>-<s>``), and the instance's diamond sits on its category's cell at ``x = s``.

Pictures are *display objects* in scikit-learn's style (``ConfusionMatrixDisplay``,
``PartialDependenceDisplay``): :class:`DecisionDisplay` (``DecisionDisplay.from_decision(d)``,
also ``d.plot()``), :class:`ReasonDisplay` (``ReasonDisplay.from_reason(r)``, ``r.plot()``) and
:class:`RelevanceDisplay` (``RelevanceDisplay.from_records(records)``), each drawn by its
``plot(ax=...)`` and keeping ``figure_``, ``axes_`` and ``ax_``. Without ``ax`` the figure is made
through ``matplotlib.pyplot``, so a notebook shows it inline; ``ax`` is an existing Axes (whose
area is divided into the rows, as ``PartialDependenceDisplay`` does) or one Axes per row. The old
functions :func:`plot_decision`, :func:`plot_reason` and :func:`plot_feature_relevance` delegate
to them and return the display. The HTML report and the notebook tables draw outside pyplot
(:func:`decision_figure`, :func:`reason_figure`), so they leave no figure in pyplot's registry.

Example
-------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> import rfexplain as rx
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
>>> decision = rx.Explainer(model, engine="oracle").explain(X[60])
>>> fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3))
>>> display = DecisionDisplay.from_decision(decision, ax=left)   # the rows divide the left Axes
>>> display.figure_ is fig and display.ax_ is left and len(display.axes_) == len(display.rows_)
True
>>> plt.close("all")
"""

from __future__ import annotations

import math
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rfexplain.core.errors import UnsupportedQuery
from rfexplain.core.reasons import Reason, _intervals
from rfexplain.viz.extras import require

__all__ = [
    "LAYER_STYLES",
    "DecisionDisplay",
    "ReasonDisplay",
    "RelevanceDisplay",
    "decision_figure",
    "decision_layers",
    "plot_decision",
    "plot_feature_relevance",
    "plot_reason",
    "reason_figure",
    "shown_answer",
]

#: How each kind of reason is drawn: rectangle height (fraction of the row) and colour.
LAYER_STYLES: dict[str, dict[str, Any]] = {
    "general_sufficient": {"label": "general sufficient reason", "color": "#4c72b0", "alpha": 0.18, "height": 0.8},
    "sufficient": {"label": "sufficient reason", "color": "#4c72b0", "alpha": 0.55, "height": 0.44},
    "necessary": {"label": "necessary reason: leave this interval", "color": "#dd8452", "alpha": 0.45, "height": 0.44},
    "contrastive": {
        "label": "contrastive reason: leave this interval",
        "color": "#dd8452",
        "alpha": 0.45,
        "height": 0.44,
    },
    "general_necessary": {"label": "shortest flip: cross a dashed boundary", "color": "#c44e52"},
}
#: Length of the threshold marks below a numeric row's axis, as a fraction of the row's height.
THRESHOLD_MARK = 0.15

_DRAW_ORDER = ("general_sufficient", "sufficient", "necessary", "contrastive", "general_necessary")


@dataclass(frozen=True)
class _Row:
    """What one feature's row shows."""

    feature: int
    name: str
    thresholds: tuple[float, ...]
    value: float | None
    #: The category of each state of a categorical feature; ``None`` for a numeric one.
    categories: tuple[str, ...] | None = None


def _limits(row: _Row) -> tuple[float, float]:
    points = list(row.thresholds) + ([row.value] if row.value is not None else [])
    if not points:
        return -1.0, 1.0
    lo, hi = min(points), max(points)
    pad = 0.12 * (hi - lo) if hi > lo else max(1.0, abs(lo)) * 0.5
    return lo - pad, hi + pad


def _frame_row(ax: Any, row: _Row, left: float, right: float) -> None:
    """What every row has: its x range, no y axis, the feature's name on the left."""
    ax.set_xlim(left, right)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    ax.set_ylabel(row.name, rotation=0, ha="right", va="center", fontsize=9)


def _band(ax: Any, x0: float, x1: float, style: dict[str, Any], gid: str) -> None:
    """A shaded rectangle across ``x0 .. x1`` (data) centred on the row, in the style's height."""
    from matplotlib.patches import Rectangle

    bottom = (1 - style["height"]) / 2
    ax.add_patch(
        Rectangle(
            (x0, bottom),
            x1 - x0,
            style["height"],
            transform=ax.get_xaxis_transform(),
            facecolor=style["color"],
            alpha=style["alpha"],
            edgecolor="none",
            label=style["label"],
            gid=gid,
        )
    )


def _instance_marker(ax: Any, row: _Row) -> None:
    if row.value is not None:
        ax.plot(
            [row.value],
            [0.5],
            marker="D",
            color="black",
            markersize=6,
            linestyle="none",
            transform=ax.get_xaxis_transform(),
            label="instance",
            gid=f"instance-f{row.feature}",
            zorder=5,
        )


def _in_draw_order(layers: Sequence[Reason]) -> list[Reason]:
    return sorted(layers, key=lambda r: _DRAW_ORDER.index(r.kind))


def _paint_numeric(ax: Any, row: _Row, layers: Sequence[Reason]) -> None:
    """A numeric feature: its axis, thresholds as marks below it, the layers' intervals, the instance."""
    left, right = _limits(row)
    _frame_row(ax, row, left, right)
    # the forest's thresholds as tick marks below the axis, one artist for them all (not minor
    # ticks, which cost far more time and SVG with hundreds per feature); round numbers as
    # labelled ticks
    ax.vlines(
        list(row.thresholds),
        -THRESHOLD_MARK,
        0.0,
        transform=ax.get_xaxis_transform(),
        colors="#555555",
        linewidth=1,
        clip_on=False,
        gid=f"thresholds-f{row.feature}",
    )
    ax.tick_params(axis="x", which="major", labelsize=7)
    for reason in _in_draw_order(layers):
        states = reason.literals.get(row.feature)
        if states is None:
            continue
        style = LAYER_STYLES[reason.kind]
        for k, (lo, hi) in enumerate(_intervals(states, row.thresholds)):
            x0, x1 = max(lo, left), min(hi, right)
            if reason.kind == "general_necessary":
                for side, edge in (("low", lo), ("high", hi)):
                    if math.isfinite(edge):
                        ax.axvline(
                            edge,
                            color=style["color"],
                            linestyle="--",
                            linewidth=1.6,
                            label=style["label"],
                            gid=f"flip-f{row.feature}-{k}-{side}",
                        )
                continue
            _band(ax, x0, x1, style, f"{reason.kind}-f{row.feature}-{k}")  # unique in the figure: SVG ids
    _instance_marker(ax, row)


def _paint_categorical(ax: Any, row: _Row, layers: Sequence[Reason]) -> None:
    """A categorical feature: a strip of one cell per category (state ``s`` at ``x = s``), the
    categories each layer allows shaded, a shortest flip's categories outlined, the instance."""
    from matplotlib.patches import Rectangle

    labels = row.categories or ()
    _frame_row(ax, row, -0.5, len(labels) - 0.5)
    ax.set_xticks(range(len(labels)), labels)
    ax.tick_params(axis="x", which="major", labelsize=7, length=0)
    if sum(len(label) for label in labels) > 60:  # long names would overlap: tilt them
        ax.tick_params(axis="x", which="major", labelrotation=25)
    height = LAYER_STYLES["general_sufficient"]["height"]

    def outline(state: int, gid: str, **style: Any) -> None:
        ax.add_patch(
            Rectangle(
                (state - 0.5, (1 - height) / 2),
                1.0,
                height,
                transform=ax.get_xaxis_transform(),
                facecolor="none",
                gid=gid,
                **style,
            )
        )

    for s in range(len(labels)):
        outline(s, f"category-f{row.feature}-{s}", edgecolor="#999999", linewidth=0.8)
    for reason in _in_draw_order(layers):
        states = reason.literals.get(row.feature)
        if states is None:
            continue
        style = LAYER_STYLES[reason.kind]
        for s in sorted(states):
            if reason.kind == "general_necessary":
                outline(
                    s,
                    f"flip-f{row.feature}-{s}",
                    edgecolor=style["color"],
                    linestyle="--",
                    linewidth=1.6,
                    label=style["label"],
                    zorder=4,
                )
                continue
            _band(ax, s - 0.5, s + 0.5, style, f"{reason.kind}-f{row.feature}-{s}")
    _instance_marker(ax, row)


def _painter(row: _Row) -> Callable[[Any, _Row, Sequence[Reason]], None]:
    """The painter of a feature's row: a category strip for a categorical feature, else an axis."""
    return _paint_categorical if row.categories is not None else _paint_numeric


def _rows(layers: Sequence[Reason], values: Sequence[float] | None, features: Any) -> list[_Row]:
    """The rows shown: the features the layers mention (``features=None``), every feature
    (``"all"``), or the features given (indices or names), in feature order."""
    spaces = [r.space for r in layers if r.space is not None]
    if not spaces:
        raise ValueError("a reason without its feature space cannot be plotted")
    space = spaces[0]
    if features is None:
        shown = sorted(set().union(*(r.features for r in layers)))
    elif isinstance(features, str) and features == "all":
        shown = list(range(len(space.feature_names)))
    else:
        names = list(space.feature_names)
        try:
            shown = sorted({names.index(f) if isinstance(f, str) else int(f) for f in features})
        except ValueError:
            raise ValueError(f"features must name features of {names}. Got {list(features)!r} instead.") from None
        if any(not 0 <= f < len(names) for f in shown):
            raise ValueError(f"feature indices must be in [0, {len(names)}). Got {list(features)!r} instead.")
    return [
        _Row(
            f,
            space.feature_names[f],
            tuple(space.thresholds[f]),
            None if values is None else float(values[f]),
            space.category_labels(f),
        )
        for f in shown
    ]


def _pyplot() -> Any:
    return require("matplotlib.pyplot", "plot", "plotting")


def _new_figure(figsize: tuple[float, float], detached: bool) -> Any:
    """A figure with constrained layout: through pyplot (so a notebook shows it inline, and
    ``plt.show()`` draws it), or ``detached`` from pyplot (reports and notebook tables, which
    render it to SVG themselves and must not leave figures in pyplot's registry)."""
    if detached:
        return require("matplotlib.figure", "plot", "plotting").Figure(figsize=figsize, layout="constrained")
    return _pyplot().figure(figsize=figsize, layout="constrained")


def _axes_grid(ax: Any, nrows: int, ncols: int, *, width_ratios: Sequence[float] | None = None) -> tuple[Any, Any, Any]:
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


class _Display:
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


class ReasonDisplay(_Display):
    """The picture of one or more reasons of a decision: one row per feature, each on its own
    axis (scikit-learn's display convention: build with :meth:`from_reason` or
    :meth:`from_decision`, draw with :meth:`plot`).

    Parameters
    ----------
    layers : sequence of Reason
        The reasons drawn on top of each other (sufficient, general sufficient, necessary,
        contrastive, shortest flips), all of one decision.
    values : sequence of float, optional
        The explained instance's values (its black diamond), in the forest's features.
    title : str, optional
        Drawn above the rows.
    features : None, "all" or sequence of int or str, optional
        The rows: by default the features the reasons mention (the features that matter),
        ``"all"`` for every feature, or the features given (indices or names).

    Attributes
    ----------
    rows_ : list of int
        The features drawn, one row each, in feature order (set by :meth:`plot`).
    axes_ : ndarray of matplotlib Axes, shape (n_rows,)
        One Axes per row, in the order of ``rows_``.
    ax_ : matplotlib Axes
        The single Axes given to :meth:`plot` (its area holds the rows), else the first row's.
    bounding_ax_ : matplotlib Axes or None
        The single Axes given to :meth:`plot`, turned off; ``None`` otherwise.
    figure_ : matplotlib Figure
        The figure drawn into.
    """

    _kind = "reason"

    def __init__(
        self,
        layers: Sequence[Reason],
        *,
        values: Sequence[float] | None = None,
        title: str | None = None,
        features: Any = None,
    ) -> None:
        self.layers = list(layers)
        self.values = None if values is None else tuple(float(v) for v in values)
        self.title = title
        self.features = features

    @classmethod
    def from_reason(
        cls,
        reason: Reason,
        *,
        features: Any = None,
        title: str | None = None,
        ax: Any = None,
        figsize: tuple[float, float] | None = None,
    ) -> ReasonDisplay:
        """Draw one reason, one row per feature it mentions.

        Parameters
        ----------
        reason : Reason
            With its feature space (the reasons a :class:`~rfexplain.Decision` gives have it).
        features : None, "all" or sequence of int or str, optional
            The rows (see the class); by default the reason's features.
        title : str, optional
            By default the reason's kind.
        ax : matplotlib Axes or sequence of Axes, optional
            See :meth:`plot`.
        figsize : (float, float), optional
            Size of a new figure (when ``ax`` is not given).

        Returns
        -------
        ReasonDisplay
            Drawn, with ``figure_``, ``axes_`` and ``ax_``.
        """
        text = title if title is not None else f"{reason.kind.replace('_', ' ')} reason"
        display = cls([reason], values=reason.instance, title=text, features=features)
        display.plot(ax=ax, figsize=figsize)
        return display

    def plot(self, *, ax: Any = None, figsize: tuple[float, float] | None = None) -> ReasonDisplay:
        """Draw the rows.

        Parameters
        ----------
        ax : matplotlib Axes or sequence of Axes, optional
            Where to draw. ``None``: a new figure through ``matplotlib.pyplot`` (shown inline
            in a notebook; ``plt.show()`` elsewhere), the legend below the rows and the title
            above. A single Axes: its area is divided into one row per feature (it is turned
            off and kept as ``bounding_ax_``), the title above the first row, the legend below
            the last. A sequence or array of Axes: one per row, used as given.
        figsize : (float, float), optional
            Size of a new figure; by default 7 inches wide and 0.75 inch per row.

        Returns
        -------
        ReasonDisplay
            ``self``, with ``figure_``, ``axes_`` and ``ax_`` set.
        """
        rows = _rows(self.layers, self.values, self.features)
        if ax is None:
            fig = _new_figure(figsize or _default_size(len(rows)), detached=False)
            return self._draw(fig, list(fig.subplots(max(len(rows), 1), 1, squeeze=False)[:, 0]), None, rows)
        fig, axes, bounding = _axes_grid(ax, max(len(rows), 1), 1)
        return self._draw(fig, list(axes[:, 0]), bounding, rows, owned=False)

    def _plot_detached(self, figsize: tuple[float, float] | None = None) -> Any:
        """Draw into a new figure outside pyplot; returns the figure (for SVG in HTML)."""
        rows = _rows(self.layers, self.values, self.features)
        fig = _new_figure(figsize or _default_size(len(rows)), detached=True)
        self._draw(fig, list(fig.subplots(max(len(rows), 1), 1, squeeze=False)[:, 0]), None, rows)
        return fig

    def _draw(self, fig: Any, axes: list[Any], bounding: Any, rows: list[_Row], owned: bool = True) -> Any:
        import numpy as np

        if not rows:
            axes[0].set_axis_off()
            axes[0].text(
                0.5, 0.5, "the empty reason: no feature matters", ha="center", va="center", transform=axes[0].transAxes
            )
        for ax, row in zip(axes, rows):
            _painter(row)(ax, row, self.layers)
        handles: dict[str, Any] = {}
        for ax in axes:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(label, handle)
        if handles:
            legend = dict(ncols=min(3, len(handles)), fontsize=8, frameon=False)
            if owned:
                fig.legend(list(handles.values()), list(handles.keys()), loc="outside lower center", **legend)
            else:
                axes[-1].legend(
                    list(handles.values()),
                    list(handles.keys()),
                    loc="upper center",
                    bbox_to_anchor=(0.5, -0.45),
                    **legend,
                )
        if self.title:
            if owned:
                fig.suptitle(self.title, fontsize=10)
            else:
                axes[0].set_title(self.title, fontsize=10)
        self.rows_ = [row.feature for row in rows]
        self._set_axes(fig, np.asarray(axes, dtype=object), bounding)
        return self

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self.layers)} {self._kind} layer(s)>"


def _default_size(n_rows: int) -> tuple[float, float]:
    return (7.0, 0.55 + 0.75 * max(n_rows, 1))


def plot_reason(
    reason: Reason, *, figsize: tuple[float, float] | None = None, title: str | None = None, **options: Any
) -> ReasonDisplay:
    """One reason, one row per feature it mentions: :meth:`ReasonDisplay.from_reason` (``ax=``,
    ``features=``); returns the :class:`ReasonDisplay` (``.figure_``, ``.axes_``: one Axes per
    row, in feature order)."""
    return ReasonDisplay.from_reason(reason, figsize=figsize, title=title, **options)


def decision_layers(decision: Any, *, general: bool = True, flips: int = 1) -> list[Reason]:
    """The reasons a decision's picture shows: a sufficient reason, a general sufficient reason
    and up to ``flips`` shortest flips where the engine answers those queries (asked once per
    decision and remembered for its pictures and notebook display: :func:`shown_answer`)."""
    layers = [shown_answer(decision, "sufficient_reason")]
    for wanted, query, limit in ((general, "general_sufficient_reasons", 1), (flips, "shortest_flips", flips)):
        if wanted:
            try:
                layers.extend(shown_answer(decision, query, limit))
            except UnsupportedQuery:
                pass
    return layers


#: What the displays of each decision asked of it: decision -> {(query, limit): answer or the
#: UnsupportedQuery the engine raised}.
_SHOWN: weakref.WeakKeyDictionary[Any, dict[tuple[str, int | None], Any]] = weakref.WeakKeyDictionary()


def shown_answer(decision: Any, query: str, limit: int | None = None) -> Any:
    """The answer to ``query`` (with ``limit`` for an enumeration: its results as a list) that
    the pictures and the notebook display of ``decision`` show: asked on first use, then
    remembered for as long as the decision lives, so that showing it again (``d.plot()``, the
    notebook's table) asks nothing again. Raises the engine's
    :class:`~rfexplain.core.errors.UnsupportedQuery` (remembered too) when it does not answer."""
    cache = _SHOWN.setdefault(decision, {})
    key = (query, limit)
    if key not in cache:
        try:
            answer = decision.ask(query, limit=limit) if limit is not None else decision.ask(query)
            cache[key] = list(answer) if limit is not None else answer
        except UnsupportedQuery as exc:
            cache[key] = exc
    answer = cache[key]
    if isinstance(answer, UnsupportedQuery):
        raise answer
    return answer


class DecisionDisplay(ReasonDisplay):
    """The picture of a decision (:meth:`from_decision`): its sufficient reason, its general
    sufficient reason (lighter, when the engine answers it: the circuit engine and the oracle)
    and its shortest flips (dashed boundaries, same engines), one row per feature any of them
    mentions, the instance as a black diamond. The parameters and attributes are those of
    :class:`ReasonDisplay`, plus ``decision``."""

    _kind = "decision"
    #: The decision drawn (set by :meth:`from_decision`).
    decision: Any = None

    @classmethod
    def from_decision(
        cls,
        decision: Any,
        *,
        general: bool = True,
        flips: int = 1,
        layers: Sequence[Reason] | None = None,
        features: Any = None,
        title: str | None = None,
        ax: Any = None,
        figsize: tuple[float, float] | None = None,
    ) -> DecisionDisplay:
        """Draw a decision's reasons.

        Parameters
        ----------
        decision : Decision
            The decision drawn (:meth:`rfexplain.Explainer.explain`).
        general : bool, default True
            Draw its general sufficient reason where the engine answers it.
        flips : int, default 1
            How many shortest flips to draw where the engine answers them (0: none).
        layers : sequence of Reason, optional
            Draw these reasons instead of asking the decision.
        features : None, "all" or sequence of int or str, optional
            The rows: by default the features the reasons mention, ``"all"`` every feature,
            or the features given (indices or names).
        title : str, optional
            By default the prediction and the engine.
        ax : matplotlib Axes or sequence of Axes, optional
            See :meth:`ReasonDisplay.plot`: a new pyplot figure, one Axes divided into the rows,
            or one Axes per row.
        figsize : (float, float), optional
            Size of a new figure.

        Returns
        -------
        DecisionDisplay
            Drawn, with ``figure_``, ``axes_``, ``ax_`` and ``rows_``.
        """
        shown = list(layers) if layers is not None else decision_layers(decision, general=general, flips=flips)
        text = (
            title
            if title is not None
            else f"prediction {decision.prediction!r} ({decision.explainer.engine_name} engine)"
        )
        display = cls(shown, values=decision.values, title=text, features=features)
        display.decision = decision
        display.plot(ax=ax, figsize=figsize)
        return display


def plot_decision(
    decision: Any,
    *,
    general: bool = True,
    flips: int = 1,
    figsize: tuple[float, float] | None = None,
    layers: Sequence[Reason] | None = None,
    **options: Any,
) -> DecisionDisplay:
    """The decision's picture: :meth:`DecisionDisplay.from_decision` (``ax=``, ``features=``,
    ``title=``); returns the :class:`DecisionDisplay` (``.figure_``, ``.axes_``)."""
    return DecisionDisplay.from_decision(
        decision, general=general, flips=flips, figsize=figsize, layers=layers, **options
    )


def decision_figure(decision: Any, *, layers: Sequence[Reason] | None = None) -> Any:
    """The decision's picture as a matplotlib ``Figure`` outside pyplot (for HTML: reports and
    notebook tables render it to SVG)."""
    shown = list(layers) if layers is not None else decision_layers(decision)
    title = f"prediction {decision.prediction!r} ({decision.explainer.engine_name} engine)"
    return DecisionDisplay(shown, values=decision.values, title=title)._plot_detached()


def reason_figure(reason: Reason) -> Any:
    """One reason's picture as a ``Figure`` outside pyplot (for HTML)."""
    title = f"{reason.kind.replace('_', ' ')} reason"
    return ReasonDisplay([reason], values=reason.instance, title=title)._plot_detached()


# ---------------------------------------------------------------------- many instances
_SUFFICIENT = ("sufficient", "general_sufficient")


def relevance_counts(records: Iterable[Any]) -> tuple[Counter[str], Counter[str], list[int], list[float]]:
    """From batch records: how often each feature (by name) is in a sufficient-type and in a
    necessary-type reason, the sizes of all reasons, and the robustness values."""
    sufficient: Counter[str] = Counter()
    necessary: Counter[str] = Counter()
    sizes: list[int] = []
    robustness: list[float] = []
    for record in records:
        if record.error is not None:
            continue
        if record.query == "robustness" and isinstance(record.result, (int, float)):
            robustness.append(float(record.result))
        for reason in record.reasons:
            names = reason.get("feature_names") or [f"x{f}" for f in reason["features"]]
            (sufficient if reason["kind"] in _SUFFICIENT else necessary).update(names)
            sizes.append(len(reason["features"]))
    return sufficient, necessary, sizes, robustness


class RelevanceDisplay(_Display):
    """Over many explained instances: how often each feature is in the sufficient and in the
    necessary reasons (bars), and the distribution of reason sizes and robustness (histogram).
    Build with :meth:`from_records`, draw with :meth:`plot`.

    Parameters
    ----------
    sufficient, necessary : collections.Counter of str
        Feature name -> number of sufficient-type (sufficient, general sufficient) and
        necessary-type reasons mentioning it.
    sizes : list of int
        The sizes of all reasons.
    robustness : list of float
        The robustness values (``math.inf``: nothing flips the decision).

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes, shape (2,)
        The bars and the histogram.
    ax_ : matplotlib Axes
        The single Axes given to :meth:`plot` (its area holds both panels), else the bars.
    bounding_ax_ : matplotlib Axes or None
        The single Axes given to :meth:`plot`, turned off; ``None`` otherwise.
    figure_ : matplotlib Figure
        The figure drawn into.
    """

    def __init__(
        self, sufficient: Counter[str], necessary: Counter[str], sizes: Sequence[int], robustness: Sequence[float]
    ) -> None:
        self.sufficient = sufficient
        self.necessary = necessary
        self.sizes = list(sizes)
        self.robustness = list(robustness)

    @classmethod
    def from_records(
        cls, records: Iterable[Any], *, ax: Any = None, figsize: tuple[float, float] | None = None
    ) -> RelevanceDisplay:
        """Count the reasons of batch records and draw them.

        Parameters
        ----------
        records : iterable of BatchRecord
            :meth:`rfexplain.Explainer.explain_many`'s records, any mix of queries (records
            with an error are skipped).
        ax : matplotlib Axes or pair of Axes, optional
            See :meth:`plot`.
        figsize : (float, float), optional
            Size of a new figure.

        Returns
        -------
        RelevanceDisplay
            Drawn, with ``figure_``, ``axes_`` and ``ax_``.
        """
        display = cls(*relevance_counts(list(records)))
        display.plot(ax=ax, figsize=figsize)
        return display

    def plot(self, *, ax: Any = None, figsize: tuple[float, float] | None = None) -> RelevanceDisplay:
        """Draw the bars and the histogram.

        Parameters
        ----------
        ax : matplotlib Axes or pair of Axes, optional
            ``None``: a new figure through ``matplotlib.pyplot`` (shown inline in a notebook).
            A single Axes: its area is divided into the two panels (it is turned off and kept as
            ``bounding_ax_``). Two Axes: the bars and the histogram, as given.
        figsize : (float, float), optional
            Size of a new figure (default 9 x 4 inches).

        Returns
        -------
        RelevanceDisplay
            ``self``, with ``figure_``, ``axes_`` and ``ax_`` set.
        """
        if ax is None:
            fig = _new_figure(figsize or (9.0, 4.0), detached=False)
            bars, hist = fig.subplots(1, 2, width_ratios=[3, 2])
            bounding = None
        else:
            fig, grid, bounding = _axes_grid(ax, 1, 2, width_ratios=[3, 2])
            bars, hist = grid[0]
        self._draw(bars, hist)
        import numpy as np

        self._set_axes(fig, np.asarray([bars, hist], dtype=object), bounding)
        return self

    def _draw(self, bars: Any, hist: Any) -> None:
        sufficient, necessary = self.sufficient, self.necessary
        names = sorted(set(sufficient) | set(necessary), key=lambda n: (-(sufficient[n] + necessary[n]), n))
        ys = list(range(len(names)))
        bars.barh(
            [y - 0.2 for y in ys],
            [sufficient[n] for n in names],
            height=0.4,
            color="#4c72b0",
            label="in sufficient reasons",
            gid="sufficient",
        )
        bars.barh(
            [y + 0.2 for y in ys],
            [necessary[n] for n in names],
            height=0.4,
            color="#dd8452",
            label="in necessary reasons",
            gid="necessary",
        )
        bars.set_yticks(ys, names, fontsize=8)
        bars.invert_yaxis()
        bars.set_xlabel("number of reasons mentioning the feature")
        bars.legend(fontsize=8, frameon=False)
        unflippable = sum(1 for v in self.robustness if math.isinf(v))
        robustness_label = "robustness" + (f" ({unflippable} cannot be flipped)" if unflippable else "")
        series: list[tuple[list[float], str, str]] = [
            ([float(v) for v in self.sizes], "reason size", "#55a868"),
            ([v for v in self.robustness if math.isfinite(v)], robustness_label, "#8172b3"),
        ]
        shown = [(data, label, color) for data, label, color in series if data]
        top = max((max(data) for data, _, _ in shown), default=0.0)
        edges = [k - 0.5 for k in range(int(top) + 2)]
        for data, label, color in shown:
            hist.hist(data, bins=edges, alpha=0.6, color=color, label=label)
        hist.set_xlabel("number of features")
        hist.set_ylabel("count")
        if shown:
            hist.legend(fontsize=8, frameon=False)

    def __repr__(self) -> str:
        features = len(set(self.sufficient) | set(self.necessary))
        return f"<RelevanceDisplay: {features} features, {len(self.sizes)} reasons>"


def plot_feature_relevance(
    records: Iterable[Any], *, figsize: tuple[float, float] | None = None, ax: Any = None
) -> RelevanceDisplay:
    """Over many explained instances (:class:`~rfexplain.core.records.BatchRecord` list, any mix of
    queries): a bar chart of how often each feature appears in the sufficient and in the necessary
    reasons, and the distribution of reason sizes and robustness: :meth:`RelevanceDisplay.from_records`
    (``ax=``); returns the :class:`RelevanceDisplay` (``.figure_``, ``.axes_``)."""
    return RelevanceDisplay.from_records(records, ax=ax, figsize=figsize)
