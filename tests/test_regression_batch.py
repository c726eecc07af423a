"""Regression forests in batches: ``RegressionExplainer.explain_many`` / ``iter_explain`` and
``rfexplain batch`` on a tree regressor give, row by row, the band decision and the answer that
``RegressionExplainer.explain`` gives (one job and worker processes), with each record's band."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor

import rfexplain as rx
from rfexplain.core.errors import QueryArgumentError


@pytest.fixture(scope="module")
def fitted() -> tuple[Any, np.ndarray]:
    X, y = load_diabetes(return_X_y=True)
    X = X[:, :5]
    return RandomForestRegressor(n_estimators=6, max_depth=4, random_state=0).fit(X, y), X


def _expected(explainer: Any, x: np.ndarray, query: str, band: dict[str, Any]) -> tuple[Any, ...]:
    decision = explainer.explain(x, **band)
    answer = decision.ask(query)
    if query == "robustness":
        result: Any = answer
    else:
        result = [] if answer is None else [sorted(answer.features)]
    return decision.prediction, (decision.band.low, decision.band.high), result, decision.sklearn_value


def _got(record: Any) -> tuple[Any, ...]:
    result = record.result if record.query == "robustness" else [sorted(f) for f in record.feature_sets()]
    return record.prediction, record.band, result, record.sklearn_prediction


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize(
    ("query", "band"),
    [
        ("sufficient_reason", {}),
        ("necessary_reason", {"within": (100.0, 200.0)}),
        ("robustness", {"at_least": 150.0}),
    ],
)
def test_each_record_is_the_rows_own_band_decision(
    fitted: tuple[Any, np.ndarray], n_jobs: int, query: str, band: dict[str, Any]
) -> None:
    model, X = fitted
    explainer = rx.RegressionExplainer(model, "sat")
    rows = X[:4]
    records = explainer.explain_many(rows, query, n_jobs=n_jobs, progress=False, **band)
    assert [r.index for r in records] == list(range(len(rows)))
    assert all(r.ok and r.complete for r in records)
    reference = rx.RegressionExplainer(model, "oracle")
    for record, x in zip(records, rows):
        assert _got(record) == _expected(reference, x, query, band)
    if not band:  # the default band moves with each row's prediction
        assert len({r.band for r in records}) == len(rows)
        for r in records:
            assert r.band[1] - r.band[0] == pytest.approx(2 * explainer.delta)
    streamed = sorted(explainer.iter_explain(rows, query, n_jobs=n_jobs, progress=False, **band), key=lambda r: r.index)
    assert [_got(r) for r in streamed] == [_got(r) for r in records]


def test_bands_go_into_every_output_format(fitted: tuple[Any, np.ndarray]) -> None:
    import csv
    import io

    from rfexplain.batch import records_to_text
    from rfexplain.viz.frames import frame_to_records

    model, X = fitted
    explainer = rx.RegressionExplainer(model, "sat")
    records = explainer.explain_many(X[:3], "robustness", at_most=150.0, progress=False)
    assert {r.band for r in records} == {(None, 150.0)}
    lines = [json.loads(line) for line in records_to_text(records).splitlines()]
    assert [d["band"] for d in lines] == [[None, 150.0]] * 3
    table = list(csv.DictReader(io.StringIO(records_to_text(records, "csv"))))
    assert [(row["band_low"], row["band_high"]) for row in table] == [("", "150.0")] * 3
    frame = explainer.explain_many(X[:3], "robustness", at_most=150.0, progress=False, as_frame=True)
    assert math.isnan(frame["band_low"].iloc[0]) and list(frame["band_high"]) == [150.0] * 3
    assert [r.band for r in frame_to_records(frame)] == [r.band for r in records]
    classifier_records = rx.Explainer(_iris_forest(), "sat").explain_many(_iris_rows(), progress=False)
    assert all(r.band is None for r in classifier_records)
    assert [r.band for r in frame_to_records(rx.viz.records_to_frame(classifier_records))] == [None] * 3


def _iris_forest() -> Any:
    from sklearn.datasets import load_iris
    from sklearn.ensemble import RandomForestClassifier

    X, y = load_iris(return_X_y=True)
    return RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)


def _iris_rows() -> np.ndarray:
    from sklearn.datasets import load_iris

    return load_iris(return_X_y=True)[0][:3]


def test_bad_bands_are_refused_before_any_work_and_bad_rows_are_their_own_records(
    fitted: tuple[Any, np.ndarray],
) -> None:
    model, X = fitted
    explainer = rx.RegressionExplainer(model, "sat")
    with pytest.raises(QueryArgumentError, match="above its upper bound"):
        explainer.explain_many(X[:2], within=(2.0, 1.0))
    with pytest.raises(QueryArgumentError, match="not both"):
        explainer.iter_explain(X[:2], within=(1.0, 2.0), at_most=3.0)
    rows = X[:3].copy()
    rows[1, 2] = np.nan  # trained without missing values: refused for this row only
    records = explainer.explain_many(rows, progress=False)
    assert [r.ok for r in records] == [True, False, True]
    assert records[1].error is not None and "row 1" in records[1].error


def test_cli_batch_explains_a_regressor_and_resumes(
    fitted: tuple[Any, np.ndarray], tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import joblib

    from rfexplain.cli import main

    model, X = fitted
    path, rows = tmp_path / "model.joblib", tmp_path / "rows.csv"
    joblib.dump(model, path)
    np.savetxt(rows, X[:4], delimiter=",", fmt="%.17g")
    out = tmp_path / "out.jsonl"
    common = [str(path), "--input", str(rows), "--no-progress", "--within", "100", "200"]
    assert main(["batch", *common, "-o", str(out)]) == 0
    whole = out.read_text().splitlines()
    docs = [json.loads(line) for line in whole]
    explainer = rx.RegressionExplainer(model, "sat")
    for doc, x in zip(docs, X[:4]):
        decision = explainer.explain(x, within=(100.0, 200.0))
        assert doc["prediction"] == decision.prediction and doc["band"] == [100.0, 200.0]
        assert doc["result"][0]["features"] == sorted(decision.sufficient_reason().features)
    out.write_text("\n".join(whole[:2]) + "\n")  # as a Ctrl-C leaves it
    assert main(["batch", *common, "-o", str(out), "--resume"]) == 0
    assert [json.loads(line) | {"time": 0} for line in out.read_text().splitlines()] == [d | {"time": 0} for d in docs]
    other = [str(path), "--input", str(rows), "--no-progress", "--within", "100", "250"]
    assert main(["batch", *other, "-o", str(out), "--resume"]) == 2  # another band: another run
    assert "another run" in capsys.readouterr().err
    assert main(["batch", str(path), "--input", str(rows), "--immutable", "x0"]) == 2
    assert "regressors" in capsys.readouterr().err
    assert main(["batch", "--dataset", "iris", "--at-least", "3"]) == 2
    assert "apply to tree regressors" in capsys.readouterr().err


def test_workers_read_a_model_trained_with_missing_values_as_the_parent_does() -> None:
    X, y = load_diabetes(return_X_y=True)
    X = X[:, :5].copy()
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    model = RandomForestRegressor(n_estimators=6, max_depth=4, random_state=0).fit(X, y)
    explainer = rx.RegressionExplainer(model, "sat")
    rows = X[:8]
    assert np.isnan(rows).any()
    here = explainer.explain_many(rows, n_jobs=1, progress=False)
    workers = explainer.explain_many(rows, n_jobs=2, progress=False)
    assert all(r.ok for r in here + workers)
    assert [_got(r) for r in workers] == [_got(r) for r in here]
