"""Results as DataFrames and Parquet, tqdm progress, notebook reprs."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

import rfexplain as rx
from rfexplain.batch import BatchRecord
from rfexplain.cli import main
from rfexplain.progress import Progress
from rfexplain.viz import frame_to_records, records_to_frame
from tests.viz_helpers import MODEL, NAMES, X


@pytest.mark.parametrize("query", ["sufficient_reasons", "robustness", "necessary_reason"])
def test_as_frame_round_trips_the_records(query: str) -> None:
    explainer = rx.Explainer(MODEL, engine="oracle", feature_names=NAMES)
    records = explainer.explain_many(X[::20], query, n_jobs=1, progress=False)
    frame = explainer.explain_many(X[::20], query, n_jobs=1, progress=False, as_frame=True)
    assert len(frame) == len(records) and list(frame["index"]) == [r.index for r in records]
    back = frame_to_records(frame)
    assert [dict(b.to_dict(), time=0) for b in back] == [dict(r.to_dict(), time=0) for r in records]
    if query != "robustness":
        assert list(frame["reasons"]) == [[d["text"] for d in r.reasons] for r in records]
        assert list(frame["features"]) == [[d["feature_names"] for d in r.reasons] for r in records]
    else:
        assert list(frame["value"]) == [float(r.result) for r in records]


def test_frame_keeps_the_users_index_and_typed_columns() -> None:
    """A DataFrame indexed 1000.. gives a frame indexed the same way (a join lines up), with typed
    columns and the run's metadata."""
    pd = pytest.importorskip("pandas")
    rows = pd.DataFrame(X[::20], columns=NAMES, index=pd.Index(range(1000, 1000 + len(X[::20])), name="id"))
    explainer = rx.Explainer(MODEL, engine="oracle", feature_names=NAMES)
    frame = explainer.explain_many(rows, "robustness", n_jobs=1, progress=False, as_frame=True)
    assert frame.index.equals(rows.index) and frame.index.name == "id"
    joined = rows.join(frame[["prediction", "value"]])
    assert joined["value"].notna().all() and list(joined["prediction"]) == list(MODEL.predict(X[::20]))
    assert str(frame["value"].dtype) == "float64" and str(frame["complete"].dtype) == "boolean"
    assert str(frame["prediction_index"].dtype) == "Int64" and str(frame["error"].dtype) == "string"
    meta = frame.attrs["rfexplain"]
    assert meta["engine"] == "oracle" and meta["vote"] == "soft" and meta["query"] == "robustness"
    assert meta["version"] == rx.__version__ and len(meta["model_fingerprint"]) == 64
    again = explainer.explain_many(rows.iloc[:2], "robustness", n_jobs=1, progress=False, as_frame=True)
    assert again.attrs["rfexplain"]["model_fingerprint"] == meta["model_fingerprint"]


def _holds(value: float, lower: float, lower_strict: bool, upper: float, upper_strict: bool) -> bool:
    """Whether a value meets the bounds, compared as float32 numbers (as the trees compare)."""
    v, low, high = np.float32(value), np.float32(lower), np.float32(upper)
    above = v > low if lower_strict else v >= low
    below = v < high if upper_strict else v <= high
    return bool(above and below)


@pytest.mark.parametrize("query", ["sufficient_reason", "inflated_sufficient_reason", "necessary_reasons"])
def test_long_frame_has_one_exact_row_per_condition(query: str) -> None:
    """One row per condition (an interval of a literal's states), indexed by the user's labels;
    its bounds and strict flags admit exactly the float32 inputs of the literal's states: checked
    at both float32 neighbours of every threshold of the feature."""
    pd = pytest.importorskip("pandas")
    rows = pd.DataFrame(X[::30], columns=NAMES, index=[f"r{k}" for k in range(len(X[::30]))])
    explainer = rx.Explainer(MODEL, engine="oracle", feature_names=NAMES)
    long = explainer.explain_many(rows, query, n_jobs=1, progress=False, as_frame="long")
    records = explainer.explain_many(rows, query, n_jobs=1, progress=False)
    space = explainer.forest.space
    expected = sum(len(lit["intervals"]) for r in records for d in r.reasons for lit in d["literals"])
    assert len(long) == expected and long.attrs["rfexplain"]["query"] == query
    for label, row in long.iterrows():
        record = records[int(row["index"])]
        assert label == rows.index[int(row["index"])]
        literal = next(
            lit for lit in record.reasons[row["reason"]]["literals"] if lit["feature"] == row["feature_index"]
        )
        assert row["feature"] == NAMES[row["feature_index"]] and row["kind"] == record.reasons[row["reason"]]["kind"]
        thresholds = space.thresholds[row["feature_index"]]
        states = set(literal["states"])
        runs = sorted(states)
        # this row's run of states: the part-th maximal run
        parts, start = [], runs[0]
        for a, b in zip(runs, runs[1:] + [None]):
            if b != a + 1:
                parts.append(set(range(start, a + 1)))
                start = b
        mine = parts[row["part"]]
        bounds = (row["lower"], bool(row["lower_strict"]), row["upper"], bool(row["upper_strict"]))
        for t in thresholds:
            at = float(np.float32(t)) if float(np.float32(t)) <= t else float(np.nextafter(np.float32(t), -np.inf))
            for v in (at, float(np.nextafter(np.float32(at), np.float32(np.inf)))):
                state = int(np.searchsorted(np.asarray(thresholds), v, side="left"))
                assert _holds(v, *bounds) == (state in mine), (row.to_dict(), t, v)


def test_parquet_round_trips_the_index_and_the_run_metadata(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from rfexplain.viz import parquet_metadata, write_parquet

    rows = pd.DataFrame(X[::25], columns=NAMES, index=pd.Index(range(1000, 1000 + len(X[::25])), name="id"))
    explainer = rx.Explainer(MODEL, engine="oracle", feature_names=NAMES)
    frame = explainer.explain_many(rows, "necessary_reason", n_jobs=1, progress=False, as_frame=True)
    path = tmp_path / "out.parquet"
    write_parquet(frame, str(path))
    back = pd.read_parquet(path)
    assert back.index.equals(frame.index) and back.attrs["rfexplain"] == frame.attrs["rfexplain"]
    assert parquet_metadata(str(path)) == frame.attrs["rfexplain"]
    assert frame_to_records(back) == frame_to_records(frame)
    assert str(back["value"].dtype) == "float64" and list(back["reasons"].map(list)) == list(frame["reasons"])
    plain = tmp_path / "plain.parquet"
    write_parquet(frame_to_records(frame), str(plain))
    assert parquet_metadata(str(plain)) is None and len(pd.read_parquet(plain)) == len(frame)


def test_frame_keeps_errors_and_infinite_robustness() -> None:
    records = [
        BatchRecord(
            index=3,
            query="robustness",
            engine="x",
            prediction="a",
            prediction_index=0,
            result=math.inf,
            time=0.5,
            complete=True,
        ),
        BatchRecord(index=4, query="robustness", engine="x", error="ValueError: bad"),
    ]
    assert frame_to_records(records_to_frame(records)) == records


def test_batch_writes_parquet(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    forest = tmp_path / "forest.json"
    forest.write_text(rx.Forest.from_sklearn(MODEL, feature_names=NAMES).to_json())
    out = tmp_path / "out.parquet"
    assert (
        main(
            [
                "batch",
                str(forest),
                "--dataset",
                "iris",
                "--rows",
                "0:4",
                "--engine",
                "oracle",
                "-o",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    frame = pd.read_parquet(out)
    assert list(frame["index"]) == [0, 1, 2, 3] and all(json.loads(v) for v in frame["result_json"])
    assert [r.index for r in frame_to_records(frame)] == [0, 1, 2, 3]
    assert main(["batch", str(forest), "--dataset", "iris", "--rows", "0:1", "--format", "parquet"]) == 2


def test_parquet_without_pyarrow_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    from rfexplain.viz import write_parquet

    with pytest.raises(rx.viz.MissingExtraError, match=r"rfexplain\[parquet\]"):
        write_parquet([], str(tmp_path / "x.parquet"))


def test_tqdm_progress_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    with Progress(4, "x", enabled=True, stream=out) as bar:
        for _ in range(4):
            bar.update()
    assert "4/4" in out.getvalue()
    quiet = io.StringIO()
    with Progress(4, "x", enabled=False, stream=quiet) as bar:
        bar.update(4)
    assert quiet.getvalue() == ""
    explainer = rx.Explainer(MODEL, engine="oracle", feature_names=NAMES)
    explainer.explain_many(X[:3], n_jobs=1, progress=False)
    assert capsys.readouterr().err == ""
    explainer.explain_many(X[:3], n_jobs=1, progress=True)
    assert "3/3" in capsys.readouterr().err


def test_notebook_reprs() -> None:
    decision = rx.Explainer(MODEL, engine="sat", feature_names=NAMES).explain(X[60])
    html = decision._repr_html_()
    inflated = str(decision.inflated_sufficient_reason()).replace("<", "&lt;")
    assert "<table" in html and "<svg" in html and inflated in html
    actions = decision.necessary_reason().actions()
    assert actions and actions.replace("'", "&#x27;") in html  # the change that flips it
    from rfexplain.viz.notebook import decision_html

    assert str(decision.sufficient_reason()).replace("<", "&lt;") in decision_html(decision, inflated=False)
    reason = decision.sufficient_reason()
    assert "<svg" in reason._repr_html_() and len(repr(reason)) <= 100 and len(repr(decision)) <= 100
    enumeration = decision.necessary_reasons(limit=5)
    shown = enumeration._repr_html_()
    assert "Enumeration" in shown
    assert list(enumeration) == list(decision.necessary_reasons(limit=5))  # still all there to iterate
