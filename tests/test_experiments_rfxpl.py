"""The RFxpl side-by-side benchmarks' machinery (peers_rfxpl, practical_forests), run against a
stand-in for RFxpl's ``xrf`` package (and against RFxpl itself when it is set up here)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from experiments import __main__ as entry
from experiments import peers_rfxpl, practical_forests
from experiments._workers import JsonWorker, WorkerFailed

#: A stand-in for RFxpl's ``xrf`` package with the calls rfxpl_worker.py makes: it prints like
#: RFxpl, answers every feature as its "AXp" (sufficient, rarely minimal), hangs when x[0] < -100.
FAKE_XRF = """
import pickle, time
import numpy as np

class RFSklearn:
    def __init__(self, from_file):
        with open(from_file, "rb") as handle:
            self.forest = pickle.load(handle)
        self.feature_names = [f"f{i}" for i in range(self.forest.n_features_in_)]
        self.targets = self.forest.classes_

class XRF:
    def __init__(self, model, features, classes, verb=0):
        print("RFxpl-like chatter on stdout")
        self.model = model

    def encode(self, x, etype):
        assert etype == "sat"
        self.enc = type("Enc", (), {"target": int(self.model.forest.predict(x[None, :])[0])})()

    def explain(self, x, xtype, etype, smallest):
        assert (xtype, etype, smallest) == ("abd", "sat", False) and "enc" in self.__dict__
        if x[0] < -100:
            time.sleep(600)
        return list(range(len(x)))
"""


def _forest() -> tuple[RandomForestClassifier, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.random((200, 3)).astype(np.float32)
    y = (X[:, 0] > 0.5).astype(int)  # only feature 0 matters
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    return model, X


def _fake_rfxpl(tmp_path: Path) -> peers_rfxpl.Rfxpl:
    source = tmp_path / "rfxpl-src"
    (source / "xrf").mkdir(parents=True)
    (source / "xrf" / "__init__.py").write_text(textwrap.dedent(FAKE_XRF))
    return peers_rfxpl.Rfxpl(Path(sys.executable), source)


def test_peers_rfxpl_is_skipped_without_rfxpl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = entry.main(
        ["peers_rfxpl", "--quick", "--results-dir", str(tmp_path), "--rfxpl-python", str(tmp_path / "none")]
    )
    assert code == 2 and "skip peers_rfxpl: RFxpl not found" in capsys.readouterr().err
    assert not list(tmp_path.glob("peers_rfxpl*"))


def test_find_rfxpl_needs_an_interpreter_and_the_xrf_package(tmp_path: Path) -> None:
    fake = _fake_rfxpl(tmp_path)
    assert peers_rfxpl.find_rfxpl(str(fake.python), str(fake.source)) == fake
    assert peers_rfxpl.find_rfxpl(str(fake.python), str(tmp_path)) is None
    assert peers_rfxpl.find_rfxpl(str(tmp_path / "python"), str(fake.source)) is None


def test_json_worker_kills_a_child_past_its_limit_and_starts_another(tmp_path: Path) -> None:
    script = tmp_path / "child.py"
    script.write_text(
        "import json, os, sys, time\n"
        "print(json.dumps({'ready': True, 'pid': os.getpid()}), flush=True)\n"
        "for line in sys.stdin:\n"
        "    if json.loads(line)['sleep']:\n"
        "        time.sleep(600)\n"
        "    print(json.dumps({'ok': True, 'pid': os.getpid()}), flush=True)\n"
    )
    with JsonWorker([sys.executable, str(script)], log=tmp_path / "log") as worker:
        first = worker.ask({"sleep": False}, limit=30)
        assert first["status"] == "ok"
        hung = worker.ask({"sleep": True}, limit=0.3)
        assert hung["status"] == "killed" and worker.kills == 1 and 0.3 <= hung["wall"]
        assert hung["wall"] < 600  # killed, not waited out: the child sleeps 600 s (no load bound)
        assert hung["cpu_at_kill"] is not None and hung["cpu_at_kill"] < hung["wall"]  # it slept
        with pytest.raises(ProcessLookupError):
            os.kill(first["pid"], 0)
        again = worker.ask({"sleep": False}, limit=30)
        assert again["status"] == "ok" and again["pid"] != first["pid"]
    broken = tmp_path / "broken.py"
    broken.write_text("import json\nprint(json.dumps({'ready': False, 'error': 'no xrf'}))\n")
    with pytest.raises(WorkerFailed, match="no xrf"):
        JsonWorker([sys.executable, str(broken)], log=tmp_path / "log").start()


@pytest.mark.slow
def test_side_by_side_times_both_and_checks_the_peers_axps(tmp_path: Path) -> None:
    model, X = _forest()
    chosen = X[:4].copy()
    chosen[3, 0] = -1000.0  # the stand-in hangs on this one: killed at the limit
    base = {"dataset": "toy", "trees": 5}
    rows = peers_rfxpl.side_by_side(
        model, chosen, [10, 11, 12, 13], base, rfxpl=_fake_rfxpl(tmp_path), limit=5.0, workdir=tmp_path
    )
    ours = [r for r in rows if r["solver"] == "rfexplain"]
    peer = [r for r in rows if r["solver"] == "rfxpl"]
    assert [r["instance"] for r in ours] == [10, 11, 12, 13] and len(peer) == 4
    assert all(r["status"] == "ok" and r["features"] == [0] for r in ours)  # feature 0 alone decides
    predicted = [int(p) for p in model.predict(chosen)]
    assert [r["prediction"] for r in ours] == predicted
    first_of_class = [predicted.index(c) for c in sorted(set(predicted))]
    assert [k for k, r in enumerate(ours) if r["first"]] == sorted(first_of_class)
    assert [r["status"] for r in peer] == ["ok", "ok", "ok", "killed"]
    for r in peer[:3]:
        assert r["features"] == [0, 1, 2] and r["same_decision"] is True
        assert r["checked_sufficient"] is True and r["checked_minimal"] is False
    [summary] = peers_rfxpl.summarise(rows, ["dataset", "trees"])
    assert summary["ours_solved"] == 4 and summary["rfxpl_solved"] == 3
    assert summary["rfxpl_axps_wrong"] == 3 and summary["decisions_differ"] == 0
    ours_cpu = sum(r["cpu"] for r in ours[:3])
    assert summary["ratio_all"] == pytest.approx(ours_cpu / sum(r["cpu"] for r in peer[:3]))
    assert summary["ours_size"] == 1 and summary["rfxpl_size"] == 3


@pytest.mark.slow
def test_a_side_killed_three_times_in_a_row_skips_the_rest(tmp_path: Path) -> None:
    model, X = _forest()
    chosen = X[:5].copy()
    chosen[:4, 0] = -1000.0
    rows = peers_rfxpl.side_by_side(
        model, chosen, list(range(5)), {"dataset": "toy"}, rfxpl=_fake_rfxpl(tmp_path), limit=0.5, workdir=tmp_path
    )
    assert [r["status"] for r in rows if r["solver"] == "rfxpl"] == ["killed"] * 3 + ["skipped"] * 2


def test_summary_splits_our_first_instances_from_the_rest() -> None:
    base = {"dataset": "d", "trees": 1}
    rows = [
        {**base, "solver": "rfexplain", "instance": 0, "status": "ok", "cpu": 3.0, "wall": 4.0, "first": True},
        {**base, "solver": "rfexplain", "instance": 1, "status": "ok", "cpu": 1.0, "wall": 1.0, "first": False},
        {**base, "solver": "rfexplain", "instance": 2, "status": "killed", "cpu": None, "wall": 9.0, "first": None},
        {**base, "solver": "rfxpl", "instance": 0, "status": "ok", "cpu": 2.0, "wall": 2.0, "encode_cpu": 1.0},
        {**base, "solver": "rfxpl", "instance": 1, "status": "ok", "cpu": 4.0, "wall": 4.0, "encode_cpu": 1.0},
        {**base, "solver": "rfxpl", "instance": 2, "status": "ok", "cpu": 8.0, "wall": 8.0, "encode_cpu": 1.0},
    ]
    for row in rows:
        row.setdefault("size", 1)
    [s] = peers_rfxpl.summarise(rows, ["dataset", "trees"])
    assert (s["ours_first_cpu"], s["ours_rest_cpu"], s["ours_mean_cpu"], s["ours_max_cpu"]) == (3.0, 1.0, 2.0, 3.0)
    assert s["ours_solved"] == 2 and s["rfxpl_solved"] == 3 and s["rfxpl_mean_cpu"] == pytest.approx(14 / 3)
    assert s["ratio_all"] == pytest.approx(4.0 / 6.0)  # instances 0 and 1, which both solved
    assert s["ratio_rest"] == pytest.approx(1.0 / 4.0)


def test_practical_forests_dataset_rule(tmp_path: Path) -> None:
    for name, rows in (("big", 1000), ("small", 999), ("ionosphere", 351), ("segmentation", 210)):
        (tmp_path / f"{name}.csv").write_text("a,label\n" + "1,0\n" * rows)
    assert practical_forests.default_datasets(tmp_path) == ["big", "ionosphere", "segmentation"]


@pytest.mark.slow
@pytest.mark.skipif(peers_rfxpl.find_rfxpl(None, None) is None, reason="RFxpl is not set up here")
def test_against_rfxpl_itself(tmp_path: Path) -> None:
    model, X = _forest()
    rfxpl = peers_rfxpl.find_rfxpl(None, None)
    rows = peers_rfxpl.side_by_side(
        model, X[:3], [0, 1, 2], {"dataset": "toy"}, rfxpl=rfxpl, limit=60, workdir=tmp_path
    )
    peer = [r for r in rows if r["solver"] == "rfxpl"]
    assert [r["status"] for r in peer] == ["ok"] * 3
    assert all(r["same_decision"] and r["checked_sufficient"] and r["checked_minimal"] for r in peer)


@pytest.mark.slow
def test_a_peer_that_cannot_load_the_forest_is_not_retried_per_instance(tmp_path: Path) -> None:
    model, X = _forest()
    broken = peers_rfxpl.Rfxpl(Path(sys.executable), tmp_path / "broken-src")
    (broken.source / "xrf").mkdir(parents=True)
    (broken.source / "xrf" / "__init__.py").write_text("raise ImportError('no anytree')\n")
    rows = peers_rfxpl.side_by_side(
        model, X[:3], [0, 1, 2], {"dataset": "toy"}, rfxpl=broken, limit=5.0, workdir=tmp_path
    )
    peer = [r for r in rows if r["solver"] == "rfxpl"]
    assert [r["status"] for r in peer] == ["failed", "skipped", "skipped"]
    assert "no anytree" in peer[0]["error"]
    assert [r["status"] for r in rows if r["solver"] == "rfexplain"] == ["ok"] * 3


@pytest.mark.slow
def test_a_side_past_its_budget_on_a_forest_skips_the_rest(tmp_path: Path) -> None:
    model, X = _forest()
    chosen = X[:3].copy()
    chosen[0, 0] = -1000.0  # the stand-in hangs: killed at the 1 s limit, past the 0.5 s budget
    rows = peers_rfxpl.side_by_side(
        model,
        chosen,
        [0, 1, 2],
        {"dataset": "toy"},
        rfxpl=_fake_rfxpl(tmp_path),
        limit=1.0,
        workdir=tmp_path,
        budget=0.5,
    )
    assert [r["status"] for r in rows if r["solver"] == "rfxpl"] == ["killed", "skipped", "skipped"]


def test_the_issue_targets_are_counted_met_and_missed() -> None:
    summary = [
        {"dataset": "a", "ratio_rest": 0.1, "ratio_all": 0.3, "rfxpl_mean_cpu": 0.1, "ours_mean_cpu": 0.01},
        {"dataset": "b", "ratio_rest": None, "ratio_all": 0.2, "rfxpl_mean_cpu": 0.1, "ours_mean_cpu": 0.05},
        {"dataset": "c", "ratio_rest": 0.5, "ratio_all": 0.5, "rfxpl_mean_cpu": 9.0, "ours_mean_cpu": 4.5},
    ]
    lines = peers_rfxpl.targets(summary).splitlines()
    assert lines[0].endswith("1/2 (missed: c 0.50)")
    assert lines[1].endswith("1/3 (missed: a 0.30, c 0.50)")
    assert lines[2].endswith("1/2")


def test_practical_targets_count_a_forest_with_unsolved_instances_as_missed() -> None:
    def forest(name: str, trees: int, solved: int, mean: float, most: float) -> dict[str, Any]:
        return {
            "dataset": name,
            "trees": trees,
            "instances": 3,
            "ours_solved": solved,
            "ours_mean_cpu": mean,
            "ours_max_cpu": most,
            "ratio_all": 0.1,
        }

    lines = practical_forests._targets(
        [
            forest("a", 100, 3, 0.5, 2.0),
            forest("b", 100, 1, 0.5, 0.5),
            forest("c", 100, 3, 0.5, 6.0),
            forest("a", 500, 3, 4.0, 40.0),
        ]
    ).splitlines()
    assert lines[0].endswith("1/3 forests") and lines[1].endswith("1/1 forests") and lines[2].endswith("4/4 forests")
    assert lines[3] == "- ours unsolved within the limit: b 100 trees (2)"
