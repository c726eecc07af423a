"""Results as DataFrames and Parquet, tqdm progress, notebook reprs."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

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
        assert list(frame["reasons"]) == [" | ".join(d["text"] for d in r.reasons) for r in records]
        assert list(frame["features"]) == [[d["feature_names"] for d in r.reasons] for r in records]
    else:
        assert list(frame["value"]) == [float(r.result) for r in records]


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
