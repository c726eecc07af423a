"""Checks shared by the boosted readers' tests: the SAT engine against the oracle with every
reason verified by the library's own ``predict``, and the float64 inputs at a threshold that may
disagree (the documented rounding of HistGradientBoosting's and LightGBM's thresholds)."""

from __future__ import annotations

from typing import Any

import numpy as np

import rfexplain as rx
from rfexplain import Budget, Forest
from rfexplain.core.instances import model_input
from rfexplain.engines.base import Instance
from rfexplain.oracle import Oracle
from rfexplain.sat.engine import SatEngine


def reason_keys(reasons: Any) -> set[Any]:
    """Reasons as comparable values: kind, literals, target."""
    return {(r.kind, tuple(sorted((f, tuple(sorted(s))) for f, s in r.literals.items())), r.target) for r in reasons}


def check_sat_equals_oracle(model: Any, seed: int, instances: int = 4, missing: Any = "learned") -> Forest:
    """On ``instances`` random state vectors of ``model``'s forest (read with ``missing``): the
    decision is the model's ``predict``; every AXp and CXp and the robustness equal the oracle's;
    every reason verifies against the model. Returns the forest."""
    forest = Forest.from_sklearn(model, missing=missing)
    oracle = Oracle(forest)
    grid = np.asarray(oracle.grid)
    with SatEngine(forest) as engine:
        for k in np.random.default_rng(seed).choice(len(grid), size=instances, replace=False):
            instance = Instance.from_states(forest, grid[k])
            assert (
                forest.classes[instance.prediction]
                == model.predict(model_input(model, np.asarray([instance.values])))[0]
            )
            axps = list(engine.sufficient_reasons(instance, Budget()))
            cxps = list(engine.necessary_reasons(instance, Budget()))
            assert reason_keys(axps) == reason_keys(oracle.sufficient_reasons(instance))
            assert reason_keys(cxps) == reason_keys(oracle.necessary_reasons(instance))
            assert engine.robustness(instance) == oracle.robustness(instance)
            for reason in [*axps, *cxps]:
                result = rx.verify(reason, model)
                assert result.ok, (str(reason), result.problems)
    return forest


def threshold_rows(X: np.ndarray, splits: Any) -> tuple[np.ndarray, list[bool]]:
    """For every ``(feature, threshold)`` of ``splits``: rows of ``X`` with that feature set to
    the threshold, its float64 neighbours and its float32 rounding with that one's neighbours,
    and per row whether it is a documented disagreement (strictly above the threshold, rounding
    to its float32 number)."""
    rows: list[np.ndarray] = []
    documented: list[bool] = []
    for feature, t in splits:
        t32 = np.float32(t)
        near32 = [np.nextafter(t32, np.float32(-np.inf)), t32, np.nextafter(t32, np.float32(np.inf))]
        for v in [t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), *map(float, near32)]:
            row = X[len(rows) % len(X)].copy()
            row[feature] = v
            rows.append(row)
            documented.append(bool(v > t and np.float32(v) == t32))
    return np.asarray(rows), documented


def check_only_documented_differ(forest: Forest, model: Any, X: np.ndarray, splits: Any) -> None:
    """The forest decides every threshold row (:func:`threshold_rows`, given to the model as
    float64 numbers) as the model does, but for documented disagreements."""
    rows64, documented = threshold_rows(X, splits)
    differ = np.flatnonzero(forest.predict(rows64) != model.predict(rows64))
    assert set(differ.tolist()) <= set(np.flatnonzero(documented).tolist())
