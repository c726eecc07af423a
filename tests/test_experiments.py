"""The benchmark entry point and the PyXAI comparison's machinery, without PyXAI itself."""

from __future__ import annotations

import importlib
import json
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from experiments import __main__ as entry
from experiments import _common, peers_pyxai
from rfexplain.engines.base import Instance
from tests.handmade import forest as hand_forest

HERE = Path(__file__).resolve().parent


def test_list_and_unknown_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert entry.main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("sat_table1", "circuit_tables", "peers_pyxai"):
        assert name in out
    assert entry.main(["nope"]) == 2
    assert "name must be one of" in capsys.readouterr().err


def test_registry_skips_missing_and_runs_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = tmp_path / "fake_bench.py"
    fake.write_text(
        "from experiments._common import write_report\n"
        "def main(argv):\n"
        "    assert argv[argv.index('--results-dir') + 1]\n"
        "    size = 1 if '--quick' in argv else 100\n"
        "    write_report('fake', [{'x': size, 't': 0.5}], '# fake\\n', quick=size == 1, options={'size': size},\n"
        "                 seed=7, extra_versions={'tool': '1'})\n"
        "    return 0\n"
    )
    broken = tmp_path / "broken_bench.py"
    broken.write_text("def main(argv):\n    raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(
        entry,
        "BENCHMARKS",
        (
            entry.Benchmark("missing", "experiments.not_written_yet", "absent"),
            entry.Benchmark("fake", "fake_bench", "a fake"),
        ),
    )
    results = tmp_path / "results"
    monkeypatch.setenv(_common.RESULTS_ENV, "")
    assert entry.main(["all", "--quick", "--results-dir", str(results)]) == 2  # "missing" was skipped
    err = capsys.readouterr().err
    assert "skip missing" in err and "ok fake" in err
    assert "error: skipped, not for a missing optional peer: missing" in err
    assert sorted(p.name for p in results.iterdir()) == ["fake_quick.csv", "fake_quick.machine.json", "fake_quick.md"]
    assert (results / "fake_quick.csv").read_text().splitlines() == ["x,t", "1,0.5"]
    assert (results / "fake_quick.md").read_text().startswith("# fake")
    machine = json.loads((results / "fake_quick.machine.json").read_text())
    assert machine["seed"] == 7 and machine["options"] == {"size": 1} and machine["quick"] is True
    assert machine["python"] and machine["cpu"] and machine["libraries"]["tool"] == "1"
    assert "numpy" in machine["libraries"] and "scikit-learn" in machine["libraries"]
    monkeypatch.setattr(entry, "BENCHMARKS", entry.BENCHMARKS + (entry.Benchmark("broken", "broken_bench", "b"),))
    assert entry.main(["all", "--quick", "--results-dir", str(results)]) == 1
    assert "FAILED broken: RuntimeError: boom" in capsys.readouterr().err
    strict = tmp_path / "strict_bench.py"
    strict.write_text(
        "import argparse\ndef main(argv):\n    argparse.ArgumentParser().parse_args(argv)\n    return 0\n"
    )
    monkeypatch.setattr(
        entry,
        "BENCHMARKS",
        (entry.Benchmark("strict", "strict_bench", "s"), entry.Benchmark("fake", "fake_bench", "a fake")),
    )
    assert entry.main(["all", "--unknown-flag", "--results-dir", str(results)]) == 1  # the next one still runs
    err = capsys.readouterr().err
    assert "FAILED strict: exit status 2" in err and "ok fake" in err
    own = tmp_path / "own_dir_bench.py"
    own.write_text(
        "def main(argv):\n    assert argv[:3] == ['t2', '--quick', '--out'] and '--results-dir' not in argv, argv\n"
        "    return 0\n"
    )
    monkeypatch.setattr(entry, "BENCHMARKS", (entry.Benchmark("own", "own_dir_bench", "o", "--out", ("t2",)),))
    assert entry.main(["own", "--quick", "--results-dir", str(results)]) == 0


def test_peers_pyxai_skips_without_pyxai(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = entry.main(
        ["peers_pyxai", "--quick", "--results-dir", str(tmp_path), "--pyxai-python", str(tmp_path / "none")]
    )
    assert code == 2 and "skip peers_pyxai: no PyXAI interpreter" in capsys.readouterr().err


def test_a_benchmark_named_and_skipped_exits_2_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m experiments sat_table1 --quick`` without its datasets ran nothing and exited 0:
    a benchmark asked for by name and skipped exits 2 with the reason; ``all`` runs the others and
    exits 2 naming the skipped ones."""
    (tmp_path / "skipping_bench.py").write_text(
        "from experiments._common import Skip\n"
        "def main(argv):\n    raise Skip('benchmark datasets not found at /nowhere')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(
        entry,
        "BENCHMARKS",
        (
            entry.Benchmark("skipping", "skipping_bench", "raises Skip"),
            entry.Benchmark("missing", "experiments.not_written_yet", "absent"),
        ),
    )
    assert entry.main(["skipping", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "skip skipping: benchmark datasets not found at /nowhere" in err
    assert "python -m experiments: error: skipping was skipped, nothing ran" in err
    assert entry.main(["missing"]) == 2
    assert "skip missing: experiments.not_written_yet is not in this checkout yet" in capsys.readouterr().err
    assert entry.main(["all", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "skip skipping: benchmark datasets not found" in err and "all: skipping: skipped, missing: skipped" in err
    assert "error: skipped, not for a missing optional peer: skipping, missing (the reasons are above)" in err


def test_all_exits_0_when_only_an_optional_peer_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """PyXAI and RFxpl are optional: ``all`` skips their benchmarks without failing, and says so;
    named on its own such a benchmark still exits 2 (it ran nothing)."""
    (tmp_path / "peer_bench.py").write_text(
        "from experiments._common import PeerMissing\ndef main(argv):\n    raise PeerMissing('RFxpl not found')\n"
    )
    (tmp_path / "fine_bench.py").write_text("def main(argv):\n    return 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(
        entry,
        "BENCHMARKS",
        (entry.Benchmark("peer", "peer_bench", "needs RFxpl"), entry.Benchmark("fine", "fine_bench", "runs")),
    )
    assert entry.main(["all", "--quick"]) == 0
    err = capsys.readouterr().err
    assert "skip peer: RFxpl not found" in err and "all: peer: skipped (optional peer not installed), fine: ok" in err
    assert "error" not in err
    assert entry.main(["peer"]) == 2
    (tmp_path / "fails_bench.py").write_text("def main(argv):\n    return 3\n")
    monkeypatch.setattr(entry, "BENCHMARKS", entry.BENCHMARKS + (entry.Benchmark("fails", "fails_bench", "f"),))
    assert entry.main(["all"]) == 1 and "error: failed: fails" in capsys.readouterr().err
    assert entry.main(["fails"]) == 1


def test_unknown_benchmark_exits_non_zero_from_the_command_line() -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "experiments", "no_such_table"], cwd=HERE.parent, capture_output=True, text=True
    )
    assert done.returncode == 2 and "Got 'no_such_table' instead" in done.stderr


def test_cactus_plot_and_tables(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    path = _common.cactus_plot({"a": [0.1, 0.2, None], "b": [1.0, 6.0]}, tmp_path / "c.png", title="t", limit=5)
    assert path is not None and path.stat().st_size > 1000
    table = _common.markdown_table([{"a": 1.23456, "b": "x|y"}], ["a", "b"])
    assert table.splitlines()[2] == "| 1.23 | x\\|y |"


# ---------------------------------------------------------------------- checking PyXAI's answers
def small_forest():  # class 1 iff x0 > 1 and x1 > 1; feature 2 is never tested
    return hand_forest([(0, 1.0, 0, (1, 1.0, 0, 1))], 3, [0, 1], ["a", "b", "c"])


def answer(features: list[int], prediction: str = "1") -> dict[str, object]:
    return {
        "ok": True,
        "status": "ok",
        "features": features,
        "literals": list(range(len(features))),
        "prediction": prediction,
    }


def check(
    query: str, features: list[int], ours_smallest: int | None = None, prediction: str = "1", mode: str = "plain"
):
    forest = small_forest()
    x = np.array([2.0, 2.0, 0.0])
    instance = Instance.of(forest, x)
    config = peers_pyxai.Config("hand", 1, 2, 1, 1.0)
    ours = {}
    if ours_smallest is not None:
        ours = {
            "sat": {(query, 0): {"error": None, "complete": True, "result": [{"features": list(range(ours_smallest))}]}}
        }
    return peers_pyxai.check_pyxai(
        config, query, 7, 0, x, instance, answer(features, prediction), peers_pyxai.Checker(forest), ours, mode
    )


def test_checks_of_pyxai_sufficient_reasons() -> None:
    assert check("sufficient", [0, 1]) == []
    [wrong] = check("sufficient", [0])
    assert wrong["problem"].startswith("not sufficient") and wrong["right"] == "rfexplain" and wrong["instance"] == 7
    [extra] = check("sufficient", [0, 1, 2])
    assert "not subset-minimal" in extra["problem"] and "[2]" in extra["problem"]
    assert (
        "independent" in extra["why"] and "independent" not in check("sufficient", [0, 1, 2], mode="theory")[0]["why"]
    )
    [bigger] = check("minimal_sufficient", [0, 1], ours_smallest=1)
    assert bigger["right"] == "both (different measures)"
    [smaller] = check("minimal_sufficient", [0, 1], ours_smallest=3)
    assert smaller["right"] == "pyxai"
    [vote] = check("sufficient", [0, 1], prediction="0")
    assert vote["problem"].startswith("prediction")


def test_checks_of_pyxai_contrastive_reasons() -> None:
    assert check("minimal_contrastive", [0]) == []
    [no_flip] = check("minimal_contrastive", [2])
    assert "cannot flip" in no_flip["problem"] and no_flip["right"] == "rfexplain"
    [not_minimal] = check("minimal_contrastive", [0, 1])
    assert "not subset-minimal" in not_minimal["problem"]


def test_summary_ratios_and_report() -> None:
    rows = []
    for k, (ours, theirs) in enumerate([(0.1, 1.0), (0.4, 0.2), (None, 0.3)]):
        base = {"dataset": "d", "trees": 10, "depth": 3, "query": "sufficient", "instance": k}
        rows.append({**base, "solver": "sat", "time": ours, "status": "ok" if ours else "timeout"})
        rows.append({**base, "solver": "pyxai", "time": theirs, "status": "ok"})
    [row] = peers_pyxai.summarise(rows, ["sat"], ["pyxai"])
    assert row["sat unsolved"] == 1 and row["pyxai unsolved"] == 0
    assert row["sat/pyxai median"] == pytest.approx(1.05) and row["sat/pyxai worst"] == pytest.approx(2.0)
    text = peers_pyxai.render([row], [], rows, ["sat"], ["pyxai"], {"quick": True}, [])
    assert "| d | 10x3 | sufficient | 3 |" in text and "Verdict counts: none" in text


@pytest.mark.slow
def test_pyxai_pool_kills_a_worker_past_the_limit(tmp_path: Path) -> None:
    fake_python = tmp_path / "python"
    fake_python.write_text(f"#!/bin/sh\nexec {sys.executable} {HERE / 'fake_pyxai_worker.py'}\n")
    fake_python.chmod(fake_python.stat().st_mode | stat.S_IEXEC)
    pool = peers_pyxai.PyxaiPool(fake_python, tmp_path / "bundle.pkl", tmp_path)
    try:
        first = pool.ask("sufficient", [1.0, 2.0], limit=0.3)
        assert first["status"] == "ok" and first["features"] == [0]
        hung = pool.ask("minimal_sufficient", [1.0, 2.0], limit=0.3)
        assert hung["status"] == "killed" and pool.kills == 1 and 0.3 < hung["time"]
        assert hung["time"] < 600  # killed, not waited out: the worker sleeps 600 s (no load bound)
        with pytest.raises(ProcessLookupError):
            os.kill(first["pid"], 0)  # the hung worker is gone
        again = pool.ask("sufficient", [1.0, 2.0], limit=0.3)
        assert again["status"] == "ok" and again["pid"] != first["pid"]
    finally:
        pool.close()


def test_checks_over_pyxai_conditions_and_the_tie_rule() -> None:
    checker = peers_pyxai.Checker(small_forest())
    instance = Instance.of(checker.forest, [2.0, 2.0, 0.0])
    assert checker.conditions_verdict(instance, ["f0 > 1.0", "f1 > 1.0"]) == (True, [])
    assert checker.conditions_verdict(instance, ["f0 > 1.0"])[0] is False
    with pytest.raises(ValueError, match="not a threshold"):
        checker.condition_literal("f0 > 0.5")
    # Two trees voting 0 unless x0 > 1 (tree 1) or x1 > 1 (tree 2): a 1-1 tie goes to class 0 here.
    tied = peers_pyxai.Checker(hand_forest([(0, 1.0, 0, 1), (1, 1.0, 0, 1)], 2, [0, 1], ["a", "b"]))
    low = Instance.of(tied.forest, [0.0, 0.0])
    assert tied.conditions_verdict(low, ["f0 <= 1.0", "f1 <= 1.0"]) == (True, ["f0 <= 1.0", "f1 <= 1.0"])
    strict = tied.strict(low.prediction)
    assert strict.conditions_verdict(strict.strict_instance(low), ["f0 <= 1.0", "f1 <= 1.0"]) == (True, [])
    note = {"conditions_sufficient": True, "conditions_droppable": ["f1 <= 1.0"], "conditions_droppable_strict": []}
    [row] = peers_pyxai._condition_rows(note, independent=False)
    assert row["right"] == "both (tie rule)"
    note["conditions_droppable_strict"] = ["f1 <= 1.0"]
    assert peers_pyxai._condition_rows(note, independent=False)[0]["right"] == "rfexplain"
    assert peers_pyxai._condition_rows(note, independent=True)[0]["right"] == "both (different definitions)"


def test_pipelines_benchmark_case_counts_indicator_combinations() -> None:
    from experiments import pipelines
    from rfexplain.datasets import loans
    from rfexplain.pipeline_demo import CATEGORICAL

    X, y = loans()
    row = pipelines.run_case("loans", X, y, list(CATEGORICAL), trees=3, depth=3, rows=5)
    assert row["rows"] == 5 and row["encoded_columns"] > row["columns"]
    assert row["axp_size_bare_columns"] <= row["axp_size_bare_literals"]
    assert 0 <= row["bare_with_indicator_combinations_pct"] <= 100
    assert pipelines._group("cat__credit_history_good", ["credit_history", "history"]) == "credit_history"


# ---------------------------------------------------------------------- quick runs never clobber
#: Each registered benchmark at quick size, shrunk further to seconds (one small dataset).
QUICK_RUNS = {
    "sat_table1": ["--datasets", "threeOf9", "--instances", "1", "--card-datasets", "threeOf9"],
    "circuit_tables": ["--datasets", "threeOf9", "--instances", "1", "--timeout", "20"],
    "add_table1": ["--datasets", "iris", "--trees", "3", "--timeout", "60"],
    "add_evaluation": ["--datasets", "iris", "--trees", "3", "--timeout", "60"],
    "add_outcomes": ["--datasets", "iris", "--trees", "3", "--timeout", "60"],
    "pipelines": [],
    "circuit_scale": ["--datasets", "iris", "--limit", "10", "--cores", "python"],
    "practical_forests": ["--datasets", "banknote", "--instances", "1", "--no-rfxpl"],
    "soft_vote": ["--datasets", "iris", "--instances", "1", "--enum-instances", "0", "--points", "1000"],
    "boosted": ["--datasets", "iris", "--instances", "1", "--points", "1000", "--models", "xgb"],
    "sat_shortest": ["--datasets", "iris", "--instances", "1"],
    "cold_start": [],
    "batch_throughput": ["--rows", "8", "--trees", "3", "--depth", "2", "--jobs", "1", "--engine", "oracle"],
    "actionable": ["--datasets", "iris", "--rows", "1"],
    "default_vote": ["--datasets", "iris", "--instances", "1", "--settings", "ae"],
    "regression": ["--datasets", "appendicitis", "--missing-datasets", "iris", "--instances", "1", "--settings", "c"],
    "budgets": [],
}
#: Benchmarks that need a peer installed beside the checkout (their writers are tested below or
#: in their own test file).
NEEDS_A_PEER = {"peers_pyxai", "peers_rfxpl", "peers_xreason"}


def test_every_benchmark_is_covered_by_the_quick_run_test() -> None:
    assert set(QUICK_RUNS) | NEEDS_A_PEER == {b.name for b in entry.BENCHMARKS}


#: The quick runs of a fraction of a second, in every test run; the others (benchmark smoke runs of
#: a second or more, and any benchmark added later) run with ``python -m pytest -m slow``.
CHEAP_QUICK_RUNS = {"add_outcomes", "add_table1", "circuit_scale", "sat_shortest"}


@pytest.mark.parametrize(
    "name",
    [name if name in CHEAP_QUICK_RUNS else pytest.param(name, marks=pytest.mark.slow) for name in sorted(QUICK_RUNS)],
)
def test_quick_runs_write_only_quick_files_with_the_command_and_seed(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RFEXPLAIN_DATA", raising=False)  # the benchmark suite shipped with the package
    monkeypatch.setenv(_common.RESULTS_ENV, "")
    assert entry.main([name, "--quick", "--results-dir", str(tmp_path), *QUICK_RUNS[name]]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written, "the benchmark wrote nothing"
    full_size = [n for n in written if "_quick" not in n]
    assert not full_size, f"a quick run wrote full-size names {full_size}"
    machines = [p for p in tmp_path.iterdir() if p.name.endswith(".machine.json")]
    assert len(machines) == sum(1 for n in written if n.endswith(".md")), written
    for path in machines:
        run = json.loads(path.read_text())
        assert run["quick"] is True and run["seed"] == 0 and run["options"]["quick"] is True
        assert run["elapsed_s"] >= 0  # the run's wall time, for the results page's run times
        assert "experiments" in run["command"] and "--quick" in run["command"]
        assert "git_commit" in run
        assert run["command"] in path.with_name(path.name.replace(".machine.json", ".md")).read_text()


@pytest.mark.slow
def test_peers_xreason_quick_run_or_a_clean_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """XReason's quick run where XReason is set up beside the checkout; elsewhere the clean skip
    of a missing peer (exit status 2, nothing written)."""
    from experiments import peers_xreason

    monkeypatch.delenv("RFEXPLAIN_DATA", raising=False)
    monkeypatch.setenv(_common.RESULTS_ENV, "")
    code = entry.main(["peers_xreason", "--quick", "--results-dir", str(tmp_path), "--instances", "1"])
    if peers_xreason.find_xreason(None, None) is None:
        assert code == 2 and "skip peers_xreason: XReason not found" in capsys.readouterr().err
        assert not list(tmp_path.iterdir())
        pytest.skip("XReason is not set up beside the checkout (experiments/README.md)")
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "peers_xreason_quick.csv",
        "peers_xreason_quick.machine.json",
        "peers_xreason_quick.md",
    ]
    run = json.loads((tmp_path / "peers_xreason_quick.machine.json").read_text())
    assert run["quick"] is True and run["seed"] == peers_xreason.XREASON_SEED and "xreason" in run["libraries"]
    text = (tmp_path / "peers_xreason_quick.md").read_text()
    assert "| appendicitis | 3 | 2 | 1 |" in text and "| wine-recog | 3 | 3 | 1 |" in text
    assert "our decision = predict on every instance and every row: 2/2" in text


def test_peers_pyxai_quick_results_are_quick_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PyXAI cannot run here: its writer is called directly with a quick run's settings."""
    monkeypatch.setattr(peers_pyxai, "_pyxai_version", lambda python: "test")
    row = {"dataset": "d", "trees": 1, "depth": 1, "query": "sufficient", "instance": 0}
    rows = [
        {**row, "solver": "sat", "time": 0.1, "status": "ok"},
        {**row, "solver": "pyxai", "time": 0.2, "status": "ok"},
    ]
    settings = {"quick": True, "limit_s": 2.0}
    peers_pyxai._write(rows, [], ["sat"], ["pyxai"], settings, str(tmp_path), tmp_path / "python", partial=False)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written and all("_quick" in n for n in written), written


def test_sat_table1_enumeration_past_its_cap_is_an_incomplete_row_not_a_crash() -> None:
    """CI's sat_table1 quick run crashed when an enumeration outlived its CPU cap: the engine
    raises BudgetExpired there, and the benchmark must record the row as incomplete."""
    from experiments.sat_table1 import enumerate_all
    from rfexplain.sat.engine import SatEngine
    from tests.handmade import rfxpl_running_example

    forest = rfxpl_running_example()
    samples = np.array([[0.0] * forest.n_features, [1.0] * forest.n_features])
    with SatEngine(forest) as engine:
        rows = enumerate_all(engine, forest, samples, 0.0)
        assert [r["complete"] for r in rows] == [False, False]
        full = enumerate_all(engine, forest, samples, 60.0)
    assert all(r["complete"] and r["axps"] >= 1 and r["cxps"] >= 1 for r in full)


@pytest.mark.slow
def test_circuit_scale_reports_a_forest_stopped_at_the_cpu_limit_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child killed at its CPU limit ends the wait at once (the parent must not hold the child's
    end of the pipe open, or it waits out the wall-clock limit and blames the wall clock)."""
    from experiments import circuit_scale

    def spin(*args: object) -> dict[str, object]:
        while True:
            pass

    monkeypatch.setattr(circuit_scale, "compile_once", spin)
    row = circuit_scale.run("iris", 1, 4, "python", Path("."), 1.0, 8 * 2**30)
    assert row["status"] == "stopped at the 1 s CPU limit"


def test_circuit_scale_tree_counts() -> None:
    """``--trees``: counts as given, ``2x`` twice the circuit paper's, an unknown dataset refused."""
    from experiments.circuit_scale import _tree_counts
    from experiments.circuit_tables import PAPER_T2

    assert _tree_counts("50", "magic") == [50]
    assert _tree_counts("25,2x", "magic") == [25, 2 * PAPER_T2["magic"][0]]
    with pytest.raises(ValueError, match="no tree count"):
        _tree_counts("2x", "not-a-dataset")


def test_every_benchmark_reads_its_datasets_comma_or_space_separated() -> None:
    """``--datasets a,b`` and ``--datasets a b`` name the same datasets in every benchmark (the
    Table 1 ones stopped with a KeyError on ``a,b``), and an unknown name stops the run with the
    names it could take."""
    assert _common.dataset_names(["iris,ring"], ["x"]) == ["iris", "ring"]
    assert _common.dataset_names(["iris", "ring"], ["x"]) == ["iris", "ring"]
    assert _common.dataset_names("iris, ring", ["x"]) == ["iris", "ring"]
    assert _common.dataset_names(None, ["x", "y"]) == ["x", "y"]
    with pytest.raises(SystemExit, match="unknown dataset.*nope.*choose from: iris, ring"):
        _common.dataset_names(["iris,nope"], [], ["iris", "ring"])
    for module in ("soft_vote", "sat_table1", "sat_shortest"):
        main = importlib.import_module(f"experiments.{module}").main
        with pytest.raises(SystemExit, match="unknown dataset"):
            main(["--datasets", "iris,not-a-dataset", "--data", str(Path(__file__).parent)])
