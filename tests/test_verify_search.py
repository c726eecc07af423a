"""The verifier's own search (:class:`rfexplain.verify.BoxSearch`) against brute force, and the
verifier on a forest of scikit-learn's defaults.

``find(box, classes)`` must answer exactly: ``None`` iff no point of the box (one cell per feature,
cells drawn as arbitrary, even non-contiguous, sets) is decided as one of ``classes``; otherwise a
point of the box that is. Brute force classifies every point of the box by walking the trees
(:meth:`BoxSearch.classify`), not through the leaf boxes the search uses.
"""

from __future__ import annotations

import itertools
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

import rfexplain as rx
from rfexplain.core.budget import Budget
from rfexplain.verify import Box, BoxSearch, _trees_of
from tests.hypothesis_budget import examples
from tests.strategies import forests


@st.composite
def _searches(draw: st.DrawFn) -> tuple[BoxSearch, Box, frozenset[int]]:
    vote = draw(st.sampled_from(["hard", "soft"]))
    forest = draw(forests(vote=vote))
    search = BoxSearch(_trees_of(forest), forest.space.thresholds, vote, Budget.of(None))
    box = []
    for f in range(forest.n_features):
        cells = st.integers(0, search.n_cells(f) - 1)
        # single cells half the time: a box of one point meets the vote's exact ties
        box.append(tuple(sorted(draw(st.one_of(cells.map(lambda c: {c}), st.sets(cells, max_size=search.n_cells(f)))))))
    classes = frozenset(draw(st.sets(st.integers(0, forest.n_classes - 1), min_size=1)))
    return search, box, classes


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_searches())
def test_the_verifiers_search_answers_as_brute_force(
    case: tuple[BoxSearch, list[tuple[int, ...]], frozenset[int]],
) -> None:
    search, box, classes = case
    points = [list(p) for p in itertools.product(*box)]
    decided = search.classify(points) if points else []
    found = search.find(box, classes)
    if not any(c in classes for c in decided):
        assert found is None
    else:
        assert found is not None
        assert all(found[f] in box[f] for f in range(len(box)))
        assert search.classify([found])[0] in classes


def test_the_verifier_checks_reasons_on_a_forest_of_sklearn_defaults() -> None:
    """100 trees of unlimited depth on 30 features: the old search (every tree walked from its root
    in every box, bounds per class apart, boxes halved by cell count) had not checked this
    sufficient reason after 300 s; the timeout makes such a search fail here, not hang."""
    data = load_breast_cancer()
    model = RandomForestClassifier(random_state=0).fit(data.data[:400], data.target[:400])
    explanation = rx.Explainer(model, engine="sat").explain(data.data[450])
    for reason in (explanation.sufficient_reason(), explanation.necessary_reason()):
        assert reason is not None
        verdict = rx.verify(reason, model, timeout=120)
        assert verdict.ok, verdict


@pytest.mark.parametrize("vote", ["soft", "hard"])
def test_verify_gives_a_model_fitted_on_a_frame_its_column_names(vote: str) -> None:
    """scikit-learn warns ("X does not have valid feature names") when a model fitted on a
    DataFrame is given an array; the verifier asks the model itself, so it must pass a frame."""
    X, y = load_iris(return_X_y=True, as_frame=True)
    model = ExtraTreesClassifier(n_estimators=5, random_state=0).fit(X, y)
    reason = rx.Explainer(model, vote=vote).explain(X.iloc[0]).sufficient_reason()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rx.verify(reason, model).ok
