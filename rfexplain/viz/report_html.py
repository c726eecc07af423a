"""The HTML report's text: the model in words, the glossary, the summary tables (every row, and
per class) and each row's section, from the rows' :class:`~rfexplain.viz.report_rows.RowReport`.

Every text is escaped; the document has an inline style sheet and no script or external URL.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rfexplain.viz.chart import CHART_CSS
from rfexplain.viz.report_rows import SUFFICIENT_QUERIES, RowReport

__all__ = ["GLOSSARY", "class_summary", "describe_model", "document", "glossary", "row_section", "summary_table"]

_CSS = (
    """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:62em}
table.summary{border-collapse:collapse;font-size:.9em}
table.summary th,table.summary td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
table.summary th{background:#f0f0f0}
td.ok{color:#1a7f37}td.bad,p.bad{color:#b3261e;font-weight:bold}
details{margin:.6em 0;border:1px solid #ddd;border-radius:4px;padding:.3em .8em}
summary{cursor:pointer;font-weight:600}
h3{font-size:1em;margin:.8em 0 .3em}
ul.conditions{columns:2;margin:.2em 0}
p.action{background:#fdf1e8;padding:.3em .6em;border-left:3px solid #dd8452}
dl.values{display:grid;grid-template-columns:repeat(3,minmax(9em,max-content) minmax(5em,max-content));
gap:0 .8em;font-size:.85em}
dl.values dt{text-align:right;color:#555}dl.values dd{margin:0;font-variant-numeric:tabular-nums}
dl.values .r{font-weight:bold;color:#222}
dl.glossary dt{font-weight:600;margin-top:.4em}dl.glossary dd{margin-left:1.2em}
svg{max-width:100%;height:auto}
"""
    + CHART_CSS
)

#: The words the report uses, and what they mean.
GLOSSARY = (
    (
        "prediction",
        "The class the forest decides for the row, under the vote explained: the soft vote "
        "(the class with the highest mean probability over the trees: what scikit-learn's predict does) "
        "or the hard vote (the class most trees vote for). Ties go to the first class.",
    ),
    (
        "probability, vote share",
        "Soft vote: the mean over the trees of each tree's probability of the class (predict_proba). "
        "Hard vote: the share of trees voting for the class.",
    ),
    (
        "margin",
        "The predicted class's probability (or vote share) minus the next class's: near 0 the forest "
        "hesitates, 1 means every tree is sure.",
    ),
    (
        "sufficient reason",
        "A smallest set of conditions on the row's features (no condition can be dropped) that "
        "guarantees the prediction: every input that meets them gets the same prediction, whatever "
        "its other features. It is proven, not estimated.",
    ),
    (
        "inflated",
        "Each condition of the sufficient reason widened as far as the prediction allows (lower bound "
        "down, then upper bound up, one threshold at a time; as many categories as possible), so it "
        "reads as a range a person can act on; one-sided where a bound reaches the end of the "
        "feature's range. The canonical reason instead holds each feature to its cell, the interval "
        "between two consecutive thresholds of the forest around the row's value.",
    ),
    (
        "necessary reason",
        "A smallest set of features at least one of which must change for the prediction to change: "
        "changing all of them (in the right way) can flip it.",
    ),
    (
        "change, action",
        "The moves of a necessary reason's features (or of a shortest flip's) that give another "
        "class: each feature moved from the row's value into the interval or category shown; the "
        "changed row is classified by the model itself.",
    ),
    (
        "robustness",
        "The fewest features whose change can flip the prediction (the size of a smallest necessary reason).",
    ),
    (
        "shortest flip",
        "A way of flipping the prediction by changing as few features as possible, with the "
        "boundaries each must cross (the engines that compute them).",
    ),
    (
        "verified",
        "Every reason of the row checked with nothing but scikit-learn's own trees (rfexplain.verify, "
        "which shares no code with the engines): 'yes' means proven, 'NO' refuted (the problems are "
        "listed), 'no witness' that there was nothing to check.",
    ),
    ("scikit-learn predict", "What the model's own predict says about the row, for comparison."),
    ("engines agree", "With a second engine: whether it gives the same prediction and robustness."),
)


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "inf" if math.isinf(value) else (str(int(value)) if value.is_integer() else f"{value:.3g}")
    return str(value)


def describe_model(explainer: Any) -> str:
    """The explained model in words: its kind, trees, depth, features, classes and vote."""
    forest = explainer.forest
    model = explainer.model
    if model is None:
        kind = "a forest"
    elif explainer.pipeline is not None:
        kind = f"a pipeline ending in a {type(model.steps[-1][1]).__name__}"
    else:
        kind = f"a {type(model).__name__}"
    depth = max((t.depth() for t in forest.trees), default=0)
    categorical = sum(1 for f in range(forest.n_features) if forest.space.category_labels(f) is not None)
    features = f"{forest.n_features} features" + (f" ({categorical} categorical)" if categorical else "")
    vote = (
        "soft vote (highest mean class probability, as scikit-learn's predict)"
        if forest.vote == "soft"
        else "hard vote (majority of the trees)"
    )
    classes = ", ".join(repr(c) for c in forest.classes)
    return (
        f"{kind} of {forest.n_trees} trees of depth up to {depth} over {features}, classes {classes}, "
        f"decided by the {vote}"
    )


def glossary() -> str:
    """The glossary as a definition list."""
    esc = html.escape
    items = "".join(f"<dt>{esc(term)}</dt><dd>{esc(text)}</dd>" for term, text in GLOSSARY)
    return f'<dl class="glossary" id="glossary">{items}</dl>'


def summary_table(rows: Sequence[RowReport], queries: Sequence[str], agreement: bool) -> str:
    """One line per row: prediction, probability and margin, scikit-learn's prediction, the
    reasons' sizes, robustness, time, verification (and the second engine's agreement)."""
    esc = html.escape
    sized = [q for q in queries if q != "robustness" and any(q in r.sizes for r in rows)]
    share = next((r.share.kind for r in rows if r.share is not None), "probability")
    head = ["row", "prediction", share, "margin", "scikit-learn predict"] + [f"|{q.replace('_', ' ')}|" for q in sized]
    head += ["robustness", "time (s)", "verified"] + (["engines agree"] if agreement else [])
    lines = [
        '<table class="summary" id="summary"><thead><tr>'
        + "".join(f"<th>{esc(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
    ]
    for r in rows:
        if r.error:
            status = f'<td class="bad">error: {esc(r.error)}</td>'
        elif r.verified is None:
            status = "<td>no witness</td>"
        else:
            status = '<td class="ok">yes</td>' if r.verified else '<td class="bad">NO</td>'
        cells = [
            f'<td><a href="#row-{r.index}">{r.index}</a></td>',
            f"<td>{esc(_fmt(r.prediction))}</td>",
            f"<td>{'' if r.share is None else f'{r.share.top:.2f}'}</td>",
            f"<td>{'' if r.share is None else f'{r.share.margin:.2f}'}</td>",
            f"<td>{esc(_fmt(r.sklearn_prediction))}</td>",
        ]
        cells += [f"<td>{esc(_fmt(r.sizes.get(q)))}</td>" for q in sized]
        cells += [f"<td>{esc(_fmt(r.robustness))}</td>", f"<td>{r.time:.3f}</td>", status]
        if agreement:
            cells.append(f"<td>{esc(r.agreement or '')}</td>")
        lines.append(f'<tr id="summary-{r.index}">' + "".join(cells) + "</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _mean(values: Sequence[float]) -> str:
    finite = [v for v in values if math.isfinite(v)]
    return f"{sum(finite) / len(finite):.2f}" if finite else ""


def class_summary(rows: Sequence[RowReport]) -> str:
    """Per predicted class: its rows, mean probability and margin, mean size of the sufficient
    reason, mean robustness, rows scikit-learn predicts alike, and the features most often in
    the sufficient reasons."""
    esc = html.escape
    ok = [r for r in rows if r.error is None]
    classes = list(dict.fromkeys(_fmt(r.prediction) for r in ok))
    head = ["class", "rows", "mean probability", "mean margin", "mean |sufficient reason|", "mean robustness"]
    head += ["scikit-learn agrees", "most frequent in sufficient reasons"]
    lines = ['<table class="summary" id="classes"><thead><tr>' + "".join(f"<th>{esc(h)}</th>" for h in head)]
    lines.append("</tr></thead><tbody>")
    for label in classes:
        group = [r for r in ok if _fmt(r.prediction) == label]
        sizes = [float(len(r.sufficient_features)) for r in group if r.conditions or r.sufficient_features]
        frequent = Counter(name for r in group for name in r.sufficient_features).most_common(3)
        agree = sum(1 for r in group if r.sklearn_prediction is None or r.sklearn_prediction == r.prediction)
        cells = [
            esc(label),
            str(len(group)),
            _mean([r.share.top for r in group if r.share is not None]),
            _mean([r.share.margin for r in group if r.share is not None]),
            _mean(sizes),
            _mean([r.robustness for r in group if r.robustness is not None]),
            f"{agree} of {len(group)}",
            esc(", ".join(f"{name} ({n})" for name, n in frequent)),
        ]
        lines.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _reason_title(query: str) -> str:
    return {
        "inflated_sufficient_reason": "Why: sufficient reason (inflated)",
        "sufficient_reason": "Why: sufficient reason (canonical, cell by cell)",
        "general_sufficient_reasons": "Why: general sufficient reason",
    }[query]


def row_section(r: RowReport, open_: bool) -> str:
    """A row's section: the decision, why (the sufficient reason's conditions), what would change
    it (actions, necessary reason, robustness, shortest flips), the picture and the instance."""
    esc = html.escape
    opened = ' open="open"' if open_ else ""
    share = f", {r.share.kind} {r.share.top:.2f}" if r.share is not None else ""
    parts = [
        f'<details id="row-{r.index}"{opened}>',
        f"<summary>Row {r.index}: {esc(_fmt(r.prediction))}{esc(share)}</summary>",
        f"<h2>Row {r.index}</h2>",
    ]
    if r.error:
        parts.append(f'<p class="bad">error: {esc(r.error)}</p>')
    parts += [f"<p>{esc(w)}</p>" for w in r.warnings]
    if r.prediction is not None and r.error is None:
        strength = f" with {r.share_text}" if r.share_text else ""
        sklearn = f"; scikit-learn's predict: {_fmt(r.sklearn_prediction)}" if r.sklearn_prediction is not None else ""
        parts.append(f"<p>Predicted <b>{esc(_fmt(r.prediction))}</b>{esc(strength + sklearn)}.</p>")
    for query in SUFFICIENT_QUERIES:
        if query in r.reasons:
            parts.append(f"<h3>{esc(_reason_title(query))}</h3>")
            if query == next(q for q in SUFFICIENT_QUERIES if q in r.reasons) and r.conditions:
                parts.append('<ul class="conditions">' + "".join(f"<li>{esc(c)}</li>" for c in r.conditions) + "</ul>")
            elif r.reasons[query]:
                parts.append(f"<p>{esc(r.reasons[query][0])}</p>")
            else:
                parts.append("<p>none</p>")
    if any(q in r.reasons for q in ("necessary_reason", "shortest_flips")) or r.robustness is not None:
        parts.append("<h3>What would change it</h3>")
    for query in ("necessary_reason", "shortest_flips"):
        texts = r.reasons.get(query)
        if texts is None:
            continue
        if not texts:
            parts.append(f"<p>{esc(query.replace('_', ' '))}: none, the decision cannot be changed that way</p>")
        for text, action in zip(texts, r.actions.get(query, [])):
            if action:
                parts.append(f'<p class="action">{esc(action)}</p>')
            parts.append(f"<p>{esc(query.replace('_', ' '))}: {esc(text)}</p>")
    if r.robustness is not None:
        flips = (
            "nothing can flip the decision"
            if math.isinf(r.robustness)
            else f"{_fmt(r.robustness)} feature(s) must change to flip the decision"
        )
        parts.append(f"<p>robustness: {esc(flips)}</p>")
    if r.agreement:
        parts.append(f"<p>second engine: {esc(r.agreement)}</p>")
    if r.problems:
        problems = "".join(f"<li>{esc(p)}</li>" for p in r.problems)
        parts.append(f'<p class="bad">verification problems:</p><ul>{problems}</ul>')
    if r.svg:
        parts.append(f"<figure>{r.svg}</figure>")
    if r.values:
        marked = set(r.sufficient_features) | set(r.necessary_features)
        bold = ' class="r"'
        cells = "".join(
            f"<dt{bold if name in marked else ''}>{esc(name)}</dt><dd>{esc(v)}</dd>" for name, v in r.values
        )
        parts.append(f'<h3>The instance</h3><dl class="values">{cells}</dl>')
    parts.append("</details>")
    return "\n".join(parts)


def document(title: str, body: Sequence[str]) -> str:
    """The whole page: one self-contained HTML document."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"/>'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
