"""Pausing Python's cyclic garbage collector around allocation-heavy, cycle-free work.

Compiling class formulas and computing closed forms create millions of small tuples, lists and
dict entries, none of them in reference cycles (reference counting frees them). CPython's cyclic
collector still traverses every tracked container each time a full collection triggers, and
those traversals grow with the heap, to a large share of a compilation's time. It lives with the
compilers, the lowest layer of the circuit engine, so that the compilers and the algorithms on
their circuits (:mod:`rfexplain.circuit.logic`) can both use it. :func:`without_gc` switches the collector
off for the duration of such a function and restores its previous state after, so a caller's own
collection policy is untouched.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable
from typing import TypeVar

__all__ = ["without_gc", "collect_young"]

#: Objects allocated since the last collection past which :func:`collect_young` collects.
YOUNG = 50_000

F = TypeVar("F", bound=Callable)


def without_gc(function: F) -> F:
    """Decorator: run ``function`` with the cyclic collector disabled (re-entrant; the
    caller's state is restored, also when ``function`` raises)."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not gc.isenabled():  # already paused (nested call) or disabled by the caller
            return function(*args, **kwargs)
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            gc.enable()

    return wrapper  # type: ignore[return-value]


def collect_young() -> None:
    """While the collector is paused (:func:`without_gc`), collect the youngest generation once
    it holds :data:`YOUNG` new objects. A collection untracks the tuples of atoms it finds (the
    residual keys, millions of them), so that they never reach an older generation; left to the
    end, the first collection after the pause examines them all at once, a pause of a second
    or more that a budget cannot interrupt. Called from loops that poll their budget."""
    if not gc.isenabled() and gc.get_count()[0] > YOUNG:
        gc.collect(0)
