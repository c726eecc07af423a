"""The command line: demo, info, train, explain, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

from rfexplain.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_demo_runs_as_installed_command() -> None:
    # string hash seed 3 once printed a false disagreement (answers compared by their reprs)
    env = {**os.environ, "PYTHONHASHSEED": "3"}
    result = subprocess.run([sys.executable, "-m", "rfexplain.cli", "demo", "--instances", "3"], capture_output=True, text=True,
                            timeout=600, env=env)
    assert result.returncode == 0, result.stderr
    assert "sufficient reasons" in result.stdout and "agrees with sklearn" in result.stdout
    assert "ENGINES DISAGREE" not in result.stdout


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
        ["explain", "--dataset", "iris", "--trees", "3", "--depth", "2", "--index", "60", "--engine", "oracle",
         "--query", "robustness"], capsys,
    )
    assert code == 0 and "robustness:" in out
    X, y = load_iris(return_X_y=True)
    model_path = tmp_path / "model.pkl"
    model_path.write_bytes(pickle.dumps(RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, y)))
    code, out, _ = run(["explain", str(model_path), "--values", "6,3,5,2", "--engine", "oracle",
                        "--query", "contrastive_reasons", "--target", "0"], capsys)
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
        (["explain", "--dataset", "iris", "--index", "0", "--engine", "oracle", "--query", "contrastive_reasons",
          "--target", "unicorn"], "class must be one of"),
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
