"""The brute-force reference: every query of docs/design.md, section 2, answered by its definition.

:class:`Oracle` enumerates every state vector of a small forest once and classifies it with
:meth:`Forest.predict_states`. For an instance ``v`` with decision ``c`` it then reads the answers
off the definitions, using only the *difference set* ``D(z) = {f : z[f] != v[f]}`` of every state
vector ``z``:

- ``S`` is sufficient iff every ``z`` with ``κ(z) != c`` has ``D(z) ∩ S != ∅``;
- the necessary reasons are the subset-minimal ``D(z)`` over ``κ(z) != c`` (``= t`` when
  targeted), the robustness their minimum size;
- ``z`` is in the complete reason iff ``F \\ D(z)`` is sufficient, and in the general reason iff
  every hybrid of ``z`` and ``v`` is in class ``c``;
- general sufficient / necessary reasons are found among all boxes (one state set per feature) as
  the variable-minimal maximal boxes inside the general reason / disjoint from it.

It shares nothing with the engines but the forest model. It is registered as ``engine="oracle"``
so that users can check small cases, and refuses forests with more than ``max_state_vectors``
state vectors (:class:`~rfexplain.core.errors.OracleTooLargeError`, with the count in the message).
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from rfexplain.core.bits import bits_of, mask_of
from rfexplain.core.budget import Budget, poll
from rfexplain.core.errors import OracleTooLargeError
from rfexplain.core.forest import Forest
from rfexplain.core.reasons import Reason, Witness
from rfexplain.engines.base import QUERIES, EngineBase, Instance

__all__ = ["Oracle", "OracleEngine", "StateSet", "DEFAULT_MAX_STATE_VECTORS"]

DEFAULT_MAX_STATE_VECTORS = 2_000_000
#: Upper bound on the boxes examined for general sufficient / necessary reasons.
MAX_BOXES = 2_000_000


class StateSet:
    """A formula given by its models: a set of state vectors over the whole feature space."""

    def __init__(self, oracle: Oracle, members: np.ndarray) -> None:
        self._oracle = oracle
        self._members = members

    def __contains__(self, states: object) -> bool:
        return bool(self._members[self._oracle.index(states)])  # type: ignore[arg-type]

    def __len__(self) -> int:
        return int(self._members.sum())

    def models(self) -> Iterator[tuple[int, ...]]:
        """Every state vector of the formula, in index order."""
        for i in np.flatnonzero(self._members):
            yield tuple(int(s) for s in self._oracle.grid[i])

    def __repr__(self) -> str:
        return f"StateSet({len(self)} of {len(self._members)} state vectors)"


def _minimal_masks(masks: Sequence[int]) -> list[int]:
    """The subset-minimal masks among ``masks`` (bit sets), sorted by size then value."""
    ordered = sorted(set(masks), key=lambda m: (m.bit_count(), m))
    kept: list[int] = []
    for m in ordered:
        if not any(k & m == k for k in kept):
            kept.append(m)
    return kept


class _Analysis:
    """Everything about one instance the queries need, computed once."""

    def __init__(self, oracle: Oracle, instance: Instance) -> None:
        self.oracle = oracle
        self.instance = instance
        self.v = np.asarray(instance.states, dtype=np.int64)
        self.c = instance.prediction
        rel = oracle.relevant
        diff = oracle.grid[:, rel] != self.v[rel]
        #: D(z) as a bit mask over the relevant features (bit k = relevant feature rel[k]).
        self.diff = (diff.astype(np.int64) << np.arange(len(rel), dtype=np.int64)).sum(axis=1)
        self.flip = oracle.labels != self.c
        self.flip_masks = np.unique(self.diff[self.flip])
        self._sufficient: np.ndarray | None = None
        self._general: np.ndarray | None = None

    # -- subsets of the relevant features
    def sufficient_table(self) -> np.ndarray:
        """``table[S]`` is True iff the relevant-feature subset ``S`` is sufficient."""
        if self._sufficient is None:
            n = 1 << len(self.oracle.relevant)
            subsets = np.arange(n, dtype=np.int64)
            table = np.ones(n, dtype=bool)
            for m in self.flip_masks:
                table &= (subsets & int(m)) != 0
            self._sufficient = table
        return self._sufficient

    def general_members(self) -> np.ndarray:
        """Models of the general reason: every hybrid of ``z`` and ``v`` is in class ``c``."""
        if self._general is None:
            o = self.oracle
            rel = o.relevant
            members = np.ones(len(o.labels), dtype=bool)
            base = int((self.v * o.strides).sum())
            for t in range(1 << len(rel)):
                idx = np.full(len(o.labels), base, dtype=np.int64)
                for k, f in enumerate(rel):
                    if t >> k & 1:
                        idx += (o.grid[:, f] - self.v[f]) * o.strides[f]
                members &= o.labels[idx] == self.c
            self._general = members
        return self._general


class Oracle:
    """Brute-force answers to every query of docs/design.md, section 2, on a small forest.

    Parameters
    ----------
    forest : Forest
    max_state_vectors : int
        Refuse forests whose feature space has more state vectors than this.
    """

    def __init__(self, forest: Forest, *, max_state_vectors: int = DEFAULT_MAX_STATE_VECTORS) -> None:
        shape = forest.states_per_feature
        total = math.prod(shape)
        if total > max_state_vectors:
            raise OracleTooLargeError(
                f"the forest has {total:,} state vectors ({' x '.join(map(str, shape))}); the oracle "
                f"enumerates at most {max_state_vectors:,}: use a smaller forest or another engine"
            )
        self.forest = forest
        self.shape = shape
        self.strides = np.asarray([math.prod(shape[f + 1 :]) for f in range(len(shape))], dtype=np.int64)
        self.grid = np.indices(shape, dtype=np.int64).reshape(len(shape), -1).T
        self.labels = (
            np.concatenate(
                [forest.predict_states(self.grid[i : i + 200_000]) for i in range(0, len(self.grid), 200_000)]
            )
            if len(self.grid)
            else np.zeros(0, dtype=np.int64)
        )
        self.relevant = [f for f in range(forest.n_features) if shape[f] > 1]
        self._cache: OrderedDict[tuple[int, ...], _Analysis] = OrderedDict()

    # ---------------------------------------------------------------- plumbing
    def index(self, states: Sequence[int]) -> int:
        """Position of a state vector in :attr:`grid`."""
        st = [int(s) for s in states]
        if len(st) != len(self.shape) or any(not 0 <= s < n for s, n in zip(st, self.shape)):
            raise ValueError(f"not a state vector of this forest: {states!r}")
        return int(np.dot(st, self.strides))

    def classify(self, states: Sequence[int]) -> int:
        return int(self.labels[self.index(states)])

    def instance(self, states: Sequence[int]) -> Instance:
        """An :class:`Instance` for a state vector (raw values are state representatives)."""
        return Instance.from_states(self.forest, states)

    def _analysis(self, instance: Instance) -> _Analysis:
        key = instance.states
        if key not in self._cache:
            self._cache[key] = _Analysis(self, instance)
            while len(self._cache) > 16:
                self._cache.popitem(last=False)
        return self._cache[key]

    def _features(self, mask: int) -> list[int]:
        return [self.relevant[k] for k in bits_of(mask)]

    def _mask(self, features: Sequence[int]) -> int:
        pos = {f: k for k, f in enumerate(self.relevant)}
        return mask_of(pos[f] for f in features)

    def _witness_values(self, instance: Instance, row: int) -> tuple[float, ...]:
        return self.forest.values_for_states(self.grid[row], instance.values)

    def _instance_reason(
        self, kind: str, instance: Instance, mask: int, witnesses: Sequence[Witness], target: int | None = None
    ) -> Reason:
        features = self._features(mask)
        return Reason.of(
            kind,
            {f: {instance.states[f]} for f in features},
            target=target,
            space=self.forest.space,
            instance=instance.values,
            decision=instance.prediction,
            witnesses=witnesses,
        )

    # ---------------------------------------------------------------- sufficient reasons
    def is_sufficient(self, instance: Instance, features: Sequence[int]) -> bool:
        """Whether fixing ``features`` to the instance's states guarantees its decision."""
        a = self._analysis(instance)
        return bool(a.sufficient_table()[self._mask([f for f in features if f in self.relevant])])

    def sufficient_masks(self, instance: Instance) -> list[int]:
        a = self._analysis(instance)
        table = a.sufficient_table()
        n = len(self.relevant)
        return sorted(
            (s for s in range(1 << n) if table[s] and all(not table[s & ~(1 << k)] for k in range(n) if s >> k & 1)),
            key=lambda m: (m.bit_count(), m),
        )

    def _sufficient_reason(self, instance: Instance, mask: int) -> Reason:
        a = self._analysis(instance)
        witnesses = []
        for f in self._features(mask):
            rest = mask & ~self._mask([f])
            row = int(np.flatnonzero(a.flip & ((a.diff & rest) == 0))[0])
            witnesses.append(Witness(self._witness_values(instance, row), int(self.labels[row]), dropped=f))
        return self._instance_reason("sufficient", instance, mask, witnesses)

    def sufficient_reasons(self, instance: Instance) -> list[Reason]:
        return [self._sufficient_reason(instance, m) for m in self.sufficient_masks(instance)]

    def canonical_sufficient_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason:
        """The AXp that deletion in ``order`` (default: index order) produces, by brute force:
        every feature in turn is dropped iff the features left are sufficient."""
        table = self._analysis(instance).sufficient_table()
        pos = {f: k for k, f in enumerate(self.relevant)}
        kept = (1 << len(self.relevant)) - 1
        for f in range(self.forest.n_features) if order is None else order:
            if f in pos and table[kept & ~(1 << pos[f])]:
                kept &= ~(1 << pos[f])
        return self._sufficient_reason(instance, kept)

    # ---------------------------------------------------------------- necessary / contrastive
    def _flip_reasons(self, instance: Instance, rows_ok: np.ndarray, kind: str, target: int | None) -> list[Reason]:
        a = self._analysis(instance)
        masks = _minimal_masks([int(m) for m in np.unique(a.diff[rows_ok])])
        return [self._flip_reason(instance, rows_ok, m, kind, target) for m in masks]

    def _flip_reason(self, instance: Instance, rows_ok: np.ndarray, mask: int, kind: str, target: int | None) -> Reason:
        a = self._analysis(instance)
        row = int(np.flatnonzero(rows_ok & (a.diff == mask))[0])
        witness = Witness(self._witness_values(instance, row), int(self.labels[row]))
        return self._instance_reason(kind, instance, mask, [witness], target)

    def canonical_necessary_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason | None:
        """The CXp that fixing back in ``order`` (default: index order) produces, by brute force:
        from every feature free, each feature in turn is fixed iff a flip remains; ``None`` when
        nothing flips the decision."""
        a = self._analysis(instance)
        table = a.sufficient_table()
        if table[0]:
            return None
        pos = {f: k for k, f in enumerate(self.relevant)}
        fixed = 0
        for f in range(self.forest.n_features) if order is None else order:
            if f in pos and not table[fixed | 1 << pos[f]]:
                fixed |= 1 << pos[f]
        free = ((1 << len(self.relevant)) - 1) & ~fixed
        # a flip changes a subset of ``free``; by minimality exactly ``free``
        return self._flip_reason(instance, a.flip, free, "necessary", None)

    def necessary_reasons(self, instance: Instance) -> list[Reason]:
        return self._flip_reasons(instance, self._analysis(instance).flip, "necessary", None)

    def contrastive_reasons(self, instance: Instance, target: int) -> list[Reason]:
        return self._flip_reasons(instance, self.labels == target, "contrastive", target)

    def robustness(self, instance: Instance) -> float:
        a = self._analysis(instance)
        if not len(a.flip_masks):
            return math.inf
        return min(int(m).bit_count() for m in a.flip_masks)

    # ---------------------------------------------------------------- complete / general reasons
    def complete_reason(self, instance: Instance) -> StateSet:
        a = self._analysis(instance)
        full = (1 << len(self.relevant)) - 1
        return StateSet(self, a.sufficient_table()[full & ~a.diff])

    def general_reason(self, instance: Instance) -> StateSet:
        return StateSet(self, self._analysis(instance).general_members())

    def shortest_flip_states(self, instance: Instance) -> list[tuple[int, ...]]:
        """Every state vector decided differently at minimum Hamming distance from the instance."""
        a = self._analysis(instance)
        if not a.flip.any():
            return []
        dist = np.asarray([int(m).bit_count() for m in a.diff])
        best = dist[a.flip].min()
        return [tuple(int(s) for s in self.grid[i]) for i in np.flatnonzero(a.flip & (dist == best))]

    # ---------------------------------------------------------------- general sufficient / necessary
    def _box_masks(self) -> list[list[tuple[int, int]]]:
        """Per relevant feature: every non-empty state set, as (state bit set, grid bit set)."""
        count = math.prod((1 << self.shape[f]) - 1 for f in self.relevant)
        if count > MAX_BOXES:
            raise OracleTooLargeError(
                f"general reasons need {count:,} boxes here; the oracle examines at most {MAX_BOXES:,}"
            )
        per_feature = []
        for f in self.relevant:
            column = self.grid[:, f]
            by_state = [_bits(column == s) for s in range(self.shape[f])]
            options = []
            for sset in range(1, 1 << self.shape[f]):
                grid_bits = 0
                for s in range(self.shape[f]):
                    if sset >> s & 1:
                        grid_bits |= by_state[s]
                options.append((sset, grid_bits))
            per_feature.append(options)
        return per_feature

    def _maximal_boxes(self, inside: Any, must_contain: Sequence[int] | None) -> list[tuple[int, ...]]:
        """Maximal boxes (tuples of state bit sets over the relevant features) for which
        ``inside(grid_bits)`` holds; with ``must_contain``, only boxes containing that vector."""
        per_feature = self._box_masks()
        if must_contain is not None:
            per_feature = [
                [opt for opt in options if opt[0] >> must_contain[f] & 1]
                for options, f in zip(per_feature, self.relevant)
            ]
        all_points = (1 << len(self.labels)) - 1
        good: set[tuple[int, ...]] = set()
        for count, combo in enumerate(itertools.product(*per_feature)):
            if count % 4096 == 0:
                poll("examining boxes")
            bits = all_points
            for _, grid_bits in combo:
                bits &= grid_bits
            if inside(bits):
                good.add(tuple(sset for sset, _ in combo))
        maximal = []
        for box in good:
            grown = False
            for k, f in enumerate(self.relevant):
                for s in range(self.shape[f]):
                    if not box[k] >> s & 1:
                        bigger = box[:k] + (box[k] | 1 << s,) + box[k + 1 :]
                        if bigger in good:
                            grown = True
                            break
                if grown:
                    break
            if not grown:
                maximal.append(box)
        return maximal

    def _box_vars(self, box: tuple[int, ...]) -> int:
        return sum(1 << k for k, f in enumerate(self.relevant) if box[k] != (1 << self.shape[f]) - 1)

    def _variable_minimal(self, boxes: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
        var_sets = {self._box_vars(b) for b in boxes}
        minimal = set(_minimal_masks(list(var_sets)))
        chosen = [b for b in boxes if self._box_vars(b) in minimal]
        return sorted(chosen, key=lambda b: (self._box_vars(b).bit_count(), self._box_vars(b), b))

    def general_sufficient_reasons(self, instance: Instance) -> list[Reason]:
        """Variable-minimal prime implicants of the general reason (maximal boxes inside it; every
        prime implicant contains the instance, so only such boxes are examined)."""
        a = self._analysis(instance)
        members = _bits(a.general_members())
        boxes = self._variable_minimal(self._maximal_boxes(lambda bits: bits & ~members == 0, instance.states))
        out = []
        for box in boxes:
            mask = self._box_vars(box)
            literals = {f: _states_of(box[k]) for k, f in enumerate(self.relevant) if mask >> k & 1}
            witnesses = []
            for f in literals:
                rest = mask & ~self._mask([f])
                row = int(np.flatnonzero(a.flip & ((a.diff & rest) == 0))[0])
                witnesses.append(Witness(self._witness_values(instance, row), int(self.labels[row]), dropped=f))
            out.append(self._general_reason("general_sufficient", instance, literals, witnesses))
        return out

    def general_necessary_reasons(self, instance: Instance) -> list[Reason]:
        """Variable-minimal prime implicates of the general reason: a clause ``∨ x_f ∈ C_f`` is
        implied iff the box of its negation (``x_f ∉ C_f``) is disjoint from the general reason."""
        a = self._analysis(instance)
        members = _bits(a.general_members())
        boxes = self._variable_minimal(self._maximal_boxes(lambda bits: bits & members == 0, None))
        out = []
        for box in boxes:
            mask = self._box_vars(box)
            literals = {}
            violation = list(instance.states)
            for k, f in enumerate(self.relevant):
                if mask >> k & 1:
                    full = (1 << self.shape[f]) - 1
                    literals[f] = _states_of(full & ~box[k])
                    violation[f] = _states_of(box[k])[0]
            row = self.index(violation)
            witness = Witness(self._witness_values(instance, row), int(self.labels[row]))
            out.append(self._general_reason("general_necessary", instance, literals, [witness]))
        return out

    def shortest_flips(self, instance: Instance) -> list[Reason]:
        """The shortest general necessary reasons: their violations are exactly the shortest flips."""
        gnrs = self.general_necessary_reasons(instance)
        if not gnrs:
            return []
        best = min(len(r) for r in gnrs)
        return [r for r in gnrs if len(r) == best]

    def _general_reason(
        self, kind: str, instance: Instance, literals: dict[int, list[int]], witnesses: list[Witness]
    ) -> Reason:
        return Reason.of(
            kind,
            literals,
            space=self.forest.space,
            instance=instance.values,
            decision=instance.prediction,
            witnesses=witnesses,
        )


def _bits(flags: np.ndarray) -> int:
    """A boolean array as a Python integer bit set (bit i = flags[i])."""
    packed = np.packbits(np.asarray(flags, dtype=bool), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def _states_of(state_bits: int) -> list[int]:
    return list(bits_of(state_bits))


class OracleEngine(EngineBase):
    """The oracle behind the engine interface (``engine="oracle"``): every query, small forests.

    Options: ``max_state_vectors`` (default 2,000,000).
    """

    name = "oracle"
    queries = frozenset(QUERIES)

    def __init__(self, forest: Forest, *, max_state_vectors: int = DEFAULT_MAX_STATE_VECTORS) -> None:
        super().__init__(forest)
        self.oracle = Oracle(forest, max_state_vectors=max_state_vectors)

    @staticmethod
    def _stream(reasons: list[Reason], budget: Budget) -> Iterator[Reason]:
        for reason in reasons:
            if budget.expired():
                return
            yield reason

    def sufficient_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason:
        return self.oracle.canonical_sufficient_reason(instance, order)

    def necessary_reason(self, instance: Instance, order: Sequence[int] | None = None) -> Reason | None:
        return self.oracle.canonical_necessary_reason(instance, order)

    def box_counterexample(self, instance: Instance, box: Mapping[int, frozenset[int]]) -> tuple[int, ...] | None:
        """By definition: the first state vector of the grid inside ``box`` decided differently."""
        return self._first_in_box(box, self.oracle.labels != instance.prediction)

    def box_example(self, instance: Instance, box: Mapping[int, frozenset[int]]) -> tuple[int, ...] | None:
        """By definition: the first state vector of the grid inside ``box`` decided like the instance."""
        return self._first_in_box(box, self.oracle.labels == instance.prediction)

    def _first_in_box(self, box: Mapping[int, frozenset[int]], rows: np.ndarray) -> tuple[int, ...] | None:
        """The first state vector of the grid inside ``box`` among the marked ``rows``."""
        budget = Budget.current()
        if budget is not None:
            budget.check("searching a box")
        grid = self.oracle.grid
        for f, allowed in box.items():
            rows &= np.isin(grid[:, f], sorted(allowed))
        found = np.flatnonzero(rows)
        return tuple(int(s) for s in grid[found[0]]) if found.size else None

    def sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        return self._stream(self.oracle.sufficient_reasons(instance), budget)

    def necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        return self._stream(self.oracle.necessary_reasons(instance), budget)

    def shortest_sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        return self._stream(_shortest(self.oracle.sufficient_reasons(instance)), budget)

    def shortest_necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        return self._stream(_shortest(self.oracle.necessary_reasons(instance)), budget)

    def contrastive_reasons(self, instance: Instance, target: int, budget: Budget) -> Iterator[Reason]:
        return self._stream(self.oracle.contrastive_reasons(instance, target), budget)

    def robustness(self, instance: Instance) -> float:
        return self.oracle.robustness(instance)

    def complete_reason(self, instance: Instance) -> StateSet:
        return self.oracle.complete_reason(instance)

    def general_reason(self, instance: Instance) -> StateSet:
        return self.oracle.general_reason(instance)

    def general_sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        return self._stream(self.oracle.general_sufficient_reasons(instance), budget)

    def general_necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        return self._stream(self.oracle.general_necessary_reasons(instance), budget)

    def shortest_flips(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        return self._stream(self.oracle.shortest_flips(instance), budget)


def _shortest(reasons: list[Reason]) -> list[Reason]:
    if not reasons:
        return []
    best = min(len(r) for r in reasons)
    return [r for r in reasons if len(r) == best]
