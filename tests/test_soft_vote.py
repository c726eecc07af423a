"""The soft vote end to end: real forests where the hard and soft votes differ, the SAT engine
against the oracle on them, the circuit engine's refusal, warnings, JSON formats and the CLI."""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from sklearn.datasets import load_iris, load_wine
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

import rfexplain as rx
from rfexplain import Budget, Forest, SoftVoteWarning
from rfexplain.core.errors import UnsupportedQueryError
from rfexplain.engines.base import Instance
from rfexplain.oracle import Oracle
from rfexplain.sat.encodings.cnf import SOFT_BITS
from rfexplain.sat.engine import SatEngine
from tests.hypothesis_budget import examples
from tests.strategies import forests


def _differing(model: Any, X: np.ndarray) -> np.ndarray:
    hard = Forest.from_sklearn(model, vote="hard").predict(X)
    return np.flatnonzero(hard != model.predict(X.astype(np.float32)))


def _keys(reasons: Any) -> set[Any]:
    return {(r.kind, tuple(sorted((f, tuple(sorted(s))) for f, s in r.literals.items())), r.target) for r in reasons}


@pytest.mark.parametrize("soft_bits", [SOFT_BITS, 1, None])
@pytest.mark.parametrize(
    "cls, trees, depth, seed",
    [(RandomForestClassifier, 5, 2, 3), (RandomForestClassifier, 4, 3, 5), (ExtraTreesClassifier, 4, 2, 1)],
)
def test_sat_equals_oracle_where_hard_and_soft_differ(
    cls: Any, trees: int, depth: int, seed: int, soft_bits: int | None
) -> None:
    """Real forests small enough for the oracle: every query of the SAT engine under the soft
    vote equals the oracle's on inputs whose hard and soft votes differ, whether comparisons
    start relaxed (and are refined on demand: one bit per weight forces refinements) or exact.
    With one bit per weight the solver's refinements are under test, so the prefilter, which
    settles most of these small queries without the solver, is off."""
    X, y = load_iris(return_X_y=True)
    model = cls(n_estimators=trees, max_depth=depth, min_samples_leaf=5, random_state=seed).fit(X, y)
    forest = Forest.from_sklearn(model)
    assert forest.vote == "soft" and not forest.aggregation.is_majority
    oracle = Oracle(forest)
    grid = np.asarray(oracle.grid)
    differ = np.flatnonzero(forest.predict_states(grid) != forest.with_vote("hard").predict_states(grid))
    assert len(differ), "expected inputs where the hard and soft votes differ"
    with SatEngine(forest, soft_bits=soft_bits, prefilter=soft_bits != 1) as engine:
        for k in np.random.default_rng(seed).choice(differ, size=min(3, len(differ)), replace=False):
            instance = Instance.from_states(forest, grid[k])
            values = np.asarray([instance.values], dtype=np.float32)
            assert forest.classes[instance.prediction] == model.predict(values)[0]
            assert _keys(engine.sufficient_reasons(instance, Budget())) == _keys(oracle.sufficient_reasons(instance))
            assert _keys(engine.necessary_reasons(instance, Budget())) == _keys(oracle.necessary_reasons(instance))
            assert engine.robustness(instance) == oracle.robustness(instance)
            for target in range(forest.n_classes):
                if target != instance.prediction:
                    got = _keys(engine.contrastive_reasons(instance, target, Budget()))
                    assert got == _keys(oracle.contrastive_reasons(instance, target))
            for reason in engine.sufficient_reasons(instance, Budget()):
                assert rx.verify(reason, model).ok
        refined = sum(len(o.refined) for o in engine._oracles.values())
        if soft_bits is None:
            assert not any(o.formula.relaxed for o in engine._oracles.values())
        elif soft_bits == 1:
            assert refined > 0, "one bit per weight should have needed exact comparisons"


def test_soft_vote_cxp_enumeration_settles_without_the_solver() -> None:
    """Under the soft vote the dual loop enumerating CXps takes the prefilter's unsatisfiable
    answers without cores (the fixed set, shrunk to an AXp) instead of asking the solver for a
    core: the soft-vote solver is far slower than the prefilter (ann-thyroid, SAT paper's forest:
    two of its calls ran 13.6 s without an answer). On this forest the prefilter settles every
    query, so the solver is never called, and the CXps are still exactly the oracle's."""
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=4, max_depth=3, min_samples_leaf=5, random_state=5).fit(X, y)
    forest = Forest.from_sklearn(model)
    assert forest.vote == "soft" and not forest.aggregation.is_majority
    oracle = Oracle(forest)
    with SatEngine(forest) as engine:
        for x in X[:20]:  # the solver answered 17 of their queries when the loop asked it for cores
            instance = Instance.of(forest, x)
            assert _keys(engine.necessary_reasons(instance, Budget())) == _keys(oracle.necessary_reasons(instance))
        assert engine.stats.sat_calls + engine.stats.unsat_calls == 0
        assert engine.stats.screened_unsat > 0


def test_explanations_of_differing_rows_verify_against_the_model() -> None:
    """Where the hard and soft votes differ, the explained prediction is ``model.predict`` and
    every reason's witnesses are confirmed by the model's own trees (no SoftVoteWarning)."""
    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=25, max_depth=2, random_state=0).fit(X, y)
    rows = _differing(model, X)
    assert len(rows), "expected rows where the hard and soft votes differ"
    with warnings.catch_warnings():
        warnings.simplefilter("error", SoftVoteWarning)
        with rx.Explainer(model, engine="sat") as explainer:
            for row in rows[:3]:
                decision = explainer.explain(X[row])
                assert decision.prediction == model.predict(X[row : row + 1])[0]
                reasons = [decision.sufficient_reason(), decision.necessary_reason()]
                reasons += list(decision.sufficient_reasons(limit=3))
                reasons += list(decision.necessary_reasons(limit=3))
                reasons += list(decision.shortest_necessary_reasons(limit=2))
                for target in model.classes_:
                    if target != decision.prediction:
                        reasons += list(decision.contrastive_reasons(target, limit=2))
                for reason in reasons:
                    if reason is not None:
                        result = rx.verify(reason, model)
                        assert result.ok, (str(reason), result.problems)
                        # the same witnesses fail the hard vote somewhere: it is another classifier
                assert rx.verify(decision.sufficient_reason(), model, vote="hard").ok is False


def test_hard_vote_warns_and_soft_does_not() -> None:
    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=25, max_depth=2, random_state=0).fit(X, y)
    row = X[_differing(model, X)[0]]
    with pytest.warns(SoftVoteWarning):
        rx.Explainer(model, engine="sat", vote="hard").explain(row)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SoftVoteWarning)
        rx.Explainer(model, engine="sat").explain(row)


def test_circuit_engine_refuses_the_soft_vote_and_names_the_engines_that_answer() -> None:
    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
    with pytest.raises(UnsupportedQueryError, match=r"\['oracle', 'sat'\]"):
        rx.Explainer(model, engine="circuit")
    assert rx.Explainer(model, engine="circuit", vote="hard").forest.vote == "hard"
    pure = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)  # unlimited depth: pure leaves
    explainer = rx.Explainer(pure, engine="circuit")
    assert explainer.forest.vote == "soft" and explainer.forest.aggregation.is_majority


@settings(max_examples=examples(50), deadline=None)
@given(forests(vote="soft"))
def test_soft_forest_json_round_trips_losslessly(forest: Forest) -> None:
    again = Forest.from_json(forest.to_json())
    assert again == forest and again.vote == "soft"
    assert [t.proba for t in again.trees] == [t.proba for t in forest.trees]
    assert again.to_json() == forest.to_json()
    grid = np.asarray(Oracle(forest).grid)
    assert np.array_equal(again.predict_states(grid), forest.predict_states(grid))


def test_version_1_documents_load_as_hard_vote() -> None:
    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y)
    doc = Forest.from_sklearn(model).to_dict()
    doc["version"] = 1
    del doc["vote"]
    for tree in doc["trees"]:
        del tree["proba"]
    old = Forest.from_json(json.dumps(doc))
    assert old.vote == "hard" and not old.has_proba
    assert np.array_equal(old.predict(X), Forest.from_sklearn(model, vote="hard").predict(X))
    # a version-1 file that happens to carry vectors and a vote field is still read as hard vote
    doc["vote"] = "soft"
    assert Forest.from_json(json.dumps(doc)).vote == "hard"


def test_cli_vote_option(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from rfexplain.cli import main

    X, y = load_wine(return_X_y=True)
    model = RandomForestClassifier(n_estimators=25, max_depth=2, random_state=0).fit(X, y)
    path = tmp_path / "forest.json"
    path.write_text(Forest.from_sklearn(model).to_json())
    row = X[_differing(model, X)[0]]
    answers = {}
    for vote in ("auto", "hard"):
        code = main(["explain", str(path), "--values", ",".join(map(repr, row.tolist())), "--vote", vote, "--json"])
        assert code == 0
        answers[vote] = json.loads(capsys.readouterr().out)["prediction"]
    assert answers["auto"] == model.predict(row[None, :])[0]
    assert answers["hard"] != answers["auto"]
