"""Rich display in notebooks: ``_repr_html_`` of decisions, reasons and enumerations.

A compact table, and the picture (:mod:`rfexplain.viz.plot`) as inline SVG when matplotlib is
installed; without it, the table alone.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from typing import Any

from rfexplain.core.errors import UnsupportedQuery
from rfexplain.core.reasons import Reason, describe_values
from rfexplain.viz.extras import MissingExtraError

__all__ = ["decision_html", "enumeration_html", "enumeration_text", "reason_html", "table_html"]

#: Results an enumeration shows in a notebook (they stay available to iteration).
SHOWN_RESULTS = 10


def table_html(rows: Iterable[tuple[str, str]], *, css_class: str = "rfexplain") -> str:
    """A two-column table of already-escaped cells."""
    body = "".join(
        f'<tr><th style="text-align:left">{k}</th><td style="text-align:left">{v}</td></tr>' for k, v in rows
    )
    return f'<table class="{css_class}">{body}</table>'


def _svg_or_empty(make_figure: Any) -> str:
    try:
        from rfexplain.viz.svg import figure_svg

        return f"<div>{figure_svg(make_figure())}</div>"
    except MissingExtraError:
        return ""


def reason_html(reason: Reason) -> str:
    """The reason's conditions, one row per feature (its name, then the values the literal
    allows: an interval or a set of categories), and its plot."""
    from rfexplain.viz.plot import reason_figure

    esc = html.escape
    head = f"<p><b>{esc(reason.kind.replace('_', ' '))} reason</b> ({len(reason)} features)</p>"
    space = reason.space
    rows = [("feature", "values")] + [
        (
            esc(space.feature_names[lit.feature] if space is not None else f"x{lit.feature}"),
            esc(describe_values(lit.states, space, lit.feature)),
        )
        for lit in reason.conditions
    ]
    plot = _svg_or_empty(lambda: reason_figure(reason)) if space is not None and reason.conditions else ""
    return head + table_html(rows) + plot


def _text_or(query: Any) -> str:
    try:
        value = query()
    except UnsupportedQuery:
        return "<i>not answered by this engine</i>"
    if value is None:
        return "<i>none: nothing can flip the decision</i>"
    if isinstance(value, float) and math.isinf(value):
        return "cannot be flipped"
    return html.escape(str(value))


def decision_html(decision: Any) -> str:
    """Prediction, one sufficient and one necessary reason, robustness, and the picture.

    Each answer is asked of the decision once and remembered (:func:`~rfexplain.viz.plot.shown_answer`),
    so showing the decision again, or plotting it, asks nothing again."""
    from rfexplain.viz.plot import decision_figure, shown_answer

    esc = html.escape
    rows = [
        ("prediction", esc(repr(decision.prediction))),
        ("scikit-learn predict", esc(repr(decision.sklearn_prediction))),
        ("engine", esc(decision.explainer.engine_name)),
        ("sufficient reason", _text_or(lambda: shown_answer(decision, "sufficient_reason"))),
        ("necessary reason", _text_or(lambda: shown_answer(decision, "necessary_reason"))),
        ("robustness", _text_or(lambda: shown_answer(decision, "robustness"))),
    ]
    return table_html(rows) + _svg_or_empty(lambda: decision_figure(decision))


def _shown_results(enumeration: Any) -> list[Any]:
    """The first :data:`SHOWN_RESULTS` results (produced now if needed; iteration still yields them)."""
    return list(enumeration.peek(SHOWN_RESULTS))


def enumeration_text(enumeration: Any) -> str:
    """The text form of :func:`enumeration_html`: the same status and the same first results."""
    shown = _shown_results(enumeration)
    lines = [f"Enumeration({enumeration.status})"]
    lines += [f"  {k}. {r}" for k, r in enumerate(shown, start=1)]
    return "\n".join(lines)


def enumeration_html(enumeration: Any) -> str:
    """The first results (produced now if needed, and still yielded by iteration) and the
    status, worded as the text form (:func:`enumeration_text`, ``Enumeration.status``)."""
    shown = _shown_results(enumeration)
    rows = [(str(k), html.escape(str(r))) for k, r in enumerate(shown, start=1)]
    return f"<p><b>Enumeration</b>: {html.escape(enumeration.status)}</p>" + table_html(rows)
