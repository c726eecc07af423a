"""Forest JSON: lossless round trip, version field, clear errors for corrupt or future files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

from rfexplain import Forest, ForestFormatError
from rfexplain.core.forest import FOREST_FORMAT_VERSION
from tests.hypothesis_budget import examples
from tests.strategies import forests


@settings(max_examples=examples(50), deadline=None)
@given(forests())
def test_round_trip_random_forests(forest: Forest) -> None:
    again = Forest.from_json(forest.to_json())
    assert again == forest
    assert again.to_json() == forest.to_json()


def test_round_trip_sklearn_forest_keeps_predictions() -> None:
    X, y = load_iris(return_X_y=True)
    labels = np.asarray(["a", "b", "c"])[y]
    model = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, labels)
    forest = Forest.from_sklearn(model, feature_names=["sl", "sw", "pl", "pw"])
    again = Forest.from_json(forest.to_json(indent=2))
    assert again == forest
    assert again.thresholds == forest.thresholds  # floats survive bit for bit
    assert again.feature_names == ("sl", "sw", "pl", "pw")
    assert np.array_equal(again.predict(X), forest.predict(X))
    assert json.loads(forest.to_json())["version"] == FOREST_FORMAT_VERSION


@pytest.mark.parametrize(
    "text, message",
    [
        ("not json", "corrupt forest JSON"),
        ("[]", "not an rfexplain forest"),
        ('{"format": "rfexplain-forest", "version": 99}', "newer than this release"),
        ('{"format": "rfexplain-forest", "version": "1"}', "invalid forest format version"),
        ('{"format": "rfexplain-forest", "version": 1, "classes": [0, 1]}', "corrupt forest document"),
    ],
)
def test_bad_documents(text: str, message: str) -> None:
    with pytest.raises(ForestFormatError, match=message):
        Forest.from_json(text)


def test_structurally_invalid_document() -> None:
    X, y = load_iris(return_X_y=True)
    doc = Forest.from_sklearn(RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y)).to_dict()
    doc["trees"][0]["split"][0] = 999
    with pytest.raises(ForestFormatError, match="threshold index"):
        Forest.from_dict(doc)
