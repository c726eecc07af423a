"""Reason values: rendering as exact float32 conditions, value semantics, to_dict."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rfexplain import Literal, Reason
from rfexplain.core.forest import FeatureSpace
from rfexplain.core.reasons import _lower_bound, _upper_bound, describe_states, format_threshold

SPACE = FeatureSpace(
    ("petal length (cm)", "petal width (cm)", "x"),
    ((2.450000047683716, 4.75, 4.950000047683716), (0.800000011920929, 1.75), (1.0, 2.0, 3.0, 4.0)),
    ("setosa", "versicolor", "virginica"),
)


def test_rendering_examples() -> None:
    assert describe_states("petal width (cm)", {0}, SPACE.thresholds[1]) == "petal width (cm) <= 0.80"
    assert describe_states("petal length (cm)", {1}, SPACE.thresholds[0]) == "2.45 < petal length (cm) <= 4.75"
    assert describe_states("petal width (cm)", {2}, SPACE.thresholds[1]) == "petal width (cm) > 1.75"
    assert describe_states("x", {1, 3}, SPACE.thresholds[2]) == "x in (1.00, 2.00] or (3.00, 4.00]"
    assert describe_states("x", {0, 1, 4}, SPACE.thresholds[2]) == "x in (-inf, 2.00] or (4.00, +inf)"
    assert describe_states("x", set(range(5)), SPACE.thresholds[2]) == "x is anything"


def test_threshold_below_a_float32_prints_a_strict_bound() -> None:
    # sklearn's midpoint between float32 1.9 and 3.0 lies just below float32(2.45)
    t = (float(np.float32(1.9)) + 3.0) / 2
    assert describe_states("pl", {0}, (t,)) == "pl < 2.45"
    assert describe_states("pl", {1}, (t,)) == "pl >= 2.45"


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_bounds_are_exact_on_float32(t: float) -> None:
    """x <= t on float32 inputs iff the printed bound holds, probed around the bound."""
    op, text = _upper_bound(t)
    bound = np.float32(float(text))
    for x in (bound, np.nextafter(bound, np.float32(-np.inf)), np.nextafter(bound, np.float32(np.inf)), np.float32(t)):
        holds = float(x) <= t
        printed = x <= bound if op == "<=" else x < bound
        assert holds == bool(printed), (t, op, text, x)
    lop, ltext = _lower_bound(t)
    assert {op, lop} in ({"<=", ">"}, {"<", ">="}) and ltext == text
    assert float(np.float32(float(format_threshold(t)))) <= t


def test_reason_value_semantics_and_str() -> None:
    a = Reason.of("sufficient", {1: {0}, 0: {1}}, space=SPACE, instance=[3.0, 0.2, 1.5], decision=0)
    b = Reason.of("sufficient", {0: {1}, 1: {0}})
    assert a == b and hash(a) == hash(b)
    assert a.features == frozenset({0, 1})
    assert a.literals == {0: frozenset({1}), 1: frozenset({0})}
    assert str(a) == "2.45 < petal length (cm) <= 4.75 and petal width (cm) <= 0.80"
    n = Reason.of("necessary", {0: {1}, 1: {0}}, space=SPACE)
    assert n != a
    assert str(n) == "2.45 < petal length (cm) <= 4.75 or petal width (cm) <= 0.80"
    assert str(Reason.of("sufficient", {})) == "true"
    assert str(Reason.of("necessary", {})) == "false"
    assert Reason.of("contrastive", {0: {1}}, target=2) != Reason.of("contrastive", {0: {1}}, target=1)
    g = Reason.of("general_sufficient", {2: {1, 3}}, space=SPACE)
    assert str(g) == "x in (1.00, 2.00] or (3.00, 4.00]"
    assert str(Reason.of("general_sufficient", {2: {1, 3}, 0: {0}}, space=SPACE)) == (
        "petal length (cm) <= 2.45 and (x in (1.00, 2.00] or (3.00, 4.00])"
    )


def test_to_dict_is_json() -> None:
    r = Reason.of("contrastive", {0: {1}}, target=2, space=SPACE)
    d = r.to_dict()
    json.dumps(d)
    assert d["target"] == "virginica" and d["features"] == [0]
    assert d["literals"][0]["condition"] == "2.45 < petal length (cm) <= 4.75"
    assert d["literals"][0]["intervals"] == [[2.450000047683716, 4.75]]


def test_invalid_reasons() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        Reason.of("sometimes", {0: {1}})
    with pytest.raises(ValueError, match="no state"):
        Literal(0, frozenset())
