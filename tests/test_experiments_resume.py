"""Resumable benchmark runs (issue 59): ``python -m experiments NAME --resume`` keeps the finished
units of an interrupted run with the same options, computes only the others, and refuses a run
with other options (:mod:`experiments._resume`)."""

from __future__ import annotations

import csv
import json
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from experiments import sat_shortest
from experiments.__main__ import BENCHMARKS
from experiments.__main__ import main as experiments
from experiments._resume import NO_CHECKPOINT, PARTIAL_SUFFIX, CannotResume, Checkpoint, checkpoint

OPTIONS = {"cap": 5.0, "datasets": ["iris"], "results_dir": "/somewhere", "resume": False}


def _recorded(path: Path) -> list[Any]:
    """The keys of the units recorded in a units file, in order."""
    return [json.loads(line)["key"] for line in path.read_text().splitlines()[1:]]


# ---------------------------------------------------------------------- the checkpoint
def test_units_are_recorded_as_they_finish_and_kept_by_resume(tmp_path: Path) -> None:
    path = tmp_path / f"demo{PARTIAL_SUFFIX}"
    first = Checkpoint(path, OPTIONS, resume=False)
    assert first.unit(("iris", 0), lambda: {"time": 0.25, "sizes": (1, 2)}) == {"time": 0.25, "sizes": [1, 2]}
    assert first.unit(("iris", 1), lambda: float("inf")) == float("inf")
    assert _recorded(path) == [["iris", 0], ["iris", 1]]  # on disk before the run ends
    first.close(complete=False)  # interrupted: the file stays

    def never() -> Any:
        raise AssertionError("a kept unit is not computed again")

    moved = dict(OPTIONS, results_dir="/elsewhere", resume=True)  # neither is checked
    second = Checkpoint(path, moved, resume=True)
    assert second.kept == 2
    assert second.unit(["iris", 0], never) == {"time": 0.25, "sizes": [1, 2]}
    assert second.unit(("iris", 1), never) == float("inf")
    assert second.unit(("iris", 2), lambda: 3) == 3
    second.close(complete=True)
    assert not path.exists()


def test_resume_refuses_other_options_and_names_them(tmp_path: Path) -> None:
    path = tmp_path / f"demo{PARTIAL_SUFFIX}"
    first = Checkpoint(path, OPTIONS, resume=False)
    first.unit(("iris", 0), lambda: 1)
    first.close(complete=False)
    before = path.read_text()
    other = dict(OPTIONS, cap=4.0, datasets=["iris", "wine-recog"])
    with pytest.raises(CannotResume, match=r"other options \(--cap and --datasets differ\); run without --resume"):
        Checkpoint(path, other, resume=True)
    assert path.read_text() == before  # nothing touched
    with pytest.raises(CannotResume, match="--instances differs"):
        Checkpoint(path, dict(OPTIONS, instances=3), resume=True)


def test_a_torn_last_line_is_dropped_and_a_foreign_file_refused(tmp_path: Path) -> None:
    path = tmp_path / f"demo{PARTIAL_SUFFIX}"
    first = Checkpoint(path, OPTIONS, resume=False)
    first.unit(("iris", 0), lambda: 1)
    first.close(complete=False)
    with path.open("a") as handle:
        handle.write('{"key": ["iris", 1], "val')  # a crash in the middle of a line
    resumed = Checkpoint(path, OPTIONS, resume=True)
    assert resumed.kept == 1 and resumed.unit(("iris", 1), lambda: 2) == 2
    resumed.close(complete=False)
    assert _recorded(path) == [["iris", 0], ["iris", 1]]
    path.write_text("index,time\n0,1.5\n")
    with pytest.raises(CannotResume, match="is not a file of finished units"):
        Checkpoint(path, OPTIONS, resume=True)


def test_a_run_without_resume_starts_over_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / f"demo{PARTIAL_SUFFIX}"
    first = Checkpoint(path, OPTIONS, resume=False)
    first.unit(("iris", 0), lambda: 1)
    first.close(complete=False)
    with caplog.at_level(logging.WARNING):
        again = Checkpoint(path, OPTIONS, resume=False)
    assert "discarding the units of an earlier run" in caplog.text
    assert again.kept == 0 and again.unit(("iris", 0), lambda: 5) == 5
    again.close(complete=False)


def test_the_context_keeps_the_file_only_when_interrupted_after_some_unit(tmp_path: Path) -> None:
    path = tmp_path / f"demo_quick{PARTIAL_SUFFIX}"
    with pytest.raises(KeyboardInterrupt):
        with checkpoint("demo", quick=True, options=OPTIONS, resume=False, directory=tmp_path) as done:
            done.unit(("iris", 0), lambda: 1)
            raise KeyboardInterrupt
    assert _recorded(path) == [["iris", 0]]
    with pytest.raises(RuntimeError):
        with checkpoint("demo", quick=True, options=OPTIONS, resume=False, directory=tmp_path):
            raise RuntimeError("failed before any unit")
    assert not path.exists()  # nothing to keep
    with checkpoint("demo", quick=True, options=OPTIONS, resume=False, directory=tmp_path) as done:
        done.unit(("iris", 0), lambda: 1)
    assert not path.exists()  # complete


def test_a_unit_that_finishes_after_a_ctrl_c_is_not_recorded(tmp_path: Path, ctrl_c: None) -> None:
    """A unit still running in another thread when Ctrl-C arrives (``circuit_tables --jobs``
    waiting for a child process the Ctrl-C stopped too) finishes after it: its value is not
    recorded, the units finished before are."""
    path = tmp_path / f"demo_quick{PARTIAL_SUFFIX}"
    started, release = threading.Event(), threading.Event()

    def slow() -> int:
        started.set()
        release.wait()
        return 2

    with pytest.raises(KeyboardInterrupt):
        with checkpoint("demo", quick=True, options=OPTIONS, resume=False, directory=tmp_path) as done:
            done.unit(("a",), lambda: 1)
            thread = threading.Thread(target=done.unit, args=(("b",), slow))
            thread.start()
            started.wait()
            try:
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(10_000):  # the handler raises in this thread at its next instruction
                    time.sleep(0.01)
            finally:
                release.set()
                thread.join()
    assert _recorded(path) == [["a"]]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_numpy_values_are_recorded_as_python_values(tmp_path: Path) -> None:
    """A unit computed with numpy gives the same values, fresh or kept: numpy booleans stay
    booleans (not their text), numpy numbers and arrays become Python numbers and lists."""
    path = tmp_path / f"demo{PARTIAL_SUFFIX}"
    value = {"flag": np.bool_(True), "time": np.float64(0.5), "sizes": np.arange(3)}
    fresh = Checkpoint(path, OPTIONS, resume=False)
    first = fresh.unit(("iris", 0), lambda: value)
    fresh.close(complete=False)
    kept = Checkpoint(path, OPTIONS, resume=True).unit(("iris", 0), lambda: None)
    assert first == kept == {"flag": True, "time": 0.5, "sizes": [0, 1, 2]}
    assert type(kept["flag"]) is bool and type(first["flag"]) is bool


def test_no_checkpoint_computes_every_unit_and_records_nothing() -> None:
    calls: list[int] = []
    for _ in range(2):
        assert NO_CHECKPOINT.unit(("iris", 0), lambda: calls.append(1) or (1, 2)) == [1, 2]
    assert len(calls) == 2 and NO_CHECKPOINT.kept == 0 and NO_CHECKPOINT.values == {}


# ---------------------------------------------------------------------- the entry point
def test_a_benchmark_that_records_no_units_refuses_resume(capsys: pytest.CaptureFixture[str]) -> None:
    assert experiments(["cold_start", "--resume"]) == 2
    err = capsys.readouterr().err
    assert "cold_start cannot resume: it does not record its finished units" in err
    assert "sat_shortest" in err  # the resumable ones are named
    assert {"sat_shortest"} <= {bench.name for bench in BENCHMARKS if bench.resumable}


@pytest.mark.parametrize("bench", BENCHMARKS, ids=lambda bench: bench.name)
def test_the_registry_says_which_benchmarks_take_resume(
    bench: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A benchmark registered resumable takes ``--resume`` (the entry point passes it on); one
    that is not does not (the entry point refuses it before running anything)."""
    import importlib

    monkeypatch.setenv("COLUMNS", "200")
    module = importlib.import_module(bench.module)
    with pytest.raises(SystemExit) as stop:
        module.main([*bench.args, "--help"])
    assert stop.value.code in (0, None)
    assert ("--resume" in capsys.readouterr().out) is bench.resumable


def _rows(folder: Path) -> list[dict[str, str]]:
    with (folder / "sat_shortest_quick.csv").open() as handle:
        return list(csv.DictReader(handle))


def test_sat_shortest_interrupted_then_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quick run interrupted at its third instance keeps the two finished ones; ``--resume``
    computes only the two others and gives the table of an uninterrupted run (timings aside);
    ``--resume`` with another ``--cap`` is refused with exit status 2, the units left as they
    were; a run without ``--resume`` starts over."""
    real = sat_shortest.instance_times
    calls: list[int] = []
    interrupt_at = [0]

    def counted(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == interrupt_at[0]:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(sat_shortest, "instance_times", counted)
    argv = ["sat_shortest", "--quick", "--datasets", "iris", "--instances", "4"]
    reference, folder = tmp_path / "reference", tmp_path / "run"
    assert experiments([*argv, "--results-dir", str(reference)]) == 0
    assert len(calls) == 4
    units = folder / f"sat_shortest_quick{PARTIAL_SUFFIX}"

    calls.clear()
    interrupt_at[0] = 3
    assert experiments([*argv, "--results-dir", str(folder)]) == 130
    assert _recorded(units) == [["iris", 0], ["iris", 1]]
    again = f"python -m experiments sat_shortest --quick {' '.join(argv[2:])} --results-dir {folder} --resume"
    assert f"[experiments] interrupted sat_shortest; {again} completes it" in capsys.readouterr().err

    calls.clear()
    kept = units.read_text()
    assert experiments([*argv, "--cap", "4", "--results-dir", str(folder), "--resume"]) == 2
    err = capsys.readouterr().err
    assert (
        "cannot resume sat_shortest_quick.partial.jsonl: its units were computed with other options (--cap differs)"
        in err
    )
    assert calls == [] and units.read_text() == kept

    interrupt_at[0] = 0
    assert experiments([*argv, "--results-dir", str(folder), "--resume"]) == 0
    assert len(calls) == 2 and not units.exists()
    timings = {k for k in _rows(reference)[0] if k.endswith(("_median_s", "_max_s"))}
    same = [{k: v for k, v in row.items() if k not in timings} for row in _rows(folder)]
    assert same == [{k: v for k, v in row.items() if k not in timings} for row in _rows(reference)]
    assert json.loads((folder / "sat_shortest_quick.machine.json").read_text())["options"]["resume"] is True

    calls.clear()
    interrupt_at[0] = 2
    assert experiments([*argv, "--results-dir", str(folder)]) == 130
    interrupt_at[0] = 0
    assert experiments([*argv, "--results-dir", str(folder)]) == 0  # without --resume: every instance again
    assert len(calls) == 2 + 4
