"""Explanation values: :class:`Literal`, :class:`Reason` and :class:`Witness` (docs/design.md, section 2).

A literal ``x in S`` constrains one feature to a set of its states. A *sufficient* reason (and a
general sufficient reason) is a conjunction of literals: any input satisfying all of them gets the
decision. A *necessary* reason (a prime implicate; also a contrastive or general necessary reason)
is a disjunction of literals: the decision holds only while at least one of them does, and
changing all its features (appropriately) flips the decision. Reasons are values: hashable,
comparable and printable, with equality on kind, target and literals only.

Example
-------
>>> from rfexplain.core.forest import FeatureSpace
>>> space = FeatureSpace(("petal width (cm)",), ((0.75, 1.75),), ("setosa", "versicolor"))
>>> str(Reason.of("sufficient", {0: {0}}, space=space))
'petal width (cm) <= 0.75'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rfexplain.core.display import render
from rfexplain.core.floats import (
    cell_decimal,
    float32_number,
    float32_text,
    largest_float32_at_most,
    significant_digits,
)
from rfexplain.core.forest import FeatureSpace
from rfexplain.core.pyvalues import to_python

__all__ = [
    "Literal",
    "Reason",
    "Witness",
    "Change",
    "REASON_KINDS",
    "format_threshold",
    "describe_states",
    "describe_values",
    "printed_bounds",
]

CONJUNCTIVE_KINDS = ("sufficient", "general_sufficient")
DISJUNCTIVE_KINDS = ("necessary", "contrastive", "general_necessary")
REASON_KINDS = CONJUNCTIVE_KINDS + DISJUNCTIVE_KINDS


@dataclass(frozen=True, order=True)
class Literal:
    """``feature in states``: a condition on one discretised feature."""

    feature: int
    states: frozenset[int]

    def __post_init__(self) -> None:
        if not self.states:
            raise ValueError(f"literal on feature {self.feature} has no state")

    def describe(self, space: FeatureSpace | None, digits: int | None = None) -> str:
        """The condition on raw values, with the feature's name (``2.45 < petal length <= 4.75``);
        ``digits``: the significant digits of its numbers (see :func:`describe_states`)."""
        if space is None:
            return f"x{self.feature} in {{{', '.join(map(str, sorted(self.states)))}}}"
        labels = space.category_labels(self.feature)
        if labels is not None:
            return f"{space.feature_names[self.feature]} in {{{', '.join(labels[s] for s in sorted(self.states))}}}"
        return describe_states(space.feature_names[self.feature], self.states, space.thresholds[self.feature], digits)

    def digits(self, space: FeatureSpace | None) -> int:
        """The significant digits its bounds need to print exactly (0 for a categorical one)."""
        if space is None or space.category_labels(self.feature) is not None:
            return 0
        return _needed_digits(self.states, space.thresholds[self.feature])

    def to_dict(self, space: FeatureSpace | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"feature": self.feature, "states": sorted(self.states)}
        if space is not None:
            out["name"] = space.feature_names[self.feature]
            out["condition"] = self.describe(space)
            labels = space.category_labels(self.feature)
            if labels is not None:
                out["categories"] = [labels[s] for s in sorted(self.states)]
                return out
            numbers, thresholds, missing = _split_missing(self.states, space.thresholds[self.feature])
            out["intervals"] = [[_json_bound(lo), _json_bound(hi)] for lo, hi in _intervals(numbers, thresholds)]
            if space.accepts_missing(self.feature):
                out["missing"] = missing
        return out


@dataclass(frozen=True)
class Witness:
    """An instance that proves part of a reason using nothing but the classifier.

    For a necessary or contrastive reason: an instance differing from the explained one only on
    the reason's features and classified ``prediction`` (not the explained class, or the target).
    For a sufficient reason: ``dropped`` is a feature of the reason, and the instance agrees with
    the explained one on the reason's other features but is classified differently, which shows
    the reason would not be sufficient without ``dropped``.
    """

    values: tuple[float, ...]
    prediction: int
    dropped: int | None = None

    def to_dict(self, space: FeatureSpace | None = None) -> dict[str, Any]:
        """A JSON-ready description: each value as the shortest decimal that reads back as its
        float32 number (what ``predict`` sees, :func:`~rfexplain.core.floats.float32_number`),
        on the side of it that stays inside the feature's cell when ``space`` is given (so the
        decimal is a witness too for code that reads it as a float64, such as a pipeline's
        scaler)."""
        values: list[float | str]
        if space is None:
            values = [float32_number(v) for v in self.values]
        else:
            values = [_json_value(v, space, f) for f, v in enumerate(self.values)]
        return {"values": values, "prediction_index": self.prediction, "dropped": self.dropped}


@dataclass(frozen=True)
class Change:
    """One feature's move in a flip (a necessary, contrastive or general necessary reason read as
    an action): from the instance's value into the cell its witness lies in, the states
    ``states`` between two consecutive thresholds (or one category). Every input in that cell
    takes the same path through every tree (a split tests ``x <= t`` only at thresholds), so
    moving each changed feature *anywhere* into its cell gives the witness's class.
    """

    feature: int
    #: The instance's state of the feature, and the state moved into.
    before: int
    after: int
    space: FeatureSpace | None = field(default=None, compare=False, repr=False)
    #: The instance's raw value of the feature.
    value: float | None = field(default=None, compare=False)

    @property
    def direction(self) -> str:
        """``"raise"`` or ``"lower"`` a numeric feature, ``"set"`` a categorical one."""
        if self.space is not None and self.space.category_labels(self.feature) is not None:
            return "set"
        return "raise" if self.after > self.before else "lower"

    @property
    def interval(self) -> tuple[float, float] | None:
        """The cell moved into as raw values ``(low, high]`` (numeric features with a space)."""
        if self.space is None or self.space.category_labels(self.feature) is not None:
            return None
        return _intervals([self.after], self.space.thresholds[self.feature])[0]

    def describe(self) -> str:
        """The action in words: ``raise income above 27550``, ``lower age to 30.5 or less
        (above 25.5)``, ``set employment to salaried``; its bounds exact and of even precision
        (as :func:`describe_states` prints them)."""
        if self.space is None:
            return f"move x{self.feature} from state {self.before} to state {self.after}"
        name = self.space.feature_names[self.feature]
        labels = self.space.category_labels(self.feature)
        if labels is not None:
            return f"set {name} to {labels[self.after]}"
        thresholds = self.space.thresholds[self.feature]
        if self.space.accepts_missing(self.feature) and len(thresholds) in (self.before, self.after):
            if self.after == len(thresholds):
                return f"leave {name} missing"
            return f"set {name} to a number in {describe_values([self.after], self.space, self.feature)}"
        low, high = _intervals([self.after], thresholds)[0]
        digits = _needed_digits([self.after], thresholds)
        if self.after > self.before:
            lop, ltext = _lower_bound(low, digits)
            text = f"raise {name} " + (f"above {ltext}" if lop == ">" else f"to {ltext} or more")
            if not math.isinf(high):
                hop, htext = _upper_bound(high, digits)
                text += f" ({'at most' if hop == '<=' else 'below'} {htext})"
            return text
        hop, htext = _upper_bound(high, digits)
        text = f"lower {name} " + (f"to {htext} or less" if hop == "<=" else f"below {htext}")
        if not math.isinf(low):
            lop, ltext = _lower_bound(low, digits)
            text += f" ({'above' if lop == '>' else 'at least'} {ltext})"
        return text

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"feature": self.feature, "from_state": self.before, "to_state": self.after}
        if self.space is not None:
            out["name"] = self.space.feature_names[self.feature]
            out["direction"] = self.direction
            out["action"] = self.describe()
            labels = self.space.category_labels(self.feature)
            if labels is not None:
                out["from"] = labels[self.before]
                out["to_categories"] = [labels[self.after]]
            else:
                out["from"] = None if self.value is None else _json_value(self.value, self.space, self.feature)
                numbers, thresholds, missing = _split_missing([self.after], self.space.thresholds[self.feature])
                if missing:
                    out["to_missing"] = True
                else:
                    low, high = _intervals(numbers, thresholds)[0]
                    out["to_interval"] = [_json_bound(low), _json_bound(high)]
        return out


@dataclass(frozen=True)
class Reason:
    """A sufficient, necessary, contrastive or general reason for one decision.

    Equality and hashing use ``kind``, ``target`` and ``conditions`` only; the feature space,
    the explained instance and the witnesses ride along for rendering and verification.
    """

    kind: str
    conditions: tuple[Literal, ...]
    target: int | None = None
    space: FeatureSpace | None = field(default=None, compare=False, repr=False)
    instance: tuple[float, ...] | None = field(default=None, compare=False, repr=False)
    decision: int | None = field(default=None, compare=False, repr=False)
    witnesses: tuple[Witness, ...] = field(default=(), compare=False, repr=False)
    #: A sufficient reason whose literals were widened as far as the decision allows
    #: (:meth:`~rfexplain.decision.Decision.inflated_sufficient_reason`): each numeric literal is
    #: an interval of several cells, each categorical one the largest set of categories; the
    #: witnesses then show that no bound can move one state further.
    inflated: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in REASON_KINDS:
            raise ValueError(f"kind must be one of {list(REASON_KINDS)}. Got {self.kind!r} instead.")
        features = [lit.feature for lit in self.conditions]
        if len(set(features)) != len(features):
            raise ValueError("a reason has at most one literal per feature")
        if list(self.conditions) != sorted(self.conditions, key=lambda lit: lit.feature):
            object.__setattr__(self, "conditions", tuple(sorted(self.conditions, key=lambda lit: lit.feature)))

    @classmethod
    def of(
        cls,
        kind: str,
        literals: Mapping[int, Iterable[int]],
        *,
        target: int | None = None,
        space: FeatureSpace | None = None,
        instance: Iterable[float] | None = None,
        decision: int | None = None,
        witnesses: Iterable[Witness] = (),
        inflated: bool = False,
    ) -> Reason:
        """Build a reason from a mapping feature -> states."""
        return cls(
            kind=kind,
            conditions=tuple(Literal(int(f), frozenset(int(s) for s in states)) for f, states in literals.items()),
            target=target,
            space=space,
            instance=tuple(float(v) for v in instance) if instance is not None else None,
            decision=decision,
            witnesses=tuple(witnesses),
            inflated=inflated,
        )

    @property
    def features(self) -> frozenset[int]:
        """The features the reason mentions."""
        return frozenset(lit.feature for lit in self.conditions)

    @property
    def literals(self) -> dict[int, frozenset[int]]:
        """Feature -> set of states (a fresh dict; the reason itself is immutable)."""
        return {lit.feature: lit.states for lit in self.conditions}

    @property
    def is_conjunction(self) -> bool:
        return self.kind in CONJUNCTIVE_KINDS

    @property
    def changes(self) -> tuple[Change, ...]:
        """A necessary, contrastive or general necessary reason as actions: for each feature its
        first witness changes, the move from the instance's state into the witness's cell
        (:class:`Change`); the witness's class is :attr:`changes_lead_to`. Empty for a
        sufficient reason, or without a witness and the explained instance."""
        if self.is_conjunction or not self.witnesses or self.instance is None:
            return ()
        witness = self.witnesses[0]
        changes = []
        for f in sorted(self.features):
            before, after = self._state(f, self.instance[f]), self._state(f, witness.values[f])
            if before != after:
                changes.append(Change(f, before, after, space=self.space, value=self.instance[f]))
        return tuple(changes)

    @property
    def changes_lead_to(self) -> Any:
        """The class the :attr:`changes` give (the first witness's class), ``None`` without them."""
        if not self.changes:
            return None
        index = self.witnesses[0].prediction
        return to_python(self.space.classes[index]) if self.space is not None else index

    def actions(self) -> str:
        """The :attr:`changes` in words: ``to get 'virginica': raise petal width (cm) above 1.75
        and lower sepal length (cm) to 5.45 or less``; ``""`` without them."""
        changes = self.changes
        if not changes:
            return ""
        return f"to get {self.changes_lead_to!r}: " + " and ".join(c.describe() for c in changes)

    def _state(self, feature: int, value: float) -> int:
        """The state of a raw value of ``feature`` (for a categorical one
        :meth:`~rfexplain.core.space.FeatureSpace.category_state`)."""
        if self.space is None:
            return int(round(value))
        if self.space.category_labels(feature) is not None:
            return self.space.category_state(feature, value)
        thresholds = np.asarray(self.space.thresholds[feature], dtype=np.float64)
        return int(np.searchsorted(thresholds, float(np.float32(value)), side="left"))

    def __len__(self) -> int:
        return len(self.conditions)

    def __repr__(self) -> str:
        text = str(self)
        return f"<Reason {self.kind}: {text if len(text) <= 80 else text[:77] + '...'}>"

    def plot(self, **kwargs: Any) -> Any:
        """Draw the reason on each feature's own axis, in scikit-learn's display style (needs
        ``rfexplain[plot]``): :meth:`rfexplain.viz.ReasonDisplay.from_reason`.

        Parameters
        ----------
        **kwargs
            Those of :meth:`~rfexplain.viz.ReasonDisplay.from_reason`: ``ax`` (an Axes whose
            area holds the rows, or one Axes per row; by default a new pyplot figure),
            ``features``, ``title``, ``figsize``.

        Returns
        -------
        ReasonDisplay
            With ``figure_``, ``axes_`` (one Axes per row) and ``ax_``.
        """
        return render("plot_reason", self, **kwargs)

    def _repr_html_(self) -> str:
        return str(render("reason_html", self))

    def __str__(self) -> str:
        note = self.space.domain_note() if self.space is not None else ""
        suffix = f"  [given {note}]" if note else ""
        if not self.conditions:
            return ("true" if self.is_conjunction else "false") + suffix
        joiner = " and " if self.is_conjunction else " or "
        digits = max(lit.digits(self.space) for lit in self.conditions)
        parts = [lit.describe(self.space, digits) for lit in self.conditions]
        if len(parts) > 1:
            parts = [f"({p})" if " or " in p else p for p in parts]
        return joiner.join(parts) + suffix

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (names, conditions, intervals, witnesses)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "features": sorted(self.features),
            "literals": [lit.to_dict(self.space) for lit in self.conditions],
            "text": str(self),
        }
        if self.inflated:
            out["inflated"] = True
        if self.space is not None:
            out["feature_names"] = [self.space.feature_names[f] for f in sorted(self.features)]
            if self.space.domain_note():  # the reason holds for inputs within these bounds
                out["domain"] = {
                    name: [float32_number(b[0]), float32_number(b[1])]
                    for name, b in zip(self.space.feature_names, self.space.bounds)
                    if b is not None
                }
        if self.target is not None:
            out["target_index"] = self.target
            if self.space is not None:
                out["target"] = to_python(self.space.classes[self.target])
        if self.witnesses:
            out["witnesses"] = [w.to_dict(self.space) for w in self.witnesses]
        changes = self.changes
        if changes:
            out["changes"] = [c.to_dict() for c in changes]
            out["changes_lead_to"] = self.changes_lead_to
            out["actions"] = self.actions()
        return out


def format_threshold(t: float, digits: int | None = None) -> str:
    """The float32 number an input must not exceed to satisfy ``x <= t``, printed shortest.

    Inputs are compared as float32 (docs/design.md, section 1): ``float32(x) <= t`` holds iff
    ``float32(x) <= m`` where ``m`` is the largest float32 not above ``t``; this prints ``m`` with
    the fewest digits that read back as ``m``, padded with zeros to ``digits`` significant
    digits when given (:func:`~rfexplain.core.floats.float32_text`).
    """
    return float32_text(largest_float32_at_most(t), digits)


def _bound_choices(t: float) -> tuple[tuple[str, float], tuple[str, float]]:
    """``x <= t`` on float32 inputs, exactly, both ways: ``("<=", m)`` and ``("<", m')``, ``m``
    the largest float32 not above ``t`` and ``m'`` the next float32 (no float32 lies between)."""
    at_most = largest_float32_at_most(t)
    return ("<=", at_most), ("<", float(np.nextafter(np.float32(at_most), np.float32(np.inf))))


def _upper_bound(t: float, digits: int | None = None) -> tuple[str, str]:
    """``x <= t`` on float32 inputs, exactly, as ``("<=", m)`` or ``("<", m')`` (see
    :func:`_bound_choices`), whichever needs fewer significant digits (``<=`` on a tie), the
    number padded to ``digits`` significant digits when given."""
    (le, at_most), (lt, above) = _bound_choices(t)
    if significant_digits(above) < significant_digits(at_most):
        return lt, float32_text(above, digits)
    return le, float32_text(at_most, digits)


def _lower_bound(t: float, digits: int | None = None) -> tuple[str, str]:
    """``x > t`` on float32 inputs, exactly, as ``(">", m)`` or ``(">=", m')``, whichever is shorter."""
    op, text = _upper_bound(t, digits)
    return (">", text) if op == "<=" else (">=", text)


def printed_bounds(low: float, high: float) -> tuple[float, bool, float, bool]:
    """A literal's interval ``(low, high]`` (on float32 inputs) as its text prints it:
    ``(lower, lower_strict, upper, upper_strict)``, meaning ``x > lower`` (``x >= lower`` when
    not ``lower_strict``) and ``x < upper`` (``x <= upper`` when not ``upper_strict``), each
    bound the shortest exact one (:func:`describe_states`); an infinite end is strict.

    >>> printed_bounds(-math.inf, 0.75)
    (-inf, True, 0.75, False)
    """
    lower, lower_strict = -math.inf, True
    if not math.isinf(low):
        op, text = _lower_bound(low)
        lower, lower_strict = float(text), op == ">"
    upper, upper_strict = math.inf, True
    if not math.isinf(high):
        op, text = _upper_bound(high)
        upper, upper_strict = float(text), op == "<"
    return lower, lower_strict, upper, upper_strict


def _bound_digits(t: float) -> int:
    """The significant digits the exact bound ``x <= t`` (or ``x > t``) prints with."""
    return min(significant_digits(v) for _, v in _bound_choices(t))


def _needed_digits(states: Iterable[int], thresholds: tuple[float, ...]) -> int:
    """The significant digits the bounds of ``x in states`` need to print exactly."""
    bounds = [b for lo, hi in _intervals(states, thresholds) for b in (lo, hi) if math.isfinite(b)]
    return max((_bound_digits(b) for b in bounds), default=0)


def _split_missing(states: Iterable[int], thresholds: tuple[float, ...]) -> tuple[list[int], tuple[float, ...], bool]:
    """``(number states, finite thresholds, whether the missing state is among states)``: the
    states of a feature that may be missing (last threshold ``+inf``) apart from the missing
    one; ``(states, thresholds, False)`` for any other feature."""
    ordered = sorted(states)
    if not thresholds or thresholds[-1] != math.inf:
        return ordered, thresholds, False
    n = len(thresholds)
    return [s for s in ordered if s < n], thresholds[:-1], n in ordered


def _intervals(states: Iterable[int], thresholds: tuple[float, ...]) -> list[tuple[float, float]]:
    """Maximal runs of consecutive states as raw intervals ``(low, high]`` (of the number states
    only, for a feature that may be missing)."""
    ordered, thresholds, _ = _split_missing(states, thresholds)
    runs: list[tuple[int, int]] = []
    for s in ordered:
        if runs and runs[-1][1] == s - 1:
            runs[-1] = (runs[-1][0], s)
        else:
            runs.append((s, s))
    n = len(thresholds)
    return [(thresholds[a - 1] if a > 0 else -math.inf, thresholds[b] if b < n else math.inf) for a, b in runs]


def describe_states(name: str, states: Iterable[int], thresholds: tuple[float, ...], digits: int | None = None) -> str:
    """Render ``name in states`` as exact conditions on float32 raw values.

    One interval reads ``name <= 0.8``, ``name > 1.75`` or ``2.45 < name <= 4.75`` (``<`` and
    ``>=`` appear where they print a shorter exact bound); several read
    ``name in (1.0, 2.0] or (3.0, 4.0]``; all states read ``name is anything``.

    How the numbers are rounded: they are not. Each bound is the float32 number the tree's test
    ``float32(x) <= t`` really compares against, written as the shortest decimal that reads back
    as it, and the inequality says which side it is on: ``x <= m`` with ``m`` the largest float32
    not above ``t``, or ``x < m'`` with ``m'`` the next float32, whichever is shorter (both are
    exact: no float32 lies between ``m`` and ``m'``); lower bounds likewise with ``>`` and ``>=``.
    So a printed bound never widens nor narrows the condition. For even precision, every number
    is padded with trailing zeros to ``digits`` significant digits (by default the most any of
    its bounds needs; :meth:`Reason.__str__` passes the most any bound of the reason needs), so
    ``0.038065``, ``0.0038395`` and ``0.2192`` print ``0.038065``, ``0.0038395`` and ``0.21920``.

    A feature that may be missing (last threshold ``+inf``, docs/design.md, section 1) reads
    ``name is missing``, ``name <= 3 or missing``, or ``name is a number`` when its literal
    allows every number but not NaN; a literal on numbers only excludes NaN (``NaN <= 3`` is
    false), so ``name <= 3`` says what it says.
    """
    numbers, finite, missing = _split_missing(states, thresholds)
    if len(finite) != len(thresholds):
        if not numbers:
            return f"{name} is missing"
        if len(numbers) == len(thresholds):
            return f"{name} is anything" if missing else f"{name} is a number"
        text = describe_states(name, numbers, finite, digits)
        return f"{text} or missing" if missing else text
    intervals = _intervals(states, thresholds)
    if digits is None:
        digits = _needed_digits(states, thresholds)
    if len(intervals) == 1:
        lo, hi = intervals[0]
        if math.isinf(lo) and math.isinf(hi):
            return f"{name} is anything"
        if math.isinf(lo):
            op, text = _upper_bound(hi, digits)
            return f"{name} {op} {text}"
        if math.isinf(hi):
            op, text = _lower_bound(lo, digits)
            return f"{name} {op} {text}"
        lop, ltext = _lower_bound(lo, digits)
        hop, htext = _upper_bound(hi, digits)
        return f"{ltext} {'<' if lop == '>' else '<='} {name} {hop} {htext}"
    return f"{name} in " + _interval_texts(intervals, digits)


def _interval_texts(intervals: list[tuple[float, float]], digits: int | None) -> str:
    """Intervals ``(low, high]`` in exact interval notation, joined by ``or``: ``(2.45, 4.75]``,
    ``[2.5, +inf)`` (``[`` and ``)`` where ``>=`` and ``<`` print a shorter exact bound)."""
    pieces = []
    for lo, hi in intervals:
        if math.isinf(lo):
            left = "(-inf"
        else:
            lop, ltext = _lower_bound(lo, digits)
            left = ("(" if lop == ">" else "[") + ltext
        if math.isinf(hi):
            right = "+inf)"
        else:
            hop, htext = _upper_bound(hi, digits)
            right = htext + ("]" if hop == "<=" else ")")
        pieces.append(f"{left}, {right}")
    return " or ".join(pieces)


def describe_values(states: Iterable[int], space: FeatureSpace | None, feature: int) -> str:
    """The values ``feature in states`` allows, without the feature's name: exact intervals
    (``(2.45, 4.75]``, as :func:`describe_states` bounds them) or a set of categories
    (``{good, fair}``)."""
    ordered = sorted(states)
    if space is None:
        return "states {" + ", ".join(map(str, ordered)) + "}"
    labels = space.category_labels(feature)
    if labels is not None:
        return "{" + ", ".join(labels[s] for s in ordered) + "}"
    thresholds = space.thresholds[feature]
    numbers, finite, missing = _split_missing(ordered, thresholds)
    texts = [_interval_texts(_intervals(numbers, finite), _needed_digits(numbers, finite))] if numbers else []
    return " or ".join(texts + (["missing"] if missing else []))


def _json_bound(t: float) -> float | str:
    """A bound ``t`` of a literal's interval ``(low, high]`` in JSON: the largest float32 ``m``
    not above it (the same test on float32 inputs) as the shortest decimal that reads back as
    ``m``; ``"inf"``/``"-inf"`` for an open end."""
    if not math.isfinite(t):
        return "inf" if t > 0 else "-inf"
    return float32_number(largest_float32_at_most(t))


def _json_value(value: float, space: FeatureSpace, feature: int) -> float | str:
    """An input value in JSON: its float32 number's shortest decimal, on the side of it that
    stays in the value's cell of the feature (:func:`~rfexplain.core.floats.cell_decimal`);
    a categorical feature's state index as it is."""
    if not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    if space.category_labels(feature) is not None:
        return float(value)
    return cell_decimal(value, space.thresholds[feature])
