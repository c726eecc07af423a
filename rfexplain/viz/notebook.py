"""Rich display in notebooks: ``_repr_html_`` of decisions, reasons and enumerations, and the
text of a decision (``str(decision)``).

A compact table, and the picture (:mod:`rfexplain.viz.plot`) as inline SVG when matplotlib is
installed; without it, the table alone. A decision shows its inflated sufficient reason and the
actions that flip it by default (the canonical reason with ``inflated=False``).
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from typing import Any

from rfexplain.core.errors import UnsupportedQuery
from rfexplain.core.reasons import Reason, describe_values
from rfexplain.viz.extras import MissingExtraError

__all__ = ["decision_html", "decision_text", "enumeration_html", "enumeration_text", "reason_html", "table_html"]

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


def _strength(decision: Any) -> str:
    """``probability 0.93 (margin 0.86 over 'benign')`` (or the vote share), ``""`` if unknown."""
    from rfexplain.viz.scores import vote_share

    try:
        return vote_share(decision.forest, decision.values).describe(decision.forest.classes)
    except ValueError:
        return ""


def decision_html(decision: Any, *, inflated: bool = True) -> str:
    """Prediction with its probability (or vote share) and margin, the sufficient reason
    (inflated, or the canonical one with ``inflated=False``), the actions that flip the decision,
    the necessary reason, robustness, and the picture.

    Each answer is asked of the decision once and remembered (:func:`~rfexplain.viz.shown.shown_answer`),
    so showing the decision again, or plotting it, asks nothing again."""
    from rfexplain.viz.plot import decision_figure
    from rfexplain.viz.shown import decision_layers, shown_answer

    esc = html.escape
    sufficient = "inflated_sufficient_reason" if inflated else "sufficient_reason"
    rows = [
        ("prediction", esc(f"{decision.prediction!r} with {_strength(decision)}")),
        ("scikit-learn predict", esc(repr(decision.sklearn_prediction))),
        ("engine", esc(decision.explainer.engine_name)),
        (
            "sufficient reason" + (" (inflated)" if inflated else ""),
            _text_or(lambda: shown_answer(decision, sufficient)),
        ),
        ("to flip it", _text_or(lambda: _actions(decision))),
        ("necessary reason", _text_or(lambda: shown_answer(decision, "necessary_reason"))),
        ("robustness", _text_or(lambda: shown_answer(decision, "robustness"))),
    ]
    layers = decision_layers(decision, inflated=inflated)
    return table_html(rows) + _svg_or_empty(lambda: decision_figure(decision, layers=layers))


def _actions(decision: Any) -> str | None:
    """The necessary reason's actions in words (``None``: nothing flips the decision)."""
    from rfexplain.viz.shown import shown_answer

    reason = shown_answer(decision, "necessary_reason")
    return None if reason is None else (reason.actions() or f"change: {reason}")


def decision_text(decision: Any, *, inflated: bool = True) -> str:
    """The decision in words (``str(decision)``): the prediction with its probability (or vote
    share) and margin, the sufficient reason (inflated, or with ``inflated=False`` the canonical
    one) and the actions that flip it, each asked once (:func:`~rfexplain.viz.shown.shown_answer`)."""
    from rfexplain.viz.shown import shown_answer

    strength = _strength(decision)
    lines = [
        f"prediction {decision.prediction!r}"
        + (f" with {strength}" if strength else "")
        + f" ({decision.explainer.engine_name} engine)"
    ]
    sufficient = shown_answer(decision, "inflated_sufficient_reason" if inflated else "sufficient_reason")
    lines.append(f"because: {sufficient}" + ("" if inflated else " (canonical: each feature in its cell)"))
    necessary = shown_answer(decision, "necessary_reason")
    if necessary is None:
        lines.append("nothing can flip the decision")
    else:
        lines.append(necessary.actions() or f"to flip it, change: {necessary}")
    return "\n".join(lines)


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
