"""How many examples a property test draws: its full budget scaled to the loaded hypothesis profile.

The profiles are registered and chosen in ``tests/conftest.py``: ``"ci"`` (``max_examples=100``,
hypothesis's own default) runs every property test at the budget its ``@settings`` names, as
before the test suite was split; ``"fast"`` (the README's ``python -m pytest``) runs a fraction
of it. A property test names its full budget once::

    @settings(max_examples=examples(300), deadline=None)

and draws 300 examples under ``"ci"``, fewer under ``"fast"``, never fewer than
:data:`MINIMUM` (nor more than the full budget).
"""

from __future__ import annotations

import math

from hypothesis import settings

__all__ = ["FULL", "MINIMUM", "examples"]

#: ``max_examples`` of the ``"ci"`` profile: the scale at which a test's full budget is drawn.
FULL = 100
#: The fewest examples a scaled-down property test draws.
MINIMUM = 5


def examples(full: int, fast: int | None = None) -> int:
    """``full`` examples under the ``"ci"`` profile, proportionally fewer under a smaller one, or
    ``fast`` there when given (a test whose every example takes seconds)."""
    if settings.default.max_examples >= FULL:
        return full
    if fast is not None:
        return min(full, fast)
    wanted = math.ceil(full * settings.default.max_examples / FULL)
    return min(full, max(MINIMUM, wanted))
