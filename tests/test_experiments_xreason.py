"""The XReason side-by-side benchmark's machinery (peers_xreason) without XReason itself: locating
the peer, reading its AAAI'22 dataset list and logged instances, the CSV it trains on, and our
worker on an XGBoost model saved as JSON. (The run against XReason itself: test_experiments.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from experiments import __main__ as entry
from experiments import peers_xreason
from experiments._workers import JsonWorker
from rfexplain.datasets import benchmark_dir, load


def _fake_source(tmp_path: Path) -> Path:
    source = tmp_path / "xreason-src"
    (source / "src" / "xgbooster").mkdir(parents=True)
    (source / "src" / "xgbooster" / "__init__.py").write_text("")
    (source / "src" / "datasets.list").write_text(
        "../aaai22/bench/ecoli/ecoli.csv 3\n"
        "../aaai22/bench/pendigits/pendigits.csv 3\n"
        "../aaai22/bench/wine-recognition/wine-recognition.csv 4\n"
    )
    logs = source / "aaai22" / "logs" / "mx"
    logs.mkdir(parents=True)
    log = "i: 0.41,0.51,0.48\ns: 2\nt: 1.016\nc: 7\n\ni: 0.76,0.71,0.48\ns: 3\n\nmax time: 1.30\n"
    (logs / "ecoli.log").write_text(log)
    return source


def test_peers_xreason_is_skipped_without_xreason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = entry.main(
        ["peers_xreason", "--quick", "--results-dir", str(tmp_path), "--xreason-python", str(tmp_path / "none")]
    )
    assert code == 2 and "skip peers_xreason: XReason not found" in capsys.readouterr().err
    assert not list(tmp_path.glob("peers_xreason*"))


def test_find_xreason_needs_an_interpreter_and_the_xgbooster_package(tmp_path: Path) -> None:
    source = _fake_source(tmp_path)
    found = peers_xreason.find_xreason(sys.executable, str(source))
    assert found == peers_xreason.Xreason(Path(sys.executable), source)
    assert peers_xreason.find_xreason(sys.executable, str(tmp_path)) is None
    assert peers_xreason.find_xreason(str(tmp_path / "python"), str(source)) is None


def test_the_shared_datasets_their_depths_and_the_logged_instances(tmp_path: Path) -> None:
    xreason = peers_xreason.Xreason(Path(sys.executable), _fake_source(tmp_path))
    # pendigits is not in the project's suite; wine-recognition is its wine-recog
    assert peers_xreason.aaai22_datasets(xreason) == {"ecoli": ("ecoli", 3), "wine-recog": ("wine-recognition", 4)}
    logged = peers_xreason.aaai22_instances(xreason, "ecoli")
    assert logged == [([0.41, 0.51, 0.48], 2), ([0.76, 0.71, 0.48], 3)]
    assert peers_xreason.aaai22_instances(xreason, "wine-recognition") == []  # no log: the test rows instead


def test_the_csv_xreason_trains_on_is_the_projects_dataset_with_class_indices(tmp_path: Path) -> None:
    path = tmp_path / "ionosphere.csv"
    peers_xreason.write_csv("ionosphere", benchmark_dir(), path)  # labels "b" and "g"
    data = load("ionosphere")
    lines = path.read_text().splitlines()
    assert lines[0].split(",")[-1] == "target" and len(lines) == len(data.X) + 1
    table = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    assert np.array_equal(table[:, :-1], data.X)
    assert table[:, -1].tolist() == [float(data.class_names.index(y)) for y in data.y]


@pytest.mark.slow
def test_our_worker_reads_an_xgboost_json_and_prepares_every_class(tmp_path: Path) -> None:
    xgboost = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.random((200, 3)).astype(np.float32)
    y = (X[:, 0] > 0.5).astype(int) + (X[:, 1] > 0.7).astype(int)  # three classes; feature 2 plays no part
    model = xgboost.XGBClassifier(n_estimators=5, max_depth=2, random_state=0, n_jobs=1).fit(X, y)
    path = tmp_path / "model.json"
    model.get_booster().save_model(path)
    command = [sys.executable, str(peers_xreason.OURS_WORKER), str(path), "--prepare"]
    with JsonWorker(command, log=tmp_path / "log") as worker:
        ready = worker.start()
        assert ready["ready"] and ready["prepare_cpu"] >= 0
        for x in X[:3]:
            answer = worker.ask({"x": [float(v) for v in x]}, limit=60)
            assert answer["ok"] and answer["first"] is False  # every class's formula was built at load
            assert answer["prediction"] == int(model.predict(x[None, :])[0])
            assert 2 not in answer["features"]
            check = worker.ask({"x": [float(v) for v in x], "check": answer["features"]}, limit=60)
            assert check["sufficient"] is True and check["redundant"] == []
            everything = worker.ask({"x": [float(v) for v in x], "check": [0, 1, 2]}, limit=60)
            assert everything["sufficient"] is True and 2 in everything["redundant"]


def _row(solver: str, instance: int, cpu: float | None, **extra: object) -> dict[str, object]:
    row: dict[str, object] = {"dataset": "d", "depth": 3, "classes": 2, "agree_rows": "10/10", "solver": solver}
    row.update(instance=instance, status="ok" if cpu is not None else "skipped")
    if cpu is not None:
        row.update(cpu=cpu, wall=cpu, first=False if solver == "rfexplain" else None, size=2, features=[0, 1])
        row.update(prediction=1, load_cpu=0.5, encode_cpu=None)
    row.update(extra)
    return row


def test_the_summary_counts_agreements_checks_and_the_issues_targets() -> None:
    rows = [
        _row("rfexplain", 0, 0.001, model_predict=1, agrees_with_predict=True),
        _row("rfexplain", 1, 0.003, model_predict=0, agrees_with_predict=False),
        _row("rfexplain", 2, None, model_predict=1, agrees_with_predict=None),
        _row("xreason", 0, 0.05, model_predict=1, agrees_with_predict=True, predict=1, xreason_time=0.04),
        _row("xreason", 1, 0.05, model_predict=0, agrees_with_predict=False, predict=1, xreason_time=0.04),
        _row("xreason", 2, None, model_predict=1, agrees_with_predict=None),
    ]
    rows[3].update(same_decision=True, checked_sufficient=True, checked_minimal=True, same_axp=True, log_size=2)
    rows[4].update(same_decision=True, checked_sufficient=True, checked_minimal=False, log_size=3)
    [summary] = peers_xreason.summary_rows(rows)
    assert summary["rfexplain_vs_predict"] == "1/2" and summary["xreason_vs_predict"] == "1/2"
    assert summary["predict_versions_differ"] == 1 and summary["same_axp"] == 1 and summary["as_logged"] == "1/2"
    assert summary["xreason_axps_wrong"] == 1 and summary["decisions_differ"] == 0
    assert summary["ratio_all"] == pytest.approx(0.004 / 0.1) and summary["xreason_own_time"] == pytest.approx(0.04)
    text = peers_xreason.targets([summary])
    assert "ours / XReason <= 0.1 per AXp: 1/1" in text
    assert "our decision = predict on every instance and every row: 0/1" in text
