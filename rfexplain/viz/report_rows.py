"""The HTML report's work on each row: what it says about one row (:class:`RowReport`), and the
rows explained one after the other or in worker processes (:func:`explain_rows`).

A row is explained as a person reads it: the instance's values, the decision with its
probability (or vote share) and margin (:mod:`rfexplain.viz.scores`), the sufficient reason
(inflated by default), the actions that flip the decision (the necessary reason's and each
shortest flip's :attr:`~rfexplain.core.reasons.Reason.changes`), the robustness, whether
:func:`~rfexplain.verify.verify` proves every reason with scikit-learn's own trees, and the
picture (:func:`~rfexplain.viz.chart.reason_chart`).

With ``n_jobs`` other than 1 the rows go to :mod:`joblib`'s workers (processes by default) in
chunks; the explainer travels pickled (its engine is built again in each worker, once per
report: :meth:`rfexplain.Explainer.__setstate__`), and every row's answers are the same as in
one process, the queries being canonical.
"""

from __future__ import annotations

import logging
import math
import pickle
import threading
import time
import uuid
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from rfexplain.core.errors import InvalidInstanceError, UnsupportedQuery
from rfexplain.core.reasons import Reason
from rfexplain.core.records import row_error
from rfexplain.progress import Progress
from rfexplain.verify import verify
from rfexplain.viz.chart import reason_chart, value_text
from rfexplain.viz.scores import VoteShare, vote_share
from rfexplain.viz.shown import EXTRA_SECONDS

__all__ = ["SUFFICIENT_QUERIES", "RowReport", "explain_rows"]

log = logging.getLogger(__name__)

#: The report's sufficient-type queries, the first asked being the row's picture and list of conditions.
SUFFICIENT_QUERIES = ("inflated_sufficient_reason", "sufficient_reason", "general_sufficient_reasons")
#: Shortest flips a row shows at most.
FLIPS_SHOWN = 3


@dataclass
class RowReport:
    """What the report says about one row."""

    index: int
    prediction: Any = None
    sklearn_prediction: Any = None
    #: Each class's probability (or vote share) and the margin of the decision.
    share: VoteShare | None = None
    #: The same in words: ``probability 0.93 (margin 0.86 over 'benign')``.
    share_text: str = ""
    #: The instance: (feature name, value as text), every feature in the forest's order.
    values: list[tuple[str, str]] = field(default_factory=list)
    #: Per query asked, each reason's text.
    reasons: dict[str, list[str]] = field(default_factory=dict)
    #: Per query asked, each reason's actions (``"to get 'b': raise x above 2"``; ``""`` for none).
    actions: dict[str, list[str]] = field(default_factory=dict)
    #: The first sufficient-type reason's conditions, one text per feature.
    conditions: list[str] = field(default_factory=list)
    #: The features (names) of the first sufficient-type reason and of the necessary reason.
    sufficient_features: list[str] = field(default_factory=list)
    necessary_features: list[str] = field(default_factory=list)
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
        return list(decision.shortest_flips(limit=FLIPS_SHOWN, timeout=EXTRA_SECONDS))
    if query == "general_sufficient_reasons":
        return list(decision.general_sufficient_reasons(limit=1, timeout=EXTRA_SECONDS))
    return getattr(decision, query)()


def _record(out: RowReport, query: str, reasons: list[Reason]) -> None:
    space = reasons[0].space if reasons else None
    names = space.feature_names if space is not None else None
    out.reasons[query] = [str(r) for r in reasons]
    out.actions[query] = [r.actions() for r in reasons]
    out.sizes[query] = len(reasons[0]) if reasons else None
    features = [names[f] if names is not None else f"x{f}" for f in sorted(reasons[0].features)] if reasons else []
    if query in SUFFICIENT_QUERIES and reasons and not out.conditions:
        digits = max((lit.digits(space) for lit in reasons[0].conditions), default=0)
        out.conditions = [lit.describe(space, digits) for lit in reasons[0].conditions]
        out.sufficient_features = features
    if query == "necessary_reason":
        out.necessary_features = features


def explain_row(
    explainer: Any, index: int, row: Any, queries: Sequence[str], other: Any = None, plot: bool = True
) -> RowReport:
    """Explain one row (in this process): every query of ``queries`` an engine answers, each
    reason verified, and with ``other`` (a second explainer) whether it agrees. A failure is
    the row's ``error``, never the report's."""
    out = RowReport(index=index)
    started = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            decision = explainer.explain(row)
        decision.progress = False  # the report draws its own bar
        out.warnings = [str(w.message) for w in caught]
        out.prediction, out.sklearn_prediction = decision.prediction, decision.sklearn_prediction
        forest = explainer.forest
        out.share = vote_share(forest, decision.values)
        out.share_text = out.share.describe(forest.classes)
        out.values = [(forest.feature_names[f], value_text(forest.space, f, v)) for f, v in enumerate(decision.values)]
        # a pipeline's reasons are checked on the forest read over its original columns
        model = explainer.forest if explainer.model is None or explainer.pipeline is not None else explainer.model
        checks: list[Reason] = []
        shown: Reason | None = None
        flips: list[Reason] = []
        for query in queries:
            try:
                value = _answer(decision, query)
            except UnsupportedQuery:
                continue
            if query == "robustness":
                out.robustness = float(value)
                continue
            reasons = value if isinstance(value, list) else ([] if value is None else [value])
            _record(out, query, reasons)
            if query in SUFFICIENT_QUERIES and reasons and shown is None:
                shown = reasons[0]
            if query in ("necessary_reason", "shortest_flips"):
                flips.extend(reasons)
            checks.extend(r for r in reasons if query != "shortest_flips")
        results = [verify(r, model) for r in checks]
        out.verified = all(results) if results else None
        out.problems = [p for v in results for p in v.problems]
        out.time = time.perf_counter() - started
        if other is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the first engine's decision already recorded it
                out.agreement = _agreement(decision, other.explain(decision.values))
        if plot:
            flip = next((r for r in flips if r.changes), None)
            out.svg = reason_chart(
                shown,
                flip.changes if flip is not None else (),
                values=decision.values,
                space=forest.space,
                lead_to=flip.changes_lead_to if flip is not None else None,
            )
    except Exception as exc:  # one failing row is reported on its own line, the others go on
        log.debug("report row %s failed", index, exc_info=True)
        out.error = (
            row_error(exc, f"row {index}") if isinstance(exc, InvalidInstanceError) else f"{type(exc).__name__}: {exc}"
        )
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


#: One row to explain: ``(position, index, row, draw its picture)``.
Item = tuple[int, int, Any, bool]

#: Per worker thread, the explainers it unpickled for the report running now: token -> (explainer, other).
_WORKER = threading.local()


def _worker_explainers(token: str, payload: bytes) -> tuple[Any, Any]:
    """The report's explainers in this worker (process or thread: engines are not shared between
    threads), unpickled, their engines built, once per report; those of an earlier report are closed."""
    cache: dict[str, tuple[Any, Any]] = getattr(_WORKER, "cache", None) or {}
    if token not in cache:
        for old in cache.values():
            for explainer in old:
                if explainer is not None:
                    explainer.close()
        cache = {token: pickle.loads(payload)}
        _WORKER.cache = cache
    return cache[token]


def _run_chunk(token: str, payload: bytes, items: list[Item], queries: Sequence[str]) -> list[tuple[int, RowReport]]:
    """A worker's task: explain the rows of one chunk."""
    explainer, other = _worker_explainers(token, payload)
    return [(pos, explain_row(explainer, index, row, queries, other, plot)) for pos, index, row, plot in items]


def _chunks(items: list[Item], n_jobs: int) -> list[list[Item]]:
    """About four chunks per worker, so that a slow row does not hold up the others' results."""
    size = max(1, math.ceil(len(items) / (4 * max(n_jobs, 1))))
    return [items[k : k + size] for k in range(0, len(items), size)]


def explain_rows(
    explainer: Any,
    items: list[Item],
    queries: Sequence[str],
    *,
    other: Any = None,
    n_jobs: int | None = 1,
    progress: bool | None = None,
) -> list[RowReport]:
    """Every row's :class:`RowReport`, in the order of ``items``: in this process with
    ``n_jobs`` 1 (or ``None``), else in :mod:`joblib`'s workers (``-1``: every core), with a
    progress bar (``progress``: ``None`` shows it on a terminal or in a notebook)."""
    out: list[RowReport | None] = [None] * len(items)
    with Progress(len(items), f"report ({explainer.engine_name})", enabled=progress) as bar:
        for pos, report in _results(explainer, items, queries, other, n_jobs):
            out[pos] = report
            bar.update(failed=int(report.error is not None))
    return [r for r in out if r is not None]


def _results(
    explainer: Any, items: list[Item], queries: Sequence[str], other: Any, n_jobs: int | None
) -> Iterator[tuple[int, RowReport]]:
    if n_jobs in (None, 1) or len(items) <= 1:
        for pos, index, row, plot in items:
            yield pos, explain_row(explainer, index, row, queries, other, plot)
        return
    from joblib import Parallel, cpu_count, delayed

    workers = max(1, cpu_count() + 1 + n_jobs) if n_jobs < 0 else n_jobs
    payload = pickle.dumps((explainer, other))
    token = uuid.uuid4().hex
    tasks = (delayed(_run_chunk)(token, payload, chunk, tuple(queries)) for chunk in _chunks(items, workers))
    for chunk in Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks):
        yield from chunk
