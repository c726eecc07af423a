"""A pipeline's rows in its original columns read as the user's data: integer columns stay
integers, other numbers are the shortest decimals of their float32 values, and every row is
still classified as the values it stands for."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rfexplain as rx
from rfexplain.pipeline_demo import loans_pipeline


@pytest.fixture(scope="module")
def loans():
    pipe, X_test, _ = loans_pipeline()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rx.SoftVoteWarning)
        explainer = rx.Explainer(pipe, engine="sat", bounds="data", data=X_test, immutable=["age"])
        decision = explainer.explain(X_test.iloc[0])
        reasons = list(decision.necessary_reasons(limit=3))
    return pipe, X_test, explainer, decision, reasons


def test_integer_columns_stay_integers(loans) -> None:
    pipe, X_test, explainer, decision, _ = loans
    row = explainer.original_rows(decision.values)
    integer_columns = [c for c in X_test.columns if X_test[c].dtype.kind == "i"]
    assert integer_columns == ["age", "years_employed"]
    for column in integer_columns:
        assert row[column].dtype.kind == "i" and row[column].iloc[0] == X_test[column].iloc[0]
    record = row.to_dict("records")[0]
    assert type(record["age"]) is int and record["age"] == 25  # not 25.0


def test_witness_rows_are_shortest_float32_decimals_and_still_witnesses(loans) -> None:
    pipe, _, explainer, _, reasons = loans
    forest = explainer.forest
    assert reasons
    for reason in reasons:
        for witness in reason.witnesses:
            row = explainer.original_rows(witness.values)
            for f, name in enumerate(forest.feature_names):
                if forest.space.category_labels(f) is not None:
                    continue
                value = row[name].iloc[0]
                assert float(np.float32(value)) == float(np.float32(witness.values[f])) or row[name].dtype.kind == "i"
                assert len(repr(float(value)).replace(".", "").strip("0")) <= 9, (name, value)
            assert "5549.99951171875" not in str(row.to_dict("records"))
            decided = explainer.pipeline.decides(row)[0]
            assert decided == witness.prediction or explainer.pipeline.near_tie(row, int(decided), witness.prediction)


def test_a_non_integer_value_of_an_integer_column_becomes_an_integer_of_its_cell(loans) -> None:
    _, X_test, explainer, decision, _ = loans
    forest = explainer.forest
    age = list(forest.feature_names).index("age")
    top = float(np.float32(forest.thresholds[age][0]))  # the last float32 of the first cell
    values = list(decision.values)
    values[age] = top
    row = explainer.original_rows([values])
    whole = row["age"].iloc[0]
    assert row["age"].dtype.kind == "i" and float(whole).is_integer()
    assert (
        forest.states(np.asarray([values]))[0][age]
        == forest.states(np.asarray([[*values[:age], float(whole), *values[age + 1 :]]]))[0][age]
    )


def test_a_plain_models_rows_are_shortest_float32_decimals() -> None:
    from tests.viz_helpers import MODEL, NAMES, X

    explainer = rx.Explainer(MODEL, engine="sat", feature_names=NAMES)
    row = explainer.original_rows(np.float32(X[:2]).astype(np.float64))
    assert row.to_dict("records")[0] == dict(zip(NAMES, X[0].tolist()))  # 5.1, not 5.099999904632568
    assert list(row.columns) == NAMES and (row.dtypes == np.float64).all()
