"""The HTML report's pictures as small hand-written SVG: a decision's reason, one line per feature
(:func:`reason_chart`), and how often each feature is in the rows' reasons (:func:`relevance_chart`).

The report draws these instead of the matplotlib displays of :mod:`rfexplain.viz.plot` because a
report holds a picture per row: a matplotlib SVG spends about 10 KB per feature row (each
text's font list, each tick's group), these about 0.6 KB, so a row of a 30-feature forest stays
within a few tens of kilobytes and the report needs no matplotlib. Their look is set by
:data:`CHART_CSS`, which the report's style sheet includes once.

One line per feature of the reason (and per feature an action changes), each on the feature's
own scale (from its lowest to its highest threshold in the forest, the instance's value
included): the forest's thresholds as ticks below the line, the reason's range as a blue band
(at least 2 pixels wide, so a single cell still shows), the instance's value as a black
diamond, and each action (:class:`~rfexplain.core.reasons.Change`) as an orange arrow from the
value into the dashed cell it moves to. The condition is written beside the line. A
categorical feature is a strip of one cell per category.

Example
-------
>>> from rfexplain.core.forest import FeatureSpace
>>> from rfexplain.core.reasons import Reason
>>> space = FeatureSpace(("petal width",), ((0.75, 1.75),), ("setosa", "versicolor"))
>>> svg = reason_chart(Reason.of("sufficient", {0: {1}}, space=space, instance=(1.0,)))
>>> svg.startswith("<svg") and "petal width" in svg and 'class="s"' in svg
True
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from rfexplain.core.floats import float32_text
from rfexplain.core.forest import FeatureSpace
from rfexplain.core.reasons import Change, Reason, _intervals, describe_states

__all__ = ["CHART_CSS", "reason_chart", "relevance_chart", "value_text"]

#: The charts' style (classes: ``s`` reason band, ``i`` instance, ``c``/``a`` an action's cell
#: and arrow, ``t`` thresholds and axis, ``k`` a category's cell, ``n`` necessary-reason bars).
CHART_CSS = """
svg.chart text{font:11px system-ui,sans-serif;fill:#222}
svg.chart .t{stroke:#777;stroke-width:1;fill:none}
svg.chart .s{fill:#4c72b0;opacity:.55}
svg.chart .i{fill:#000}
svg.chart .c{fill:none;stroke:#dd8452;stroke-width:1.5;stroke-dasharray:3 2}
svg.chart .a{stroke:#dd8452;stroke-width:1.5;fill:#dd8452}
svg.chart .k{fill:none;stroke:#bbb}
svg.chart .n{fill:#dd8452;opacity:.8}
svg.chart text.r{text-anchor:end}
svg.chart text.m{text-anchor:middle;font-size:9px}
"""

_WIDTH = 800
_LEFT = 210  # the feature names end here
_RIGHT = 560  # the conditions start here
_TEXT = 40  # characters of a condition shown beside its line (all of it in its tooltip)
_ROW = 24
_BAND = 10  # height of a reason's band


def _escape(text: str) -> str:
    return html.escape(text, quote=True)


def _svg(height: int, body: list[str], label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{_WIDTH}" height="{height}" '
        f'viewBox="0 0 {_WIDTH} {height}" role="img" aria-label="{_escape(label)}">' + "".join(body) + "</svg>"
    )


def _name(y: int, name: str) -> str:
    """A feature's name, right-aligned before its line (cut at 30 characters)."""
    return f'<text class="r" x="{_LEFT}" y="{y}">{_escape(name if len(name) <= 30 else name[:29] + "…")}</text>'


def _scale(points: Sequence[float]) -> tuple[float, float]:
    """The value range a numeric line shows: every finite point, with a margin on each side."""
    finite = [p for p in points if math.isfinite(p)]
    lo, hi = (min(finite), max(finite)) if finite else (-1.0, 1.0)
    pad = 0.06 * (hi - lo) if hi > lo else max(1.0, abs(lo)) * 0.5
    return lo - pad, hi + pad


def _numeric_line(
    y: int, thresholds: tuple[float, ...], value: float, states: frozenset[int] | None, change: Change | None
) -> list[str]:
    target = _intervals([change.after], thresholds)[0] if change is not None else (math.inf, -math.inf)
    lo, hi = _scale([*thresholds, value, *target])

    def x(v: float) -> float:
        return _LEFT + 10 + (min(max(v, lo), hi) - lo) / (hi - lo) * (_RIGHT - _LEFT - 30)

    ticks = sorted({round(x(t)) for t in thresholds})
    parts = [f'<path class="t" d="M{_LEFT + 10} {y}H{_RIGHT - 20}' + "".join(f"M{t} {y}v4" for t in ticks) + '"/>']
    if states is not None:
        for a, b in _intervals(states, thresholds):
            x0, x1 = x(a), x(b)
            if x1 - x0 < 2:
                x0, x1 = (x0 + x1) / 2 - 1, (x0 + x1) / 2 + 1
            parts.append(f'<rect class="s" x="{x0:.1f}" y="{y - _BAND}" width="{x1 - x0:.1f}" height="{_BAND}"/>')
    here = x(value)
    if change is not None:
        a, b = x(target[0]), x(target[1])
        width = max(b - a, 2)
        parts.append(f'<rect class="c" x="{a:.1f}" y="{y - _BAND - 2}" width="{width:.1f}" height="{_BAND + 4}"/>')
        end = a + 3 if here < a else b - 3
        tip = 1 if end > here else -1
        parts.append(
            f'<path class="a" d="M{here:.1f} {y - 5}H{end:.1f}"/>'
            f'<path class="a" d="M{end + 3 * tip:.1f} {y - 5}l{-6 * tip} -3v6z"/>'
        )
    parts.append(f'<path class="i" d="M{here:.1f} {y - 10}l4 5-4 5-4-5z"/>')
    return parts


def _categorical_line(
    y: int, labels: tuple[str, ...], state: int, states: frozenset[int] | None, change: Change | None
) -> list[str]:
    width = (_RIGHT - _LEFT - 20) / max(len(labels), 1)
    parts = []
    for s, label in enumerate(labels):
        x0 = _LEFT + 10 + s * width
        kind = "s" if states is not None and s in states else "k"
        parts.append(f'<rect class="{kind}" x="{x0 + 1:.1f}" y="{y - 12}" width="{width - 2:.1f}" height="14"/>')
        if change is not None and s == change.after:
            parts.append(f'<rect class="c" x="{x0:.1f}" y="{y - 14}" width="{width:.1f}" height="18"/>')
        fits = max(int(width / 5.5), 3)  # characters of 9-pixel text the cell holds
        shown = label if len(label) <= fits else label[: fits - 1] + "…"
        parts.append(f'<text class="m" x="{x0 + width / 2:.1f}" y="{y + 12}">{_escape(shown)}</text>')
    here = _LEFT + 10 + (state + 0.5) * width
    parts.append(f'<path class="i" d="M{here:.1f} {y - 10}l4 5-4 5-4-5z"/>')
    return parts


def value_text(space: FeatureSpace, feature: int, value: float) -> str:
    """An instance's value as a person reads it: a category's name, or the shortest decimal that
    reads back as the float32 number the trees compare (``6.6``, not ``6.599999904632568``)."""
    labels = space.category_labels(feature)
    if labels is not None:
        return str(labels[space.category_state(feature, value)])
    return float32_text(value)


def _condition(
    space: FeatureSpace, feature: int, value: float, states: frozenset[int] | None, change: Change | None
) -> str:
    """The text beside a line: the reason's condition (``x > 17.48``), else the action, and the
    instance's value (``here 25.38``)."""
    here = f"here {value_text(space, feature, value)}"
    if states is not None:
        labels = space.category_labels(feature)
        if labels is not None:
            return "in {" + ", ".join(labels[s] for s in sorted(states)) + "}; " + here
        return describe_states("x", states, space.thresholds[feature]) + "; " + here
    if change is not None:
        return change.describe().replace(f" {space.feature_names[feature]} ", " ", 1) + "; " + here
    return here


def reason_chart(
    reason: Reason | None,
    changes: Sequence[Change] = (),
    *,
    values: Sequence[float] | None = None,
    space: FeatureSpace | None = None,
    lead_to: Any = None,
) -> str:
    """A reason (a conjunction: a sufficient reason, inflated or not) and the actions that flip the
    decision, one line per feature they mention, as an ``<svg>`` element (empty text when there
    is nothing to draw: no feature space, or neither a condition nor an action).

    Parameters
    ----------
    reason : Reason or None
        Its literals are the blue bands; its ``space`` and ``instance`` are used when ``space``
        and ``values`` are not given.
    changes : sequence of Change
        The actions (a necessary reason's :attr:`~rfexplain.core.reasons.Reason.changes`).
    values : sequence of float, optional
        The instance's values (the diamonds).
    space : FeatureSpace, optional
        The forest's features.
    lead_to : label, optional
        The class the actions give, named in the legend.
    """
    space = space if space is not None else (reason.space if reason is not None else None)
    values = values if values is not None else (reason.instance if reason is not None else None)
    literals = reason.literals if reason is not None else {}
    moves = {c.feature: c for c in changes}
    features = sorted(set(literals) | set(moves))
    if space is None or values is None or not features:
        return ""
    body = []
    for k, f in enumerate(features):
        y = 8 + _ROW * k + 14
        labels = space.category_labels(f)
        name = space.feature_names[f]
        body.append(_name(y, name))
        if labels is not None:
            body += _categorical_line(y, labels, space.category_state(f, values[f]), literals.get(f), moves.get(f))
        else:
            body += _numeric_line(y, space.thresholds[f], values[f], literals.get(f), moves.get(f))
        condition = _condition(space, f, values[f], literals.get(f), moves.get(f))
        if len(condition) <= _TEXT:
            body.append(f'<text x="{_RIGHT}" y="{y}">{_escape(condition)}</text>')
        else:  # cut, the whole of it in a tooltip
            cut = _escape(condition[: _TEXT - 1] + "…")
            body.append(f'<text x="{_RIGHT}" y="{y}"><title>{_escape(condition)}</title>{cut}</text>')
    y = 8 + _ROW * len(features) + 14
    legend = [
        f'<rect class="s" x="10" y="{y - 9}" width="18" height="{_BAND}"/>',
        f'<text x="34" y="{y}">sufficient reason: any values in the bands keep the prediction</text>',
        f'<path class="i" d="M390 {y - 10}l4 5-4 5-4-5z"/><text x="400" y="{y}">the instance</text>',
    ]
    if changes:
        target = f" to get {lead_to!r}" if lead_to is not None else ""
        legend.append(
            f'<rect class="c" x="490" y="{y - 10}" width="18" height="12"/><text x="514" y="{y}">change{target}</text>'
        )
    label = f"reason over {len(features)} features"
    return _svg(y + 8, body + legend, label)


def relevance_chart(sufficient: dict[str, int], necessary: dict[str, int], *, top: int = 20) -> str:
    """How many rows' sufficient reasons (blue) and necessary reasons (orange) mention each feature,
    the ``top`` most mentioned features, as an ``<svg>`` element (empty text without reasons)."""
    names = sorted(set(sufficient) | set(necessary), key=lambda n: (-(sufficient.get(n, 0) + necessary.get(n, 0)), n))
    shown = names[:top]
    if not shown:
        return ""
    most = max(max(sufficient.values(), default=0), max(necessary.values(), default=0), 1)
    width = _RIGHT - _LEFT - 20
    body = []
    for k, name in enumerate(shown):
        y = 8 + 20 * k + 12
        body.append(_name(y, name))
        for offset, count, kind in ((-8, sufficient.get(name, 0), "s"), (0, necessary.get(name, 0), "n")):
            if count:
                w = max(count / most * width, 1)
                body.append(f'<rect class="{kind}" x="{_LEFT + 10}" y="{y + offset}" width="{w:.1f}" height="7"/>')
        counts = f"{sufficient.get(name, 0)} / {necessary.get(name, 0)}"
        body.append(f'<text x="{_RIGHT}" y="{y}">{counts}</text>')
    y = 8 + 20 * len(shown) + 14
    more = f" ({len(names) - len(shown)} more features not shown)" if len(names) > len(shown) else ""
    body += [
        f'<rect class="s" x="10" y="{y - 8}" width="18" height="7"/><text x="34" y="{y}">in sufficient reasons</text>',
        f'<rect class="n" x="200" y="{y - 8}" width="18" height="7"/>'
        f'<text x="224" y="{y}">in necessary reasons{_escape(more)}</text>',
    ]
    return _svg(y + 8, body, f"feature relevance over {len(names)} features")
