"""How strongly the forest decides one instance: each class's probability (soft vote) or share of
the trees' votes (hard vote), and the margin of the decided class over the runner-up.

Under the soft vote (scikit-learn's ``predict``) a class's probability is the mean of the trees'
leaf class-probability vectors, ``predict_proba``'s number; under the hard vote it is the share
of trees voting for it. The margin is the decided class's number minus the largest other
class's: 0 on a tie (broken toward the lowest class index), 1 when every tree is sure.

Example
-------
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> from rfexplain import Forest
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y)
>>> share = vote_share(Forest.from_sklearn(model), X[0])
>>> share.kind, share.shares[0] == share.top, round(share.margin, 3)
('probability', True, 1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rfexplain.core.forest import Forest, Tree

__all__ = ["VoteShare", "vote_share"]


@dataclass(frozen=True)
class VoteShare:
    """Each class's probability or vote share on one instance, and the decided class's margin."""

    #: ``"probability"`` (soft vote: mean of the trees' class probabilities) or ``"vote share"``
    #: (hard vote: fraction of the trees voting for each class).
    kind: str
    #: One number per class, in the order of ``classes``; they add up to 1.
    shares: tuple[float, ...]
    #: Index of the decided class.
    decided: int
    #: Trees voting for each class (hard vote), ``None`` under the soft vote.
    votes: tuple[int, ...] | None = None

    @property
    def top(self) -> float:
        """The decided class's number."""
        return self.shares[self.decided]

    @property
    def margin(self) -> float:
        """The decided class's number minus the largest other class's (the decided class alone: 1)."""
        others = [s for c, s in enumerate(self.shares) if c != self.decided]
        return self.top - max(others, default=0.0)

    def describe(self, classes: Sequence[object]) -> str:
        """``probability 0.93 (margin 0.86)``, or ``vote share 0.85: 17 of 20 trees (margin 0.75)``."""
        text = f"{self.kind} {self.top:.2f}"
        if self.votes is not None:
            text += f": {self.votes[self.decided]} of {sum(self.votes)} trees"
        return f"{text} (margin {self.margin:.2f} over {self._runner_up(classes)!r})" if len(classes) > 1 else text

    def _runner_up(self, classes: Sequence[object]) -> object:
        others = [c for c in range(len(self.shares)) if c != self.decided]
        return classes[max(others, key=lambda c: (self.shares[c], -c))]


def _leaf(tree: Tree, states: Sequence[int]) -> int:
    node = 0
    while tree.feature[node] >= 0:
        node = tree.left[node] if states[tree.feature[node]] <= tree.split[node] else tree.right[node]
    return node


def vote_share(forest: Forest, values: Sequence[float] | np.ndarray) -> VoteShare:
    """The :class:`VoteShare` of the instance ``values`` (the forest's feature values) under the
    forest's vote mode: each tree walked down to its leaf, the leaves' probability vectors
    averaged (soft vote) or their votes counted (hard vote)."""
    states = [int(s) for s in forest.states(np.asarray([values], dtype=np.float64))[0]]
    decided = forest.decide(states)
    leaves = [(tree, _leaf(tree, states)) for tree in forest.trees]
    if forest.vote == "soft":
        total = np.zeros(forest.n_classes)
        for tree, leaf in leaves:
            vector = tree.proba[leaf] if tree.proba is not None else None
            if vector is None:
                raise ValueError("a soft-vote forest needs every leaf's class probabilities")
            total += np.asarray(vector, dtype=np.float64)
        return VoteShare("probability", tuple(float(p) for p in total / total.sum()), decided)
    counts = [0] * forest.n_classes
    for tree, leaf in leaves:
        counts[tree.label[leaf]] += 1
    return VoteShare("vote share", tuple(c / len(leaves) for c in counts), decided, votes=tuple(counts))
