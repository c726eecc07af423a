"""Display objects in scikit-learn's style: ``from_*``, ``plot(ax=...)``, ``ax_``/``axes_``/``figure_``."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import rfexplain as rx
from rfexplain.viz import DecisionDisplay, ReasonDisplay, RelevanceDisplay, plot_feature_relevance
from tests.viz_helpers import MODEL, NAMES, X


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def decision():
    return rx.Explainer(MODEL, engine="circuit", feature_names=NAMES, vote="hard").explain(X[60])


def _labels(axes) -> list[str]:
    return [ax.get_ylabel() for ax in axes]


def test_decision_plot_into_a_given_axes_returns_the_display(decision) -> None:
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3))
    right.plot([0, 1], [0, 1])
    display = decision.plot(ax=left)
    assert isinstance(display, DecisionDisplay)
    assert display.figure_ is fig and display.ax_ is left and display.bounding_ax_ is left
    assert not left.axison  # its area holds the rows, as PartialDependenceDisplay does
    shown = decision.sufficient_reason().features
    for layer in display.layers:
        shown = shown | layer.features
    assert display.rows_ == sorted(shown) and _labels(display.axes_) == [NAMES[f] for f in sorted(shown)]
    assert all(ax.figure is fig for ax in display.axes_) and len(fig.axes) == 2 + len(display.axes_)
    assert all(ax.get_subplotspec().get_topmost_subplotspec() == left.get_subplotspec() for ax in display.axes_)
    assert right.lines  # the other Axes is untouched


def test_decision_plot_into_one_axes_per_row_and_all_features(decision) -> None:
    fig, axes = plt.subplots(4, 1)
    display = DecisionDisplay.from_decision(decision, features="all", ax=axes)
    assert display.figure_ is fig and list(display.axes_) == list(axes) and display.bounding_ax_ is None
    assert display.rows_ == [0, 1, 2, 3] and _labels(axes) == NAMES
    with pytest.raises(ValueError, match="one Axes or 4 Axes"):
        DecisionDisplay.from_decision(decision, features="all", ax=axes[:2])
    by_name = DecisionDisplay.from_decision(decision, features=[NAMES[3], 0])
    assert by_name.rows_ == [0, 3]


def test_without_ax_the_figure_is_made_through_pyplot(decision) -> None:
    """So that a notebook shows it inline (and ``plt.show()`` draws it)."""
    before = set(plt.get_fignums())
    display = decision.plot()
    assert isinstance(display, DecisionDisplay) and display.figure_.number in set(plt.get_fignums()) - before
    assert display.ax_ is display.axes_[0]
    assert display.axes == display.figure_.axes  # code written for a returned Figure still reads it
    html_before = set(plt.get_fignums())
    decision._repr_html_()  # the notebook table's picture stays outside pyplot
    assert set(plt.get_fignums()) == html_before


def test_reason_plot_with_ax(decision) -> None:
    reason = decision.sufficient_reason()
    fig, ax = plt.subplots()
    display = reason.plot(ax=ax)
    assert isinstance(display, ReasonDisplay) and display.ax_ is ax and display.figure_ is fig
    assert _labels(display.axes_) == [NAMES[f] for f in sorted(reason.features)]
    again = ReasonDisplay.from_reason(reason)
    assert again.figure_ is not fig and _labels(again.axes_) == _labels(display.axes_)


def test_an_axes_placed_by_hand_holds_the_rows_as_insets(decision) -> None:
    fig = plt.figure()
    ax = fig.add_axes((0.1, 0.1, 0.8, 0.8))
    display = decision.sufficient_reason().plot(ax=ax)
    assert display.ax_ is ax and all(a.figure is fig for a in display.axes_)


def test_relevance_plot_with_ax() -> None:
    explainer = rx.Explainer(MODEL, engine="oracle", feature_names=NAMES)
    records = explainer.explain_many(X[::30], "sufficient_reason", n_jobs=1, progress=False)
    fig, ax = plt.subplots()
    display = plot_feature_relevance(records, ax=ax)
    assert isinstance(display, RelevanceDisplay) and display.ax_ is ax and display.figure_ is fig
    bars, hist = display.axes_
    assert bars.figure is fig and [t.get_text() for t in bars.get_yticklabels()]
    fig2, pair = plt.subplots(1, 2)
    two = RelevanceDisplay.from_records(records, ax=pair)
    assert list(two.axes_) == list(pair) and two.ax_ is pair[0]
    assert np.allclose([p.get_width() for p in two.axes_[0].patches], [p.get_width() for p in display.axes_[0].patches])
