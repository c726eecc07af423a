"""Checking a reason's witnesses with nothing but the model's own trees.

``verify(reason, model)`` re-classifies the explained instance and every witness the reason carries
with the scikit-learn trees themselves, under the vote the reason explains: the soft vote (the
model's own ``predict``: the trees' ``predict_proba`` summed exactly, ties to the lowest class
index, :func:`rfexplain.core.forest.soft_vote`) or the hard majority of the trees' ``predict``, so
a user who trusts nothing but scikit-learn can check an explanation:

- the explained instance is decided as the reason says;
- a necessary, contrastive or general necessary reason has a witness that differs from the
  instance only on the reason's features (outside every literal, for a general necessary reason)
  and is classified differently (as the target, for a contrastive reason);
- a sufficient reason has, for each of its features, a witness that satisfies the reason's other
  literals and is classified differently: without that feature the reason would not be sufficient.

Sufficiency itself is a universal statement no finite set of witnesses proves; the engines' mutual
agreement and the oracle tests stand behind it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rfexplain.core.forest import Forest, soft_vote
from rfexplain.core.reasons import Reason
from rfexplain.core.sklearn_import import final_estimator

__all__ = ["verify", "Verification", "model_vote"]


@dataclass(frozen=True)
class Verification:
    """The outcome of :func:`verify`: ``ok`` and, if not, what failed."""

    ok: bool
    problems: tuple[str, ...]
    witnesses_checked: int

    def __bool__(self) -> bool:
        return self.ok


def model_vote(model: Any, X: np.ndarray, vote: str = "auto") -> np.ndarray:
    """Class indices decided by the model's own trees under ``vote``: ``"auto"`` is the model's
    own ``predict`` (soft for forests; a Forest's own mode), ``"soft"`` the exact sum of the
    trees' ``predict_proba``, ``"hard"`` their majority (ties to the lowest index)."""
    X32 = np.asarray(X, dtype=np.float32)
    if isinstance(model, Forest):
        return (model if vote in ("auto", model.vote) else model.with_vote(vote)).predict_index(X32)
    estimator = final_estimator(model)
    classes = list(np.asarray(estimator.classes_).tolist())
    trees = getattr(estimator, "estimators_", None)
    if vote == "soft" or (vote == "auto" and trees is not None):
        return soft_vote([np.asarray(t.predict_proba(X32), dtype=np.float64) for t in (trees or [estimator])])
    if hasattr(estimator, "estimators_"):
        votes = np.stack([np.asarray(t.predict(X32)).astype(np.int64) for t in estimator.estimators_], axis=1)
    else:
        labels = np.asarray(estimator.predict(X32)).tolist()
        votes = np.asarray([[classes.index(label)] for label in labels], dtype=np.int64)
    counts = np.stack([(votes == c).sum(axis=1) for c in range(len(classes))], axis=1)
    # the tie rule of rfexplain.core.forest.winning_class, repeated on purpose: verification
    # stays independent of the code it checks
    return np.argmax(counts, axis=1)


def _states(reason: Reason, values: tuple[float, ...]) -> list[int]:
    assert reason.space is not None
    return [
        int(np.searchsorted(np.asarray(ts, dtype=np.float64), float(np.float32(v)), side="left"))
        for ts, v in zip(reason.space.thresholds, values)
    ]


def verify(reason: Reason, model: Any, vote: str | None = None) -> Verification:
    """Check every witness of ``reason`` against ``model`` (a scikit-learn model or a Forest)
    under ``vote`` (default: the vote mode of the forest the reason was computed on)."""
    problems: list[str] = []
    if reason.instance is None or reason.decision is None or reason.space is None:
        return Verification(False, ("the reason carries no instance, decision or feature space",), 0)
    instance = reason.instance
    rows = [instance] + [w.values for w in reason.witnesses]
    predictions = model_vote(model, np.asarray(rows, dtype=np.float64), vote or reason.space.vote)
    if predictions[0] != reason.decision:
        problems.append(f"the model decides the instance as class {predictions[0]}, not {reason.decision}")
    inst32 = np.asarray(instance, dtype=np.float32)
    literals = reason.literals
    for k, (witness, predicted) in enumerate(zip(reason.witnesses, predictions[1:]), start=1):
        w32 = np.asarray(witness.values, dtype=np.float32)
        if len(w32) != len(inst32):
            problems.append(f"witness {k} has {len(w32)} values for {len(inst32)} features")
            continue
        if predicted != witness.prediction:
            problems.append(f"witness {k} is classified {predicted}, not {witness.prediction} as it claims")
        if reason.kind == "contrastive" and predicted != reason.target:
            problems.append(f"witness {k} is classified {predicted}, not the target {reason.target}")
        if predicted == reason.decision:
            problems.append(f"witness {k} is classified as the explained decision {reason.decision}")
        states = _states(reason, witness.values)
        if reason.is_conjunction:
            if witness.dropped not in literals:
                problems.append(f"witness {k} drops feature {witness.dropped}, which is not in the reason")
                continue
            broken = [f for f, s in literals.items() if f != witness.dropped and states[f] not in s]
            if broken:
                problems.append(f"witness {k} violates the reason's literals on features {broken}")
        else:
            moved = set(np.flatnonzero(w32 != inst32).tolist())
            if not moved <= reason.features:
                problems.append(f"witness {k} changes features {sorted(moved - reason.features)} outside the reason")
            if reason.kind == "general_necessary":
                inside = [f for f, s in literals.items() if states[f] in s]
                if inside:
                    problems.append(f"witness {k} does not violate the literals on features {inside}")
    if reason.is_conjunction:
        covered = {w.dropped for w in reason.witnesses}
        missing = sorted(reason.features - covered)
        if missing:
            problems.append(f"no witness shows that features {missing} are needed")
    elif not reason.witnesses:
        problems.append("a necessary reason needs a witness instance that flips the decision")
    return Verification(not problems, tuple(problems), len(reason.witnesses))
