"""The band a regression query asks about, as the classes of an additive vote.

"Is the prediction ``p`` (the mean of the ``T`` trees' leaf values ``v_t``) inside ``[a, b]``?"
is the argmax, ties to the lowest index, of three scores, all multiplied by ``T > 0`` (which
changes no argmax): ``inside`` 0, ``below`` ``T a - sum v_t`` and ``above`` ``sum v_t - T b``.
``inside`` wins exactly when ``a <= p <= b`` (on a bound, its tie with ``below`` or ``above`` goes
to ``inside``, the lowest index); otherwise the bound crossed wins (``a <= b``, so at most one of
the other two scores is positive). A half-open band ("at least ``a``", "at most ``b``") keeps
two classes. Each leaf's score vector is ``(0, -v, v)`` and one tree with a single leaf holds the
offset ``(0, T a, -T b)``, or ``T`` such trees holding ``(0, a, -b)`` when ``T a`` or ``T b`` is no
float64 number: the additive vote (:class:`~rfexplain.core.vote.AdditiveScores`) then decides in
exact rational arithmetic on the very numbers scikit-learn's leaves hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from rfexplain.core.errors import QueryArgumentError

__all__ = ["Band", "INSIDE", "BELOW", "ABOVE", "asked_band"]

INSIDE, BELOW, ABOVE = "inside", "below", "above"


@dataclass(frozen=True)
class Band:
    """The prediction's range asked about: ``low <= p <= high``, either end ``None`` (open)."""

    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        if self.low is None and self.high is None:
            raise QueryArgumentError("a band needs a lower bound, an upper bound or both")
        for end in (self.low, self.high):
            if end is not None and not math.isfinite(end):
                raise QueryArgumentError(f"a band's bounds must be finite numbers, got {end!r}")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise QueryArgumentError(f"a band's lower bound {self.low!r} is above its upper bound {self.high!r}")

    @property
    def classes(self) -> tuple[str, ...]:
        """The classes of the band's vote: ``inside`` first, then ``below``/``above`` for each end."""
        return (INSIDE,) + ((BELOW,) if self.low is not None else ()) + ((ABOVE,) if self.high is not None else ())

    def leaf_vector(self, value: float) -> tuple[float, ...]:
        """A leaf's score vector (see the module docstring)."""
        return (0.0,) + ((-value,) if self.low is not None else ()) + ((value,) if self.high is not None else ())

    def offsets(self, n_trees: int) -> list[tuple[float, ...]]:
        """The score vectors of the one-leaf trees holding the offset ``(0, T a, -T b)``."""
        signed = [Fraction(sign) * Fraction(end) for end, sign in ((self.low, 1), (self.high, -1)) if end is not None]
        scaled = [float(s * n_trees) for s in signed]
        if all(Fraction(x) == s * n_trees for x, s in zip(scaled, signed)):
            return [(0.0, *scaled)]
        return [(0.0, *(float(s) for s in signed))] * n_trees

    def holds(self, value: Fraction) -> bool:
        """Whether the exact prediction ``value`` is inside the band."""
        return (self.low is None or value >= Fraction(self.low)) and (self.high is None or value <= Fraction(self.high))

    def __str__(self) -> str:
        if self.high is None:
            return f"at least {self.low!r}"
        if self.low is None:
            return f"at most {self.high!r}"
        return f"within [{self.low!r}, {self.high!r}]"


def asked_band(
    within: tuple[float, float] | None = None, at_least: float | None = None, at_most: float | None = None
) -> Band | None:
    """The band a question names: ``within=(low, high)``, or ``at_least`` and/or ``at_most``;
    ``None`` when it names none (the default band is then the prediction's ``± delta``)."""
    if within is not None and (at_least is not None or at_most is not None):
        raise QueryArgumentError("give within=(low, high), or at_least= and/or at_most=, not both")
    if within is not None:
        low, high = within
        return Band(float(low), float(high))
    if at_least is not None or at_most is not None:
        return Band(None if at_least is None else float(at_least), None if at_most is None else float(at_most))
    return None
