"""What a decision's pictures and notebook display show, asked of the decision once.

:func:`shown_answer` remembers each answer for as long as the decision lives, so that showing the
decision again (``d.plot()``, the notebook's table, ``str(d)``) asks nothing again;
:func:`decision_layers` picks the reasons a decision's picture draws, :func:`decision_actions` the
changes that flip it.
"""

from __future__ import annotations

import weakref
from typing import Any

from rfexplain.core.errors import UnsupportedQuery
from rfexplain.core.reasons import Change, Reason

__all__ = ["EXTRA_SECONDS", "decision_actions", "decision_layers", "shown_answer"]

#: Seconds the optional layers of a picture or report row (a general sufficient reason, shortest
#: flips) may take each: an enumeration stopped by it shows what it found (nothing: the layer is
#: left out), so that showing a decision never waits long for a layer it can do without.
EXTRA_SECONDS = 5.0


def decision_layers(decision: Any, *, inflated: bool = True, general: bool = True, flips: int = 1) -> list[Reason]:
    """The reasons a decision's picture shows: its sufficient reason (the inflated one, or with
    ``inflated=False`` the canonical one), a general sufficient reason and up to ``flips``
    shortest flips where the engine answers those queries (asked once per decision and
    remembered for its pictures and notebook display: :func:`shown_answer`)."""
    layers = [shown_answer(decision, "inflated_sufficient_reason" if inflated else "sufficient_reason")]
    for wanted, query, limit in ((general, "general_sufficient_reasons", 1), (flips, "shortest_flips", flips)):
        if wanted:
            try:
                layers.extend(shown_answer(decision, query, limit, timeout=EXTRA_SECONDS))
            except UnsupportedQuery:
                pass
    return layers


def decision_actions(decision: Any) -> tuple[Change, ...]:
    """The changes that flip a decision, as its pictures and text show them: those of its
    (canonical) necessary reason, none when nothing can flip it."""
    reason = shown_answer(decision, "necessary_reason")
    return () if reason is None else reason.changes


#: What the displays of each decision asked of it: decision -> {(query, limit): answer or the
#: UnsupportedQuery the engine raised}.
_SHOWN: weakref.WeakKeyDictionary[Any, dict[tuple[str, int | None], Any]] = weakref.WeakKeyDictionary()


def shown_answer(decision: Any, query: str, limit: int | None = None, *, timeout: float | None = None) -> Any:
    """The answer to ``query`` (with ``limit`` for an enumeration: its results as a list, those
    found within ``timeout`` seconds when one is given) that
    the pictures and the notebook display of ``decision`` show: asked on first use, then
    remembered for as long as the decision lives, so that showing it again (``d.plot()``, the
    notebook's table) asks nothing again. Raises the engine's
    :class:`~rfexplain.core.errors.UnsupportedQuery` (remembered too) when it does not answer."""
    cache = _SHOWN.setdefault(decision, {})
    key = (query, limit)
    if key not in cache:
        try:
            answer = decision.ask(query, limit=limit, timeout=timeout) if limit is not None else decision.ask(query)
            cache[key] = list(answer) if limit is not None else answer
        except UnsupportedQuery as exc:
            cache[key] = exc
    answer = cache[key]
    if isinstance(answer, UnsupportedQuery):
        raise answer
    return answer
