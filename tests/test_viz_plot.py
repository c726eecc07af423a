"""Plots read back from their artists: spans at the reasons' thresholds, the instance where it is."""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
import pytest

import rfexplain as rx
from rfexplain.core.reasons import Reason
from rfexplain.viz import MissingExtraError, plot_feature_relevance
from rfexplain.viz.plot import decision_layers
from tests.viz_helpers import MODEL, NAMES, X


def _spans(ax, gid):
    return [(p.get_x(), p.get_x() + p.get_width()) for p in ax.patches if p.get_gid().rsplit("-", 2)[0] == gid]


def _marker(ax):
    (line,) = [line for line in ax.lines if line.get_gid().startswith("instance-")]
    return float(line.get_xdata()[0])


def _thresholds(ax):
    """The x positions of the row's threshold marks (one line collection, below the axis)."""
    (marks,) = [c for c in ax.collections if (c.get_gid() or "").startswith("thresholds-")]
    segments = marks.get_segments()
    assert all(seg[0][0] == seg[1][0] and seg[1][1] == 0.0 for seg in segments)  # vertical, up to the axis
    return [float(seg[0][0]) for seg in segments]


def test_reason_plot_spans_and_marker_at_the_data_coordinates() -> None:
    forest = rx.Forest.from_sklearn(MODEL, feature_names=NAMES)
    space = rx.Explainer(forest, engine="oracle").explain(X[60]).sufficient_reason().space
    t2, t3 = space.thresholds[2], space.thresholds[3]
    # feature 2 in states 1..2 (t2[0], t2[2]]; feature 3 in state 0: (-inf, t3[0]]
    reason = Reason.of("sufficient", {2: {1, 2}, 3: {0}}, space=space, instance=X[60], decision=1)
    fig = reason.plot()
    ax2, ax3 = fig.axes[:2]
    assert ax2.get_ylabel() == NAMES[2] and ax3.get_ylabel() == NAMES[3]
    assert _spans(ax2, "sufficient") == [pytest.approx((t2[0], t2[2]))]
    ((lo, hi),) = _spans(ax3, "sufficient")
    assert lo == pytest.approx(ax3.get_xlim()[0]) and hi == pytest.approx(t3[0])  # -inf clipped to the axis
    assert _marker(ax2) == pytest.approx(X[60][2]) and _marker(ax3) == pytest.approx(X[60][3])
    assert _thresholds(ax2) == pytest.approx(list(t2))


@pytest.mark.parametrize("inflated", [True, False])
def test_decision_plot_layers_of_the_circuit_engine(inflated: bool) -> None:
    """By default the picture shows the inflated sufficient reason, with ``inflated=False`` the
    canonical one; with the general reason, a shortest flip and the necessary reason's actions."""
    decision = rx.Explainer(MODEL, engine="circuit", feature_names=NAMES, vote="hard").explain(X[60])
    sufficient = decision.inflated_sufficient_reason() if inflated else decision.sufficient_reason()
    general = next(iter(decision.general_sufficient_reasons(limit=1)))
    flip = next(iter(decision.shortest_flips(limit=1)))
    actions = decision.necessary_reason().changes
    fig = decision.plot() if inflated else decision.plot(inflated=False)
    rows = {ax.get_ylabel(): ax for ax in fig.axes}
    features = sufficient.features | general.features | flip.features | {c.feature for c in actions}
    assert set(rows) == {NAMES[f] for f in features}
    space = sufficient.space
    for f, states in sufficient.literals.items():
        ax = rows[NAMES[f]]
        lo = space.thresholds[f][min(states) - 1] if min(states) > 0 else ax.get_xlim()[0]
        hi = space.thresholds[f][max(states)] if max(states) < len(space.thresholds[f]) else ax.get_xlim()[1]
        assert _spans(ax, "sufficient") == [pytest.approx((lo, hi))]
        assert _marker(ax) == pytest.approx(X[60][f])
    for f in general.literals:
        ((glo, ghi),) = _spans(rows[NAMES[f]], "general_sufficient")
        if f in sufficient.literals and not inflated:  # the general reason's interval is at least the cell
            ((slo, shi),) = _spans(rows[NAMES[f]], "sufficient")
            assert glo <= slo and ghi >= shi
    for f, states in flip.literals.items():
        edges = [line.get_xdata()[0] for line in rows[NAMES[f]].lines if line.get_gid().startswith("flip-")]
        finite = [
            e
            for e in (
                space.thresholds[f][min(states) - 1] if min(states) > 0 else -math.inf,
                space.thresholds[f][max(states)] if max(states) < len(space.thresholds[f]) else math.inf,
            )
            if math.isfinite(e)
        ]
        assert edges == pytest.approx(finite) and edges


def test_decision_plot_draws_each_action_into_its_cell() -> None:
    """Each change of the necessary reason: the cell it moves into outlined, an arrow from the
    instance's value into it; the picture's actions are the ones the text prints."""
    decision = rx.Explainer(MODEL, engine="sat", feature_names=NAMES).explain(X[70])
    necessary = decision.necessary_reason()
    assert necessary.changes  # this row can be flipped
    fig = decision.plot()
    rows = {ax.get_ylabel(): ax for ax in fig.axes}
    space = necessary.space
    for change in necessary.changes:
        ax = rows[NAMES[change.feature]]
        left, right = ax.get_xlim()
        low, high = change.interval
        (cell,) = [p for p in ax.patches if p.get_gid() == f"action-f{change.feature}"]
        assert (cell.get_x(), cell.get_x() + cell.get_width()) == pytest.approx((max(low, left), min(high, right)))
        (arrow,) = [a for a in ax.texts if a.get_gid() == f"action-arrow-f{change.feature}"]
        start, end = arrow.xyann[0], arrow.xy[0]
        assert start == pytest.approx(X[70][change.feature]) and max(low, left) <= end <= min(high, right)
        assert change.after != change.before and space is not None
    assert necessary.actions() in str(decision)
    plain = decision.plot(actions=False)
    assert not [p for ax in plain.axes for p in ax.patches if p.get_gid().startswith("action-")]


def test_sat_decision_plot_draws_what_the_engine_answers() -> None:
    """The SAT engine answers the general sufficient reasons and the shortest flips (issue 54),
    so the plot draws them as it does for the circuit engine; what an engine does not answer is
    left out (the oracle's test below)."""
    decision = rx.Explainer(MODEL, engine="sat", feature_names=NAMES).explain(X[60])
    fig = decision.plot()
    gids = {p.get_gid().split("-")[0] for ax in fig.axes for p in ax.patches}
    gids |= {line.get_gid().split("-")[0] for ax in fig.axes for line in ax.lines}
    expected = {"sufficient", "instance", "general_sufficient"}
    expected |= {"flip"} if list(decision.shortest_flips()) else set()
    expected |= {"action"} if decision.necessary_reason().changes else set()
    assert gids == expected


def test_missing_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)  # "import matplotlib..." raises ImportError
    decision = rx.Explainer(MODEL, engine="oracle", feature_names=NAMES).explain(X[60])
    with pytest.raises(MissingExtraError, match=r"rfexplain\[plot\]") as info:
        decision.sufficient_reason().plot()
    assert isinstance(info.value, ImportError) and isinstance(info.value, rx.RFExplainError)
    html = decision.sufficient_reason()._repr_html_()  # notebooks fall back to the table alone
    assert "<table" in html and "<svg" not in html


def test_feature_relevance_counts_read_back_from_the_bars() -> None:
    explainer = rx.Explainer(MODEL, engine="oracle", feature_names=NAMES)
    records = explainer.explain_many(X[::15], "sufficient_reasons", n_jobs=1, progress=False)
    records += explainer.explain_many(X[::15], "necessary_reasons", n_jobs=1, progress=False)
    records += explainer.explain_many(X[::15], "robustness", n_jobs=1, progress=False)
    fig = plot_feature_relevance(records)
    bars = fig.axes[0]
    names = [t.get_text() for t in bars.get_yticklabels()]
    for kind, gid in (("sufficient", "sufficient"), ("necessary", "necessary")):
        expected = {
            n: sum(n in r.get("feature_names", []) for rec in records for r in rec.reasons if r["kind"] == kind)
            for n in names
        }
        heights = [p.get_width() for p in bars.patches if p.get_gid() == gid]
        assert dict(zip(names, heights)) == expected
    assert sum(p.get_height() for p in fig.axes[1].patches) == pytest.approx(
        sum(len(rec.reasons) for rec in records)
        + sum(1 for rec in records if rec.query == "robustness" and np.isfinite(rec.result))
    )


# ---------------------------------------------------------------------- categorical features
def _cells(ax, prefix):
    """The categories (tick labels) under the cells whose gid starts with ``prefix``, checking
    each cell spans exactly its category's slot ``s - 0.5 .. s + 0.5``."""
    labels = {round(x): t.get_text() for x, t in zip(ax.get_xticks(), ax.get_xticklabels())}
    out = []
    for p in ax.patches:
        if p.get_gid().startswith(prefix):
            s = int(p.get_gid().rsplit("-", 1)[1])
            assert (p.get_x(), p.get_x() + p.get_width()) == pytest.approx((s - 0.5, s + 0.5))
            out.append(labels[s])
    return out


@pytest.fixture(scope="module")
def loans():
    from rfexplain.pipeline_demo import loans_pipeline

    pipe, X_test, _ = loans_pipeline()
    return rx.Explainer(pipe, engine="circuit", vote="hard"), X_test


@pytest.mark.slow
def test_categorical_rows_are_category_strips_with_the_reasons_categories_shaded(loans) -> None:
    explainer, X_test = loans
    space = explainer.forest.space
    checked = {"sufficient": 0, "general_sufficient": 0, "general_necessary": 0, "several": 0, "numeric": 0}
    for k in range(8):
        row = X_test.iloc[k]
        decision = explainer.explain(row)
        layers = decision_layers(decision)
        fig = decision.plot(layers=layers, actions=False)  # the layers alone (the actions: tested above)
        axes = {ax.get_ylabel(): ax for ax in fig.axes}
        assert set(axes) == {space.feature_names[f] for r in layers for f in r.features}
        for name, ax in axes.items():
            f = space.feature_names.index(name)
            labels = space.category_labels(f)
            if labels is None:  # numeric rows as before: thresholds as ticks, intervals, no cells
                assert not _cells(ax, "category-")
                assert _thresholds(ax) == pytest.approx(list(space.thresholds[f]))
                assert _marker(ax) == pytest.approx(row[name])
                checked["numeric"] += 1
                continue
            # one outlined cell per category, labelled with the category names in state order
            assert [t.get_text() for t in ax.get_xticklabels()] == list(labels)
            assert _cells(ax, f"category-f{f}-") == list(labels)
            # the instance's diamond on the instance's own category
            assert labels[round(_marker(ax))] == row[name]
            for reason in layers:
                states = reason.literals.get(f)
                prefix = "flip" if reason.kind == "general_necessary" else reason.kind
                shown = _cells(ax, f"{prefix}-f{f}-")
                if states is None:
                    assert shown == []
                    continue
                assert sorted(shown) == sorted(labels[s] for s in states)  # exactly the literal's categories
                checked[reason.kind] += 1
                checked["several"] += len(states) > 1
    assert all(checked.values()), checked


@pytest.mark.slow
def test_categorical_reason_plot_shades_a_set_of_categories(loans) -> None:
    explainer, X_test = loans
    decision = explainer.explain(X_test.iloc[0])
    space = decision.sufficient_reason().space
    f = space.feature_names.index("credit_history")
    labels = space.category_labels(f)
    reason = Reason.of("sufficient", {f: {0, 1, 3}, 1: {2, 3}}, space=space, instance=decision.values, decision=1)
    fig = reason.plot()
    strip, income = fig.axes[1], fig.axes[0]  # rows in feature order: income (1), credit_history (7)
    assert strip.get_ylabel() == "credit_history" and income.get_ylabel() == "income"
    assert _cells(strip, f"sufficient-f{f}-") == [labels[0], labels[1], labels[3]]
    assert labels[round(_marker(strip))] == X_test.iloc[0]["credit_history"]
    t = space.thresholds[1]
    assert _spans(income, "sufficient") == [pytest.approx((t[1], t[3]))]
    html = reason._repr_html_()
    # the reason's table names the feature once, its categories beside it
    assert "<svg" in html and "<th" in html and ">credit_history</th>" in html
    assert "{" + ", ".join(labels[s] for s in (0, 1, 3)) + "}" in html
    assert "<svg" in decision._repr_html_()


def test_the_optional_layers_are_asked_within_a_time_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A picture's general sufficient reason and shortest flips are asked with a timeout
    (viz.shown.EXTRA_SECONDS), so that ``d.plot()`` never waits long for a layer it can do
    without; the sufficient reason itself is asked without one."""
    from rfexplain.decision import Decision
    from rfexplain.viz.shown import EXTRA_SECONDS, decision_layers

    asked: dict[str, float | None] = {}
    ask = Decision.ask

    def recording(self: Decision, name: str, **kwargs: Any) -> Any:
        asked[name] = kwargs.get("timeout")
        return ask(self, name, **kwargs)

    monkeypatch.setattr(Decision, "ask", recording)
    decision = rx.Explainer(MODEL, engine="sat", feature_names=NAMES).explain(X[60])
    decision_layers(decision)
    assert asked == {
        "inflated_sufficient_reason": None,
        "general_sufficient_reasons": EXTRA_SECONDS,
        "shortest_flips": EXTRA_SECONDS,
    }
