"""A self-contained HTML report of many explained instances.

One file, readable offline in any browser: inline CSS, every picture inline SVG drawn by hand
(:mod:`rfexplain.viz.chart`), no script and no external URL. It opens with the model in words,
a summary per predicted class, a chart of how often each feature is in the reasons, and a table
of every row (prediction, probability or vote share, margin, scikit-learn's own prediction,
reason sizes, robustness, time, whether the reasons verify against the model's own trees);
then a collapsible section per row (the first one open) that reads like a document: the
decision, why (the inflated sufficient reason's conditions, one per feature), what would change
it (the actions that flip it, the necessary reason, robustness, the shortest flips of the
engines that answer them), the picture of the features that matter, and the instance's values
(:mod:`rfexplain.viz.report_html`); and a glossary of the words it uses. Rows are explained in
parallel with ``n_jobs`` (:mod:`rfexplain.viz.report_rows`).

Size: a detailed row costs a few kilobytes of text and about 0.6 KB of picture per feature the
reason mentions (a row of scikit-learn's breast cancer data, 30 features, 100 trees of depth 6,
is well under 30 KB); a summary-only row about 0.3 KB. ``max_sections`` (default 100) caps the
detailed rows.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rfexplain.core.errors import InvalidInstanceError, QueryArgumentError
from rfexplain.core.instances import in_model_order, mapping_rows
from rfexplain.viz.chart import relevance_chart
from rfexplain.viz.report_html import class_summary, describe_model, document, glossary, row_section, summary_table
from rfexplain.viz.report_rows import RowReport, explain_rows

__all__ = ["DEFAULT_QUERIES", "RowReport", "write_report"]

#: What a report answers per row unless told otherwise.
DEFAULT_QUERIES = ("inflated_sufficient_reason", "necessary_reason", "robustness", "shortest_flips")
_KNOWN = frozenset(DEFAULT_QUERIES + ("sufficient_reason", "general_sufficient_reasons"))


def _rows(explainer: Any, X: Any) -> list[Any]:
    """The rows to explain: for a pipeline, rows of its original columns (a DataFrame matched by
    name, or mappings of names to values); otherwise numbers in the forest's column order."""
    if getattr(explainer, "pipeline", None) is None:
        return list(explainer.forest.matrix(X))
    mappings = mapping_rows(X)
    if mappings is not None:
        return mappings
    if not hasattr(X, "iloc") or getattr(X, "ndim", 2) != 2:
        raise InvalidInstanceError(
            "a pipeline's report explains rows of its original columns: give a DataFrame or a list of dicts"
        )
    frame = in_model_order(X, explainer.forest.feature_names, by_position=False)
    return [frame.iloc[k] for k in range(len(frame))]


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
    n_jobs: int | None = 1,
    progress: bool | None = None,
    title: str = "rfexplain report",
    row_errors: Mapping[int, str] | None = None,
) -> list[RowReport]:
    """Explain every row of ``X`` and write the report to ``path``; returns the rows' reports.

    Parameters
    ----------
    explainer : Explainer
        The explainer whose engine answers.
    X : 2-D array-like, DataFrame or list of dicts
        The rows (for a pipeline, rows of its original columns).
    path : str or Path
        The HTML file written.
    queries : sequence of str
        Among ``inflated_sufficient_reason`` (the default's sufficient reason: each condition as
        wide as the decision allows), ``sufficient_reason`` (the canonical one, each feature held
        to its cell), ``general_sufficient_reasons``, ``necessary_reason`` (with the actions that
        flip the decision), ``robustness`` and ``shortest_flips``; one an engine does not answer
        is left out of its rows. The first sufficient-type query asked is the one each row's
        picture and list of conditions show.
    compare_engine : str, optional
        A second engine run on every row; the report says whether it agrees.
    indices : sequence of int, optional
        The rows' ids in the report (by default their positions in ``X``).
    max_sections : int, default 100
        Rows with a detailed section (the first ones); every row is in the summary table.
    plots : bool, default True
        Draw each detailed row's picture (inline SVG, no extra needed).
    n_jobs : int, default 1
        Rows explained at once, in joblib's worker processes (``-1``: every core); each worker
        builds the engine once. The rows' answers do not depend on it.
    progress : bool, optional
        Show a progress bar of the rows (by default on a terminal or in a notebook).
    title : str
        The page's title.
    row_errors : mapping of int to str, optional
        Rows known to be bad (position in ``X`` -> what is wrong): each is a failed row of its
        own, named by its id, and is not explained (``rfexplain report --input`` names a short
        row or a value that is not a number this way, keeping a placeholder row in ``X``). A row
        the explainer refuses (NaN, an unknown category) is a failed row named the same way.

    Returns
    -------
    list of RowReport
        One per row, in the order of ``X``; a row that failed has its ``error``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> from rfexplain import Explainer
    >>> X, y = load_iris(return_X_y=True)
    >>> model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "report.html"
    >>> rows = write_report(Explainer(model, engine="oracle"), X[:2], path, progress=False)
    >>> [r.verified for r in rows], "glossary" in path.read_text()
    ([True, True], True)
    """
    unknown = [q for q in queries if q not in _KNOWN]
    if unknown:
        raise QueryArgumentError(f"queries must be among {sorted(_KNOWN)}. Got {unknown} instead.")
    if max_sections < 0:
        raise QueryArgumentError(f"max_sections must be >= 0. Got {max_sections} instead.")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0):
        raise QueryArgumentError(f"n_jobs must be a non-zero integer (-1: every core). Got {n_jobs!r} instead.")
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
    bad = {int(k): str(v) for k, v in (row_errors or {}).items() if 0 <= int(k) < len(rows)}
    good = [k for k in range(len(rows)) if k not in bad]
    items = [(n, ids[k], rows[k], plots and k < max_sections) for n, k in enumerate(good)]
    try:
        explained = dict(
            zip(good, explain_rows(explainer, items, queries, other=other, n_jobs=n_jobs, progress=progress))
        )
    finally:
        if other is not None:
            other.close()
    reports = [
        explained[k] if k in explained else RowReport(index=i, error=f"InvalidInstanceError: row {i}: {bad[k]}")
        for k, i in enumerate(ids)
    ]
    Path(path).write_text(_page(explainer, reports, queries, compare_engine, max_sections, title), encoding="utf-8")
    return reports


def _page(
    explainer: Any,
    reports: list[RowReport],
    queries: Sequence[str],
    compare_engine: str | None,
    max_sections: int,
    title: str,
) -> str:
    esc = html.escape
    shown = reports[:max_sections]
    omitted = len(reports) - len(shown)
    engines = explainer.engine_name + (f" (compared with {compare_engine})" if compare_engine else "")
    failed = sum(1 for r in reports if r.error)
    sufficient = Counter(name for r in reports for name in r.sufficient_features)
    necessary = Counter(name for r in reports for name in r.necessary_features)
    chart = relevance_chart(dict(sufficient), dict(necessary))
    body = [
        f"<h1>{esc(title)}</h1>",
        f"<p>{len(reports)} rows of {esc(describe_model(explainer))}, explained by the {esc(engines)} engine"
        + (f"; {failed} failed" if failed else "")
        + '. The words are defined in the <a href="#glossary">glossary</a> at the end.</p>',
        "<h2>Summary per class</h2>",
        class_summary(reports),
    ]
    if chart:
        body += ["<h2>Features in the reasons</h2>", f"<figure>{chart}</figure>"]
    body += ["<h2>Summary</h2>", summary_table(reports, queries, compare_engine is not None), "<h2>Rows</h2>"]
    body += [row_section(r, open_=k == 0 or len(shown) <= 5) for k, r in enumerate(shown)]
    if omitted:
        body.append(f"<p>{omitted} more rows are in the summary only (max_sections={max_sections}).</p>")
    body += ["<h2>Glossary</h2>", glossary()]
    return document(title, body)
