"""A self-contained HTML report of many explained instances.

One file, readable offline in any browser: inline CSS, every plot inline SVG, no script and no
external URL. A summary table lists every row (prediction, scikit-learn's own prediction, reason
sizes, robustness, time, whether the reasons' witnesses verify against the model's own trees);
a collapsible section per row (the first one open) gives the reasons in words, the plot, the shortest flips (engines
that answer them) and, with ``compare_engine``, whether a second engine agrees.

Size (measured on 30 rows): a detailed row costs about 12 KB on iris (20 trees of depth 4) and
about 66 KB on wine (13 features, 20 trees of depth 4: its plot has more rows and ticks), almost
all of it the inline SVG; a summary-only row about 0.2 KB. ``max_sections`` (default 100) caps the
detailed rows, so a report stays under about 7 MB whatever the number of rows.
"""

from __future__ import annotations

import html
import logging
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rfexplain.core.errors import InvalidInstanceError, QueryArgumentError, UnsupportedQuery
from rfexplain.core.instances import as_matrix, in_model_order, mapping_rows
from rfexplain.progress import Progress
from rfexplain.verify import verify
from rfexplain.viz.extras import MissingExtraError

__all__ = ["DEFAULT_QUERIES", "RowReport", "write_report"]

log = logging.getLogger(__name__)

#: What a report answers per row unless told otherwise.
DEFAULT_QUERIES = ("sufficient_reason", "necessary_reason", "robustness", "shortest_flips")
_KNOWN = frozenset(DEFAULT_QUERIES + ("general_sufficient_reasons",))

_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:70em}
table.summary{border-collapse:collapse;font-size:.9em}
table.summary th,table.summary td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
table.summary th{background:#f0f0f0}
td.ok{color:#1a7f37}td.bad{color:#b3261e;font-weight:bold}
details{margin:.6em 0;border:1px solid #ddd;border-radius:4px;padding:.3em .8em}
summary{cursor:pointer;font-weight:600}
dl.reasons dt{font-weight:600;margin-top:.4em}dl.reasons dd{margin-left:1.2em}
svg{max-width:100%;height:auto}
"""


@dataclass
class RowReport:
    """What the report says about one row."""

    index: int
    prediction: Any = None
    sklearn_prediction: Any = None
    reasons: dict[str, list[str]] = field(default_factory=dict)
    sizes: dict[str, int | None] = field(default_factory=dict)
    robustness: float | None = None
    time: float = 0.0
    verified: bool | None = None
    problems: list[str] = field(default_factory=list)
    agreement: str | None = None
    svg: str = ""
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


def _answer(decision: Any, query: str) -> Any:
    if query == "shortest_flips":
        return list(decision.shortest_flips(limit=3))
    if query == "general_sufficient_reasons":
        return list(decision.general_sufficient_reasons(limit=1))
    return getattr(decision, query)()


def _rows(explainer: Any, X: Any) -> list[Any]:
    """The rows to explain: for a pipeline, rows of its original columns (a DataFrame matched by
    name, or mappings of names to values); otherwise numbers in the forest's column order."""
    if getattr(explainer, "pipeline", None) is None:
        return list(as_matrix(X, explainer.forest.feature_names))
    mappings = mapping_rows(X)
    if mappings is not None:
        return mappings
    if not hasattr(X, "iloc") or getattr(X, "ndim", 2) != 2:
        raise InvalidInstanceError(
            "a pipeline's report explains rows of its original columns: give a DataFrame or a list of dicts"
        )
    frame = in_model_order(X, explainer.forest.feature_names, by_position=False)
    return [frame.iloc[k] for k in range(len(frame))]


def _explain_row(explainer: Any, index: int, row: Any, queries: Sequence[str], other: Any, plot: bool) -> RowReport:
    out = RowReport(index=index)
    started = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            decision = explainer.explain(row)
        decision.progress = False  # the report draws its own bar
        out.warnings = [str(w.message) for w in caught]
        out.prediction, out.sklearn_prediction = decision.prediction, decision.sklearn_prediction
        layers: list[Any] = []
        # a pipeline's reasons are checked on the forest read over its original columns
        model = explainer.forest if explainer.model is None or explainer.pipeline is not None else explainer.model
        checks: list[Any] = []
        for query in queries:
            try:
                value = _answer(decision, query)
            except UnsupportedQuery:
                continue
            if query == "robustness":
                out.robustness = float(value)
                continue
            reasons = value if isinstance(value, list) else ([] if value is None else [value])
            out.reasons[query] = [str(r) for r in reasons]
            out.sizes[query] = len(reasons[0]) if reasons else None
            layers.extend(reasons[:1])
            checks.extend(r for r in reasons if query != "shortest_flips")
        results = [verify(r, model) for r in checks]
        out.verified = all(results) if results else None
        out.problems = [p for v in results for p in v.problems]
        out.time = time.perf_counter() - started
        if other is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the first engine's decision already recorded it
                out.agreement = _agreement(decision, other.explain(decision.values))
        if plot and layers:
            out.svg = _plot(decision, [r for r in layers if r.kind != "necessary"] or layers, f"row{index}-")
    except Exception as exc:  # one failing row is reported on its own line, the others go on
        log.debug("report row %s failed", index, exc_info=True)
        out.error = f"{type(exc).__name__}: {exc}"
        out.time = time.perf_counter() - started
    return out


def _agreement(first: Any, second: Any) -> str:
    """Whether two engines agree on the prediction and the robustness (both are unique)."""
    name = second.explainer.engine_name
    same_prediction = first.prediction == second.prediction
    same_robustness = first.robustness() == second.robustness()
    if same_prediction and same_robustness:
        return f"engine {name!r} agrees (prediction and robustness)"
    return f"engine {name!r} DISAGREES (prediction {second.prediction!r}, robustness {second.robustness()})"


def _plot(decision: Any, layers: list[Any], prefix: str) -> str:
    from rfexplain.viz.plot import decision_figure
    from rfexplain.viz.svg import figure_svg

    try:
        return figure_svg(decision_figure(decision, layers=layers), prefix=prefix)
    except MissingExtraError:
        return ""


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "inf" if math.isinf(value) else (str(int(value)) if value.is_integer() else f"{value:.3g}")
    return str(value)


def _summary(rows: list[RowReport], queries: Sequence[str], agreement: bool) -> str:
    esc = html.escape
    sized = [q for q in queries if q != "robustness" and any(q in r.sizes for r in rows)]
    head = ["row", "prediction", "scikit-learn predict"] + [f"|{q.replace('_', ' ')}|" for q in sized]
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
            f"<td>{esc(_fmt(r.sklearn_prediction))}</td>",
        ]
        cells += [f"<td>{esc(_fmt(r.sizes.get(q)))}</td>" for q in sized]
        cells += [f"<td>{esc(_fmt(r.robustness))}</td>", f"<td>{r.time:.3f}</td>", status]
        if agreement:
            cells.append(f"<td>{esc(r.agreement or '')}</td>")
        lines.append(f'<tr id="summary-{r.index}">' + "".join(cells) + "</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _section(r: RowReport, open_: bool) -> str:
    esc = html.escape
    opened = ' open="open"' if open_ else ""
    parts = [
        f'<details id="row-{r.index}"{opened}>',
        f"<summary>Row {r.index}: prediction {esc(_fmt(r.prediction))}</summary>",
        f"<h2>Row {r.index}</h2>",
    ]
    if r.error:
        parts.append(f'<p class="bad">error: {esc(r.error)}</p>')
    parts += [f"<p>{esc(w)}</p>" for w in r.warnings]
    parts.append('<dl class="reasons">')
    for query, texts in r.reasons.items():
        parts.append(f"<dt>{esc(query.replace('_', ' '))}</dt>")
        parts += [f"<dd>{esc(t)}</dd>" for t in texts] or ["<dd>none: the decision cannot be changed that way</dd>"]
    if r.robustness is not None:
        parts.append(
            f"<dt>robustness</dt><dd>{esc(_fmt(r.robustness))} feature(s) must change to flip the decision</dd>"
        )
    if r.agreement:
        parts.append(f"<dt>second engine</dt><dd>{esc(r.agreement)}</dd>")
    if r.problems:
        parts.append("<dt>verification problems</dt>" + "".join(f"<dd>{esc(p)}</dd>" for p in r.problems))
    parts.append("</dl>")
    if r.svg:
        parts.append(f"<figure>{r.svg}</figure>")
    parts.append("</details>")
    return "\n".join(parts)


def write_report(
    explainer: Any,
    X: Any,
    path: str | Path,
    *,
    queries: Sequence[str] = DEFAULT_QUERIES,
    compare_engine: str | None = None,
    indices: Sequence[int] | None = None,
    max_sections: int = 100,
    plots: bool = True,
    progress: bool | None = None,
    title: str = "rfexplain report",
) -> list[RowReport]:
    """Explain every row of ``X`` and write the report to ``path``; returns the rows' reports.

    Parameters
    ----------
    explainer : Explainer
        The explainer whose engine answers.
    queries : sequence of str
        Among ``sufficient_reason``, ``necessary_reason``, ``robustness``, ``shortest_flips``,
        ``general_sufficient_reasons``; one an engine does not answer is left out of its rows.
    compare_engine : str, optional
        A second engine run on every row; the report says whether it agrees.
    max_sections : int
        Rows with a detailed section (the first ones); every row is in the summary table.
    plots : bool
        Draw each detailed row (needs ``rfexplain[plot]``; without it, text only).
    """
    unknown = [q for q in queries if q not in _KNOWN]
    if unknown:
        raise QueryArgumentError(f"queries must be among {sorted(_KNOWN)}. Got {unknown} instead.")
    if max_sections < 0:
        raise QueryArgumentError(f"max_sections must be >= 0, got {max_sections}")
    rows = _rows(explainer, X)
    ids = list(range(len(rows))) if indices is None else [int(i) for i in indices]
    if len(ids) != len(rows):
        raise QueryArgumentError(f"indices has {len(ids)} entries for {len(rows)} instances")
    other = None
    if compare_engine is not None:  # the same forest (vote and bounds), the same features held
        forest = explainer.forest
        other = type(explainer)(
            forest,
            engine=compare_engine,
            immutable=[forest.feature_names[f] for f in getattr(explainer, "immutable", ())],
        )
    reports = []
    try:
        with Progress(len(rows), f"report ({explainer.engine_name})", enabled=progress) as bar:
            for k, (i, row) in enumerate(zip(ids, rows)):
                reports.append(_explain_row(explainer, i, row, queries, other, plots and k < max_sections))
                bar.update(failed=int(reports[-1].error is not None))
    finally:
        if other is not None:
            other.close()
    shown = reports[:max_sections]
    omitted = len(reports) - len(shown)
    engines = explainer.engine_name + (f" (compared with {compare_engine})" if compare_engine else "")
    body = [
        f"<h1>{html.escape(title)}</h1>",
        (
            f"<p>{len(reports)} rows explained by the {html.escape(engines)} engine; forest: "
            f"{html.escape(repr(explainer.forest))}.</p>"
        ),
        "<h2>Summary</h2>",
        _summary(reports, queries, other is not None),
        "<h2>Rows</h2>",
    ]
    body += [_section(r, open_=k == 0 or len(shown) <= 5) for k, r in enumerate(shown)]
    if omitted:
        body.append(f"<p>{omitted} more rows are in the summary only (max_sections={max_sections}).</p>")
    document = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"/>'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
    Path(path).write_text(document, encoding="utf-8")
    return reports
