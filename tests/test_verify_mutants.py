"""Mutation tests of :func:`rfexplain.verify`: every engine's reasons verify, every mutant fails.

Reasons come from the sat, circuit and oracle engines on small forests of iris, wine and
breast_cancer (small enough for the oracle). Each reason is mutated in every applicable way
(widened, narrowed, dropped literal with and without its witness, added literal, empty reason,
forged witness, another instance); the verifier must reject each mutant. The kill rate per engine
is printed in the assertion message.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx
from rfexplain.core.reasons import Literal, Reason, Witness

FORESTS = {
    "iris": (load_iris, 10, 3),
    "wine": (load_wine, 4, 2),
    "breast_cancer": (load_breast_cancer, 3, 2),
}
ENGINES = ("sat", "circuit", "oracle")
ROWS = (0, 60, 120)


def _replace(reason: Reason, **changes: object) -> Reason:
    return dataclasses.replace(reason, **changes)  # type: ignore[arg-type]


def _with_literal(reason: Reason, f: int, states: set[int] | None) -> Reason:
    kept = [lit for lit in reason.conditions if lit.feature != f]
    if states is not None:
        kept.append(Literal(f, frozenset(states)))
    return _replace(reason, conditions=tuple(sorted(kept)))


def mutants(reason: Reason, other_instance: tuple[float, ...]) -> Iterator[tuple[str, Reason]]:
    """Every mutant of ``reason`` (class name, mutant)."""
    assert reason.space is not None and reason.instance is not None
    space = reason.space
    for lit in reason.conditions:
        f, n_states = lit.feature, space.n_states(lit.feature)
        if len(lit.states) < n_states:
            yield "widened literal", _with_literal(reason, f, set(range(n_states)))
        # a one-state literal is narrowed by moving it to a neighbouring state
        narrowed = set(lit.states) - {min(lit.states)} if len(lit.states) > 1 else {(min(lit.states) + 1) % n_states}
        if narrowed and narrowed != set(lit.states):
            yield "narrowed literal", _with_literal(reason, f, narrowed)
        dropped = _with_literal(reason, f, None)
        yield "dropped literal with its witness", dropped
        yield (
            "dropped literal without its witness",
            _replace(dropped, witnesses=tuple(w for w in reason.witnesses if w.dropped != f)),
        )
    free = [f for f in range(len(space.feature_names)) if f not in reason.features and space.n_states(f) > 1]
    if free:
        g = free[0]
        value = np.float32(reason.instance[g])
        state = int(np.searchsorted(np.asarray(space.thresholds[g]), float(value), side="left"))
        yield "added literal", _with_literal(reason, g, {state})
    yield "empty reason", _replace(reason, conditions=(), witnesses=())
    if reason.witnesses:
        w = reason.witnesses[0]
        forged = Witness(tuple(reason.instance), w.prediction, w.dropped)
        yield "forged witness", _replace(reason, witnesses=(forged,) + reason.witnesses[1:])
    yield "another instance", _replace(reason, instance=other_instance)


def reasons_of(decision: rx.Decision, engine: str) -> Iterator[Reason]:
    yield decision.sufficient_reason()
    necessary = decision.necessary_reason()
    if necessary is not None:
        yield necessary
    for target in decision.forest.classes:
        if target != decision.prediction:
            yield from decision.contrastive_reasons(target, limit=1)
            break
    if engine == "circuit":
        yield from decision.general_sufficient_reasons(limit=1)


@pytest.mark.parametrize(
    ("engine", "vote"),
    # the circuit engine explains the hard vote only (it refuses soft-vote forests with impure leaves)
    [(engine, vote) for engine in ENGINES for vote in ("hard", "soft") if (engine, vote) != ("circuit", "soft")],
)
def test_verify_kills_every_mutant(engine: str, vote: str) -> None:
    killed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    survivors: list[str] = []
    checked = 0
    for name, (load, trees, depth) in FORESTS.items():
        X, y = load(return_X_y=True)
        model = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=0).fit(X, y)
        explainer = rx.Explainer(model, engine=engine, vote=vote)
        predicted = explainer.forest.predict_index(X)
        for row in ROWS:
            row = row % len(X)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", rx.SoftVoteWarning)
                decision = explainer.explain(X[row])
            other = X[int(np.flatnonzero(predicted != decision.prediction_index)[0])]
            for reason in reasons_of(decision, engine):
                result = rx.verify(reason, model)
                assert result.ok, (name, row, str(reason), result.problems)
                checked += 1
                for kind, mutant in mutants(reason, tuple(float(v) for v in other)):
                    total[kind] += 1
                    if rx.verify(mutant, model).ok:
                        survivors.append(f"{name} row {row} {reason.kind} {kind}: {mutant}")
                    else:
                        killed[kind] += 1
    rate = sum(killed.values()) / sum(total.values())
    summary = (
        f"{engine}: {sum(killed.values())}/{sum(total.values())} mutants killed ({rate:.0%}) of {checked} reasons; "
    )
    summary += ", ".join(f"{k} {killed[k]}/{total[k]}" for k in sorted(total))
    print(summary)
    assert checked >= 9 and set(total) >= {"widened literal", "dropped literal with its witness", "empty reason"}
    assert not survivors, summary + "\n" + "\n".join(survivors)


def test_the_report_says_what_was_proven_and_how() -> None:
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y)
    decision = rx.Explainer(model, engine="sat").explain(X[60])
    reason = decision.sufficient_reason()
    result = rx.verify(reason, model)
    names = [c.name for c in result.checks]
    assert result.ok and names.count("minimal") == len(reason) and "sufficient" in names
    assert all(c.what and c.how for c in result.checks)
    necessary = decision.necessary_reason()
    assert necessary is not None
    checks = rx.verify(necessary, model).checks
    assert {c.name for c in checks} >= {"describes", "flips", "minimal", "witness"}
    assert "scikit-learn model itself" in next(c.how for c in checks if c.name == "flips")
