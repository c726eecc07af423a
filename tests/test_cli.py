"""The command line: demo, info, train, explain, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

from rfexplain.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_demo_runs_as_installed_command() -> None:
    # string hash seed 3 once printed a false disagreement (answers compared by their reprs)
    env = {**os.environ, "PYTHONHASHSEED": "3"}
    result = subprocess.run(
        [sys.executable, "-m", "rfexplain.cli", "demo", "--instances", "3"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "sufficient reasons" in result.stdout and "agrees with sklearn" in result.stdout
    assert "ENGINES DISAGREE" not in result.stdout


@pytest.mark.slow
def test_output_closed_by_its_reader_ends_quietly() -> None:
    """``python -m rfexplain batch ... | head``: the reader closes the pipe after a few bytes; the
    command stops with the shell's status for SIGPIPE and no error message."""
    argv = ["batch", "--dataset", "iris", "--trees", "3", "--depth", "2", "--test-size", "0.9", "--no-progress"]
    with subprocess.Popen(
        [sys.executable, "-m", "rfexplain", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.read(10)
        process.stdout.close()
        err = process.stderr.read().decode()
        assert process.wait(timeout=300) == 141, err
    assert err == ""


def test_train_info_explain_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "forest.json"
    code, out, _ = run(["train", "--dataset", "iris", "--trees", "3", "--depth", "2", "-o", str(path)], capsys)
    assert code == 0 and path.is_file()
    code, out, _ = run(["info", str(path), "--json"], capsys)
    assert code == 0 and json.loads(out)["trees"] == 3
    code, out, _ = run(
        ["explain", str(path), "--values", "5.1,3.5,1.4,0.2", "--engine", "oracle", "--all", "--json"], capsys
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["prediction"] == "setosa" and doc["complete"] is True and doc["reasons"]
    assert doc["query"] == "sufficient_reasons"


def test_explain_from_dataset_and_pickle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        [
            "explain",
            "--dataset",
            "iris",
            "--trees",
            "3",
            "--depth",
            "2",
            "--index",
            "60",
            "--engine",
            "oracle",
            "--query",
            "robustness",
        ],
        capsys,
    )
    assert code == 0 and "robustness:" in out
    X, y = load_iris(return_X_y=True)
    model_path = tmp_path / "model.pkl"
    model_path.write_bytes(pickle.dumps(RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y)))
    code, out, _ = run(
        [
            "explain",
            str(model_path),
            "--values",
            "6,3,5,2",
            "--engine",
            "oracle",
            "--query",
            "contrastive_reasons",
            "--target",
            "0",
        ],
        capsys,
    )
    assert code == 0 and "prediction: 2" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["info", "/no/such/file.json"], "no such file"),
        (["explain", "--dataset", "nope", "--index", "0"], "dataset must be one of"),
        (["explain", "--dataset", "iris", "--index", "0", "--engine", "smt"], "engine must be one of"),
        (["explain", "--dataset", "iris", "--values", "1,2", "--engine", "oracle"], "expected 4 features, got 2"),
        (["explain", "--dataset", "iris", "--values", "1,x,3,4"], "comma-separated numbers"),
        (["explain", "--dataset", "iris", "--values", "1,nan,3,4", "--engine", "oracle"], "NaN in feature 1"),
        (["explain", "--dataset", "iris", "--index", "999"], "--index must be in"),
        (
            [
                "explain",
                "--dataset",
                "iris",
                "--index",
                "0",
                "--engine",
                "oracle",
                "--query",
                "contrastive_reasons",
                "--target",
                "unicorn",
            ],
            "class must be one of",
        ),
    ],
)
def test_bad_input_is_one_line_with_status_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_corrupt_and_future_forest_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "rfexplain-forest", "version": 7}')
    code, _, err = run(["info", str(bad)], capsys)
    assert code == 2 and "newer than this release" in err
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01garbage")
    code, _, err = run(["info", str(junk)], capsys)
    assert code == 2 and "cannot read" in err


# ---------------------------------------------------------------------- the error policy
def _forest_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "forest.json"
    assert run(["train", "--dataset", "iris", "--trees", "2", "--depth", "2", "-o", str(path)], capsys)[0] == 0
    return path


@pytest.mark.parametrize("bug", [KeyError("oops"), ValueError("a builtin ValueError is not a usage error")])
def test_internal_error_is_status_1_asking_for_a_report(
    bug: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _forest_file(tmp_path, capsys)

    def broken(self: object) -> None:
        raise bug

    monkeypatch.setattr("rfexplain.core.forest.Forest.statistics", broken)
    code, _, err = run(["info", str(path)], capsys)
    assert code == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "internal error" in err and type(bug).__name__ in err and str(bug).strip("'") in err and "report" in err
    assert "--debug" in err
    code, _, err = run(["--debug", "info", str(path)], capsys)
    assert code == 1 and "Traceback" in err and "internal error" in err


def test_rfexplain_errors_are_usage_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import rfexplain as rx

    path = _forest_file(tmp_path, capsys)

    def refused(self: object) -> None:
        raise rx.OracleTooLargeError("too many state vectors")

    monkeypatch.setattr("rfexplain.core.forest.Forest.statistics", refused)
    code, _, err = run(["info", str(path)], capsys)
    assert code == 2 and err == "rfexplain: error: too many state vectors\n"


@pytest.mark.parametrize(
    "argv", [["explain", "--nonsense"], ["batch", "--limit", "-1"], ["explain", "--timeout", "soon"]]
)
def test_argparse_usage_errors_are_status_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2


def test_input_csv_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A row wrong on its own is its own error record (issue 59), the others are answered and
    the status is 1; a header naming other columns concerns every row: one line, status 2."""
    path = _forest_file(tmp_path, capsys)
    bad = tmp_path / "rows.csv"
    bad.write_text("1,2,3,4\n1,2\n")
    code, out, err = run(["batch", str(path), "--input", str(bad), "--engine", "oracle"], capsys)
    docs = [json.loads(line) for line in out.splitlines()]
    assert code == 1 and [d["index"] for d in docs] == [0, 1] and docs[0]["error"] is None
    assert "row 1: line 2 of rows.csv has 2 values, expected 4" in docs[1]["error"]
    bad.write_text("a,b,c,d\n1,2,3,4\n")
    code, _, err = run(["batch", str(path), "--input", str(bad), "--engine", "oracle"], capsys)
    assert code == 2 and "unknown ['a', 'b', 'c', 'd']" in err and err.count("\n") == 1


@pytest.mark.slow  # a pipeline explained through the command line: seconds
def test_values_as_name_value_pairs_are_matched_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--values name=value,...`` gives the instance by feature name, in any order: the same
    decision as the positional values on a plain model, and a pipeline (categorical columns
    included), which positional numbers cannot describe, is explained on its original columns."""
    import joblib
    import pandas as pd

    from rfexplain.pipeline_demo import loans_pipeline

    data = load_iris(as_frame=True)
    model_path = tmp_path / "iris.joblib"
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(data.data, data.target)
    joblib.dump(model, model_path)
    row = data.data.iloc[60]
    positional = ",".join(str(v) for v in row)
    pairs = ",".join(f"{name}={row[name]}" for name in data.data.columns[::-1])
    outputs = []
    for values in (positional, pairs):
        code, out, err = run(["explain", str(model_path), "--values", values, "--engine", "oracle", "--json"], capsys)
        assert code == 0, err
        outputs.append(json.loads(out))
    assert outputs[0]["reasons"] == outputs[1]["reasons"] and outputs[1]["prediction"] == 1
    code, _, err = run(["explain", str(model_path), "--values", "colour=1," + pairs], capsys)
    assert code == 2 and "unknown ['colour']" in err

    pipe, X_test, _ = loans_pipeline()
    pipe_path = tmp_path / "pipe.joblib"
    joblib.dump(pipe, pipe_path)
    first = X_test.iloc[0]
    pairs = ",".join(f"{name}={first[name]}" for name in X_test.columns)
    code, out, err = run(["explain", str(pipe_path), "--values", pairs, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["prediction"] == pipe.predict(pd.DataFrame([first]))[0]
    code, _, err = run(["explain", str(pipe_path), "--values", "25,35600"], capsys)
    assert code == 2 and "--values name=value" in err
    from sklearn.pipeline import Pipeline  # a pipeline of nothing but its forest reads positions

    plain_pipe = tmp_path / "plain_pipe.joblib"
    joblib.dump(Pipeline([("forest", model)]), plain_pipe)
    code, out, err = run(["explain", str(plain_pipe), "--values", positional, "--engine", "oracle", "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["reasons"] == outputs[0]["reasons"]
    code, _, err = run(["explain", str(pipe_path), "--values", "age=25,income=35600"], capsys)
    assert code == 2 and "missing ['loan_amount'" in err and "plain array" not in err


def test_immutable_and_bounds_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--immutable`` and ``--bounds`` give the API's ``immutable=`` and ``bounds=`` on the
    command line: the same answers as the Python explainer built with them, in explain and batch."""
    import rfexplain as rx

    data = load_iris(as_frame=True)
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(data.data, data.target)
    model_path = tmp_path / "iris.pkl"
    model_path.write_bytes(pickle.dumps(model))
    held = ["petal width (cm)", "petal length (cm)"]
    bounds = {"sepal length (cm)": (4.0, 8.0), "sepal width (cm)": (2.0, 4.5)}
    explainer = rx.Explainer(model, engine="sat", immutable=held, bounds=bounds)
    row = data.data.iloc[60]
    values = ",".join(str(v) for v in row)
    bounds_arg = ",".join(f"{name}={lo}:{hi}" for name, (lo, hi) in bounds.items())
    argv = ["explain", str(model_path), "--values", values, "--query", "necessary_reasons", "--json"]
    code, out, err = run([*argv, "--immutable", ",".join(held), "--bounds", bounds_arg], capsys)
    assert code == 0, err
    expected = {r.features for r in explainer.explain(row).necessary_reasons()}
    got = {frozenset(r["features"]) for r in json.loads(out)["reasons"]}
    assert got == expected and not any({2, 3} & f for f in got)
    csv = tmp_path / "rows.csv"
    data.data.iloc[[0, 60, 120]].to_csv(csv, index=False)
    code, out, err = run(
        ["batch", str(model_path), "--input", str(csv), "--query", "robustness", "--immutable", ",".join(held)], capsys
    )
    assert code == 0, err
    robust = [json.loads(line)["result"] for line in out.splitlines()]
    held_only = rx.Explainer(model, engine="sat", immutable=held)
    expected_robust = [held_only.explain(data.data.iloc[k]).robustness() for k in (0, 60, 120)]
    assert robust == [None if r == math.inf else r for r in expected_robust]  # JSON has no infinity
    assert rx.Explainer(model, engine="sat").explain(data.data.iloc[60]).robustness() == 1  # held: inf
    code, _, err = run([*argv, "--bounds", "sepal length (cm)=4"], capsys)
    assert code == 2 and "name=low:high" in err
    code, _, err = run([*argv, "--bounds", "data"], capsys)
    assert code == 2 and "--dataset or --input" in err
    code, _, err = run([*argv, "--immutable", "colour"], capsys)
    assert code == 2 and "unknown feature 'colour'" in err


def test_explain_on_a_builtin_dataset_names_its_features(capsys: pytest.CaptureFixture[str]) -> None:
    """A forest trained here on a built-in dataset keeps its feature names in ``explain`` (it
    said ``x3`` for wine's alcalinity of ash), as ``batch`` and ``report`` do."""
    argv = ["explain", "--dataset", "wine", "--index", "3", "--query", "necessary_reasons", "--all", "--json"]
    code, out, err = run([*argv, "--immutable", "alcohol,ash"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    names = {name for reason in doc["reasons"] for name in reason["feature_names"]}
    assert names and not any(name.startswith("x") and name[1:].isdigit() for name in names)
    assert not names & {"alcohol", "ash"}


def test_explain_gives_the_inflated_reason_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    """``explain`` without ``--query`` answers with the inflated sufficient reason (issue 54: what
    a person can act on by default); ``--all`` without ``--query`` enumerates the AXps, and the
    canonical reason stays one option away."""
    argv = ["explain", "--dataset", "iris", "--index", "0", "--json"]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["query"] == "inflated_sufficient_reason" and doc["reasons"][0]["inflated"] is True
    code, out, err = run([*argv, "--query", "sufficient_reason"], capsys)
    assert code == 0, err
    canonical = json.loads(out)
    assert canonical["query"] == "sufficient_reason" and not canonical["reasons"][0].get("inflated", False)
    assert canonical["reasons"][0]["feature_names"] == doc["reasons"][0]["feature_names"]
    code, out, err = run([*argv, "--all"], capsys)
    assert code == 0, err
    assert json.loads(out)["query"] == "sufficient_reasons"


# ---------------------------------------------------------------------- issue 51, first contact
def test_target_for_a_query_that_takes_none_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--target`` with a query that takes no target is a usage error (status 2), in explain and
    batch, as the API refuses it."""
    import rfexplain as rx

    path = _forest_file(tmp_path, capsys)
    explainer = rx.Explainer(rx.Forest.from_json(path.read_text()), engine="oracle")
    with pytest.raises(rx.QueryArgumentError, match="sufficient_reason takes no target"):
        explainer.explain([5.1, 3.5, 1.4, 0.2]).ask("sufficient_reason", target="versicolor")
    code, out, err = run(["explain", str(path), "--values", "5.1,3.5,1.4,0.2", "--target", "versicolor"], capsys)
    assert code == 2 and out == "" and "sufficient_reason takes no target" in err and err.count("\n") == 1
    rows = tmp_path / "rows.csv"
    rows.write_text("5.1,3.5,1.4,0.2\n")
    argv = ["batch", str(path), "--input", str(rows), "--query", "robustness", "--target", "versicolor"]
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and "robustness takes no target" in err


@pytest.mark.parametrize("where", [["explain", "--index", "0"], ["batch"]])
def test_limit_below_one_is_a_usage_error(where: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """``--limit 0`` printed "no reason: the decision cannot be changed that way": refused."""
    with pytest.raises(SystemExit) as stop:
        main([*where, "--dataset", "iris", "--query", "necessary_reasons", "--limit", "0"])
    assert stop.value.code == 2
    assert "--limit: expected a positive integer, got '0'" in capsys.readouterr().err


def test_an_enumeration_stopped_before_its_first_reason_does_not_say_there_is_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _forest_file(tmp_path, capsys)
    argv = ["explain", str(path), "--values", "5.1,3.5,1.4,0.2", "--query", "necessary_reasons", "--timeout", "0"]
    code, out, _ = run(argv, capsys)
    assert code == 0 and "cannot be changed" not in out
    assert out.splitlines()[1:] == ["no reason found before the budget ran out", "  (incomplete: stopped by timeout)"]


def test_unreadable_model_files_say_what_they_are(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A garbage or empty ``.joblib`` file and a folder are named for what they are, not as
    ``...: 208``, "corrupt forest JSON" or "no such file"."""
    garbage = tmp_path / "model.joblib"
    garbage.write_bytes(bytes([0x80, 0x04, 0xD0]) + bytes(range(256)))  # a pickle header, then noise
    code, _, err = run(["info", str(garbage)], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "is not a readable joblib/pickle model" in err and not err.rstrip().split()[-1].isdigit()
    empty = tmp_path / "empty.joblib"
    empty.write_bytes(b"")
    code, _, err = run(["info", str(empty)], capsys)
    assert code == 2 and "is empty" in err and "not a forest or a model" in err and "JSON" not in err
    code, _, err = run(["info", str(tmp_path)], capsys)
    assert code == 2 and "is a directory, not a model file" in err and "no such file" not in err
    forest = _forest_file(tmp_path, capsys)
    code, _, err = run(["batch", str(forest), "--input", str(tmp_path), "--engine", "oracle"], capsys)
    assert code == 2 and "is a directory" in err and "no such file" not in err


def test_a_forest_file_with_duplicate_feature_names_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _forest_file(tmp_path, capsys)
    doc = json.loads(path.read_text())
    doc["feature_names"] = ["petal", "sepal", "petal", "width"]
    path.write_text(json.dumps(doc))
    code, _, err = run(["explain", str(path), "--values", "petal=1,sepal=2,width=3"], capsys)
    assert code == 2 and "duplicate feature names ['petal']" in err


def test_demo_says_which_answers_it_compared_and_which_were_incomplete(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo said "engines agree on every shared query: yes" having silently left out answers
    stopped by timeout: it names what it compared, and what it did not and why."""
    import itertools
    from collections.abc import Iterator

    from rfexplain.core.budget import Budget, BudgetExpired
    from rfexplain.core.reasons import Reason
    from rfexplain.demo import run_demo
    from rfexplain.engines.base import Instance
    from rfexplain.sat.engine import SatEngine

    every = SatEngine.sufficient_reasons

    def stopped(self: SatEngine, instance: Instance, budget: Budget) -> Iterator[Reason]:
        yield from itertools.islice(every(self, instance, budget), 1)
        raise BudgetExpired("the test's clock ran out")

    monkeypatch.setattr(SatEngine, "sufficient_reasons", stopped)
    lines: list[str] = []
    assert run_demo(n_instances=1, engines=["sat", "oracle"], write=lines.append) == 0
    out = "\n".join(lines)
    assert "(stopped by timeout)" in out and "every shared query" not in out
    assert (
        "  compared (sat, oracle): inflated sufficient reason, necessary reasons, shortest sufficient reasons, "
        "robustness, "
        "contrastive reasons toward 'versicolor', contrastive reasons toward 'virginica'"
    ) in lines
    assert (
        "  not compared: sat sufficient reasons (incomplete: stopped by timeout), oracle sufficient reasons "
        "(no other complete answer), sat general sufficient reasons (incomplete: stopped by timeout), oracle "
        "general sufficient reasons (too large for the brute-force oracle), oracle shortest flips (too large for "
        "the brute-force oracle), sat shortest flips (no other complete answer)"
    ) in lines
    assert (
        "  engines agree on the 12 answers compared "
        "(2 incomplete answers not compared: sat sufficient reasons stopped by timeout, sat general sufficient "
        "reasons stopped by timeout)"
    ) in lines


def test_necessary_reasons_print_the_change_that_flips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "forest.json"
    code, _, _ = run(["train", "--dataset", "iris", "--trees", "5", "--depth", "3", "-o", str(path)], capsys)
    assert code == 0
    argv = ["explain", str(path), "--values", "6.1,2.8,4.7,1.2", "--query", "necessary_reasons"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    actions = [line.strip() for line in out.splitlines() if line.strip().startswith("to get ")]
    assert actions and all(("raise " in a or "lower " in a) for a in actions), out
    code, out, _ = run([*argv, "--json"], capsys)
    reasons = json.loads(out)["reasons"]
    assert all(r["changes"] and r["actions"].startswith("to get ") for r in reasons)


def test_report_input_bad_rows_are_each_their_own_failed_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 59, item 3, for ``rfexplain report --input``: a short row, a value that is not a
    number, NaN and an infinite value are each a failed row of the report named by their own row
    number; the other rows are explained as they are alone; exit status 1. A header naming other
    columns concerns every row: refused up front, one line, status 2."""
    import rfexplain.viz.report as report

    written: list[list[Any]] = []
    real = report.write_report

    def spy(*args: Any, **kwargs: Any) -> Any:
        written.append(real(*args, **kwargs))
        return written[-1]

    monkeypatch.setattr(report, "write_report", spy)
    path = _forest_file(tmp_path, capsys)
    rows = tmp_path / "rows.csv"
    rows.write_text("5.1,3.5,1.4,0.2\n6.3,3.3\n6.3,abc,6.0,2.5\nnan,3.0,5.1,1.8\n5.9,inf,5.1,1.8\n6.3,3.3,6.0,2.5\n")
    out = tmp_path / "report.html"
    code, _, err = run(["report", str(path), "--input", str(rows), "--engine", "oracle", "--out", str(out)], capsys)
    assert code == 1 and f"wrote {out}: 6 rows, 4 failed" in err
    (reports,) = written
    assert [r.index for r in reports] == list(range(6))
    errors = [r.error or "" for r in reports]
    assert errors[0] == errors[5] == ""
    assert errors[1] == "InvalidInstanceError: row 1: line 2 of rows.csv has 2 values, expected 4 (or 5 with a label)"
    assert errors[2] == "InvalidInstanceError: row 2: line 3 of rows.csv: 'sepal width (cm)' is not a number: 'abc'"
    assert errors[3].startswith("InvalidInstanceError: row 3 has NaN in feature 0")
    assert errors[4].startswith("InvalidInstanceError: row 4 has ") and "in feature 1" in errors[4]
    alone = tmp_path / "alone.csv"
    alone.write_text("5.1,3.5,1.4,0.2\n6.3,3.3,6.0,2.5\n")
    assert run(["report", str(path), "--input", str(alone), "--engine", "oracle", "--out", str(out)], capsys)[0] == 0
    assert [r.reasons for r in written[1]] == [reports[0].reasons, reports[5].reasons]
    rows.write_text("a,b,c,d\n5.1,3.5,1.4,0.2\n")
    code, _, err = run(["report", str(path), "--input", str(rows), "--engine", "oracle", "--out", str(out)], capsys)
    assert code == 2 and "unknown ['a', 'b', 'c', 'd']" in err and err.count("\n") == 1
