"""``rfexplain demo``: the showcase on built-in data.

Trains a small random forest on iris, then explains a few test instances with every available
engine: the decision (and scikit-learn's own soft-vote prediction), sufficient and necessary
reasons as readable conditions, the shortest ones, the robustness, contrastive reasons, general
reasons and the shortest flips where the engine computes them, and whether the engines agree.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from rfexplain.core import queries
from rfexplain.core.errors import OracleTooLargeError, UnsupportedQueryError
from rfexplain.core.queries import Kind, Query

__all__ = ["run_demo"]

#: (title, query) in the order the demo shows them.
SHOWN = (
    ("sufficient reasons", queries.query("sufficient_reasons")),
    ("necessary reasons", queries.query("necessary_reasons")),
    ("shortest sufficient reasons", queries.query("shortest_sufficient_reasons")),
    ("robustness", queries.query("robustness")),
    ("contrastive reasons toward", queries.query("contrastive_reasons")),
    ("general sufficient reasons", queries.query("general_sufficient_reasons")),
    ("shortest flips (shortest general necessary reasons)", queries.query("shortest_flips")),
)


def run_demo(n_instances: int = 3, engines: Sequence[str] | None = None, write: Callable[[str], None] = print) -> int:
    """Run the demo, writing lines through ``write``; returns the exit status (1 if engines disagree)."""
    import numpy as np

    from rfexplain import datasets
    from rfexplain.engines.registry import available_engines
    from rfexplain.explainer import Explainer

    # the hard majority vote, so that every engine (the circuit engine included) answers and the
    # answers can be compared
    trained = datasets.train_forest("iris", trees=8, depth=3, seed=0, test_size=0.2, stratify=True, vote="hard")
    data, model, forest, X_test = trained.data, trained.model, trained.forest, trained.X_test
    stats = forest.statistics()
    write("rfexplain demo: iris, RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0)")
    write(
        f"forest: {stats['trees']} trees, {stats['nodes']} nodes, {stats['thresholds']} thresholds, "
        f"{stats['state_vectors']:,} state vectors"
    )
    write(f"hard majority vote agrees with sklearn's predict on the test set: {forest.agreement(X_test, model)}")
    names = list(engines) if engines else available_engines()
    explainers = {}
    for name in names:
        try:
            explainers[name] = Explainer(model, engine=name, feature_names=list(data.feature_names), vote="hard")
        except OracleTooLargeError as exc:
            write(f"engine {name}: skipped ({exc})")
    write(f"engines: {', '.join(explainers)}")
    disagreements = 0
    rows = np.linspace(0, len(X_test) - 1, num=min(n_instances, len(X_test))).astype(int)
    for row in rows:
        x = X_test[row]
        write("")
        write("instance: " + ", ".join(f"{n} = {v:g}" for n, v in zip(data.feature_names, x)))
        answers: dict[tuple[str, Any], dict[str, Any]] = {}
        for name, explainer in explainers.items():
            decision = explainer.explain(x)
            write(f"  [{name}] decision: {decision.prediction!r} (sklearn predict: {decision.sklearn_prediction!r})")
            for title, spec in SHOWN:
                targets = [c for c in forest.classes if c != decision.prediction] if spec.takes_target else [None]
                for target in targets:
                    shown = _answer(decision, spec, target)
                    if shown is None:
                        continue
                    text, key = shown
                    label = f"{title} {target!r}" if spec.takes_target else title
                    write(f"    {label}: {text}")
                    if key is not None:
                        answers.setdefault((spec.name, target), {})[name] = key
        for (query, target), by_engine in answers.items():
            values = list(by_engine.values())
            if any(v != values[0] for v in values[1:]):  # by equality: a frozenset's repr order varies
                disagreements += 1
                write(f"  ENGINES DISAGREE on {query} {target or ''}: {by_engine}")
        if len(explainers) > 1:
            write(f"  engines agree on every shared query: {'yes' if not disagreements else 'NO'}")
    for explainer in explainers.values():
        explainer.close()
    return 1 if disagreements else 0


def _answer(decision: Any, spec: Query, target: Any) -> tuple[str, Any] | None:
    """Rendered answer and a comparable key, or None when the engine does not answer ``spec``
    (a number or an enumeration of reasons)."""
    start = time.perf_counter()
    try:
        if spec.kind is Kind.NUMBER:
            value = decision.ask(spec.name)
            text = "cannot be flipped" if value == math.inf else f"{value} feature(s)"
            return f"{text}  [{_ms(start)}]", value
        result = decision.ask(spec.name, target=target, timeout=30)
        reasons = list(result)
    except UnsupportedQueryError:
        return None
    except OracleTooLargeError:
        return "(too large for the brute-force oracle)", None
    rendered = "; ".join(f"[{r}]" for r in reasons) if reasons else "none"
    suffix = "" if result.complete else f" (stopped by {result.stopped_by})"
    key = frozenset((r.kind, tuple(sorted((f, tuple(sorted(s))) for f, s in r.literals.items()))) for r in reasons)
    return f"{rendered}{suffix}  [{_ms(start)}]", key if result.complete else None


def _ms(start: float) -> str:
    return f"{(time.perf_counter() - start) * 1000:.1f} ms"
