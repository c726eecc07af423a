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
from rfexplain.core.forest import FeatureSpace, largest_float32_at_most
from rfexplain.core.pyvalues import to_python

__all__ = ["Literal", "Reason", "Witness", "Change", "REASON_KINDS", "format_threshold", "describe_states"]

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

    def describe(self, space: FeatureSpace | None) -> str:
        """The condition on raw values, with the feature's name (``2.45 < petal length <= 4.75``)."""
        if space is None:
            return f"x{self.feature} in {{{', '.join(map(str, sorted(self.states)))}}}"
        labels = space.category_labels(self.feature)
        if labels is not None:
            return f"{space.feature_names[self.feature]} in {{{', '.join(labels[s] for s in sorted(self.states))}}}"
        return describe_states(space.feature_names[self.feature], self.states, space.thresholds[self.feature])

    def to_dict(self, space: FeatureSpace | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"feature": self.feature, "states": sorted(self.states)}
        if space is not None:
            out["name"] = space.feature_names[self.feature]
            out["condition"] = self.describe(space)
            labels = space.category_labels(self.feature)
            if labels is not None:
                out["categories"] = [labels[s] for s in sorted(self.states)]
                return out
            out["intervals"] = [
                [_json_float(lo), _json_float(hi)] for lo, hi in _intervals(self.states, space.thresholds[self.feature])
            ]
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

    def to_dict(self) -> dict[str, Any]:
        return {"values": list(self.values), "prediction_index": self.prediction, "dropped": self.dropped}


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
        """The action in words: ``raise income above 27550.00``, ``lower age to 30.50 or less
        (above 25.00)``, ``set employment to salaried``."""
        if self.space is None:
            return f"move x{self.feature} from state {self.before} to state {self.after}"
        name = self.space.feature_names[self.feature]
        labels = self.space.category_labels(self.feature)
        if labels is not None:
            return f"set {name} to {labels[self.after]}"
        low, high = _intervals([self.after], self.space.thresholds[self.feature])[0]
        if self.after > self.before:
            lop, ltext = _lower_bound(low)
            text = f"raise {name} " + (f"above {ltext}" if lop == ">" else f"to {ltext} or more")
            if not math.isinf(high):
                hop, htext = _upper_bound(high)
                text += f" ({'at most' if hop == '<=' else 'below'} {htext})"
            return text
        hop, htext = _upper_bound(high)
        text = f"lower {name} " + (f"to {htext} or less" if hop == "<=" else f"below {htext}")
        if not math.isinf(low):
            lop, ltext = _lower_bound(low)
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
                low, high = _intervals([self.after], self.space.thresholds[self.feature])[0]
                out["from"] = self.value
                out["to_interval"] = [_json_float(low), _json_float(high)]
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
        """The state of a raw value of ``feature`` (a category's index for a categorical one)."""
        if self.space is None or self.space.category_labels(feature) is not None:
            return int(round(value))
        thresholds = np.asarray(self.space.thresholds[feature], dtype=np.float64)
        return int(np.searchsorted(thresholds, float(np.float32(value)), side="left"))

    def __len__(self) -> int:
        return len(self.conditions)

    def __repr__(self) -> str:
        text = str(self)
        return f"<Reason {self.kind}: {text if len(text) <= 80 else text[:77] + '...'}>"

    def plot(self, **kwargs: Any) -> Any:
        """Draw the reason on each feature's own axis; a matplotlib ``Figure`` (needs
        ``rfexplain[plot]``; see :func:`rfexplain.viz.plot_reason`)."""
        return render("plot_reason", self, **kwargs)

    def _repr_html_(self) -> str:
        return str(render("reason_html", self))

    def __str__(self) -> str:
        note = self.space.domain_note() if self.space is not None else ""
        suffix = f"  [given {note}]" if note else ""
        if not self.conditions:
            return ("true" if self.is_conjunction else "false") + suffix
        joiner = " and " if self.is_conjunction else " or "
        parts = [lit.describe(self.space) for lit in self.conditions]
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
                    name: list(b) for name, b in zip(self.space.feature_names, self.space.bounds) if b is not None
                }
        if self.target is not None:
            out["target_index"] = self.target
            if self.space is not None:
                out["target"] = to_python(self.space.classes[self.target])
        if self.witnesses:
            out["witnesses"] = [w.to_dict() for w in self.witnesses]
        changes = self.changes
        if changes:
            out["changes"] = [c.to_dict() for c in changes]
            out["changes_lead_to"] = self.changes_lead_to
            out["actions"] = self.actions()
        return out


def format_threshold(t: float) -> str:
    """The float32 number an input must not exceed to satisfy ``x <= t``, printed shortest.

    Inputs are compared as float32 (docs/design.md, section 1): ``float32(x) <= t`` holds iff
    ``float32(x) <= m`` where ``m`` is the largest float32 not above ``t``; this prints ``m`` with
    the fewest digits that read back as ``m`` (at least two decimals).
    """
    return _f32_text(largest_float32_at_most(t))


def _f32_text(value: float) -> str:
    v = np.float32(value)
    if v != 0 and not 1e-4 <= abs(float(v)) < 1e7:
        return np.format_float_scientific(v, unique=True)
    return np.format_float_positional(v, unique=True, trim="k", min_digits=2)


def _upper_bound(t: float) -> tuple[str, str]:
    """``x <= t`` on float32 inputs, exactly, as ``("<=", m)`` or ``("<", m')``, whichever is shorter
    (``m`` the largest float32 not above ``t``, ``m'`` the next float32)."""
    at_most = largest_float32_at_most(t)
    below = _f32_text(float(np.nextafter(np.float32(at_most), np.float32(np.inf))))
    le = _f32_text(at_most)
    return ("<", below) if len(below) < len(le) else ("<=", le)


def _lower_bound(t: float) -> tuple[str, str]:
    """``x > t`` on float32 inputs, exactly, as ``(">", m)`` or ``(">=", m')``, whichever is shorter."""
    op, text = _upper_bound(t)
    return (">", text) if op == "<=" else (">=", text)


def _intervals(states: Iterable[int], thresholds: tuple[float, ...]) -> list[tuple[float, float]]:
    """Maximal runs of consecutive states as raw intervals ``(low, high]``."""
    ordered = sorted(states)
    runs: list[tuple[int, int]] = []
    for s in ordered:
        if runs and runs[-1][1] == s - 1:
            runs[-1] = (runs[-1][0], s)
        else:
            runs.append((s, s))
    n = len(thresholds)
    return [(thresholds[a - 1] if a > 0 else -math.inf, thresholds[b] if b < n else math.inf) for a, b in runs]


def describe_states(name: str, states: Iterable[int], thresholds: tuple[float, ...]) -> str:
    """Render ``name in states`` as exact conditions on float32 raw values.

    One interval reads ``name <= 0.80``, ``name > 1.75`` or ``2.45 < name <= 4.75`` (``<`` and
    ``>=`` appear where they print a shorter exact bound); several read
    ``name in (1.00, 2.00] or (3.00, 4.00]``; all states read ``name is anything``.
    """
    intervals = _intervals(states, thresholds)
    if len(intervals) == 1:
        lo, hi = intervals[0]
        if math.isinf(lo) and math.isinf(hi):
            return f"{name} is anything"
        if math.isinf(lo):
            op, text = _upper_bound(hi)
            return f"{name} {op} {text}"
        if math.isinf(hi):
            op, text = _lower_bound(lo)
            return f"{name} {op} {text}"
        lop, ltext = _lower_bound(lo)
        hop, htext = _upper_bound(hi)
        return f"{ltext} {'<' if lop == '>' else '<='} {name} {hop} {htext}"
    pieces = []
    for lo, hi in intervals:
        if math.isinf(lo):
            left = "(-inf"
        else:
            lop, ltext = _lower_bound(lo)
            left = ("(" if lop == ">" else "[") + ltext
        if math.isinf(hi):
            right = "+inf)"
        else:
            hop, htext = _upper_bound(hi)
            right = htext + ("]" if hop == "<=" else ")")
        pieces.append(f"{left}, {right}")
    return f"{name} in " + " or ".join(pieces)


def _json_float(value: float) -> float | str:
    return value if math.isfinite(value) else ("inf" if value > 0 else "-inf")
