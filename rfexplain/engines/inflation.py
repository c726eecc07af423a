"""Inflated sufficient reasons: the canonical AXp with each of its literals widened as far as the
decision allows (Izza, Ignatiev, Stuckey and Marques-Silva, "Delivering Inflated Explanations",
AAAI 2024 [IISM24]).

The canonical AXp fixes each of its features to the instance's cell. Inflation widens, feature by
feature in the AXp's canonical order (:func:`~rfexplain.engines.base.canonical_order`), one literal
at a time while the reason stays sufficient (every input inside the box is decided like the
instance):

- a numeric feature (states ordered by its thresholds): first its lower bound down, then its
  upper bound up, each to the furthest state that keeps sufficiency: the domain's edge first,
  then bisection over the states left, each refused box's counterexample narrowing them
  (sufficiency is monotone: a wider box has every counterexample of a narrower one);
- a categorical feature (unordered states): each other category in index order, added when the
  reason stays sufficient with it.

The result is maximal: no bound can move one more state and no category can be added (the box only
grows, so a move refused earlier stays refused). It is deterministic and depends only on the
forest and the instance, so every engine gives the same inflated reason; each engine supplies only
the box check (``counterexample``). A refused move keeps its counterexample, which lies inside the
final box on every other feature and just beyond the bound (or on the category) refused: the
reason's witnesses, one per bound that cannot move (:mod:`rfexplain.verify` checks them).

An engine may also supply ``nearest`` (:data:`Nearest`): the counterexample nearest to the
instance's state on a numeric feature, among the states beyond those already known sufficient
(below the instance's state, then above the lower bound's interval), found by one search. By
monotonicity the furthest bound is one state short of it, so that search replaces the probes of
the bound; where it gives up, its best counterexample narrows the bisection as a refused probe's
does. The bounds are the same either way.

A literal never widens to a feature's whole domain: the AXp is subset-minimal, so with the other
features in their (wider) literals some input outside the instance's cell flips the decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

__all__ = ["Box", "inflate"]

#: Feature -> the states its literal allows.
Box = dict[int, frozenset[int]]
#: A state vector inside ``box`` decided differently from the instance, or ``None`` (sufficient).
Counterexample = Callable[[Box], "tuple[int, ...] | None"]
#: ``nearest(box, f, upward)``: a counterexample inside ``box`` whose state on ``f`` is the
#: largest (``upward``) or smallest there is, and whether it is proven so (``(None, True)``: the
#: box is sufficient); ``(z, False)``: only that ``z`` (or nothing, ``None``) was found.
Nearest = Callable[[Box, int, bool], "tuple[tuple[int, ...] | None, bool]"]
#: ``around(box, f)``: the counterexamples inside ``box`` whose states on ``f`` are the nearest
#: below and above the instance's (``None``: none on that side), and whether they are proven so;
#: unproven, they are only some found.
Around = Callable[[Box, int], "tuple[tuple[int, ...] | None, tuple[int, ...] | None, bool]"]


def inflate(
    features: Sequence[int],
    states: Sequence[int],
    n_states: Sequence[int],
    categorical: Callable[[int], bool],
    counterexample: Counterexample,
    *,
    jumps: bool = True,
    nearest: Nearest | None = None,
    known: Mapping[int, tuple[int, ...]] | None = None,
    around: Around | None = None,
) -> tuple[Box, list[tuple[int, tuple[int, ...]]]]:
    """Widen the AXp on ``features`` (in this order) of the instance with state vector ``states``.

    ``n_states[f]`` is the number of states of feature ``f``; ``categorical(f)`` says whether its
    states are unordered. Returns the inflated literals (feature -> states) and the witnesses:
    ``(feature, counterexample)`` for each bound (or category) that cannot move, in order.
    ``jumps``: a counterexample's entry of a feature is the state it lies on, so that a refused
    box narrows the bisection at once (``False`` where the coordinates are not the
    counterexamples', as for the general reasons' blocks: plain bisection). ``nearest``: each
    numeric bound found by one search (:data:`Nearest`) before any probe (only with ``jumps``).
    ``known``: counterexamples already at hand (only with ``jumps``), ``known[f]`` a state vector
    decided otherwise that agrees with ``states`` on the other ``features`` (as an AXp's witness
    for ``f``): it lies in every box ``f`` is widened in, so it refuses its state and every
    state past it before any question. ``around`` (only with ``jumps``): both bounds of a numeric
    feature found by one search (:func:`_around`) before any other question.
    """
    box: Box = {f: frozenset({states[f]}) for f in features}
    witnesses: list[tuple[int, tuple[int, ...]]] = []

    def with_states(f: int, allowed: frozenset[int]) -> tuple[int, ...] | None:
        return counterexample({**box, f: allowed})

    def nearest_with(f: int, allowed: frozenset[int], upward: bool) -> tuple[tuple[int, ...] | None, bool]:
        return nearest({**box, f: allowed}, f, upward) if nearest is not None else (None, False)

    for f in features:
        if categorical(f):
            for s in range(n_states[f]):
                if s in box[f]:
                    continue
                z = with_states(f, box[f] | {s})
                if z is None:
                    box[f] = box[f] | {s}
                else:
                    witnesses.append((f, z))
            continue
        hint = known.get(f) if known is not None and jumps else None
        both = _around(f, states[f], n_states[f], box, around, witnesses, hint) if around and jumps else None
        if both is not None:
            box[f] = frozenset(range(both[0], both[1] + 1))
            continue
        low, high = _widen(f, states[f], n_states[f], with_states, nearest_with if jumps else None, witnesses, hint)
        box[f] = frozenset(range(low, high + 1))
    return box, witnesses


def _around(
    f: int,
    state: int,
    n: int,
    box: Box,
    around: Around,
    witnesses: list[tuple[int, tuple[int, ...]]],
    known: tuple[int, ...] | None = None,
) -> tuple[int, int] | None:
    """Both ends of the numeric feature ``f``'s interval by one search, or ``None`` when it gives
    up or one side has no state to search (``state`` at an edge, or next to the state of
    ``known``): :func:`_widen` then searches the other side alone, without the slice at
    ``state``. A counterexample of the box never lies on ``state`` (the box before ``f`` is
    widened is sufficient), so the lower bound is one state above the nearest counterexample below
    ``state`` with ``f`` free (or the edge), and the upper bound, searched with ``f`` from the
    lower bound up, one state below the nearest above it: ``around`` asked once, on the states
    between those refused by ``known`` (as :func:`_furthest` takes it) or the edges, gives both;
    their counterexamples go to ``witnesses`` (lower, then upper)."""
    low, high, refused_low, refused_high = 0, n - 1, None, None
    if known is not None and known[f] != state:
        if known[f] < state:
            low, refused_low = known[f] + 1, known
        else:
            high, refused_high = known[f] - 1, known
    if not low < state < high:
        return None
    below, above, proven = around({**box, f: frozenset(range(low, high + 1))}, f)
    if not proven:
        return None
    for z, first, last in ((below, low, state - 1), (above, state + 1, high)):
        if z is not None and not first <= z[f] <= last:
            raise RuntimeError(f"a counterexample outside the box it was asked for (feature {f}): {z}")
    if below is not None:
        low, refused_low = below[f] + 1, below
    if above is not None:
        high, refused_high = above[f] - 1, above
    witnesses.extend((f, z) for z in (refused_low, refused_high) if z is not None)
    return low, high


def _widen(
    f: int,
    state: int,
    n: int,
    with_states: Callable[[int, frozenset[int]], tuple[int, ...] | None],
    nearest: Callable[[int, frozenset[int], bool], tuple[tuple[int, ...] | None, bool]] | None,
    witnesses: list[tuple[int, tuple[int, ...]]],
    known: tuple[int, ...] | None = None,
) -> tuple[int, int]:
    """The interval of states of the numeric feature ``f`` widened from ``state``: its lower end
    down, then its upper end up; the counterexamples of the refused moves go to ``witnesses``.
    ``nearest``: the search of :data:`Nearest` (jumps on) on the states between those refused so
    far and those known sufficient (``state``, then ``low..state``: a counterexample of a box
    reaching the edge lies beyond them); ``None``: plain bisection. ``known``: a counterexample
    that lies in the box on every other feature (jumps on), refusing its state on ``f`` at once."""

    def lower(bound: int) -> tuple[int, ...] | None:
        return with_states(f, frozenset(range(bound, state + 1)))

    def lower_nearest(bad: int) -> tuple[tuple[int, ...] | None, bool]:
        return nearest(f, frozenset(range(bad + 1, state)), True) if nearest is not None else (None, False)

    jump = f if nearest is not None else None
    low, refused = _furthest(state, 0, lower, jump, lower_nearest, known)
    if refused is not None:
        witnesses.append((f, refused))

    def upper(bound: int) -> tuple[int, ...] | None:
        return with_states(f, frozenset(range(low, bound + 1)))

    def upper_nearest(bad: int) -> tuple[tuple[int, ...] | None, bool]:
        return nearest(f, frozenset(range(state + 1, bad)), False) if nearest is not None else (None, False)

    high, refused = _furthest(state, n - 1, upper, jump, upper_nearest, known)
    if refused is not None:
        witnesses.append((f, refused))
    return low, high


def _furthest(
    start: int,
    edge: int,
    probe: Callable[[int], tuple[int, ...] | None],
    f: int | None,
    nearest: Callable[[int], tuple[tuple[int, ...] | None, bool]],
    known: tuple[int, ...] | None = None,
) -> tuple[int, tuple[int, ...] | None]:
    """The bound furthest from ``start`` towards ``edge`` whose box ``probe`` finds sufficient
    (``start``'s is), and the counterexample of the box one state further (``None`` when the
    bound reaches ``edge``). The edge is probed first (most bounds reach it), then the interval
    left is bisected, and each refused probe's counterexample narrows it at once: it lies
    outside the sufficient box, so its state on ``f`` is refused too, and every bound past it
    (``f=None``: plain bisection). At the end the counterexample kept lies on the state one
    further than the bound. ``known`` (with ``f``), a counterexample in every probed box but for
    its state on ``f``, refuses that state at once when it lies between ``start`` and ``edge``.
    Then ``nearest(bad)`` (while states are left between ``start`` and the refused state
    ``bad``): the counterexample of those states nearest to ``start``, which ends the search when
    proven nearest and else narrows it as a refused probe does."""
    step = 1 if edge >= start else -1
    good, bad = start, edge + step  # probe(good) is None; bad is past the edge or refused
    refused: tuple[int, ...] | None = None  # a counterexample on the state ``bad``
    middle = edge
    if known is not None and f is not None and min(edge, start) <= known[f] <= max(edge, start) and known[f] != start:
        bad, refused = known[f], known
        middle = (good + bad) // 2
    if abs(bad - good) > 1:
        z, proven = nearest(bad)
        if z is not None and f is not None:
            if not (min(bad, good) < z[f] < max(bad, good)):
                raise RuntimeError(f"a counterexample outside the box it was asked for (feature {f}): {z}")
            bad, refused = z[f], z
            middle = (good + bad) // 2
        if proven:
            return (bad - step, refused) if refused is not None else (edge, None)
    while abs(bad - good) > 1:
        z = probe(middle)
        if z is None:
            good = middle
        elif f is None:
            bad, refused = middle, z
        else:
            # z lies in the probed box, outside the sufficient one: between ``middle`` and ``good``
            if not (min(middle, good) <= z[f] <= max(middle, good) and z[f] != good):
                raise RuntimeError(f"a counterexample outside the box it was asked for (feature {f}): {z}")
            bad, refused = z[f], z
        middle = (good + bad) // 2
    return good, refused
