"""Over many explained instances: how often each feature is in the reasons, and how large the
reasons and the robustness are (:class:`RelevanceDisplay`, :func:`plot_feature_relevance`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from rfexplain.viz.axes import Display, axes_grid, new_figure

__all__ = ["RelevanceDisplay", "plot_feature_relevance", "relevance_counts"]

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


class RelevanceDisplay(Display):
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
            fig = new_figure(figsize or (9.0, 4.0), detached=False)
            bars, hist = fig.subplots(1, 2, width_ratios=[3, 2])
            bounding = None
        else:
            fig, grid, bounding = axes_grid(ax, 1, 2, width_ratios=[3, 2])
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
