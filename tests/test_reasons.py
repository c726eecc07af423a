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
    assert describe_states("petal width (cm)", {0}, SPACE.thresholds[1]) == "petal width (cm) <= 0.8"
    assert describe_states("petal length (cm)", {1}, SPACE.thresholds[0]) == "2.45 < petal length (cm) <= 4.75"
    assert describe_states("petal width (cm)", {2}, SPACE.thresholds[1]) == "petal width (cm) > 1.75"
    assert describe_states("x", {1, 3}, SPACE.thresholds[2]) == "x in (1, 2] or (3, 4]"
    assert describe_states("x", {0, 1, 4}, SPACE.thresholds[2]) == "x in (-inf, 2] or (4, +inf)"
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
    assert str(a) == "2.45 < petal length (cm) <= 4.75 and petal width (cm) <= 0.800"  # even: 3 digits
    n = Reason.of("necessary", {0: {1}, 1: {0}}, space=SPACE)
    assert n != a
    assert str(n) == "2.45 < petal length (cm) <= 4.75 or petal width (cm) <= 0.800"
    assert str(Reason.of("sufficient", {})) == "true"
    assert str(Reason.of("necessary", {})) == "false"
    assert Reason.of("contrastive", {0: {1}}, target=2) != Reason.of("contrastive", {0: {1}}, target=1)
    g = Reason.of("general_sufficient", {2: {1, 3}}, space=SPACE)
    assert str(g) == "x in (1, 2] or (3, 4]"
    assert str(Reason.of("general_sufficient", {2: {1, 3}, 0: {0}}, space=SPACE)) == (
        "petal length (cm) <= 2.45 and (x in (1.00, 2.00] or (3.00, 4.00])"
    )


def test_to_dict_is_json() -> None:
    r = Reason.of("contrastive", {0: {1}}, target=2, space=SPACE)
    d = r.to_dict()
    json.dumps(d)
    assert d["target"] == "virginica" and d["features"] == [0]
    assert d["literals"][0]["condition"] == "2.45 < petal length (cm) <= 4.75"
    assert d["literals"][0]["intervals"] == [[2.45, 4.75]]  # float32(2.45), shortest


def test_invalid_reasons() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        Reason.of("sometimes", {0: {1}})
    with pytest.raises(ValueError, match="no state"):
        Literal(0, frozenset())


def _float32_numbers(doc: object) -> list[float]:
    """Every number of a JSON document."""
    if isinstance(doc, dict):
        return [x for v in doc.values() for x in _float32_numbers(v)]
    if isinstance(doc, list):
        return [x for v in doc for x in _float32_numbers(v)]
    return [float(doc)] if isinstance(doc, float) else []


def test_json_numbers_are_the_shortest_float32_decimals() -> None:
    """Bounds and witness values read back as the float32 numbers the trees compare, written in
    the fewest digits: no ``4.650000095367432`` or ``6.099999904632568`` in JSON."""
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    import rfexplain as rx

    X, y = load_iris(return_X_y=True)
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    decision = rx.Explainer(model, engine="oracle").explain(X[60])
    reasons = [decision.sufficient_reason(), *decision.necessary_reasons()]
    text = json.dumps([r.to_dict() for r in reasons])
    assert "6.099999904632568" not in text and "00000" not in text and "99999" not in text, text
    for doc in json.loads(text):
        for number in _float32_numbers(doc):
            assert float(np.float32(number)) == float(np.float32(float(repr(number))))
            assert len(repr(number).replace("-", "").replace(".", "").lstrip("0")) <= 9, number
    for reason in reasons:
        doc = reason.to_dict()
        for w, wd in zip(reason.witnesses, doc.get("witnesses", [])):
            assert [float(np.float32(v)) for v in wd["values"]] == [float(np.float32(v)) for v in w.values]
        space = reason.space
        for lit, ld in zip(reason.conditions, doc["literals"]):
            from rfexplain.core.floats import largest_float32_at_most
            from rfexplain.core.reasons import _intervals

            for (lo, hi), (jlo, jhi) in zip(_intervals(lit.states, space.thresholds[lit.feature]), ld["intervals"]):
                for t, j in ((lo, jlo), (hi, jhi)):
                    if isinstance(j, str):
                        assert j in ("inf", "-inf")
                    else:  # the same test on float32 inputs: x <= t iff x <= float32(j)
                        assert float(np.float32(j)) == largest_float32_at_most(t)


def test_a_witness_of_iris_prints_6_1() -> None:
    """A witness value that is float32(6.1) is written 6.1 in JSON."""
    from rfexplain import Witness

    space = SPACE
    w = Witness((float(np.float32(6.1)), float(np.float32(0.3)), 2.0), prediction=1)
    assert w.to_dict()["values"] == [6.1, 0.3, 2.0]
    assert w.to_dict(space)["values"] == [6.1, 0.3, 2.0]
    assert "6.099999904632568" not in json.dumps(Reason.of("necessary", {0: {2}}, space=space, witnesses=[w]).to_dict())


def test_a_witness_at_a_cell_edge_keeps_its_side() -> None:
    """A witness value that is the last float32 of its cell is written as a decimal on that
    side of it (so code reading it as a float64 without rounding stays in the cell)."""
    from rfexplain import Witness

    for t in (0.800000011920929, 1.75, 1.2345678):
        top = float(np.float32(t)) if float(np.float32(t)) <= t else float(np.nextafter(np.float32(t), np.float32(0)))
        bottom = float(np.nextafter(np.float32(top), np.float32(np.inf)))
        space = FeatureSpace(("a",), ((t,),), ("no", "yes"))
        (low,) = Witness((top,), 1).to_dict(space)["values"]
        (high,) = Witness((bottom,), 1).to_dict(space)["values"]
        assert float(np.float32(low)) == top and low <= top
        assert float(np.float32(high)) == bottom and high >= bottom


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), st.integers(1, 9))
def test_even_precision_pads_and_never_changes_a_bound(t: float, digits: int) -> None:
    """Padded to any number of significant digits, a bound still reads back as the same float32."""
    op, text = _upper_bound(t)
    padded_op, padded = _upper_bound(t, digits)
    assert padded_op == op and np.float32(float(padded)) == np.float32(float(text))
    assert padded.startswith(text.rstrip("0").rstrip(".")[: len(text)]) or "e" in text


def test_reason_text_has_even_precision() -> None:
    f32 = [(float(np.float32(v)),) for v in (0.038065, 0.0038395, 0.2192)]
    space = FeatureSpace(("a", "b", "c"), tuple(f32), ("no", "yes"))
    text = str(Reason.of("sufficient", {0: {0}, 1: {0}, 2: {0}}, space=space))
    assert text == "a <= 0.038065 and b <= 0.0038395 and c <= 0.21920", text
