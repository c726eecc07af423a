"""Batches that lose nothing (issue 59): records streamed as they finish, kept on Ctrl-C, every
bad row its own error record with its own row number, resumable outputs, a killed worker."""

from __future__ import annotations

import csv
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import rfexplain as rx
from rfexplain.batch import RUN_SUFFIX, BatchInterrupted, BatchRecord
from rfexplain.cli import main
from rfexplain.core.forest import Forest
from rfexplain.engines.registry import register
from tests.batch_stream_plugins import StopperEngine, signal_folder

register("stopper", StopperEngine)

X, Y = load_iris(return_X_y=True)
MODEL = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, Y)
ROWS = X[::12].copy()  # 13 rows
POISON = float(np.float32(9.875))
ROWS[4, 0] = POISON  # the row that interrupts (or kills) its process
N_ROWS = len(ROWS)


def _same(record: Any) -> dict[str, Any]:
    """A record without its time (the one field two runs do not share)."""
    doc = record.to_dict() if isinstance(record, BatchRecord) else dict(record)
    doc.pop("time", None)
    return doc


@pytest.fixture
def armed(ctrl_c: None) -> Iterator[Path]:
    """The signal folder of this process (not made yet): the stopper engine interrupts once
    while it exists (and SIGINT raises here, :func:`tests.conftest.ctrl_c`)."""
    folder = signal_folder(os.getpid())
    shutil.rmtree(folder, ignore_errors=True)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended, waiting for it a while (no assertion on the time)."""
    for _ in range(300):
        if not _running(pid):
            return True
        time.sleep(0.1)
    return False


# ---------------------------------------------------------------------- the API
def _api_interrupted(n_jobs: int, armed: Path, expect_others: int) -> None:
    explainer = rx.Explainer(MODEL, engine="stopper", poison=POISON)
    uninterrupted = explainer.explain_many(ROWS, n_jobs=1)
    assert all(r.ok for r in uninterrupted)
    armed.mkdir()
    (armed / "expect").write_text(str(expect_others))
    with pytest.raises(BatchInterrupted) as caught:
        explainer.explain_many(ROWS, n_jobs=n_jobs, chunk_size=1)
    assert isinstance(caught.value, KeyboardInterrupt)
    kept, pending = caught.value.records, caught.value.pending
    finished = [r.index for r in kept]
    assert finished == sorted(finished) and 4 not in finished and 4 in pending
    assert sorted(finished + pending) == list(range(N_ROWS))
    assert [_same(r) for r in kept] == [_same(uninterrupted[i]) for i in finished]
    if n_jobs == 1:
        assert finished == [0, 1, 2, 3]  # exactly the rows before the interrupt
    else:
        assert finished == [i for i in range(N_ROWS) if i != 4]  # every other row had finished
        assert _gone(int((armed / "fired").read_text()))  # the interrupted worker did not outlive it
    # The pending rows, explained now, complete the batch as one uninterrupted run.
    rest = explainer.explain_many(ROWS[pending], n_jobs=1, indices=pending)
    merged = sorted(kept + rest, key=lambda r: r.index)
    assert [_same(r) for r in merged] == [_same(r) for r in uninterrupted]


def test_api_interrupt_keeps_the_finished_records_in_process(armed: Path) -> None:
    _api_interrupted(1, armed, expect_others=0)


@pytest.mark.slow
def test_api_interrupt_keeps_the_finished_records_with_workers(armed: Path) -> None:
    _api_interrupted(2, armed, expect_others=N_ROWS - 1)


def test_iter_explain_streams_records_as_they_finish_and_stops_when_closed() -> None:
    explainer = rx.Explainer(MODEL, engine="oracle")
    stream = explainer.iter_explain(ROWS, "robustness", n_jobs=1)
    first = next(stream)
    assert first.index == 0 and first.ok
    stream.close()  # stops: nothing more is computed
    assert list(stream) == []
    every = list(explainer.iter_explain(ROWS, "robustness", n_jobs=1))
    assert [r.index for r in every] == list(range(N_ROWS))
    with pytest.raises(rx.QueryArgumentError):  # checked before any work, not at the first record
        explainer.iter_explain(ROWS, "robustness", limit=3)


# ---------------------------------------------------------------------- bad rows
def test_each_bad_row_is_its_own_error_record_with_its_row_number() -> None:
    explainer = rx.Explainer(MODEL, engine="oracle")
    rows: list[Any] = [list(X[0]), [1.0, 2.0, 3.0], [1.0, "abc", 3.0, 4.0], [1.0, np.nan, 3.0, 4.0]]
    rows += [[1.0, np.inf, 2.0, 3.0], list(X[60])]
    for n_jobs in (1, 2):
        records = explainer.explain_many(rows, n_jobs=n_jobs)
        errors = [r.error for r in records]
        assert errors[0] is None and errors[5] is None
        assert errors[1] == "InvalidInstanceError: row 1: expected 4 features, got 3"
        assert (errors[2] or "").startswith("InvalidInstanceError: row 2: instances must be numeric")
        assert (errors[3] or "").startswith("InvalidInstanceError: row 3 has NaN in feature 1")
        assert (errors[4] or "").startswith("InvalidInstanceError: row 4 has inf in feature 1")
    # A DataFrame names a row by its number and its index label.
    frame = pd.DataFrame(X[:3], columns=[f"x{j}" for j in range(4)], index=["a", "b", "c"]).astype(object)
    frame.iloc[1, 2] = np.nan
    records = explainer.explain_many(frame, n_jobs=1)
    assert records[0].ok and records[2].ok
    assert (records[1].error or "").startswith("InvalidInstanceError: row 1 (index 'b') has NaN in feature 2")
    with pytest.raises(rx.InvalidInstanceError, match="unknown"):  # a problem of every row
        explainer.explain_many(frame.rename(columns={"x0": "colour"}))


def _pipeline() -> tuple[Pipeline, pd.DataFrame]:
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame(
        {"size": rng.normal(size=n), "weight": rng.normal(size=n), "colour": rng.choice(["red", "green", "blue"], n)}
    )
    y = ((frame["size"] > 0) ^ (frame["colour"] == "red")).astype(int)
    pre = ColumnTransformer([("oh", OneHotEncoder(), ["colour"]), ("sc", StandardScaler(), ["size", "weight"])])
    model = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
    return Pipeline([("pre", pre), ("rf", model)]).fit(frame, y), frame


def test_a_pipeline_batch_with_bad_values_gives_per_row_errors() -> None:
    pipe, frame = _pipeline()
    explainer = rx.Explainer(pipe, engine="oracle")
    rows = frame.iloc[:6].astype(object)
    rows.index = [10, 11, 12, 13, 14, 15]
    rows.iloc[2, 0] = "lots"  # a string in a numeric column
    rows.iloc[4, 2] = "purple"  # a category the encoder does not know
    records = explainer.explain_many(rows, n_jobs=1)
    assert [r.index for r in records] == list(range(6))
    assert [r.ok for r in records] == [True, True, False, True, False, True]
    assert (records[2].error or "").startswith("InvalidInstanceError: row 2 (index 12): column 'size' must be numeric")
    assert "row 4 (index 14): column 'colour' has the unknown category 'purple'" in (records[4].error or "")
    streamed = list(explainer.iter_explain(rows, n_jobs=1))  # in the order of the rows, bad ones included
    assert [_same(r) for r in streamed] == [_same(r) for r in records]
    good = explainer.explain_many(frame.iloc[:6], n_jobs=1)
    assert [_same(r) for r in records if r.ok] == [_same(good[k]) for k in (0, 1, 3, 5)]


def test_cli_csv_with_bad_rows_gives_per_row_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forest_path = tmp_path / "forest.json"
    forest_path.write_text(Forest.from_sklearn(MODEL).to_json())
    names = ",".join(f"x{j}" for j in range(4))
    rows = tmp_path / "rows.csv"
    rows.write_text(f"{names},label\n5.1,3.5,1.4,0.2,0\n6.3,3.3\n6.3,abc,6.0,2.5,2\n5.9,3.0,5.1,1.8,2\n")
    out = tmp_path / "out.csv"
    code = main(["batch", str(forest_path), "--input", str(rows), "--engine", "oracle", "-o", str(out)])
    assert code == 1  # some row failed
    records = list(csv.DictReader(out.open()))
    assert [r["index"] for r in records] == ["0", "1", "2", "3"]
    assert records[0]["error"] == "" and records[3]["error"] == ""
    assert records[1]["error"] == (
        "InvalidInstanceError: row 1: line 3 of rows.csv has 2 values, expected 4 (or 5 with a label)"
    )
    assert records[2]["error"] == "InvalidInstanceError: row 2: line 4 of rows.csv: 'x1' is not a number: 'abc'"
    assert "4 instances, 2 complete, 0 cut by the budget, 2 failed" in capsys.readouterr().err


def test_cli_csv_nan_inf_long_and_empty_cells_are_each_their_own_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 59, item 3, the rest of a plain model's CSV: NaN, an infinite value, a row too long
    and an empty cell each give one error record naming their own row (and their line, for what
    the reader sees); the good rows around them are answered as they are alone, also with two
    workers and written to -o."""
    forest_path = tmp_path / "forest.json"
    forest_path.write_text(Forest.from_sklearn(MODEL).to_json())
    names = ",".join(f"x{j}" for j in range(4))
    rows = tmp_path / "rows.csv"
    good = ["5.1,3.5,1.4,0.2", "6.3,3.3,6.0,2.5", "5.9,3.0,5.1,1.8"]
    lines = [good[0], "nan,3.0,5.1,1.8", good[1], "5.9,inf,5.1,1.8", "5.9,3.0,5.1,1.8,2,7", "5.9,,5.1,1.8", good[2]]
    rows.write_text(names + "\n" + "\n".join(lines) + "\n")
    alone = tmp_path / "good.csv"
    alone.write_text(names + "\n" + "\n".join(good) + "\n")
    base = ["batch", str(forest_path), "--engine", "oracle", "--no-progress"]
    assert main(base + ["--input", str(alone)]) == 0
    reference = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for extra in ([], ["--jobs", "2", "-o", str(tmp_path / "out.jsonl")]):
        code = main(base + ["--input", str(rows), *extra])
        out = capsys.readouterr().out
        text = (tmp_path / "out.jsonl").read_text() if extra else out
        docs = [json.loads(line) for line in text.splitlines()]
        assert code == 1 and [d["index"] for d in docs] == list(range(7))
        errors = [d["error"] or "" for d in docs]
        assert errors[1].startswith("InvalidInstanceError: row 1 has NaN in feature 0 ('x0')")
        assert errors[3].startswith("InvalidInstanceError: row 3 has ") and "in feature 1 ('x1')" in errors[3]
        assert (
            errors[4] == "InvalidInstanceError: row 4: line 6 of rows.csv has 6 values, expected 4 (or 5 with a label)"
        )
        assert errors[5] == "InvalidInstanceError: row 5: line 7 of rows.csv: 'x1' is not a number: ''"
        answered = [docs[k] for k in (0, 2, 6)]
        assert [e for k, e in enumerate(errors) if k in (0, 2, 6)] == ["", "", ""]
        assert [d["result"] for d in answered] == [d["result"] for d in reference]


def test_cli_pipeline_csv_with_nan_and_a_missing_category(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pipeline's original columns: NaN in a numeric column, an infinite value and an empty
    categorical cell are each their own error record with their own row number."""
    import joblib

    pipe, _ = _pipeline()
    model_path = tmp_path / "pipe.joblib"
    joblib.dump(pipe, model_path)
    rows = tmp_path / "rows.csv"
    rows.write_text("size,weight,colour\n0.5,0.1,red\nnan,0.3,blue\n0.4,inf,green\n0.4,0.2,\n-0.3,0.2,green\n")
    code = main(["batch", str(model_path), "--input", str(rows), "--engine", "oracle", "--no-progress"])
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1 and [d["index"] for d in docs] == [0, 1, 2, 3, 4]
    assert [d["error"] is None for d in docs] == [True, False, False, False, True]
    assert docs[1]["error"].startswith("InvalidInstanceError: row 1 has NaN in feature 0 ('size')")
    assert (
        docs[2]["error"].startswith("InvalidInstanceError: row 2 has ") and "feature 1 ('weight')" in docs[2]["error"]
    )
    assert docs[3]["error"].startswith("InvalidInstanceError: row 3: column 'colour' has the unknown category")


def test_cli_pipeline_csv_with_a_short_row_and_an_unknown_category(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import joblib

    pipe, frame = _pipeline()
    model_path = tmp_path / "pipe.joblib"
    joblib.dump(pipe, model_path)
    rows = tmp_path / "rows.csv"
    rows.write_text("size,weight,colour\n0.5,0.1,red\n0.2,0.3\n0.4,-1,purple\nlots,0.2,blue\n-0.3,0.2,green\n")
    code = main(["batch", str(model_path), "--input", str(rows), "--engine", "oracle"])
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1 and [d["index"] for d in docs] == [0, 1, 2, 3, 4]
    assert [d["error"] is None for d in docs] == [True, False, False, False, True]
    assert docs[1]["error"] == "InvalidInstanceError: row 1: line 3 of rows.csv has 2 values, expected 3 (its header's)"
    assert docs[2]["error"].startswith("InvalidInstanceError: row 2: column 'colour' has the unknown category 'purple'")
    assert docs[3]["error"].startswith("InvalidInstanceError: row 3: column 'size' must be numeric")


def test_the_report_names_each_bad_row_by_its_own_row_number(tmp_path: Path) -> None:
    """``Explainer.report``: a row the explainer refuses (NaN, a pipeline's unknown category or
    string in a numeric column) is a failed row named by its own row number (not "instance 0",
    the only row the check saw), and a row given in ``row_errors`` is a failed row without being
    explained; the other rows are those of a report of them alone."""
    explainer = rx.Explainer(MODEL, engine="oracle")
    rows = ROWS[:5].copy()
    rows[3, 1] = np.nan
    reports = explainer.report(rows, tmp_path / "r.html", row_errors={1: "line 3 of rows.csv has 2 values"})
    assert [r.index for r in reports] == list(range(5))
    assert reports[1].error == "InvalidInstanceError: row 1: line 3 of rows.csv has 2 values"
    assert (reports[3].error or "").startswith("InvalidInstanceError: row 3 has NaN in feature 1")
    assert [r.error for k, r in enumerate(reports) if k not in (1, 3)] == [None, None, None]
    alone = explainer.report(ROWS[[0, 2, 4]], tmp_path / "alone.html")
    assert [r.reasons for k, r in enumerate(reports) if k not in (1, 3)] == [r.reasons for r in alone]
    pipe, frame = _pipeline()
    bad = frame.iloc[:4].astype(object)
    bad.iloc[1, 0] = "lots"
    bad.iloc[2, 2] = "purple"
    piped = rx.Explainer(pipe, engine="oracle").report(bad, tmp_path / "p.html", indices=[7, 8, 9, 10])
    assert [r.index for r in piped] == [7, 8, 9, 10] and piped[0].error is None and piped[3].error is None
    assert (piped[1].error or "").startswith("InvalidInstanceError: row 8: column 'size' must be numeric")
    assert "row 9: column 'colour' has the unknown category 'purple'" in (piped[2].error or "")


# ---------------------------------------------------------------------- the command line
def _cli(tmp_path: Path, out: Path, *extra: str, jobs: int = 1) -> int:
    forest_path = tmp_path / "forest.json"
    rows_path = tmp_path / "rows.csv"
    if not forest_path.exists():
        forest_path.write_text(Forest.from_sklearn(MODEL).to_json())
        np.savetxt(rows_path, ROWS, delimiter=",", fmt="%.9g")
    argv = ["batch", str(forest_path), "--input", str(rows_path), "--engine", "stopper", "--jobs", str(jobs)]
    return main(argv + ["-o", str(out), "--no-progress", *extra])


def _cli_interrupted_then_resumed(tmp_path: Path, armed: Path, jobs: int, fmt: str) -> None:
    reference = tmp_path / f"reference.{fmt}"
    assert _cli(tmp_path, reference, jobs=jobs) == 0  # not armed: one uninterrupted run
    armed.mkdir()
    (armed / "poison").write_text(repr(POISON))
    # With two jobs, rows go in chunks of two: the interrupted one's partner (row 5) never runs.
    (armed / "expect").write_text(str(N_ROWS - 2 if jobs > 1 else 0))
    out = tmp_path / f"out.{fmt}"
    assert _cli(tmp_path, out, jobs=jobs) == 130
    finished = sorted(int(d["index"]) for d in _read(out, fmt))
    if jobs == 1:
        assert finished == [0, 1, 2, 3]
    else:
        # the other worker's rows all ran before the interrupt; the parent keeps every chunk it
        # had received (one chunk may still be on its way when SIGINT lands on a loaded machine)
        assert set(finished) <= {i for i in range(N_ROWS) if i not in (4, 5)}
        assert len(finished) >= N_ROWS - 4 and finished[:4] == [0, 1, 2, 3]
        assert _gone(int((armed / "fired").read_text()))
    assert json.loads(Path(f"{out}{RUN_SUFFIX}").read_text())["complete"] is False
    # --resume explains only the rest (each row is answered once over both runs) and the
    # output then equals the uninterrupted run's.
    assert _cli(tmp_path, out, "--resume", jobs=jobs) == 0
    assert len(list(armed.glob("done-*"))) == N_ROWS
    assert [_same(d) for d in _read(out, fmt)] == [_same(d) for d in _read(reference, fmt)]
    assert json.loads(Path(f"{out}{RUN_SUFFIX}").read_text())["complete"] is True


def _read(path: Path, fmt: str) -> list[dict[str, Any]]:
    """The records of an output, or of a Parquet output's JSON lines until it is written."""
    if fmt == "parquet" and path.exists():
        from rfexplain.viz.frames import frame_to_records

        return [r.to_dict() for r in frame_to_records(pd.read_parquet(path))]
    if fmt == "parquet":
        path = Path(f"{path}.partial.jsonl")
    if fmt == "csv":
        return [{k: v for k, v in row.items() if k != "time"} for row in csv.DictReader(path.open())]
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_cli_interrupt_keeps_finished_rows_and_resume_completes_them(
    tmp_path: Path, armed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _cli_interrupted_then_resumed(tmp_path, armed, 1, "jsonl")
    assert "(4 already in" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_cli_interrupt_with_workers_and_resume(
    tmp_path: Path, armed: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    _cli_interrupted_then_resumed(tmp_path, armed, 2, fmt)


def test_resume_refuses_another_run_and_drops_a_torn_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.jsonl"
    assert _cli(tmp_path, out) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == N_ROWS and not list(tmp_path.glob(".*.tmp"))
    # A crash mid-write: the last record torn, two others missing.
    out.write_text("\n".join(lines[:-3]) + "\n" + lines[-3][:25])
    capsys.readouterr()
    assert _cli(tmp_path, out, "--resume") == 0
    assert f"{N_ROWS} instances ({N_ROWS - 3} already in" in capsys.readouterr().err
    assert [_same(json.loads(x)) for x in out.read_text().splitlines()] == [_same(json.loads(x)) for x in lines]
    # Another query (or model, options, rows) is refused: one line, status 2, nothing touched.
    before = out.read_text()
    assert _cli(tmp_path, out, "--resume", "--query", "robustness") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot resume" in err and "(the query differs)" in err
    assert out.read_text() == before
    # An output not written by rfexplain batch -o cannot be resumed; --resume needs -o.
    stranger = tmp_path / "stranger.jsonl"
    stranger.write_text('{"index": 0}\n')
    assert _cli(tmp_path, stranger, "--resume") == 2
    assert "no run record" in capsys.readouterr().err
    assert main(["batch", "--dataset", "iris", "--trees", "2", "--depth", "2", "--resume"]) == 2
    assert "--resume needs -o" in capsys.readouterr().err


def test_parquet_output_streams_beside_and_is_written_whole(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    from rfexplain.viz.frames import frame_to_records

    out = tmp_path / "out.parquet"
    assert _cli(tmp_path, out) == 0
    assert not Path(f"{out}.partial.jsonl").exists()
    records = frame_to_records(pd.read_parquet(out))
    assert [r.index for r in records] == list(range(N_ROWS)) and all(r.ok for r in records)
    from rfexplain.viz.run_metadata import parquet_metadata

    stored = parquet_metadata(str(out))  # the run's metadata, as explain_many's frames carry it
    assert stored is not None and stored["query"] == "sufficient_reason" and stored["engine"] == "stopper"
    assert _cli(tmp_path, out, "--resume") == 0  # a finished output: nothing left to do


# ---------------------------------------------------------------------- crashes
@pytest.mark.slow
def test_a_worker_killed_by_sigkill_gives_one_error_record() -> None:
    explainer = rx.Explainer(MODEL, engine="stopper", poison=POISON, mode="kill")
    records = explainer.explain_many(ROWS, n_jobs=2, chunk_size=3)
    assert [r.index for r in records] == list(range(N_ROWS))
    failed = [r for r in records if not r.ok]
    assert [r.index for r in failed] == [4] and (failed[0].error or "").startswith("worker died")
    reference = rx.Explainer(MODEL, engine="oracle").explain_many(ROWS, n_jobs=1)
    assert [r.feature_sets() for r in records if r.ok] == [r.feature_sets() for r in reference if r.index != 4]


def test_a_crash_while_the_output_is_rewritten_leaves_the_streamed_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The final rewrite in row order goes through a temporary file renamed over the output: a
    crash during it (here, the disk failing at the sync) leaves the streamed output, every
    record whole, and no temporary file; --resume then finishes it."""
    import rfexplain.batch.streaming as streaming

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("names the file being synced through /proc")
    reference = tmp_path / "reference.csv"
    assert _cli(tmp_path, reference) == 0

    real_sync = os.fsync

    def failing_sync(fd: int) -> None:  # the output's rewrite fails, its run record is written
        name = Path(os.readlink(f"/proc/self/fd/{fd}")).name
        if name.startswith(".out.csv.") and not name.startswith(".out.csv.run.json."):
            raise OSError("disk failed")
        real_sync(fd)

    out = tmp_path / "out.csv"
    with monkeypatch.context() as patch:
        patch.setattr(streaming.os, "fsync", failing_sync)
        assert _cli(tmp_path, out) == 2
    assert "disk failed" in capsys.readouterr().err
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    streamed = _read(out, "csv")
    assert sorted(int(d["index"]) for d in streamed) == list(range(N_ROWS))
    assert _cli(tmp_path, out, "--resume") == 0
    assert [_same(d) for d in _read(out, "csv")] == [_same(d) for d in _read(reference, "csv")]
