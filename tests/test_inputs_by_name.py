"""Inputs matched by name (issue "Guarantees that hold", defect 1): a named row, frame or CSV
whose columns come in another order than the model's is read by name, never by position."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx
from rfexplain.cli import main
from rfexplain.core.errors import InvalidInstanceError
from tests.hypothesis_budget import examples

DATA = load_iris(as_frame=True)
MODEL = RandomForestClassifier(n_estimators=10, max_depth=3, random_state=0).fit(DATA.data, DATA.target)
NAMES = list(DATA.data.columns)


def test_reversed_series_is_matched_by_name() -> None:
    # the reproduction of the issue: read by position, this row was predicted 2 with a "reason"
    row = DATA.data.iloc[60]
    assert MODEL.predict(DATA.data.iloc[[60]])[0] == 1
    decision = rx.Explainer(MODEL, engine="oracle").explain(row[row.index[::-1]])
    assert decision.prediction == 1
    assert decision.values == rx.Explainer(MODEL, engine="oracle").explain(row).values


def test_reversed_csv_header_is_matched_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import joblib

    model_path = tmp_path / "model.joblib"
    joblib.dump(MODEL, model_path)
    csv = tmp_path / "rows.csv"
    DATA.data.iloc[[60]][NAMES[::-1]].to_csv(csv, index=False)
    code = main(["batch", str(model_path), "--input", str(csv), "--engine", "oracle"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert json.loads(out.splitlines()[0])["prediction"] == 1


@pytest.mark.parametrize(
    "columns, words",
    [
        (NAMES[:3], ["missing", "petal width (cm)"]),
        (NAMES + ["colour"], ["unknown", "colour"]),
        (NAMES[:3] + [NAMES[0]], ["duplicated", "sepal length (cm)"]),
    ],
)
def test_bad_names_are_refused_by_name(columns: list[str], words: list[str]) -> None:
    frame = pd.DataFrame(np.ones((2, len(columns))), columns=columns)
    explainer = rx.Explainer(MODEL, engine="oracle")
    with pytest.raises(InvalidInstanceError) as info:
        explainer.explain(frame.iloc[0])
    assert all(word in str(info.value) for word in words)
    with pytest.raises(InvalidInstanceError):
        explainer.explain_many(frame, n_jobs=1)


def test_feature_names_contradicting_the_model_or_a_string_are_refused() -> None:
    with pytest.raises(InvalidInstanceError, match="contradict"):
        rx.Explainer(MODEL, feature_names=["a", "b", "c", "d"])
    with pytest.raises(InvalidInstanceError, match="string"):
        rx.Explainer(MODEL, feature_names="abcd")
    assert rx.Explainer(MODEL, engine="oracle", feature_names=NAMES).forest.feature_names == tuple(NAMES)


def test_json_forest_matches_frames_by_its_feature_names() -> None:
    forest = rx.Forest.from_json(rx.Forest.from_sklearn(MODEL).to_json())
    shuffled = DATA.data[[NAMES[2], NAMES[0], NAMES[3], NAMES[1]]]
    assert forest.predict(shuffled).tolist() == forest.predict(DATA.data.to_numpy()).tolist()
    assert forest.agreement(shuffled, MODEL).fraction == forest.agreement(DATA.data, MODEL).fraction


def test_no_feature_name_warning_from_internal_model_calls() -> None:
    explainer = rx.Explainer(MODEL, engine="oracle")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        explainer.explain(DATA.data.to_numpy()[0])
        explainer.explain_many(DATA.data.to_numpy()[:3], n_jobs=1)
        rx.Forest.from_sklearn(MODEL).agreement(DATA.data, MODEL)


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.integers(0, 149), min_size=1, max_size=6, unique=True), perm=st.permutations(range(4)))
def test_arrays_shuffled_frames_and_csv_agree_with_sklearn(
    rows: list[int], perm: list[int], tmp_path_factory: pytest.TempPathFactory
) -> None:
    import joblib

    expected = MODEL.predict(DATA.data.iloc[rows]).tolist()
    shuffled = DATA.data.iloc[rows][[NAMES[k] for k in perm]]
    explainer = rx.Explainer(MODEL, engine="oracle")
    # API: arrays, shuffled rows, shuffled frames
    assert [explainer.explain(DATA.data.to_numpy()[r]).prediction for r in rows] == expected
    assert [explainer.explain(shuffled.iloc[k]).prediction for k in range(len(rows))] == expected
    # batch
    records = explainer.explain_many(shuffled, n_jobs=1)
    assert [r.prediction for r in records] == expected
    assert [r.sklearn_prediction for r in records] == expected
    # CLI with a shuffled header
    folder = tmp_path_factory.mktemp("csv")
    model_path = folder / "model.joblib"
    joblib.dump(MODEL, model_path)
    csv = folder / "rows.csv"
    shuffled.to_csv(csv, index=False)
    out = folder / "out.jsonl"
    assert main(["batch", str(model_path), "--input", str(csv), "--engine", "oracle", "-o", str(out)]) == 0
    assert [json.loads(line)["prediction"] for line in out.read_text().splitlines()] == expected


def test_a_dict_row_is_matched_by_name_like_a_series() -> None:
    """A plain model takes a row as a mapping of feature names to values (as a pipeline does), in
    any key order; a list of mappings is several rows; a missing or unknown key is refused by name."""
    row = DATA.data.iloc[60]
    explainer = rx.Explainer(MODEL, engine="oracle")
    reversed_dict = {name: float(row[name]) for name in NAMES[::-1]}
    decision = explainer.explain(reversed_dict)
    assert decision.prediction == MODEL.predict(DATA.data.iloc[[60]])[0] == 1
    assert decision.values == explainer.explain(row).values
    rows = [dict(DATA.data.iloc[k]) for k in (0, 60, 120)]
    assert explainer.forest.predict(rows).tolist() == MODEL.predict(DATA.data.iloc[[0, 60, 120]]).tolist()
    records = explainer.explain_many(rows + [{"colour": 1.0}], "robustness")
    assert [r.prediction for r in records[:3]] == MODEL.predict(DATA.data.iloc[[0, 60, 120]]).tolist()
    assert all(r.error is None for r in records[:3]) and "unknown ['colour']" in str(records[3].error)
    with pytest.raises(InvalidInstanceError, match="missing.*petal width"):
        explainer.explain({name: 1.0 for name in NAMES[:3]})
    with pytest.raises(InvalidInstanceError, match="unknown.*colour"):
        explainer.explain({**reversed_dict, "colour": 1.0})
    with pytest.raises(InvalidInstanceError, match="numeric"):
        explainer.explain({**reversed_dict, NAMES[0]: "tall"})


def test_duplicate_feature_names_are_refused_naming_them() -> None:
    """Two features of one name would make a dict row fill both, reasons read
    ``petal > 5.45 and petal > 1.90`` and ``immutable=['petal']`` pick one: refused wherever names
    enter (the explainer, the forest's constructors, a forest JSON), naming the duplicates."""
    X, y = DATA.data.to_numpy(), DATA.target.to_numpy()
    model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
    names = ["petal", "sepal", "petal", "width"]
    with pytest.raises(InvalidInstanceError, match=r"duplicate.*\['petal'\]"):
        rx.Explainer(model, engine="oracle", feature_names=names)
    with pytest.raises(InvalidInstanceError, match=r"duplicate.*\['petal'\]"):
        rx.Forest.from_sklearn(model, feature_names=names)
    forest = rx.Forest.from_sklearn(model)
    with pytest.raises(rx.InvalidForestError, match=r"duplicate.*\['petal'\]"):
        rx.Forest(thresholds=forest.thresholds, trees=forest.trees, classes=forest.classes, feature_names=names)
    doc = forest.to_dict()
    doc["feature_names"] = ["a", "a", "b", "b"]
    with pytest.raises(rx.ForestFormatError, match=r"duplicate.*\['a', 'b'\]"):
        rx.Forest.from_json(json.dumps(doc))


def test_feature_names_given_with_a_named_forest_must_be_its_own() -> None:
    """A Forest carries its feature names: other names given with it are refused (saying which it
    has), not silently ignored; its own names are accepted."""
    forest = rx.Forest.from_sklearn(MODEL)
    with pytest.raises(InvalidInstanceError, match=r"already has the feature names \['sepal length \(cm\)'"):
        rx.Explainer(forest, engine="oracle", feature_names=["a", "b", "c", "d"])
    with pytest.raises(InvalidInstanceError, match="string"):
        rx.Explainer(forest, engine="oracle", feature_names="abcd")
    with pytest.raises(InvalidInstanceError, match="3 names but the model has 4 features"):
        rx.Explainer(forest, engine="oracle", feature_names=NAMES[:3])
    assert rx.Explainer(forest, engine="oracle", feature_names=NAMES).forest.feature_names == tuple(NAMES)
