"""A pipeline's forest as a :class:`~rfexplain.core.forest.Forest` over the *original* columns.

Design
------
The original columns are the forest's features. A numeric column keeps interval states: each tree
threshold on its encoded column is mapped back to the exact float32 boundary on the original
value (:meth:`~rfexplain.pipelines.reading.Preprocessing.boundaries`, proven by evaluating the
pipeline on both sides). A categorical column is **one** feature whose states are its categories
(plus ``"(other)"`` when the encoder admits unknown ones); its value in the forest is the state
index, with thresholds ``0.5, 1.5, ...`` so that every category is its own state.

A tree node on an encoded column of a categorical feature (``color_red <= 0.5``, or an ordinal
code ``<= 2.5``) sends a *set* of categories left: exactly the states whose measured encoding
passes the test. The forest's trees test thresholds only, so such a set split becomes a small
chain of threshold tests on the state index, each routing a run of consecutive states; the node's
subtrees are copied where the chain needs them, pruned by the states still possible on the path.
Because one feature holds one category at a time, "exactly one category" is structural: no
engine, the oracle included, can consider an input with two colours or none, and every engine
works unchanged on the result. Each leaf keeps its class-probability vector, so the forest decides
under the vote the user asks for, by default the pipeline's own (``vote="auto"``: the soft vote
of a random forest's ``predict``). The translation is exact: on every original row, the forest's
hard vote equals the hard vote of the pipeline's own trees, and its soft vote equals
``pipeline.predict`` up to float64 near-ties (:meth:`PipelineModel.near_tie`; tests check both
on every state vector of small pipelines).

Example
-------
>>> import pandas as pd
>>> from sklearn.compose import ColumnTransformer
>>> from sklearn.ensemble import RandomForestClassifier
>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.preprocessing import OneHotEncoder, StandardScaler
>>> X = pd.DataFrame({"color": ["red", "green", "blue", "red"] * 5, "age": [20.0, 35.0, 50.0, 65.0] * 5})
>>> y = [0, 1, 1, 0] * 5
>>> prep = ColumnTransformer([("cat", OneHotEncoder(), ["color"]), ("num", StandardScaler(), ["age"])])
>>> pipe = make_pipeline(prep, RandomForestClassifier(n_estimators=3, random_state=0)).fit(X, y)
>>> model = PipelineModel(pipe)
>>> model.forest.feature_names, model.forest.categories[0], model.forest.vote
(('color', 'age'), ('blue', 'green', 'red'), 'soft')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from rfexplain.core.errors import InvalidInstanceError, UnsupportedModelError
from rfexplain.core.floats import cell_decimal
from rfexplain.core.forest import VOTE_MODES, Forest, Tree
from rfexplain.core.instances import in_model_order, pandas
from rfexplain.core.pyvalues import to_python
from rfexplain.core.set_splits import SetSplit, chain_set_splits
from rfexplain.core.sklearn_import import raw_trees_of
from rfexplain.pipelines.reading import Preprocessing, read_preprocessing

__all__ = ["PipelineModel", "is_transforming_pipeline", "MAX_NODES"]

#: Refuse translations that would copy subtrees beyond this many nodes per tree.
MAX_NODES = 200_000


def is_transforming_pipeline(model: Any) -> bool:
    """Whether ``model`` is a pipeline with a transforming step before its last."""
    steps = getattr(model, "steps", None)
    if not isinstance(steps, list):
        return False
    return any(step is not None and step != "passthrough" for _, step in steps[:-1])


class PipelineModel:
    """A fitted pipeline (preprocessing + tree classifier) and its forest over original columns.

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline
        Fitted on a pandas DataFrame; its last step a supported forest.
    monotone : sequence of str
        Names of ``FunctionTransformer`` steps the user declares monotone increasing.
    vote : {"auto", "soft", "hard"}
        The forest's vote mode: ``"auto"`` is the pipeline's own ``predict`` (soft for random
        forests and extra trees, hard for a decision tree).
    """

    def __init__(self, pipeline: Any, monotone: Sequence[str] = (), vote: str = "auto") -> None:
        if vote not in VOTE_MODES:
            raise ValueError(f"vote must be one of {list(VOTE_MODES)}. Got {vote!r} instead.")
        self.pipeline = pipeline
        self.pre: Preprocessing = read_preprocessing(pipeline, monotone)
        imported = raw_trees_of(pipeline.steps[-1][1])
        if imported.n_features != self.pre.n_encoded:
            raise UnsupportedModelError(
                f"the forest has {imported.n_features} inputs but the preprocessing gives {self.pre.n_encoded}"
            )
        self._raw = imported.trees
        self.estimator = pipeline.steps[-1][1]
        columns = self.pre.columns
        self._bounds = self._numeric_boundaries()
        thresholds: list[tuple[float, ...]] = []
        for c, column in enumerate(columns):
            if column.categories is not None:
                thresholds.append(tuple(k + 0.5 for k in range(column.n_states - 1)))
            else:
                finite = {b for (cc, _, _), b in self._bounds.items() if cc == c and math.isfinite(b)}
                thresholds.append(tuple(sorted(finite)))
        self._thresholds = thresholds
        self._index = [{t: k for k, t in enumerate(ts)} for ts in thresholds]
        trees = [self._translate(raw) for raw in self._raw]
        self.forest = Forest(
            thresholds=thresholds,
            trees=trees,
            classes=imported.classes,
            feature_names=[c.name for c in columns],
            source=f"Pipeline({', '.join(name for name, _ in pipeline.steps[:-1])}, {imported.source})",
            categories=[c.labels for c in columns],
            vote=imported.own_vote if vote == "auto" else vote,
        )

    # ------------------------------------------------------------------ translation
    def _numeric_boundaries(self) -> dict[tuple[int, int, float], float]:
        wanted: dict[tuple[int, int], set[float]] = {}
        for raw in self._raw:
            for j, t in zip(raw["feature"], raw["threshold"]):
                c = self.pre.owner.get(j) if j >= 0 else None
                if c is not None and self.pre.columns[c].categories is None:
                    wanted.setdefault((c, j), set()).add(float(t))
        out: dict[tuple[int, int, float], float] = {}
        for (c, j), ts in wanted.items():
            ordered = sorted(ts)
            for t, b in zip(ordered, self.pre.boundaries(c, j, ordered)):
                out[(c, j, t)] = b
        return out

    def _left_states(self, j: int, t: float) -> tuple[int, frozenset[int]] | bool:
        """The states of the node's original feature that go left, or a constant direction
        (``True``: always left) when the encoded column depends on no original column."""
        c = self.pre.owner.get(j)
        if c is None:
            return bool(float(np.float32(self.pre.constant[j])) <= t)
        column = self.pre.columns[c]
        if column.categories is not None:
            encoded = self.pre.codes[c][:, j].astype(np.float32).astype(np.float64)
            return c, frozenset(int(s) for s in np.flatnonzero(encoded <= t))
        b = self._bounds[(c, j, t)]
        if math.isinf(b):
            return b > 0
        cut = self._index[c][b]
        return c, frozenset(range(cut + 1))

    def _translate(self, raw: dict[str, Any]) -> Tree:
        """The raw tree over the original columns: each node's set of states going left
        (:meth:`_left_states`) as a chain of threshold tests (:func:`chain_set_splits`)."""

        def children(node: int) -> tuple[int, int] | None:
            return None if raw["feature"][node] < 0 else (raw["left"][node], raw["right"][node])

        def test(node: int) -> SetSplit | bool:
            found = self._left_states(raw["feature"][node], float(raw["threshold"][node]))
            return found if isinstance(found, bool) else SetSplit(*found)

        chained = chain_set_splits(
            children,
            test,
            [len(ts) + 1 for ts in self._thresholds],
            MAX_NODES,
            f"a tree of the pipeline's forest needs more than {MAX_NODES} nodes over the original columns",
        )
        leaf = [f < 0 for f in chained.feature]
        return Tree(
            tuple(chained.feature),
            tuple(chained.cut),
            tuple(chained.left),
            tuple(chained.right),
            tuple(raw["label"][s] if is_leaf else -1 for s, is_leaf in zip(chained.source, leaf)),
            tuple(
                tuple(float(p) for p in raw["proba"][s]) if is_leaf else None
                for s, is_leaf in zip(chained.source, leaf)
            ),
        )

    # ------------------------------------------------------------------ rows
    def encode(self, X: Any) -> np.ndarray:
        """Original rows (a DataFrame, a Series or a dict for one row) as the forest's values:
        numbers as they are, categories as their state index. Columns are matched by name."""
        pd = pandas()
        if isinstance(X, dict):
            X = pd.DataFrame([X])
        elif isinstance(X, pd.Series):
            X = X.to_frame().T
        if not isinstance(X, pd.DataFrame):
            raise InvalidInstanceError(
                "a pipeline is explained on rows of its original columns: give a DataFrame, a Series or a dict"
            )
        X = in_model_order(X, self.forest.feature_names, by_position=False)  # a pipeline reads names only
        out = np.empty(X.shape, dtype=np.float64)
        for c, column in enumerate(self.pre.columns):
            values = X.iloc[:, c].tolist()
            if column.categories is None:
                self._note_integers(c, X.iloc[:, c])
                try:
                    numbers = np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)
                except (TypeError, ValueError) as exc:
                    raise InvalidInstanceError(f"column {column.name!r} must be numeric: {exc}") from None
                if column.fill is not None:  # what the pipeline's imputer does with a missing value
                    numbers = np.where(np.isnan(numbers), column.fill, numbers)
                out[:, c] = numbers
                continue
            for r, v in enumerate(values):
                out[r, c] = self._state_of(c, v)
        return out

    def _note_integers(self, c: int, series: Any) -> None:
        """Remember whether numeric column ``c`` holds integers: an integer dtype, or integer
        values only (a row of a mixed frame is a Series of objects); one non-integer row makes
        it a float column for good."""
        pd = pandas()
        if pd.api.types.is_integer_dtype(series.dtype):
            integers = True
        elif series.dtype == object:
            integers = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in series.tolist())
        else:
            integers = False
        seen = self.__dict__.setdefault("integer_columns", {})
        seen[c] = seen.get(c, True) and integers

    def _state_of(self, c: int, value: Any) -> int:
        column = self.pre.columns[c]
        assert column.categories is not None
        for s, category in enumerate(column.categories):
            if _same(category, value):
                return s
        if column.admits_missing and _is_missing(value, column.missing_value):
            return column.n_states - 1
        if column.admits_other:
            return len(column.categories)
        raise InvalidInstanceError(
            f"column {column.name!r} has the unknown category {value!r} (known: {list(column.categories)}) "
            "and its encoder does not accept unknown categories"
        )

    def decode(self, values: Any) -> Any:
        """The forest's values (one row or many) as a DataFrame of original values.

        A numeric value is written as the shortest decimal that reads back as its float32
        number, on the side of it that stays in its cell of the forest
        (:func:`~rfexplain.core.floats.cell_decimal`: ``5549.9995``, not ``5549.99951171875``).
        A column the explainer was given as integers (an integer dtype, or integer values:
        :meth:`encode` notes it) stays an integer column: a value that is not an integer
        becomes the integer nearest to it in the same cell, so the row takes the same path
        through every tree and is decided alike (if some value's cell holds no integer, the
        column is a float column in this frame). Either way the row is classified as the
        values were, by the forest and by the pipeline."""
        arr = self.forest.check_instances(values)
        states = self.forest.states(arr)
        integers = getattr(self, "integer_columns", {})
        rows: list[dict[str, Any]] = []
        for r in range(arr.shape[0]):
            row: dict[str, Any] = {}
            for c, column in enumerate(self.pre.columns):
                if column.categories is None:
                    whole = self._integer_in_cell(c, float(arr[r, c])) if integers.get(c) else None
                    exact = cell_decimal(arr[r, c], self.forest.thresholds[c])
                    row[column.name] = whole if whole is not None else exact
                else:
                    row[column.name] = self.pre.state_value(c, int(states[r, c]))
            rows.append(row)
        frame = self.pre.frame(rows)
        for c, column in enumerate(self.pre.columns):
            if integers.get(c) and all(isinstance(row[column.name], int) for row in rows):
                frame[column.name] = frame[column.name].astype(np.int64)
        return frame

    def _integer_in_cell(self, c: int, value: float) -> int | None:
        """The integer nearest to ``value`` with the same state of numeric column ``c``, if any
        lies within 1 of it."""
        if not math.isfinite(value) or abs(value) >= 2**24:  # beyond, not every integer is a float32
            return None
        thresholds = np.asarray(self.forest.thresholds[c], dtype=np.float64)

        def state(x: float) -> int:
            return int(np.searchsorted(thresholds, float(np.float32(x)), side="left"))

        here = state(value)
        for k in sorted({math.floor(value), math.ceil(value)}, key=lambda k: (abs(k - value), k)):
            if state(k) == here:
                return int(k)
        return None

    def decides(self, frame: Any) -> np.ndarray:
        """Class indices the pipeline itself decides on original rows under the forest's vote:
        ``pipeline.predict`` for the soft vote (exact up to :meth:`near_tie`), the hard majority of
        its own trees (:meth:`hard_vote`) for the hard vote."""
        if self.forest.vote == "hard":
            return self.hard_vote(frame)
        # the forest's class order (a binary GradientBoostingClassifier's is reversed)
        classes = [to_python(c) for c in self.forest.classes]
        labels = np.asarray(self.pipeline.predict(frame)).tolist()
        return np.asarray([classes.index(to_python(v)) for v in labels], dtype=np.int64)

    def near_tie(self, frame: Any, a: int, b: int) -> bool:
        """Whether classes ``a`` and ``b`` are a float64 near-tie of the soft vote on the first row:
        their exact sums of the pipeline's trees' ``predict_proba`` differ by no more than the
        rounding error of adding the vectors one by one in float64 (``trees**2 * 2**-52``, the
        entries being in [0, 1]), so ``pipeline.predict`` may decide them otherwise than the exact
        soft vote (see :mod:`rfexplain.core.forest`). Under the additive vote of a boosted model:
        never (its near-ties are measured by ``python -m experiments boosted``)."""
        if self.forest.vote == "additive":
            return False
        encoded = self.pre.encode_frame(frame).astype(np.float32)[:1]
        trees = getattr(self.estimator, "estimators_", [self.estimator])
        vectors = [np.asarray(t.predict_proba(encoded), dtype=np.float64)[0] for t in trees]
        gap = sum((Fraction(float(v[a])) - Fraction(float(v[b])) for v in vectors), Fraction(0))
        return bool(abs(gap) <= Fraction(len(trees) ** 2, 2**52))

    def hard_vote(self, frame: Any) -> np.ndarray:
        """Class indices by hard majority of the pipeline's own trees on original rows."""
        encoded = self.pre.encode_frame(frame).astype(np.float32)
        classes = list(np.asarray(self.estimator.classes_).tolist())
        if hasattr(self.estimator, "estimators_"):  # trees of an ensemble predict class indices
            votes = np.stack([np.asarray(t.predict(encoded)).astype(np.int64) for t in self.estimator.estimators_], 1)
        else:
            votes = np.asarray([[classes.index(v)] for v in np.asarray(self.estimator.predict(encoded)).tolist()])
        counts = np.stack([(votes == k).sum(axis=1) for k in range(len(classes))], axis=1)
        return np.argmax(counts, axis=1)


def _same(a: Any, b: Any) -> bool:
    a_nan = isinstance(a, float) and math.isnan(a)
    b_nan = b is None or (isinstance(b, float) and math.isnan(b))
    if a_nan or b_nan:
        return a_nan and b_nan
    return bool(a == b)


def _is_missing(value: Any, missing_value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    return not (isinstance(missing_value, float) and math.isnan(missing_value)) and value == missing_value
