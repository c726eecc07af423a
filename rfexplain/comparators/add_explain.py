"""What the aggregated ADDs are for (Gossen and Steffen (2021), Sect. 8-9 [GS21]): model explanation as a
Graphviz drawing, outcome explanations read off the class characterisation BDD, and rapid,
vectorised evaluation through the majority-vote ADD.

Outcome explanation (Sect. 8, Def. 32)
--------------------------------------
For an instance with decision ``c``: walk the instance's path in the class BDD ``Ξ_C(c)``,
collect the conditions ``x[f] <= t_j`` / ``x[f] > t_j`` along it, drop the conditions implied by a
tighter one on the same feature, then drop conditions one at a time, in path order, as long as
the remaining conjunction still implies class ``c`` (checked exactly on the BDD with
:meth:`ADDManager.restrict_box`). The result is a conjunction of interval conditions that is
sufficient and condition-minimal: no single condition can be removed. It is a *box*, not a
subset of features: relaxing an interval is a different move from freeing a feature, so its
feature set is always a sufficient set of features (the box contains every instance that agrees
with the explained one on those features) but need not be subset-minimal among feature sets,
that is, need not be a sufficient reason (AXp). :func:`outcome_explanation` reports both.

Rapid evaluation (Sect. 9)
--------------------------
:class:`CompiledADD` flattens a diagram into numpy arrays and walks all instances at once, one
level of the diagram per numpy step; it also returns the number of tests each instance made (the
paper's step count).

Example
-------
>>> from rfexplain import Forest
>>> from rfexplain.comparators.add import aggregate
>>> raw = {"feature": [0, -1, -1], "threshold": [1.0, 0, 0], "left": [1, -1, -1],
...        "right": [2, -1, -1], "label": [-1, 1, 0]}
>>> forest = Forest.from_raw_trees([raw], n_features=1, classes=["no", "yes"])
>>> compiled = CompiledADD.of(aggregate(forest))
>>> compiled.predict([[0.5], [2.0]]).tolist()
['yes', 'no']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfexplain.comparators.add import AggregatedForest
from rfexplain.comparators.add_manager import TERMINAL, ADDManager
from rfexplain.core.forest import Forest
from rfexplain.core.reasons import describe_states

__all__ = ["CompiledADD", "OutcomeExplanation", "Condition", "outcome_explanation", "to_dot", "forest_steps"]


# ---------------------------------------------------------------------- rapid evaluation
class CompiledADD:
    """A decision diagram as flat arrays, evaluated on many instances at once.

    Node ``i`` is internal when ``feature[i] >= 0``: it goes to ``hi[i]`` when
    ``state[feature[i]] <= split[i]`` (equivalently ``float32(x) <= threshold[i]``), else to
    ``lo[i]``; a terminal holds ``value[i]``. Node ``root`` is the entry.
    """

    def __init__(self, forest: Forest, manager: ADDManager, root: int) -> None:
        level = np.asarray(manager.level, dtype=np.int64)
        hi = np.asarray(manager.hi, dtype=np.int64)
        lo = np.asarray(manager.lo, dtype=np.int64)
        internal = level != TERMINAL
        # the nodes reachable from the root, one level of the diagram per numpy step
        seen = np.zeros(len(level), dtype=bool)
        frontier = np.array([root], dtype=np.int64)
        while frontier.size:
            seen[frontier] = True
            below = frontier[internal[frontier]]
            children = np.concatenate([hi[below], lo[below]])
            frontier = np.unique(children[~seen[children]])
        found = np.flatnonzero(seen)
        nodes = found[np.lexsort((found, level[found]))]  # parents first (by predicate level)
        ids = np.full(len(level), -1, dtype=np.int64)
        ids[nodes] = np.arange(len(nodes))
        size = len(nodes)
        variables = manager.order.variables
        by_level_feature = np.array([f for f, _ in variables] or [0], dtype=np.int64)
        by_level_split = np.array([j for _, j in variables] or [0], dtype=np.int64)
        by_level_threshold = np.array([forest.thresholds[f][j] for f, j in variables] or [0.0], dtype=np.float64)
        inner = internal[nodes]
        levels = np.where(inner, level[nodes], 0)
        self.forest = forest
        self.feature = np.where(inner, by_level_feature[levels], -1)
        self.split = np.where(inner, by_level_split[levels], 0)
        self.threshold = np.where(inner, by_level_threshold[levels], 0.0)
        self.hi = np.where(inner, ids[np.where(inner, hi[nodes], 0)], np.arange(size))
        self.lo = np.where(inner, ids[np.where(inner, lo[nodes], 0)], np.arange(size))
        self.value = np.zeros(size, dtype=np.int64)
        for i in np.flatnonzero(~inner).tolist():
            self.value[i] = int(manager.value[int(nodes[i])])
        self.root = int(ids[root])
        self.is_terminal = self.feature < 0

    @classmethod
    def of(cls, aggregated: AggregatedForest) -> CompiledADD:
        """The majority-vote ADD of an aggregated forest."""
        return cls(aggregated.forest, aggregated.manager, aggregated.majority)

    @property
    def n_nodes(self) -> int:
        return len(self.feature)

    def _walk(self, columns: np.ndarray, use_thresholds: bool) -> tuple[np.ndarray, np.ndarray]:
        rows = columns.shape[0]
        node = np.full(rows, self.root, dtype=np.int64)
        steps = np.zeros(rows, dtype=np.int64)
        active = np.flatnonzero(~self.is_terminal[node])
        bound = self.threshold if use_thresholds else self.split
        while active.size:
            nd = node[active]
            go = columns[active, self.feature[nd]] <= bound[nd]
            node[active] = np.where(go, self.hi[nd], self.lo[nd])
            steps[active] += 1
            active = active[~self.is_terminal[node[active]]]
        return self.value[node], steps

    def predict_states(self, S: np.ndarray, return_steps: bool = False) -> Any:
        """Class indices for a state matrix (and the number of tests per row)."""
        values, steps = self._walk(np.asarray(S, dtype=np.int64), use_thresholds=False)
        return (values, steps) if return_steps else values

    def predict_index(self, X: Any, return_steps: bool = False) -> Any:
        """Class indices for raw instances, comparing ``float64(float32(x))`` with the
        thresholds directly (no discretisation step), as scikit-learn's trees do."""
        x64 = self.forest.check_instances(X).astype(np.float64)
        values, steps = self._walk(x64, use_thresholds=True)
        return (values, steps) if return_steps else values

    def predict(self, X: Any) -> np.ndarray:
        """Class labels for raw instances; equal to :meth:`Forest.predict`."""
        labels = np.asarray(self.forest.classes, dtype=object)[self.predict_index(X)]
        return labels.astype(np.asarray(self.forest.classes).dtype)


def forest_steps(forest: Forest, S: np.ndarray) -> np.ndarray:
    """The paper's step count for the forest itself (Sect. 9): tests on every tree's path plus
    one step per tree for reading its vote into the majority count."""
    S = np.asarray(S, dtype=np.int64)
    total = np.zeros(S.shape[0], dtype=np.int64)
    for tree in forest.trees:
        feature = np.asarray(tree.feature)
        split = np.asarray(tree.split)
        left, right = np.asarray(tree.left), np.asarray(tree.right)
        node = np.zeros(S.shape[0], dtype=np.int64)
        active = np.flatnonzero(feature[node] >= 0)
        while active.size:
            nd = node[active]
            go = S[active, feature[nd]] <= split[nd]
            node[active] = np.where(go, left[nd], right[nd])
            total[active] += 1
            active = active[feature[node[active]] >= 0]
    return total + forest.n_trees


# ---------------------------------------------------------------------- outcome explanation
@dataclass(frozen=True, order=True)
class Condition:
    """One predicate on an instance's path: ``state[feature] <= split`` when ``holds``, else
    ``state[feature] > split`` (``x <= t_split`` / ``x > t_split`` on raw values)."""

    feature: int
    split: int
    holds: bool

    def describe(self, forest: Forest) -> str:
        t = forest.thresholds[self.feature][self.split]
        return f"{forest.feature_names[self.feature]} {'<=' if self.holds else '>'} {t!r}"


@dataclass(frozen=True)
class OutcomeExplanation:
    """The paper's outcome explanation ``Ξ_O(t)(σ)`` (Def. 32) for one instance.

    Attributes
    ----------
    prediction : class index
    path : the conditions on the instance's path in the class BDD, in order
    conditions : the kept conditions after removing redundant ones
    box : feature -> inclusive range of states allowed by ``conditions``
    """

    prediction: int
    path: tuple[Condition, ...]
    conditions: tuple[Condition, ...]
    box: dict[int, tuple[int, int]]

    @property
    def features(self) -> frozenset[int]:
        return frozenset(self.box)

    def literals(self) -> dict[int, frozenset[int]]:
        """The box as ``feature -> allowed states`` (the form of a :class:`~rfexplain.core.reasons.Literal`).

        These are intervals of states, not the instance's own states: the explanation is a
        sufficient *condition*, not a sufficient reason in the sense of docs/design.md, section 2 (see the module
        docstring), nor a general sufficient reason."""
        return {f: frozenset(range(lo, hi + 1)) for f, (lo, hi) in self.box.items()}

    def describe(self, forest: Forest) -> str:
        parts = [
            describe_states(forest.feature_names[f], set(range(lo, hi + 1)), forest.thresholds[f])
            for f, (lo, hi) in sorted(self.box.items())
        ]
        return " and ".join(parts) if parts else "true"


def _box_of(conditions: Sequence[Condition], n_states: Sequence[int]) -> dict[int, tuple[int, int]]:
    box: dict[int, tuple[int, int]] = {}
    for c in conditions:
        lo, hi = box.get(c.feature, (0, n_states[c.feature] - 1))
        box[c.feature] = (lo, min(hi, c.split)) if c.holds else (max(lo, c.split + 1), hi)
    return box


def outcome_explanation(aggregated: AggregatedForest, states: Sequence[int]) -> OutcomeExplanation:
    """Outcome explanation of the decision on a state vector ([GS21], Sect. 8, Def. 32).

    Examples
    --------
    >>> from rfexplain import Forest
    >>> from rfexplain.comparators.add import aggregate
    >>> raw = {"feature": [0, 1, -1, -1, -1], "threshold": [1.0, 1.0, 0, 0, 0],
    ...        "left": [1, 2, -1, -1, -1], "right": [4, 3, -1, -1, -1], "label": [-1, -1, 1, 0, 0]}
    >>> agg = aggregate(Forest.from_raw_trees([raw], n_features=2, classes=[0, 1]))
    >>> [(c.feature, c.holds) for c in outcome_explanation(agg, [1, 0]).conditions]
    [(0, False)]
    """
    m = aggregated.manager
    forest = aggregated.forest
    n_states = forest.states_per_feature
    c = aggregated.predict_states_one(states)
    bdd = aggregated.class_bdd(c)
    path: list[Condition] = []
    n = bdd
    while m.level[n] != TERMINAL:
        f, j = m.order.variables[m.level[n]]
        holds = states[f] <= j
        path.append(Condition(f, j, bool(holds)))
        n = m.hi[n] if holds else m.lo[n]
    if m.value[n] is not True:
        raise AssertionError("the class BDD disagrees with the majority-vote ADD")
    # drop the conditions implied by a tighter one on the same feature (their removal leaves
    # the box unchanged), then remove conditions while the rest still implies class c
    full = _box_of(path, n_states)
    kept = [cond for i, cond in enumerate(path) if _box_of(path[:i] + path[i + 1 :], n_states) != full]
    i = 0
    while i < len(kept):
        trial = kept[:i] + kept[i + 1 :]
        if m.restrict_box(bdd, _box_of(trial, n_states)) == {True}:
            kept = trial
        else:
            i += 1
    box = _box_of(kept, n_states)
    box = {f: r for f, r in box.items() if r != (0, n_states[f] - 1)}
    return OutcomeExplanation(prediction=c, path=tuple(path), conditions=tuple(kept), box=box)


# ---------------------------------------------------------------------- model explanation
def to_dot(aggregated: AggregatedForest, root: int | None = None, *, title: str = "majority-vote ADD") -> str:
    """Graphviz DOT of the (reduced) majority-vote ADD or a class BDD: the paper's model
    explanation ``Ξ_M`` (Def. 28, Fig. 8). Solid edges: the test holds; dashed: it fails."""
    m = aggregated.manager
    forest = aggregated.forest
    root = aggregated.majority if root is None else root
    lines = ["digraph add {", f'  label="{title}";', "  node [fontname=Helvetica];"]
    for n in m.reachable([root])[::-1]:
        lv = m.level[n]
        if lv == TERMINAL:
            v = m.value[n]
            text = str(forest.classes[v]) if isinstance(v, int) and not isinstance(v, bool) else str(v)
            lines.append(f'  n{n} [shape=box, style=rounded, label="{_escape(text)}"];')
            continue
        f, j = m.order.variables[lv]
        text = f"{forest.feature_names[f]} <= {forest.thresholds[f][j]!r}"
        lines.append(f'  n{n} [shape=ellipse, label="{_escape(text)}"];')
        lines.append(f"  n{n} -> n{m.hi[n]};")
        lines.append(f"  n{n} -> n{m.lo[n]} [style=dashed];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
