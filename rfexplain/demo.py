"""``rfexplain demo``: the showcase on built-in data.

Trains a small random forest on iris, then explains a few test instances with every available
engine: the decision (and scikit-learn's own soft-vote prediction), sufficient and necessary
reasons as readable conditions, the shortest ones, the robustness, contrastive reasons, general
reasons and the shortest flips where the engine computes them, and whether the engines agree.

Only complete answers are compared: per instance the demo lists the queries it compared (and
between which engines), then every answer it did not compare and why (an enumeration stopped by
its timeout, a query too large for the oracle, the only complete answer to a query), and says
"agree" over the answers compared alone, counting the incomplete ones left out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rfexplain.core import queries
from rfexplain.core.budget import BudgetExpired
from rfexplain.core.errors import OracleTooLargeError, UnsupportedQueryError
from rfexplain.core.queries import Kind, Query

__all__ = ["run_demo"]

#: Seconds each enumeration may run; one stopped by it is shown, and not compared.
ENUMERATION_TIMEOUT = 30.0

#: (title, query) in the order the demo shows them.
SHOWN = (
    ("sufficient reasons", queries.query("sufficient_reasons")),
    ("inflated sufficient reason", queries.query("inflated_sufficient_reason")),
    ("necessary reasons", queries.query("necessary_reasons")),
    ("shortest sufficient reasons", queries.query("shortest_sufficient_reasons")),
    ("robustness", queries.query("robustness")),
    ("contrastive reasons toward", queries.query("contrastive_reasons")),
    ("general sufficient reasons", queries.query("general_sufficient_reasons")),
    ("shortest flips (shortest general necessary reasons)", queries.query("shortest_flips")),
)


@dataclass(frozen=True)
class _Outcome:
    """One engine's answer to one query as the comparison sees it: a comparable ``key`` when it
    is complete, else ``why`` it cannot be compared (``stopped_by`` for an incomplete one)."""

    key: Any = None
    why: str | None = None
    stopped_by: str | None = None


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
        answers: dict[str, dict[str, _Outcome]] = {}  # query (and target) -> engine -> its answer
        for name, explainer in explainers.items():
            decision = explainer.explain(x)
            write(f"  [{name}] decision: {decision.prediction!r} (sklearn predict: {decision.sklearn_prediction!r})")
            for title, spec in SHOWN:
                targets = [c for c in forest.classes if c != decision.prediction] if spec.takes_target else [None]
                for target in targets:
                    shown = _answer(decision, spec, target)
                    if shown is None:
                        continue
                    text, outcome = shown
                    label = f"{title} {target!r}" if spec.takes_target else title
                    write(f"    {label}: {text}")
                    short = f"{title.split(' (')[0]} {target!r}" if spec.takes_target else title.split(" (")[0]
                    answers.setdefault(short, {})[name] = outcome
        if len(explainers) > 1:
            disagreements += _compare(answers, write)
    for explainer in explainers.values():
        explainer.close()
    return 1 if disagreements else 0


def _compare(answers: Mapping[str, Mapping[str, _Outcome]], write: Callable[[str], None]) -> int:
    """Compare the engines' complete answers to each query of one instance and write what was
    compared, what was not and why, and the verdict over the answers compared; returns the
    number of queries on which they disagree."""
    compared: dict[tuple[str, ...], list[str]] = {}  # engines -> the queries they all answered
    not_compared: list[str] = []
    incomplete: list[str] = []
    n_compared = disagreements = 0
    for label, by_engine in answers.items():
        complete = {engine: outcome.key for engine, outcome in by_engine.items() if outcome.why is None}
        for engine, outcome in by_engine.items():
            if outcome.why is not None:
                not_compared.append(f"{engine} {label} ({outcome.why})")
            if outcome.stopped_by is not None:
                incomplete.append(f"{engine} {label} stopped by {outcome.stopped_by}")
        if len(complete) < 2:
            not_compared.extend(f"{engine} {label} (no other complete answer)" for engine in complete)
            continue
        n_compared += len(complete)
        compared.setdefault(tuple(complete), []).append(label)
        keys = list(complete.values())
        if any(key != keys[0] for key in keys[1:]):  # by equality: a frozenset's repr order varies
            disagreements += 1
            write(f"  ENGINES DISAGREE on {label}: {complete}")
    for engines, labels in compared.items():
        write(f"  compared ({', '.join(engines)}): {', '.join(labels)}")
    if not_compared:
        write(f"  not compared: {', '.join(not_compared)}")
    left_out = ""
    if incomplete:
        plural = "s" if len(incomplete) > 1 else ""
        left_out = f" ({len(incomplete)} incomplete answer{plural} not compared: {', '.join(incomplete)})"
    if not n_compared:
        write(f"  engines: no answers compared{left_out}")
    elif disagreements:
        write(f"  engines DISAGREE on {disagreements} of the queries compared ({n_compared} answers){left_out}")
    else:
        write(f"  engines agree on the {n_compared} answers compared{left_out}")
    return disagreements


def _answer(decision: Any, spec: Query, target: Any) -> tuple[str, _Outcome] | None:
    """Rendered answer and how it is compared, or None when the engine does not answer ``spec``
    (a number or an enumeration of reasons)."""
    start = time.perf_counter()
    try:
        if spec.kind is Kind.NUMBER:
            value = decision.ask(spec.name)
            text = "cannot be flipped" if value == math.inf else f"{value} feature(s)"
            return f"{text}  [{_ms(start)}]", _Outcome(key=value)
        if spec.kind is Kind.REASON:
            reason = decision.ask(spec.name, timeout=ENUMERATION_TIMEOUT)
            return f"{_shown(reason)}  [{_ms(start)}]", _Outcome(key=_key(reason))
        result = decision.ask(spec.name, target=target, timeout=ENUMERATION_TIMEOUT)
        reasons = list(result)
    except UnsupportedQueryError:
        return None
    except OracleTooLargeError:
        return "(too large for the brute-force oracle)", _Outcome(why="too large for the brute-force oracle")
    except BudgetExpired:
        return "(stopped by timeout)", _Outcome(why="incomplete: stopped by timeout", stopped_by="timeout")
    rendered = "; ".join(_shown(r) for r in reasons) if reasons else "none"
    if not result.complete:
        outcome = _Outcome(why=f"incomplete: stopped by {result.stopped_by}", stopped_by=result.stopped_by)
        return f"{rendered} (stopped by {result.stopped_by})  [{_ms(start)}]", outcome
    return f"{rendered}  [{_ms(start)}]", _Outcome(key=frozenset(_key(r) for r in reasons))


def _key(reason: Any) -> Any:
    """A reason as a comparable value: its kind and literals."""
    return reason.kind, tuple(sorted((f, tuple(sorted(s))) for f, s in reason.literals.items()))


def _shown(reason: Any) -> str:
    """``[reason]``, with the change that flips the decision for a necessary or contrastive one."""
    actions = reason.actions()
    return f"[{reason}]" + (f" ({actions})" if actions else "")


def _ms(start: float) -> str:
    return f"{(time.perf_counter() - start) * 1000:.1f} ms"
