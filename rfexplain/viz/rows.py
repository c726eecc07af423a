"""One feature's row of a picture: what it shows (:class:`Row`) and how it is painted.

A sufficient reason of a forest's decision is a box in feature space around the instance (Izza
and Marques-Silva (2021), abductive explanations; Audemard et al. (2022), majoritary and
sufficient reasons); its general counterpart is a wider box (Ji and Darwiche (2023), general
sufficient reasons), and a shortest flip names the nearest boundaries whose crossing changes the
decision. One row per feature: the feature's thresholds in the forest as tick marks below the
axis (one line collection, gid ``thresholds-f<feature>``), the instance's value as a black
diamond (artist gid ``instance-f<feature>``), the sufficient reason's interval shaded, the
general sufficient reason's wider interval shaded lighter (rectangles with gid
``<kind>-f<feature>-<k>``), the boundaries of a shortest flip as dashed red lines (gid
``flip-f<feature>-...``), and an action (a necessary reason's change that flips the decision) as
the cell it moves into outlined dashed in orange (gid ``action-f<feature>``) with an arrow from
the instance's value to it (gid ``action-arrow-f<feature>``).

Every row is drawn by a *row painter* chosen per feature (:func:`painter`). A numeric feature is
drawn as above. A categorical feature (a pipeline's column, :mod:`rfexplain.pipelines`) is a strip
of one cell per category: the cell of state ``s`` spans ``s - 0.5 .. s + 0.5`` on the x axis,
its tick at ``s`` labelled with the category's name, an empty outlined cell with gid
``category-f<feature>-<s>``. A reason's literal on it is a set of states, so each category it
allows is a shaded cell (gid ``<kind>-f<feature>-<s>``, same colours as the intervals), each
category of a shortest flip's literal (the set to leave) a dashed red outline (gid
``flip-f<feature>-<s>``), and the instance's diamond sits on its category's cell at ``x = s``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rfexplain.core.reasons import Change, Reason, _intervals

__all__ = ["LAYER_STYLES", "THRESHOLD_MARK", "Row", "feature_rows", "painter"]

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
    "action": {"label": "change that flips the decision", "color": "#dd8452"},
}
#: Length of the threshold marks below a numeric row's axis, as a fraction of the row's height.
THRESHOLD_MARK = 0.15

_DRAW_ORDER = ("general_sufficient", "sufficient", "necessary", "contrastive", "general_necessary")


@dataclass(frozen=True)
class Row:
    """What one feature's row shows."""

    feature: int
    name: str
    thresholds: tuple[float, ...]
    value: float | None
    #: The category of each state of a categorical feature; ``None`` for a numeric one.
    categories: tuple[str, ...] | None = None
    #: The action on this feature that flips the decision (a necessary reason's change), if any.
    change: Change | None = None


def _limits(row: Row) -> tuple[float, float]:
    points = [t for t in row.thresholds if math.isfinite(t)] + ([row.value] if row.value is not None else [])
    if not points:
        return -1.0, 1.0
    lo, hi = min(points), max(points)
    pad = 0.12 * (hi - lo) if hi > lo else max(1.0, abs(lo)) * 0.5
    return lo - pad, hi + pad


def _frame_row(ax: Any, row: Row, left: float, right: float) -> None:
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


def _instance_marker(ax: Any, row: Row) -> None:
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


def _action(ax: Any, row: Row, x0: float, x1: float) -> None:
    """An action: the cell ``x0 .. x1`` the feature moves into, outlined dashed (gid
    ``action-f<feature>``), and an arrow from the instance's value to it (gid ``action-arrow-f<feature>``)."""
    from matplotlib.patches import Rectangle

    style = LAYER_STYLES["action"]
    height = LAYER_STYLES["general_sufficient"]["height"]
    ax.add_patch(
        Rectangle(
            (x0, (1 - height) / 2),
            x1 - x0,
            height,
            transform=ax.get_xaxis_transform(),
            facecolor="none",
            edgecolor=style["color"],
            linestyle="--",
            linewidth=1.6,
            label=style["label"],
            gid=f"action-f{row.feature}",
            zorder=4,
        )
    )
    if row.value is not None:
        arrow = ax.annotate(
            "",
            xy=((x0 + x1) / 2, 0.5),
            xytext=(row.value, 0.5),
            xycoords=ax.get_xaxis_transform(),
            arrowprops={"arrowstyle": "->", "color": style["color"], "linewidth": 1.4},
            zorder=4,
        )
        arrow.set_gid(f"action-arrow-f{row.feature}")


def _style(reason: Reason) -> dict[str, Any]:
    """How a reason is drawn: its kind's style, labelled as inflated where it is."""
    style = LAYER_STYLES[reason.kind]
    return dict(style, label=style["label"] + " (inflated)") if reason.inflated else style


def _in_draw_order(layers: Sequence[Reason]) -> list[Reason]:
    return sorted(layers, key=lambda r: _DRAW_ORDER.index(r.kind))


def _paint_numeric(ax: Any, row: Row, layers: Sequence[Reason]) -> None:
    """A numeric feature: its axis, thresholds as marks below it, the layers' intervals, the instance."""
    left, right = _limits(row)
    _frame_row(ax, row, left, right)
    # the forest's thresholds as tick marks below the axis, one artist for them all (not minor
    # ticks, which cost far more time and SVG with hundreds per feature); round numbers as
    # labelled ticks
    ax.vlines(
        [t for t in row.thresholds if math.isfinite(t)],  # +inf: "is a number", not a point
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
        style = _style(reason)
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
    moved_to = _intervals([row.change.after], row.thresholds) if row.change is not None else []
    if moved_to:  # (a move to the missing state has no cell on the axis)
        lo, hi = moved_to[0]
        _action(ax, row, max(lo, left), min(hi, right))
    _instance_marker(ax, row)


def _paint_categorical(ax: Any, row: Row, layers: Sequence[Reason]) -> None:
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
        style = _style(reason)
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
    if row.change is not None:
        _action(ax, row, row.change.after - 0.5, row.change.after + 0.5)
    _instance_marker(ax, row)


def painter(row: Row) -> Callable[[Any, Row, Sequence[Reason]], None]:
    """The painter of a feature's row: a category strip for a categorical feature, else an axis."""
    return _paint_categorical if row.categories is not None else _paint_numeric


def feature_rows(
    layers: Sequence[Reason], values: Sequence[float] | None, features: Any, changes: Sequence[Change] = ()
) -> list[Row]:
    """The rows shown: the features the layers mention and the ``changes`` move
    (``features=None``), every feature (``"all"``), or the features given (indices or names), in
    feature order; each row with its feature's change, if any."""
    spaces = [r.space for r in layers if r.space is not None] + [c.space for c in changes if c.space is not None]
    if not spaces:
        raise ValueError("a reason without its feature space cannot be plotted")
    space = spaces[0]
    moves = {c.feature: c for c in changes}
    if features is None:
        shown = sorted(set().union(*(r.features for r in layers)) | set(moves))
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
        Row(
            f,
            space.feature_names[f],
            tuple(space.thresholds[f]),
            None if values is None or math.isnan(values[f]) else float(values[f]),  # a missing value: no mark
            space.category_labels(f),
            moves.get(f),
        )
        for f in shown
    ]
