"""Pipelines explained in their original columns (issue "Explanations in the user's own columns").

The translated forest is checked against the pipeline itself on every state vector (exactness),
every engine against the oracle on the original-feature space under the same vote, and every
witness by running the pipeline on a real DataFrame row: ``pipeline.predict`` for the soft vote
(the default, ``vote="auto"``), the majority of its own trees for ``vote="hard"``. The only
difference allowed with ``pipeline.predict`` is a float64 near-tie, verified as such.
"""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    RobustScaler,
    StandardScaler,
)

import rfexplain as rx
from rfexplain import Forest
from rfexplain.core.errors import InvalidInstanceError, UnsupportedModelError, UnsupportedQueryError
from rfexplain.pipelines import OTHER, PipelineModel
from tests.hypothesis_budget import examples

ENGINES = ("sat", "circuit")
SCALERS = {
    "standard": StandardScaler,
    "minmax": MinMaxScaler,
    "maxabs": MaxAbsScaler,
    "robust": RobustScaler,
    "passthrough": None,
}
ENCODERS = {
    "onehot": lambda: OneHotEncoder(),
    "onehot-drop-first": lambda: OneHotEncoder(drop="first"),
    "onehot-ignore": lambda: OneHotEncoder(handle_unknown="ignore"),
    "onehot-infrequent": lambda: OneHotEncoder(handle_unknown="infrequent_if_exist", min_frequency=6),
    "ordinal": lambda: OrdinalEncoder(),
    "ordinal-unknown": lambda: OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
}


def make_case(seed: int, encoder: str, scaler: str, trees: int, depth: int) -> tuple[Pipeline, pd.DataFrame]:
    """A small mixed-type frame (two categorical columns, one numeric) and a fitted pipeline."""
    rng = np.random.default_rng(seed)
    n = 60
    frame = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(float),
            "color": rng.choice(["red", "green", "blue", "black"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "size": rng.choice(["S", "M", "L"], n),
        }
    )
    y = ((frame.color == "red") ^ (frame.age > 45) | ((frame["size"] == "L") & (frame.color == "blue"))).astype(int)
    flips = rng.random(n) < 0.1
    y = np.where(flips, 1 - y, y)
    scale = SCALERS[scaler]
    prep = ColumnTransformer(
        [
            ("cat", ENCODERS[encoder](), ["color", "size"]),
            ("num", scale() if scale is not None else "passthrough", ["age"]),
        ]
    )
    model = RandomForestClassifier(n_estimators=trees, max_depth=depth, random_state=seed, bootstrap=trees > 1)
    return make_pipeline(prep, model).fit(frame, y), frame


def assert_pipeline_decides(model: PipelineModel, ours: np.ndarray, rows: pd.DataFrame) -> None:
    """The forest's decisions ``ours`` on original ``rows`` are the pipeline's own under the
    forest's vote (:meth:`PipelineModel.decides`); a difference must be a verified float64
    near-tie of the soft vote."""
    theirs = model.decides(rows)
    assert len(ours) == len(theirs)
    for r in np.flatnonzero(np.asarray(ours) != theirs):
        assert model.forest.vote == "soft", r
        assert model.near_tie(rows.iloc[[r]], int(ours[r]), int(theirs[r])), r


def state_rows(model: PipelineModel) -> tuple[np.ndarray, Any]:
    forest = model.forest
    grid = np.asarray(list(itertools.product(*[range(k) for k in forest.states_per_feature])))
    values = np.asarray([[forest.state_value(f, s) for f, s in enumerate(row)] for row in grid])
    return grid, model.decode(values)


cases = st.tuples(
    st.integers(0, 10_000),
    st.sampled_from(sorted(ENCODERS)),
    st.sampled_from(sorted(SCALERS)),
    st.integers(1, 4),
    st.integers(1, 3),
)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases)
def test_translation_is_exact_on_every_state_vector(case: tuple[int, str, str, int, int]) -> None:
    pipe, frame = make_case(*case)
    for vote in ("hard", "auto"):
        model = PipelineModel(pipe, vote=vote)
        assert model.forest.vote == ("hard" if vote == "hard" else "soft") and model.forest.has_proba
        grid, rows = state_rows(model)
        assert_pipeline_decides(model, model.forest.predict_states(grid), rows)
        assert_boundaries_exact(model, frame)
        # and on the training rows themselves, read through encode()
        assert_pipeline_decides(model, model.forest.predict_index(model.encode(frame)), frame)
    if case[3] == 1:  # one tree: scikit-learn's predict is the hard vote
        labels = np.asarray(model.forest.classes)[model.hard_vote(rows)]
        assert labels.tolist() == pipe.predict(rows).tolist()


def _witnesses_hold(explainer: rx.Explainer, model: PipelineModel, reason: Any, decision: int) -> None:
    """Every witness, as a DataFrame row of original values, is classified by the pipeline as
    the witness claims (under the explained vote), and differently from the decision."""
    assert explainer.forest.vote == model.forest.vote
    for witness in reason.witnesses:
        row = explainer.original_rows(witness.values)
        assert witness.prediction != decision
        assert_pipeline_decides(model, np.asarray([witness.prediction]), row)


def _engines_for(pipe: Pipeline, vote: str) -> dict[str, rx.Explainer]:
    """The engines able to explain ``pipe`` under ``vote``: the circuit engine refuses the soft
    vote of a forest with impure leaves (checked here), so it is compared under the hard vote."""
    out = {}
    for name in ENGINES:
        try:
            out[name] = rx.Explainer(pipe, engine=name, vote=vote)
        except UnsupportedQueryError:
            assert name == "circuit" and not PipelineModel(pipe, vote=vote).forest.aggregation.is_majority
    return out


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases, row=st.integers(0, 59), unknown=st.booleans(), vote=st.sampled_from(["auto", "hard"]))
def test_every_engine_agrees_with_the_oracle_in_original_features(
    case: tuple[int, str, str, int, int], row: int, unknown: bool, vote: str
) -> None:
    pipe, frame = make_case(*case)
    x = frame.iloc[row].copy()
    if unknown and case[1] in ("onehot-ignore", "onehot-infrequent", "ordinal-unknown"):
        x["color"] = "purple"  # a category the encoder never saw: the "(other)" state
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rx.SoftVoteWarning)
        oracle = rx.Explainer(pipe, engine="oracle", vote=vote).explain(x)
        others = {name: explainer.explain(x) for name, explainer in _engines_for(pipe, vote).items()}
    assert "sat" in others
    model = oracle.explainer.pipeline
    assert model is not None
    expected = {
        q: set(oracle.ask(q)) for q in ("sufficient_reasons", "necessary_reasons", "shortest_sufficient_reasons")
    }
    assert_pipeline_decides(model, np.asarray([oracle.prediction_index]), x.to_frame().T)
    for name, decision in others.items():
        assert decision.prediction == oracle.prediction, name
        assert decision.robustness() == oracle.robustness(), name
        for q, reasons in expected.items():
            found = list(decision.ask(q))
            assert set(found) == reasons, (name, q)
            for reason in found:
                _witnesses_hold(decision.explainer, model, reason, decision.prediction_index)
    for reasons in expected.values():
        for reason in reasons:
            # one literal per original column: never two categories of a group as two features
            names = [reason.space.feature_names[lit.feature] for lit in reason.conditions]
            assert len(names) == len(set(names)) and set(names) <= {"age", "color", "size"}


def test_unknown_category_is_its_own_state_when_the_encoder_admits_it() -> None:
    pipe, frame = make_case(3, "onehot-ignore", "standard", 3, 3)
    explainer = rx.Explainer(pipe, engine="oracle")
    row = {**frame.iloc[0].to_dict(), "color": "purple"}
    decision = explainer.explain(row)
    assert explainer.forest.categories[1][-1] == OTHER
    assert decision.instance.states[1] == len(explainer.forest.categories[1]) - 1
    strict, _ = make_case(3, "onehot", "standard", 3, 3)
    with pytest.raises(InvalidInstanceError, match="purple"):
        rx.Explainer(strict, engine="oracle").explain(row)


def test_shuffled_columns_give_the_same_explanation() -> None:
    pipe, frame = make_case(5, "onehot-drop-first", "minmax", 4, 3)
    explainer = rx.Explainer(pipe, engine="sat")
    for k in range(5):
        row = frame.iloc[k]
        same = explainer.explain(row[["size", "age", "color"]])
        first = explainer.explain(row)
        assert set(same.sufficient_reasons()) == set(first.sufficient_reasons())
        assert str(same.sufficient_reason()) == str(first.sufficient_reason())


def test_reasons_print_categories_and_original_thresholds() -> None:
    pipe, frame = make_case(1, "onehot", "standard", 4, 3)
    explainer = rx.Explainer(pipe, engine="sat")
    texts = []
    for k in range(20):
        reason = explainer.explain(frame.iloc[k]).sufficient_reason()
        texts.append(str(reason))
        for lit in reason.to_dict()["literals"]:
            if lit["name"] in ("color", "size"):
                assert isinstance(lit["categories"], list) and "intervals" not in lit
            else:
                assert all(len(pair) == 2 for pair in lit["intervals"])
    assert any("color in {" in t for t in texts)
    # the age thresholds are on the original scale (years), not on the standardised one
    ages = explainer.forest.thresholds[list(explainer.forest.feature_names).index("age")]
    assert ages and all(18 <= t <= 80 for t in ages)


@pytest.mark.parametrize("vote, seed", [("hard", 7), ("auto", 9)])
def test_bare_encoded_reasons_are_not_minimal_in_original_features(vote: str, seed: int) -> None:
    # The bare forest on one-hot columns describes a colour through indicator literals
    # ("color_red = 0 and color_blue = 0"), whose free space holds impossible inputs. Projected
    # to original columns its reason is still sufficient, so it contains one of ours; on these
    # cases it is sometimes strictly larger (not subset-minimal in original features), and
    # sometimes names two indicators of one group. Both sides explain the same vote.
    pipe, frame = make_case(seed, "onehot", "passthrough", 5, 3)
    explainer = rx.Explainer(pipe, engine="oracle", vote=vote)
    bare = rx.Explainer(pipe[-1], engine="oracle", vote=vote)
    assert explainer.forest.vote == bare.forest.vote == ("hard" if vote == "hard" else "soft")
    encoded = pipe[:-1].transform(frame)
    group_of = [n.split("__")[1].split("_")[0] for n in pipe[:-1].get_feature_names_out()]
    names = explainer.forest.feature_names
    two_of_a_group = not_minimal = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rx.SoftVoteWarning)
        for k in range(len(frame)):
            ours = {
                frozenset(names[f] for f in r.features) for r in explainer.explain(frame.iloc[k]).sufficient_reasons()
            }
            groups = [group_of[lit.feature] for lit in bare.explain(encoded[k]).sufficient_reason().conditions]
            projected = frozenset(groups)
            assert any(axp <= projected for axp in ours)
            not_minimal += projected not in ours
            two_of_a_group += len(groups) != len(projected)
    assert not_minimal > 0 and two_of_a_group > 0


@pytest.mark.parametrize(
    "step, word",
    [
        (PCA(n_components=2), "PCA"),
        (PolynomialFeatures(), "PolynomialFeatures"),
        (FunctionTransformer(np.log1p), "declared monotone"),
    ],
)
def test_refused_steps_are_named(step: Any, word: str) -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.random(30), "b": rng.random(30), "c": rng.random(30)})
    pipe = Pipeline([("prep", step), ("forest", RandomForestClassifier(n_estimators=2, random_state=0))])
    pipe.fit(frame, (frame.a > 0.5).astype(int))
    with pytest.raises(UnsupportedModelError, match=word) as info:
        rx.Explainer(pipe)
    assert "prep" in str(info.value)


def test_a_function_declared_monotone_is_accepted_and_exact() -> None:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"income": rng.integers(1, 10_000, 80).astype(float), "city": rng.choice(["x", "y"], 80)})
    y = (frame.income > 3000).astype(int)
    prep = ColumnTransformer([("log", FunctionTransformer(np.arcsinh), ["income"]), ("cat", OneHotEncoder(), ["city"])])
    pipe = Pipeline([("prep", prep), ("forest", RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0))])
    pipe.fit(frame, y)
    model = PipelineModel(pipe, monotone=["log"])
    assert all(1 <= t <= 10_000 for t in model.forest.thresholds[0])
    grid, rows = state_rows(model)
    assert model.forest.predict_states(grid).tolist() == model.hard_vote(rows).tolist()
    assert_boundaries_exact(model, frame)
    soft = PipelineModel(pipe, monotone=["log"])
    assert_pipeline_decides(soft, soft.forest.predict_states(grid), rows)
    assert_boundaries_exact(soft, frame)


def assert_boundaries_exact(model: PipelineModel, frame: pd.DataFrame) -> None:
    """On both sides of every numeric boundary (the boundary and the next float32 above it),
    with the other columns of real rows, the forest decides as the pipeline under its vote."""
    rows = []
    for f, name in enumerate(model.forest.feature_names):
        if model.forest.categories[f] is not None:
            continue
        for b in model.forest.thresholds[f]:
            for value in (b, float(np.nextafter(np.float32(b), np.float32(np.inf)))):
                for k in range(0, len(frame), 7):
                    rows.append({**frame.iloc[k].to_dict(), name: value})
    if rows:
        probe = pd.DataFrame(rows)[list(frame.columns)]
        assert_pipeline_decides(model, model.forest.predict_index(model.encode(probe)), probe)


def test_a_monotone_function_undefined_on_some_numbers_is_refused() -> None:
    frame = pd.DataFrame({"income": np.arange(1.0, 41.0), "city": ["x", "y"] * 20})
    prep = ColumnTransformer([("log", FunctionTransformer(np.log1p), ["income"]), ("cat", OneHotEncoder(), ["city"])])
    pipe = Pipeline([("prep", prep), ("forest", RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0))])
    pipe.fit(frame, (frame.income > 20).astype(int))
    with pytest.raises(UnsupportedModelError, match="NaN"):
        PipelineModel(pipe, monotone=["log"])


def test_cli_batch_takes_the_pipeline_and_a_csv_of_original_columns(tmp_path: Path) -> None:
    import joblib

    from rfexplain.cli import main

    pipe, frame = make_case(2, "onehot-ignore", "robust", 3, 3)
    path = tmp_path / "pipe.joblib"
    joblib.dump(pipe, path)
    rows = tmp_path / "rows.csv"
    frame.iloc[:6][["size", "color", "age"]].to_csv(rows, index=False)  # shuffled header
    out = tmp_path / "out.jsonl"
    assert main(["batch", str(path), "--input", str(rows), "--engine", "sat", "-o", str(out)]) == 0
    docs = [json.loads(line) for line in out.read_text().splitlines()]
    model = PipelineModel(pipe)
    assert model.forest.vote == "soft"  # the command line explains the pipeline's own predict by default
    ours = np.asarray([model.forest.class_index(d["prediction"]) for d in docs])
    assert_pipeline_decides(model, ours, frame.iloc[:6])
    assert all("name" in lit for d in docs for r in d["result"] for lit in r["literals"])
    labelled = tmp_path / "labelled.csv"  # the test set as saved with its label: the label is ignored
    frame.iloc[:6][["size", "color", "age"]].assign(label=1).to_csv(labelled, index=False)
    out2 = tmp_path / "out2.jsonl"
    assert main(["batch", str(path), "--input", str(labelled), "--engine", "sat", "-o", str(out2)]) == 0
    docs2 = [json.loads(line) for line in out2.read_text().splitlines()]
    assert [{**d, "time": 0} for d in docs2] == [{**d, "time": 0} for d in docs]


def test_pipeline_with_bounds_and_immutable_columns() -> None:
    pipe, frame = make_case(4, "onehot-drop-first", "standard", 4, 3)
    explainer = rx.Explainer(pipe, engine="sat", bounds={"age": (18, 80)}, immutable=["color"])
    model = explainer.pipeline
    assert model is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rx.SoftVoteWarning)
        for k in range(8):
            decision = explainer.explain(frame.iloc[k])
            for reason in decision.necessary_reasons():
                assert "color" not in [reason.space.feature_names[f] for f in reason.features]
                for witness in reason.witnesses:
                    row = explainer.original_rows(witness.values)
                    assert row["color"].iloc[0] == frame["color"].iloc[k]
                    assert 18 <= row["age"].iloc[0] <= 80
                    assert witness.prediction != decision.prediction_index
                    assert_pipeline_decides(model, np.asarray([witness.prediction]), row)
            assert "given age in [18, 80]" in str(decision.sufficient_reason())


@pytest.mark.slow
def test_demo_pipeline_on_the_shipped_loans_table() -> None:
    from rfexplain.datasets import loans
    from rfexplain.pipeline_demo import run_pipeline_demo

    X, y = loans()
    assert X.shape == (600, 8) and set(y) == {"yes", "no"}
    assert {"employment", "housing", "purpose", "credit_history"} <= set(X.select_dtypes(exclude="number").columns)
    lines: list[str] = []
    assert run_pipeline_demo(n_instances=2, write=lines.append) == 0
    text = "\n".join(lines)
    assert "sufficient reason:" in text and "checked by the pipeline" in text and "FAILED" not in text


@pytest.mark.parametrize("strategy", ["most_frequent", "constant"])
def test_imputed_columns_missing_is_an_explicit_state(strategy: str) -> None:
    from sklearn.impute import SimpleImputer

    from rfexplain.pipelines import MISSING

    rng = np.random.default_rng(11)
    n = 80
    frame = pd.DataFrame(
        {
            "age": np.where(rng.random(n) < 0.2, np.nan, rng.integers(18, 80, n).astype(float)),
            "color": np.where(rng.random(n) < 0.2, None, rng.choice(["red", "green", "blue"], n)).astype(object),
        }
    )
    y = ((frame.color == "red") | (frame.age.fillna(0) > 50) | frame.color.isna()).astype(int)
    cat = make_pipeline(SimpleImputer(strategy=strategy, fill_value="n/a"), OneHotEncoder(handle_unknown="ignore"))
    num = make_pipeline(SimpleImputer(strategy="median"), StandardScaler())
    prep = ColumnTransformer([("cat", cat, ["color"]), ("num", num, ["age"])])
    pipe = make_pipeline(prep, RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0)).fit(frame, y)
    for vote in ("hard", "auto"):
        model = PipelineModel(pipe, vote=vote)
        assert model.forest.feature_names == ("age", "color") and model.forest.categories[1][-1] == MISSING
        grid, rows = state_rows(model)
        assert_pipeline_decides(model, model.forest.predict_states(grid), rows)
        # rows with missing values, read through encode(), decide as the pipeline itself
        assert_pipeline_decides(model, model.forest.predict_index(model.encode(frame)), frame)
    missing_color = int(np.flatnonzero(frame.color.isna())[0])
    assert model.encode(frame.iloc[[missing_color]])[0, 1] == len(model.forest.categories[1]) - 1
    reason = rx.Explainer(pipe, engine="sat").explain(frame.iloc[missing_color]).sufficient_reason()
    for lit in reason.to_dict()["literals"]:  # the instance satisfies its sufficient reason
        assert lit["name"] != "color" or MISSING in lit["categories"]


def test_auto_explains_pipeline_predict_where_the_hard_vote_differs() -> None:
    """A depth-limited forest (impure leaves): under ``vote="auto"`` the decision explained is
    ``pipeline.predict`` on every row where the trees' majority says otherwise, without a
    SoftVoteWarning, and every witness is classified by ``pipeline.predict`` as it claims."""
    pipe, frame = make_case(1, "onehot", "standard", 7, 2)
    explainer = rx.Explainer(pipe, engine="sat")
    model = explainer.pipeline
    assert model is not None and explainer.forest.vote == "soft" and not explainer.forest.aggregation.is_majority
    hard = PipelineModel(pipe, vote="hard").forest
    predicted = model.decides(frame)  # pipeline.predict as class indices
    differ = np.flatnonzero(hard.predict_index(model.encode(frame)) != predicted)
    assert len(differ) >= 5
    with warnings.catch_warnings():
        warnings.simplefilter("error", rx.SoftVoteWarning)
        for k in differ:
            decision = explainer.explain(frame.iloc[k])
            assert decision.prediction == pipe.predict(frame.iloc[[k]])[0] == decision.sklearn_prediction
            reasons = decision.necessary_reasons(limit=4)
            assert reasons
            for reason in reasons:
                assert reason.witnesses
                _witnesses_hold(explainer, model, reason, decision.prediction_index)
    with pytest.warns(rx.SoftVoteWarning):  # the hard vote, asked for, is flagged on these rows
        rx.Explainer(pipe, engine="sat", vote="hard").explain(frame.iloc[differ[0]])
    with pytest.raises(UnsupportedQueryError):  # counting votes cannot express this soft vote
        rx.Explainer(pipe, engine="circuit")


@pytest.mark.parametrize("vote", ["auto", "soft", "hard"])
def test_bounds_and_immutable_keep_the_vote(vote: str) -> None:
    pipe, frame = make_case(1, "onehot", "standard", 7, 2)
    explainer = rx.Explainer(pipe, engine="oracle", vote=vote, bounds={"age": (18, 80)}, immutable=["color"])
    model = explainer.pipeline
    assert model is not None
    mode = "hard" if vote == "hard" else "soft"
    assert explainer.forest.vote == model.forest.vote == mode and explainer.forest.has_proba
    values = model.encode(frame)
    # within the bounds, the restricted forest decides as the pipeline's forest
    assert explainer.forest.predict_index(values).tolist() == model.forest.predict_index(values).tolist()
    for k in range(6):
        with warnings.catch_warnings():  # only the hard vote may differ from pipeline.predict
            warnings.simplefilter("ignore" if mode == "hard" else "error", rx.SoftVoteWarning)
            decision = explainer.explain(frame.iloc[k])
        assert decision.fixed is not None
        held = decision.fixed.explainer.forest
        assert held.vote == mode and held.has_proba
        assert decision.fixed.prediction_index == decision.prediction_index
        for reason in decision.necessary_reasons():
            _witnesses_hold(explainer, model, reason, decision.prediction_index)


def test_pipeline_forest_json_round_trip_keeps_categories_bounds_and_vote() -> None:
    from rfexplain.core.domain import restrict

    pipe, frame = make_case(2, "onehot-ignore", "robust", 5, 2)
    model = PipelineModel(pipe)
    age = model.forest.feature_names.index("age")
    bounded = restrict(model.forest, bounds={age: (18.0, 80.0)})
    values = model.encode(frame)
    for forest in (model.forest, bounded, bounded.with_vote("hard"), model.forest.with_vote("hard")):
        back = Forest.from_json(forest.to_json())
        assert back == forest
        assert back.categories == model.forest.categories and OTHER in (back.categories[1] or ())
        assert back.bounds == forest.bounds and back.vote == forest.vote
        assert [t.proba for t in back.trees] == [t.proba for t in forest.trees]
        assert back.predict_index(values).tolist() == forest.predict_index(values).tolist()
    assert bounded.vote == "soft" and bounded.bounds[age] == (18.0, 80.0)
    assert bounded.with_vote("hard").bounds == bounded.bounds  # with_vote keeps the domain


def test_near_tie_is_the_float64_rounding_margin_of_the_soft_vote() -> None:
    """Two trees with pure leaves: where they disagree the soft vote is an exact tie (a near-tie,
    decided for the lowest class by both sides); where they agree the margin is a whole tree."""
    pipe, frame = make_case(3, "onehot", "passthrough", 2, 8)
    model = PipelineModel(pipe)
    assert model.forest.aggregation.is_majority  # pure leaves
    encoded = pipe[:-1].transform(frame)
    votes = np.stack([t.predict(encoded) for t in pipe[-1].estimators_], axis=1)
    split = np.flatnonzero(votes[:, 0] != votes[:, 1])
    agree = np.flatnonzero(votes[:, 0] == votes[:, 1])
    assert len(split) and len(agree)
    for k in split:
        assert model.near_tie(frame.iloc[[k]], 0, 1) and model.decides(frame.iloc[[k]])[0] == 0
    for k in agree:
        assert not model.near_tie(frame.iloc[[k]], 0, 1)
    assert_pipeline_decides(model, model.forest.predict_index(model.encode(frame)), frame)


def test_explain_many_in_processes_keeps_the_pipeline_vote() -> None:
    """Workers receive the forest as JSON: the leaf vectors and the soft vote travel with it."""
    pipe, frame = make_case(1, "onehot", "standard", 7, 2)
    explainer = rx.Explainer(pipe, engine="sat")
    model = explainer.pipeline
    assert model is not None
    rows = frame.iloc[:8]
    records = explainer.explain_many(rows, "sufficient_reason", n_jobs=2, chunk_size=4)
    assert all(r.ok for r in records)
    ours = np.asarray([model.forest.class_index(r.prediction) for r in records])
    assert_pipeline_decides(model, ours, rows)
    hard = PipelineModel(pipe, vote="hard").forest.predict_index(model.encode(rows))
    assert ours.tolist() != hard.tolist()  # these rows include ones where the two votes differ


def test_reasons_of_a_pipeline_verify_against_the_forest_read_from_it() -> None:
    """``verify`` reads a forest's trees: given a pipeline that transforms its input it says to
    verify against ``explainer.forest`` (it used to advise explaining the bare forest instead,
    which the explainer no longer needs), and there every claim is proven, reported as the
    forest model's."""
    from rfexplain.pipeline_demo import loans_pipeline

    pipe, X_test, _ = loans_pipeline()
    explainer = rx.Explainer(pipe, engine="sat")
    decision = explainer.explain(X_test.iloc[0])
    for reason in (decision.sufficient_reason(), decision.necessary_reason()):
        assert reason is not None
        with pytest.raises(UnsupportedModelError, match=r"explainer\.forest"):
            rx.verify(reason, pipe)
        verdict = rx.verify(reason, explainer.forest)
        assert verdict.ok, verdict
        assert any("the forest model" in check.how for check in verdict.checks)
