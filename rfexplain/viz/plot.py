"""Decisions and reasons as pictures, in scikit-learn's display style: each feature a reason
mentions on its own axis (:mod:`rfexplain.viz.rows` paints one feature's row).

Pictures are *display objects* in scikit-learn's style (``ConfusionMatrixDisplay``,
``PartialDependenceDisplay``): :class:`DecisionDisplay` (``DecisionDisplay.from_decision(d)``,
also ``d.plot()``), :class:`ReasonDisplay` (``ReasonDisplay.from_reason(r)``, ``r.plot()``) and
:class:`RelevanceDisplay` (``RelevanceDisplay.from_records(records)``, :mod:`rfexplain.viz.relevance`),
each drawn by its ``plot(ax=...)`` and keeping ``figure_``, ``axes_`` and ``ax_``. Without ``ax``
the figure is made through ``matplotlib.pyplot``, so a notebook shows it inline; ``ax`` is an
existing Axes (whose area is divided into the rows, as ``PartialDependenceDisplay`` does) or one
Axes per row. The old functions :func:`plot_decision`, :func:`plot_reason` and
:func:`plot_feature_relevance` delegate to them and return the display. The HTML report and the
notebook tables draw outside pyplot (:func:`decision_figure`, :func:`reason_figure`), so they
leave no figure in pyplot's registry.

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

from collections.abc import Sequence
from typing import Any

from rfexplain.core.reasons import Change, Reason
from rfexplain.viz.axes import Display, axes_grid, new_figure
from rfexplain.viz.relevance import RelevanceDisplay, plot_feature_relevance
from rfexplain.viz.rows import LAYER_STYLES, Row, feature_rows, painter
from rfexplain.viz.shown import decision_actions, decision_layers, shown_answer

__all__ = [
    "LAYER_STYLES",
    "DecisionDisplay",
    "ReasonDisplay",
    "RelevanceDisplay",
    "decision_actions",
    "decision_figure",
    "decision_layers",
    "plot_decision",
    "plot_feature_relevance",
    "plot_reason",
    "reason_figure",
    "shown_answer",
]


class ReasonDisplay(Display):
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
    changes : sequence of Change, optional
        Actions that flip the decision (a necessary reason's
        :attr:`~rfexplain.core.reasons.Reason.changes`): each the cell its feature moves into,
        outlined dashed, with an arrow from the instance's value.

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
        changes: Sequence[Change] = (),
    ) -> None:
        self.layers = list(layers)
        self.values = None if values is None else tuple(float(v) for v in values)
        self.title = title
        self.features = features
        self.changes = tuple(changes)

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
        display = cls([reason], values=reason.instance, title=text, features=features, changes=reason.changes)
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
        rows = feature_rows(self.layers, self.values, self.features, self.changes)
        if ax is None:
            fig = new_figure(figsize or _default_size(len(rows)), detached=False)
            return self._draw(fig, list(fig.subplots(max(len(rows), 1), 1, squeeze=False)[:, 0]), None, rows)
        fig, axes, bounding = axes_grid(ax, max(len(rows), 1), 1)
        return self._draw(fig, list(axes[:, 0]), bounding, rows, owned=False)

    def _plot_detached(self, figsize: tuple[float, float] | None = None) -> Any:
        """Draw into a new figure outside pyplot; returns the figure (for SVG in HTML)."""
        rows = feature_rows(self.layers, self.values, self.features, self.changes)
        fig = new_figure(figsize or _default_size(len(rows)), detached=True)
        self._draw(fig, list(fig.subplots(max(len(rows), 1), 1, squeeze=False)[:, 0]), None, rows)
        return fig

    def _draw(self, fig: Any, axes: list[Any], bounding: Any, rows: list[Row], owned: bool = True) -> Any:
        import numpy as np

        if not rows:
            axes[0].set_axis_off()
            axes[0].text(
                0.5, 0.5, "the empty reason: no feature matters", ha="center", va="center", transform=axes[0].transAxes
            )
        for ax, row in zip(axes, rows):
            painter(row)(ax, row, self.layers)
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


class DecisionDisplay(ReasonDisplay):
    """The picture of a decision (:meth:`from_decision`): its sufficient reason (by default the
    inflated one: each condition as wide as the decision allows), its general sufficient reason
    (lighter, when the engine answers it: the circuit engine and the oracle), its shortest flips
    (dashed boundaries, same engines) and the actions that flip it (its necessary reason's
    changes: arrows into dashed cells), one row per feature any of them mentions, the instance
    as a black diamond. The parameters and attributes are those of :class:`ReasonDisplay`, plus
    ``decision``."""

    _kind = "decision"
    #: The decision drawn (set by :meth:`from_decision`).
    decision: Any = None

    @classmethod
    def from_decision(
        cls,
        decision: Any,
        *,
        inflated: bool = True,
        general: bool = True,
        flips: int = 1,
        actions: bool = True,
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
        inflated : bool, default True
            Draw the inflated sufficient reason (:meth:`~rfexplain.Decision.inflated_sufficient_reason`);
            ``False``: the canonical one, each feature held to its cell
            (:meth:`~rfexplain.Decision.sufficient_reason`).
        general : bool, default True
            Draw its general sufficient reason where the engine answers it.
        flips : int, default 1
            How many shortest flips to draw where the engine answers them (0: none).
        actions : bool, default True
            Draw the changes of the decision's necessary reason that flip it.
        layers : sequence of Reason, optional
            Draw these reasons instead of asking the decision for its reasons.
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
        shown = (
            list(layers)
            if layers is not None
            else decision_layers(decision, inflated=inflated, general=general, flips=flips)
        )
        text = (
            title
            if title is not None
            else f"prediction {decision.prediction!r} ({decision.explainer.engine_name} engine)"
        )
        changes = decision_actions(decision) if actions else ()
        display = cls(shown, values=decision.values, title=text, features=features, changes=changes)
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
    ``title=``, ``inflated=``, ``actions=``); returns the :class:`DecisionDisplay` (``.figure_``,
    ``.axes_``)."""
    return DecisionDisplay.from_decision(
        decision, general=general, flips=flips, figsize=figsize, layers=layers, **options
    )


def decision_figure(decision: Any, *, layers: Sequence[Reason] | None = None) -> Any:
    """The decision's picture as a matplotlib ``Figure`` outside pyplot (for HTML: reports and
    notebook tables render it to SVG)."""
    shown = list(layers) if layers is not None else decision_layers(decision)
    title = f"prediction {decision.prediction!r} ({decision.explainer.engine_name} engine)"
    changes = decision_actions(decision)
    return DecisionDisplay(shown, values=decision.values, title=title, changes=changes)._plot_detached()


def reason_figure(reason: Reason) -> Any:
    """One reason's picture as a ``Figure`` outside pyplot (for HTML)."""
    title = f"{reason.kind.replace('_', ' ')} reason"
    return ReasonDisplay([reason], values=reason.instance, title=title, changes=reason.changes)._plot_detached()
