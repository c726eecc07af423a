"""Budgets: does every query with ``timeout=t`` return or raise within ``t + 1`` s, and does each
engine stay within its memory budget?

    python -m experiments budgets [--quick] [--queries N] [--timeouts 1,0.5,2] [--engines circuit,sat]
        [--cases digits,table2] [--data DIR] [--results-dir DIR]

Cases: (a) ``digits``: scikit-learn's default ``RandomForestClassifier()`` (100 trees, unlimited
depth, seed 0) on ``load_digits``, hard vote; (b) ``table2``: the largest forest of the circuit
engine's Table 2 (ann-thyroid, 100 trees of depth 4, :func:`experiments.circuit_tables.build`).
Each engine's queries run in a fresh subprocess, so its peak resident memory
(``resource.getrusage``'s ``ru_maxrss``) is that engine's alone; it is reported against the
memory budget in force (``max_memory``, :func:`rfexplain.core.budget.default_max_memory`). For
every query: the outcome (``ok``, ``timeout``, ``too_large`` or the error), the wall and CPU
seconds, and the overshoot past ``t`` (elapsed - t, wall and CPU). Writes ``budgets.md``,
``budgets.csv`` and ``budgets.machine.json`` (``budgets_quick.*`` with ``--quick``: a small
digits forest and a small wine forest, in well under a minute).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

from experiments._common import DATA_HELP, data_dir, markdown_table, median, write_report
from experiments._resume import RESUME_HELP, checkpoint

log = logging.getLogger("experiments.budgets")

NAME = "budgets"
SEED = 0
#: the queries asked of every instance, single answers and (first item of) an enumeration
QUERIES = ("sufficient_reason", "necessary_reason", "robustness", "sufficient_reasons")
FULL = {"cases": ("digits", "table2"), "engines": ("circuit", "sat"), "timeouts": (1.0, 0.5, 2.0), "queries": 10}
QUICK = {"cases": ("digits-small", "wine-small"), "engines": ("circuit", "sat"), "timeouts": (0.2,), "queries": 2}


def _forest(case: str, data: str | None) -> tuple[Any, Any]:
    """The forest of a case and the instances to explain."""
    from sklearn import datasets
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain import Forest

    if case == "table2":
        from experiments.circuit_tables import build

        b = build("ann-thyroid", 100, data_dir(data))
        return b["forest"], b["X_test"]
    loader, options = {
        "digits": (datasets.load_digits, {}),
        "digits-small": (datasets.load_digits, {"n_estimators": 10, "max_depth": 6}),
        "wine-small": (datasets.load_wine, {"n_estimators": 12, "max_depth": 4}),
    }[case]
    X, y = loader(return_X_y=True)
    model = RandomForestClassifier(random_state=SEED, **options).fit(X, y)
    return Forest.from_sklearn(model, vote="hard"), X


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one engine's queries (in this fresh process) and return their rows and the peak RSS."""
    import resource

    from rfexplain import CompilationTooLargeError, Explainer
    from rfexplain.core.budget import BudgetExpired

    forest, X = _forest(spec["case"], spec.get("data"))
    explainer = Explainer(forest, engine=spec["engine"])
    rows = []
    for t in spec["timeouts"]:
        for i in range(spec["queries"]):
            decision = explainer.explain(X[i % len(X)])
            query = QUERIES[i % len(QUERIES)]
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                answer = getattr(decision, query)(timeout=t)
                if query == "sufficient_reasons":
                    next(answer, None)
                    outcome = "ok" if answer.complete is not False else f"stopped_by_{answer.stopped_by}"
                else:
                    outcome = "ok"
            except BudgetExpired:
                outcome = "timeout"
            except CompilationTooLargeError:
                outcome = "too_large"
            except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
                outcome = type(exc).__name__
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            rows.append(
                {
                    "case": spec["case"],
                    "engine": spec["engine"],
                    "query": query,
                    "instance": i % len(X),
                    "timeout": t,
                    "outcome": outcome,
                    "wall": wall,
                    "cpu": cpu,
                    "over_wall": wall - t,
                    "over_cpu": cpu - t,
                }
            )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"rows": rows, "peak_rss": peak, "max_memory": explainer.max_memory}


def _run_engine(spec: dict[str, Any], limit: float) -> dict[str, Any]:
    """One engine's queries in a fresh subprocess (killed past ``limit`` seconds)."""
    command = [sys.executable, "-m", "experiments.budgets", "--worker", json.dumps(spec)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        return {"rows": [], "peak_rss": None, "max_memory": None, "error": f"killed after {limit:.0f} s"}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        return {"rows": [], "peak_rss": None, "max_memory": None, "error": tail[0]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _load() -> str:
    try:
        return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "load average unknown"


def _summary(rows: list[dict[str, Any]], engines: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    keys = sorted({(r["case"], r["engine"], r["timeout"]) for r in rows})
    for case, engine, t in keys:
        mine = [r for r in rows if (r["case"], r["engine"], r["timeout"]) == (case, engine, t)]
        run = engines[(case, engine)]
        outcomes: dict[str, int] = {}
        for r in mine:
            outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
        out.append(
            {
                "case": case,
                "engine": engine,
                "t": t,
                "queries": len(mine),
                "outcomes": " ".join(f"{k}:{v}" for k, v in sorted(outcomes.items())),
                "max_over_wall": max(r["over_wall"] for r in mine),
                "median_over_wall": median(r["over_wall"] for r in mine),
                "max_over_cpu": max(r["over_cpu"] for r in mine),
                "within_t+1": all(r["over_wall"] <= 1.0 for r in mine),
                "peak_rss_MiB": None if run["peak_rss"] is None else run["peak_rss"] / 2**20,
                "max_memory_MiB": None if run["max_memory"] is None else run["max_memory"] / 2**20,
            }
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments budgets", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small forests, two queries per engine")
    parser.add_argument("--cases", help="comma-separated cases: digits, table2 (quick: digits-small, wine-small)")
    parser.add_argument("--engines", help="comma-separated engines (default circuit,sat)")
    parser.add_argument("--timeouts", help="comma-separated timeouts in seconds (default 1,0.5,2)")
    parser.add_argument("--queries", type=int, help="queries per engine and timeout (default 10)")
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--results-dir", help="output folder")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    preset = QUICK if args.quick else FULL
    cases = args.cases.split(",") if args.cases else list(preset["cases"])
    engines = args.engines.split(",") if args.engines else list(preset["engines"])
    timeouts = [float(t) for t in args.timeouts.split(",")] if args.timeouts else list(preset["timeouts"])
    n_queries = int(args.queries or preset["queries"])
    load_before = _load()
    rows: list[dict[str, Any]] = []
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    resume = {"quick": args.quick, "options": vars(args), "resume": args.resume, "directory": args.results_dir}
    with checkpoint(NAME, **resume) as done:  # each engine's run on a case a unit
        for case in cases:
            for engine in engines:
                spec = {"case": case, "engine": engine, "timeouts": timeouts, "queries": n_queries, "data": args.data}
                limit = 600 + n_queries * sum(t + 30 for t in timeouts)
                log.info("%s on %s: %d queries", engine, case, n_queries * len(timeouts))
                runs[(case, engine)] = result = done.unit((case, engine), partial(_run_engine, spec, limit))
                if "error" in result:
                    log.warning("%s on %s failed: %s", engine, case, result["error"])
                rows.extend(result["rows"])
        summary = _summary(rows, runs)
        failed = [f"- {engine} on {case}: {r['error']}" for (case, engine), r in runs.items() if "error" in r]
        markdown = "\n\n".join(
            [
                "# Budgets: overshoot past `timeout=t` and peak memory per engine",
                f"Every query with `timeout=t`; overshoot = elapsed - t (wall, CPU). Peak RSS per engine "
                f"(a fresh process each) against the memory budget. Machine {load_before} at the start, "
                f"{_load()} at the end.",
                markdown_table(
                    summary,
                    [
                        "case",
                        "engine",
                        "t",
                        "queries",
                        "outcomes",
                        "max_over_wall",
                        "median_over_wall",
                        "max_over_cpu",
                        "within_t+1",
                        "peak_rss_MiB",
                        "max_memory_MiB",
                    ],
                ),
                "\n".join(failed) if failed else "Every engine's run finished.",
            ]
        )
        options = {"quick": args.quick, "cases": cases, "engines": engines, "timeouts": timeouts, "queries": n_queries}
        paths = write_report(
            NAME, rows, markdown, quick=args.quick, options=options, seed=SEED, directory=args.results_dir
        )
        summary_path = paths["md"].with_suffix(".summary.json")
        summary_path.write_text(json.dumps(summary, indent=2) + "\n")
        print(markdown)
    return 1 if failed else 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    sys.exit(main())
