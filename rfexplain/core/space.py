"""The feature space of a forest's reasons (:class:`FeatureSpace`): names, thresholds, classes,
categories and bounds, what turns states back into conditions on raw values
(:mod:`rfexplain.core.forest`, :mod:`rfexplain.core.reasons`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfexplain.core.floats import float32_text, largest_float32_at_most, significant_digits
from rfexplain.core.set_splits import OTHER

__all__ = ["FeatureSpace", "has_missing_state"]


@dataclass(frozen=True)
class FeatureSpace:
    """What is needed to turn states back into conditions on raw values: names and thresholds.

    ``categories`` is empty for a forest over numbers only; otherwise it has one entry per
    feature: ``None`` for a numeric feature, else the labels of a categorical feature's states
    (state ``s`` is the category ``categories[f][s]``; see :mod:`rfexplain.pipelines`).
    """

    feature_names: tuple[str, ...]
    thresholds: tuple[tuple[float, ...], ...]
    classes: tuple[Any, ...]
    categories: tuple[tuple[str, ...] | None, ...] = ()
    bounds: tuple[tuple[float, float] | None, ...] = ()
    #: The vote mode of the forest the space belongs to (reasons remember the decision they explain).
    vote: str = "hard"

    def domain_note(self) -> str:
        """``""``, or the domain constraints a reason is relative to (``age in [0, 120]``).

        Exact on float32 inputs, as reasons are (:func:`rfexplain.core.reasons.describe_states`):
        each bound is the float32 number it allows, printed shortest, or the float32 number next
        to it with an open bracket where that is shorter (``(23.5, 27]`` rather than
        ``[23.500002, 27]``)."""

        def low(lo: float) -> tuple[str, float]:  # float32(x) >= lo: "[m" or "(m-"
            m = np.float32(lo)
            if float(m) < lo:
                m = np.nextafter(m, np.float32(np.inf))
            below = np.nextafter(m, np.float32(-np.inf))
            return ("(", float(below)) if significant_digits(below) < significant_digits(m) else ("[", float(m))

        def high(hi: float) -> tuple[str, float]:  # float32(x) <= hi: "m]" or "m+)"
            m = np.float32(largest_float32_at_most(hi))
            above = np.nextafter(m, np.float32(np.inf))
            return (")", float(above)) if significant_digits(above) < significant_digits(m) else ("]", float(m))

        bounded = [(name, low(b[0]), high(b[1])) for name, b in zip(self.feature_names, self.bounds) if b is not None]
        return ", ".join(
            f"{name} in {lo[0]}{float32_text(lo[1])}, {float32_text(hi[1])}{hi[0]}" for name, lo, hi in bounded
        )

    def category_labels(self, feature: int) -> tuple[str, ...] | None:
        """The state labels of a categorical feature, ``None`` for a numeric one."""
        return self.categories[feature] if self.categories else None

    def category_state(self, feature: int, value: float) -> int:
        """The state of a categorical feature's raw value: its code; NaN is the missing state (the
        last) where the feature may be missing; a code beyond its categories, or not an integer,
        is the ``"(other)"`` state where the feature has one (a model's unknown category,
        :mod:`rfexplain.core.set_splits`)."""
        labels = self.category_labels(feature) or ()
        missing = self.accepts_missing(feature)
        if math.isnan(value) and missing:
            return self.n_states(feature) - 1
        known = len(labels) - (1 if missing else 0)
        if OTHER in labels and (math.isnan(value) or not 0 <= value < known or value != round(value)):
            return labels.index(OTHER)
        return int(round(value))

    def n_states(self, feature: int) -> int:
        return len(self.thresholds[feature]) + 1

    def accepts_missing(self, feature: int) -> bool:
        """Whether ``feature`` may be missing (NaN): its last state, above a threshold ``+inf``."""
        return has_missing_state(self.thresholds[feature])


def has_missing_state(thresholds: Sequence[float]) -> bool:
    """Whether a feature of these thresholds may be missing: its last threshold is ``+inf``."""
    return bool(thresholds) and thresholds[-1] == math.inf
