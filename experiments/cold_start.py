"""Time to first answer on a fresh install: an empty compiled-code cache against a warm one.

Each measurement runs in a new Python process with its own cache folder (``$RFEXPLAIN_CACHE_DIR``):

- **cold**: an empty folder, the default ``$RFEXPLAIN_JIT=background`` (queries take the
  uncompiled routes while a background process compiles the loops);
- **warm**: the same folder once that background compilation has marked it ready;
- **cold, wait**: an empty folder with ``$RFEXPLAIN_JIT=wait`` (every loop compiled in the process
  on first use: what a query paid before the background compilation existed).

In each: the time to import the package, to build each engine, and to the first AXp and the
first CXp on iris (README's forest: 20 trees, depth 4) and on a 100-tree forest (scikit-learn's
breast cancer data, depth 6; the SAT engine). Besides, the wall time of ``rfexplain demo`` on an
empty cache and on a warm one, and how long the background compilation takes to mark the cache
ready. Targets (issue 51, cold cache, idle machine): ``rfexplain demo`` <= 30 s in all, the first
AXp on iris <= 5 s, no budget spent compiling.

Run: ``python -m experiments cold_start [--quick]``. Writes ``cold_start.{csv,md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from experiments._common import markdown_table, write_report

TARGETS = {"demo_s": 30.0, "first_axp_iris_s": 5.0}

#: measured in a fresh process: each step's wall and CPU seconds, printed as one JSON object
PROBE = r"""
import json, sys, time, os
steps = {}
def step(name, fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    steps[name] = {"wall": time.perf_counter() - w, "cpu": time.process_time() - c}
    return out
rx = step("import", lambda: __import__("rfexplain"))
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import RandomForestClassifier
iris = load_iris()
small = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(iris.data, iris.target)
engines = sys.argv[1].split(",")
for engine in engines:
    ex = step(f"build {engine} (iris)", lambda: rx.Explainer(small, engine=engine, vote="hard"))
    d = ex.explain(iris.data[60])
    step(f"first AXp {engine} (iris)", lambda: d.sufficient_reason(timeout=60))
    step(f"first CXp {engine} (iris)", lambda: d.necessary_reason(timeout=60))
if sys.argv[2] == "1":
    cancer = load_breast_cancer()
    big = RandomForestClassifier(n_estimators=100, max_depth=6, random_state=0).fit(cancer.data, cancer.target)
    ex = step("build sat (100 trees)", lambda: rx.Explainer(big, engine="sat"))
    d = ex.explain(cancer.data[0])
    step("first AXp sat (100 trees)", lambda: d.sufficient_reason(timeout=120))
    step("first CXp sat (100 trees)", lambda: d.necessary_reason(timeout=120))
print(json.dumps(steps))
"""


def _env(cache: Path, mode: str) -> dict[str, str]:
    return dict(os.environ, RFEXPLAIN_CACHE_DIR=str(cache), RFEXPLAIN_JIT=mode, PYTHONWARNINGS="ignore")


def _probe(cache: Path, mode: str, engines: str, big: bool) -> dict[str, dict[str, float]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, engines, "1" if big else "0"],
        env=_env(cache, mode),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _demo(cache: Path, mode: str) -> dict[str, float]:
    start = time.perf_counter()
    usage = os.times()
    subprocess.run([sys.executable, "-m", "rfexplain", "demo"], env=_env(cache, mode), capture_output=True, check=True)
    after = os.times()
    cpu = (after.children_user - usage.children_user) + (after.children_system - usage.children_system)
    return {"wall": time.perf_counter() - start, "cpu": cpu}


def _stop_compilations(root: Path) -> None:
    """Stop the background compilations still running in the cache folders below ``root`` (each
    lock file names its process), so that the folders can be removed."""
    import signal

    stopped = []
    for lock in root.glob("*/numba/*/compiling"):
        try:
            pid = int(lock.read_text().split()[0])
            os.kill(pid, signal.SIGTERM)
            stopped.append(pid)
        except (OSError, ValueError):
            continue
    deadline = time.perf_counter() + 10
    for pid in stopped:
        while time.perf_counter() < deadline:
            try:
                os.kill(pid, 0)
            except OSError:
                break
            time.sleep(0.1)


def _ready(cache: Path) -> bool:
    return any((cache / "numba").glob("*/ready"))


def _wait_ready(cache: Path, limit: float) -> float | None:
    start = time.perf_counter()
    while time.perf_counter() - start < limit:
        if _ready(cache) and not any((cache / "numba").glob("*/compiling")):
            return time.perf_counter() - start
        time.sleep(0.5)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments cold_start", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="the empty cache only: the demo and the SAT engine on iris (no warm runs)"
    )
    parser.add_argument("--results-dir", default=None)
    args = parser.parse_args(argv)
    engines = "sat" if args.quick else "sat,circuit,oracle"
    summary: dict[str, dict[str, float] | float | None] = {}
    with tempfile.TemporaryDirectory(prefix="rfexplain-cold-", ignore_cleanup_errors=True) as scratch:
        root = Path(scratch)
        demo_cold = _demo(root / "demo", "background")
        summary["demo, empty cache"] = demo_cold
        started = time.perf_counter()
        cold = _probe(root / "probe", "background", engines, not args.quick)
        runs = {"cold": cold}
        if not args.quick:
            ready_after = _wait_ready(root / "probe", 900)
            summary["background compilation done after (wall s from the probe's start)"] = (
                None if ready_after is None else time.perf_counter() - started
            )
            runs["warm"] = _probe(root / "probe", "background", engines, True)
            _wait_ready(root / "demo", 900)
            summary["demo, warm cache"] = _demo(root / "demo", "background")
            runs["cold, wait"] = _probe(root / "wait", "wait", engines, True)
        _stop_compilations(root)
    rows: list[dict[str, Any]] = []
    for step in cold:
        row: dict[str, Any] = {"step": step}
        for name, run in runs.items():
            row[f"{name} wall s"] = run[step]["wall"] if step in run else None
            row[f"{name} cpu s"] = run[step]["cpu"] if step in run else None
        rows.append(row)
    checks = [
        ("`rfexplain demo`, empty cache (wall s)", demo_cold["wall"], TARGETS["demo_s"]),
        (
            "first AXp on iris, sat, empty cache (wall s)",
            cold["first AXp sat (iris)"]["wall"],
            TARGETS["first_axp_iris_s"],
        ),
    ]
    lines = [
        "# Time to first answer: empty cache vs warm cache",
        "",
        "Each column is a fresh process with its own cache folder: `cold` an empty one (the default "
        "`RFEXPLAIN_JIT=background`: uncompiled routes while a background process compiles), `warm` the same "
        "folder once compiled, `cold, wait` an empty one with `RFEXPLAIN_JIT=wait` (every loop compiled in the "
        "process on first use, as before the background compilation existed).",
        "",
        "## Targets",
        "",
        markdown_table(
            [{"measure": m, "measured": v, "target": t, "met": "yes" if v <= t else "**no**"} for m, v, t in checks],
            ["measure", "measured", "target", "met"],
        ),
        "",
        "## The demo and the background compilation",
        "",
        markdown_table(
            [
                {
                    "measure": k,
                    "value": ", ".join(f"{a} {b:.2f} s" for a, b in v.items()) if isinstance(v, dict) else v,
                }
                for k, v in summary.items()
            ],
            ["measure", "value"],
        ),
        "",
        "## Steps (wall and CPU seconds)",
        "",
        markdown_table(rows, list(rows[0])),
    ]
    write_report(
        "cold_start",
        rows,
        "\n".join(lines),
        quick=args.quick,
        options=vars(args),
        seed=0,
        directory=args.results_dir,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
