"""Batch explanation: ``Explainer.explain_many`` (processes, Dask) and ``rfexplain batch``."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx
from rfexplain.batch import BatchRecord, write_csv, write_jsonl
from rfexplain.cli import main
from rfexplain.engines.registry import available_engines, register
from rfexplain.progress import Progress
from tests import batch_plugins
from tests.batch_plugins import ProbeEngine

register("probe", ProbeEngine)

X, Y = load_iris(return_X_y=True)
MODEL = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, Y)
REAL_ENGINES = [e for e in ("sat", "circuit") if e in available_engines()]


def reference(explainer: rx.Explainer, rows: np.ndarray, query: str, **args: object) -> list[object]:
    out = []
    for row in rows:
        answer = getattr(explainer.explain(row), query)(**args)
        if query == "robustness":
            out.append(answer)
        elif hasattr(answer, "complete"):
            out.append([r.features for r in answer])
        else:
            out.append([] if answer is None else [answer.features])
    return out


def result_of(record: BatchRecord) -> object:
    return record.result if record.query == "robustness" else record.feature_sets()


@pytest.mark.parametrize("query", ["sufficient_reason", "necessary_reason", "sufficient_reasons", "robustness"])
def test_in_process_matches_explain(query: str) -> None:
    explainer = rx.Explainer(MODEL, engine="oracle")
    rows = X[::15]
    records = explainer.explain_many(rows, query, n_jobs=1)
    assert [r.index for r in records] == list(range(len(rows)))
    assert all(r.ok and r.complete for r in records)
    assert [result_of(r) for r in records] == reference(explainer, rows, query)
    assert [r.prediction for r in records] == list(explainer.forest.predict(rows))


@pytest.mark.parametrize("engine", ["oracle"] + REAL_ENGINES)
def test_processes_match_sequential_and_build_engine_once_per_worker(engine: str, tmp_path: Path) -> None:
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=1).fit(X, Y)
    # the circuit engine explains the hard vote only
    explainer = rx.Explainer(model, engine=engine, vote="hard" if engine == "circuit" else "auto")
    rows = X[::5]
    sequential = explainer.explain_many(rows, "necessary_reasons", n_jobs=1)
    parallel = explainer.explain_many(rows, "necessary_reasons", n_jobs=2, chunk_size=3)
    assert [r.index for r in parallel] == list(range(len(rows)))
    assert [set(r.feature_sets()) for r in parallel] == [set(r.feature_sets()) for r in sequential]
    assert all(r.ok and r.complete and r.engine == engine for r in parallel)
    # A plug-in engine that logs its constructions: one per worker process, not one per chunk.
    probe = rx.Explainer(model, engine="probe", log_dir=str(tmp_path))
    for _ in probe.explain_many(rows, n_jobs=2, chunk_size=2):
        pass
    built = [p.name.split("-")[0] for p in tmp_path.iterdir()]
    n_chunks = len(rows) // 2
    # Each worker process built it once (loky may replace an idle worker, so count per process).
    assert built and len(set(built)) == len(built) and len(built) < n_chunks


def test_failure_on_one_instance_is_recorded_and_others_survive() -> None:
    rows = X[:12].copy()
    poison = float(np.float32(rows[4, 0] + 0.013))
    rows[4, 0] = poison
    rows[7, 2] = np.nan  # an invalid instance
    explainer = rx.Explainer(MODEL, engine="probe", poison=poison)
    for n_jobs in (1, 2):
        records = explainer.explain_many(rows, n_jobs=n_jobs, chunk_size=3)
        assert [r.index for r in records] == list(range(12))
        assert "RuntimeError: poisoned instance" in (records[4].error or "")
        assert records[4].prediction is not None and records[4].complete is None
        assert "InvalidInstanceError" in (records[7].error or "") and records[7].prediction is None
        good = [r for r in records if r.index not in (4, 7)]
        assert all(r.ok and r.complete and r.feature_sets() for r in good)


def test_a_worker_that_dies_costs_only_its_instance() -> None:
    rows = X[:10].copy()
    poison = float(np.float32(9.875))
    rows[6, 0] = poison
    explainer = rx.Explainer(MODEL, engine="probe", poison=poison, mode="exit")
    records = explainer.explain_many(rows, n_jobs=2, chunk_size=4)
    assert [r.index for r in records] == list(range(10))
    assert (records[6].error or "").startswith("worker died")
    assert all(r.ok and r.feature_sets() for r in records if r.index != 6)


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, dead but not yet reaped, does not)."""
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc").is_dir():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_a_worker_past_its_deadline_is_killed_and_replaced(tmp_path: Path) -> None:
    rows = X[:6].copy()
    poison = float(np.float32(9.625))
    rows[2, 0] = poison
    explainer = rx.Explainer(MODEL, engine="probe", poison=poison, mode="hang", log_dir=str(tmp_path))
    records = explainer.explain_many(rows, "sufficient_reason", n_jobs=2, chunk_size=2, timeout=0.5)
    assert [r.index for r in records] == list(range(6))
    assert (records[2].ok, records[2].complete, records[2].stopped_by) == (True, False, "timeout")
    assert all(r.ok and r.complete and r.feature_sets() for r in records if r.index != 2)
    # Every worker that hung on row 2 (its chunk's, then the one that retried it alone) was killed,
    # not waited out: none wakes from its 120 s sleep (which a worker left running does, then
    # writes woke-<pid>); no clock is read, so a loaded machine cannot fail this.
    hung = [int(p.name.split("-")[1]) for p in tmp_path.glob("hung-*")]
    assert hung
    while any(_running(pid) and not (tmp_path / f"woke-{pid}").exists() for pid in hung):
        time.sleep(0.05)
    assert not list(tmp_path.glob("woke-*"))


def test_timeout_cuts_enumerations_and_robustness(
    monkeypatch: pytest.MonkeyPatch, budget_clock: Callable[[Callable[[], float]], None]
) -> None:
    """The budgets read a clock that only the probe's pauses advance (each still sleeping its
    0.01 s): a stalled query must stop after as many pauses as its 0.05 s budget holds, counted
    the same on a loaded machine."""
    now, pauses = [0.0], [0]

    def pause(seconds: float) -> None:
        time.sleep(seconds)
        now[0] += seconds
        pauses[0] += 1

    budget_clock(lambda: now[0])
    monkeypatch.setattr(batch_plugins, "pause", pause)
    explainer = rx.Explainer(MODEL, engine="probe", mode="slow")
    for query, empty in (("sufficient_reasons", []), ("shortest_necessary_reasons", []), ("robustness", None)):
        pauses[0] = 0
        records = explainer.explain_many(X[:2], query, n_jobs=1, timeout=0.05)
        assert all(r.ok and r.complete is False and r.stopped_by == "timeout" and r.result == empty for r in records)
        assert 2 * 5 <= pauses[0] <= 2 * 6, (query, pauses[0])  # 5 pauses of 0.01 s (6 if the sum rounds down)
        assert all(0.04 <= r.time for r in records)  # the records time the instances' real pauses
    # One sufficient reason is answered directly (one MUS), whatever the budget.
    direct = explainer.explain_many(X[:2], "sufficient_reason", n_jobs=1, timeout=0.05)
    assert all(r.complete and len(r.result) == 1 for r in direct)
    fast = rx.Explainer(MODEL, engine="oracle").explain_many(X[:3], "sufficient_reason", timeout=30)
    assert all(r.complete and len(r.result) == 1 for r in fast)


def test_limit_target_robustness_and_argument_checks() -> None:
    explainer = rx.Explainer(MODEL, engine="oracle")
    records = explainer.explain_many(X[:3], "necessary_reasons", limit=1)
    assert all(len(r.result) == 1 for r in records)
    records = explainer.explain_many(X[:3], "contrastive_reasons", target=2)
    assert all(r.ok and all(d["kind"] == "contrastive" for d in r.result) for r in records)
    on_target = explainer.explain_many(X[-1:], "contrastive_reasons", target=2)
    assert on_target[0].prediction == 2 and "must differ" in (on_target[0].error or "")
    robust = explainer.explain_many(X[:2], "robustness", timeout=10)
    assert robust[0].result == reference(explainer, X[:1], "robustness")[0]
    with pytest.raises(ValueError, match="query must be one of"):
        explainer.explain_many(X[:2], "why")
    with pytest.raises(TypeError, match="limit"):
        explainer.explain_many(X[:2], "robustness", limit=3)
    with pytest.raises(ValueError, match="distinct"):
        explainer.explain_many(X[:2], indices=[5, 5])
    ids = explainer.explain_many(X[:2], indices=[40, 7], n_jobs=2)
    assert [r.index for r in ids] == [40, 7]


@pytest.mark.parametrize("chunk_size", [0, -3, 2.5, True, "4"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_chunk_size_must_be_a_positive_integer(chunk_size: object, n_jobs: int) -> None:
    """Checked before any work, with one job too (where it is not used): a negative size cut the
    rows into no chunk at all and failed inside the pool, a fraction failed slicing them."""
    explainer = rx.Explainer(MODEL, engine="oracle")
    with pytest.raises(rx.QueryArgumentError, match=r"chunk_size must be a positive integer or None. Got .* instead"):
        explainer.iter_explain(X[:4], n_jobs=n_jobs, chunk_size=chunk_size)  # type: ignore[arg-type]
    with pytest.raises(rx.QueryArgumentError, match="chunk_size"):
        explainer.explain_many(X[:4], n_jobs=n_jobs, chunk_size=chunk_size)  # type: ignore[arg-type]


def test_cli_chunk_size_sets_the_rows_a_worker_takes_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--chunk-size N`` is ``explain_many``'s ``chunk_size``: the pool gets chunks of N rows
    (the last one shorter), and the records are those of one job. A size below 1 is a usage
    error."""
    import rfexplain.batch.runner as runner

    sizes: list[list[int]] = []
    real = runner.run_parallel

    def spy(chunks: list[list[object]], *args: object) -> object:
        sizes.append([len(chunk) for chunk in chunks])
        return real(chunks, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "run_parallel", spy)
    forest_path = tmp_path / "forest.json"
    forest_path.write_text(rx.Forest.from_sklearn(MODEL).to_json())
    base = ["batch", str(forest_path), "--dataset", "iris", "--rows", "0:7", "--engine", "oracle", "--no-progress"]
    assert main(base) == 0
    sequential = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert main(base + ["--jobs", "2", "--chunk-size", "3"]) == 0
    chunked = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sizes == [[3, 3, 1]]
    assert [(d["index"], d["result"]) for d in chunked] == [(d["index"], d["result"]) for d in sequential]
    for bad in ("0", "-2", "x"):
        with pytest.raises(SystemExit) as stop:
            main(base + ["--chunk-size", bad])
        assert stop.value.code == 2 and "--chunk-size: expected a positive integer" in capsys.readouterr().err


def test_records_serialise_to_json_lines() -> None:
    records = rx.Explainer(MODEL, engine="oracle").explain_many(X[:2], "robustness")
    unflippable = BatchRecord(
        index=9, query="robustness", engine="oracle", prediction=np.int64(1), result=math.inf, complete=True
    )
    out = io.StringIO()
    write_jsonl(records + [unflippable], out)
    docs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [d["index"] for d in docs] == [0, 1, 9] and all(d["error"] is None for d in docs)
    assert docs[0]["result"] == records[0].result and docs[2]["result"] is None and docs[2]["prediction"] == 1


def test_csv_writer_columns() -> None:
    records = rx.Explainer(MODEL, engine="oracle").explain_many(X[:3], "sufficient_reasons")
    out = io.StringIO()
    write_csv(records, out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert len(rows) == 3 and rows[0]["complete"] == "True"
    assert json.loads(rows[0]["features"]) == [sorted(f) for f in records[0].feature_sets()]


def test_progress_bar_only_when_asked() -> None:
    out = io.StringIO()
    with Progress(4, "x", enabled=True, stream=out) as bar:
        for _ in range(4):
            bar.update()
    assert "4/4" in out.getvalue()
    quiet = io.StringIO()
    with Progress(4, "x", stream=quiet) as bar:  # not a terminal
        bar.update(4)
    assert quiet.getvalue() == ""


@pytest.mark.slow
def test_dask_local_cluster() -> None:
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    explainer = rx.Explainer(MODEL, engine=REAL_ENGINES[0] if REAL_ENGINES else "oracle")
    rows = X[::10]
    expected = [set(r.feature_sets()) for r in explainer.explain_many(rows, "sufficient_reasons", n_jobs=1)]
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster),
    ):
        with joblib.parallel_config(backend="dask"):
            records = explainer.explain_many(rows, "sufficient_reasons")
    assert [set(r.feature_sets()) for r in records] == expected
    assert all(r.ok and r.complete for r in records)


# ---------------------------------------------------------------------- command line
def test_cli_batch_dataset_rows_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.csv"
    forest_path = tmp_path / "forest.json"
    code = main(
        [
            "batch",
            "--dataset",
            "iris",
            "--trees",
            "3",
            "--depth",
            "2",
            "--engine",
            "oracle",
            "--rows",
            "0:6",
            "--jobs",
            "2",
            "-o",
            str(out),
            "--save-forest",
            str(forest_path),
            "--no-progress",
        ]
    )
    assert code == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 6 and all(r["error"] == "" and r["complete"] == "True" for r in rows)
    assert "6 instances, 6 complete" in capsys.readouterr().err
    # The saved forest, instances from a CSV file (with a header and a label column), JSON lines.
    instances = tmp_path / "rows.csv"
    # A header is matched by name (issue "Guarantees that hold"): names the forest does not have
    # are refused instead of being read by position.
    instances.write_text("a,b,c,d,label\n5.1,3.5,1.4,0.2,setosa\n6.3,3.3,6.0,2.5,virginica\n")
    code = main(["batch", str(forest_path), "--input", str(instances), "--engine", "oracle", "--query", "robustness"])
    assert code == 2 and "unknown ['a', 'b', 'c', 'd']" in capsys.readouterr().err
    header = "sepal length (cm),sepal width (cm),petal length (cm),petal width (cm),label"
    instances.write_text(header + "\n5.1,3.5,1.4,0.2,setosa\n6.3,3.3,6.0,2.5,virginica\n")
    code = main(["batch", str(forest_path), "--input", str(instances), "--engine", "oracle", "--query", "robustness"])
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and [d["index"] for d in docs] == [0, 1]
    assert docs[0]["prediction"] == "setosa" and isinstance(docs[0]["result"], int)


@pytest.mark.slow
def test_cli_batch_on_a_local_dask_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("dask.distributed")
    code = main(
        [
            "batch",
            "--dataset",
            "iris",
            "--trees",
            "3",
            "--depth",
            "2",
            "--engine",
            "oracle",
            "--rows",
            "0:4",
            "--dask",
            "local",
            "--jobs",
            "2",
            "--query",
            "necessary_reasons",
        ]
    )
    captured = capsys.readouterr()
    docs = [json.loads(line) for line in captured.out.splitlines()]
    assert code == 0 and len(docs) == 4 and all(d["complete"] and d["result"] for d in docs)
    assert "dask local" in captured.err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["batch"], "model file or --dataset"),
        (["batch", "--dataset", "iris", "--rows", "5:900"], "outside"),
        (["batch", "--dataset", "iris", "--rows", "a:b"], "START:STOP"),
        (["batch", "--dataset", "iris", "--query", "contrastive_reasons"], "--target"),
        (["batch", "--dataset", "iris", "--query", "robustness", "--limit", "2"], "enumerations"),
        (["batch", "--dataset", "nope"], "dataset must be one of"),
    ],
)
def test_cli_batch_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv + ["--trees", "2", "--depth", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rfexplain: error:") and message in err[0]
