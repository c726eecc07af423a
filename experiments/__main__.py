"""One entry point for every benchmark: ``python -m experiments <name> [--quick]``.

``python -m experiments list`` shows the registry; ``python -m experiments all [--quick]`` runs
every benchmark in turn (a failure is reported and the others still run).
``python -m experiments summary`` writes ``docs/results.md`` from the canonical result files
(:mod:`experiments.summary`).

Exit status: 0 when everything asked for ran; 1 when a benchmark failed; 2 when a name is unknown,
or a benchmark named on its own was skipped (its data folder or a peer tool not found: it ran
nothing; the reason is printed), or ``all`` skipped one for any reason other than an optional
peer that is not installed (PyXAI, RFxpl, XReason: :class:`~experiments._common.PeerMissing`), which
its last line names. ``all`` exits 1 when one failed, whatever else happened.
Arguments after the name go to the benchmark itself; ``--results-dir DIR`` is passed
on to every benchmark and also set as ``$RFEXPLAIN_RESULTS_DIR``.

``--resume`` completes an interrupted run: a resumable benchmark (``list`` marks them) records
each finished unit of work as it finishes and, with ``--resume``, keeps those of an earlier run
with the same options and computes only the others (:mod:`experiments._resume`); options that
differ are refused (exit status 2, naming them). A Ctrl-C exits with status 130, the line before
naming the command that completes a resumable benchmark. A benchmark that records no units
(those that measure their run as a whole, such as ``cold_start`` and ``batch_throughput``) is not
resumable: naming one with ``--resume`` is refused, and ``all --resume`` runs it whole.

Convention for a benchmark module ``experiments/<module>.py``: it defines
``main(argv: list[str] | None = None) -> int`` that parses its own arguments, accepts ``--quick``
(a size that finishes in minutes, used by CI) and ``--results-dir DIR`` (and ``--resume`` when it is
registered resumable), and writes its CSV, markdown and machine
description with :func:`experiments._common.write_report`. A registered module that is not
there yet (written in another branch) is skipped with a message, not an error; a module can also
say it cannot run here (a missing optional tool) by raising :class:`Skip` from ``main``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from experiments._common import PeerMissing, Skip, invoked_as
from experiments._resume import CannotResume

__all__ = ["Benchmark", "BENCHMARKS", "Skip", "main"]


@dataclass(frozen=True)
class Benchmark:
    name: str
    module: str
    description: str
    #: The option of its ``main`` that takes the results folder (None: it has none).
    results_flag: str | None = "--results-dir"
    #: Arguments always passed first (e.g. which table of a multi-table module).
    args: tuple[str, ...] = ()
    #: Whether it records its finished units and takes ``--resume`` (:mod:`experiments._resume`).
    resumable: bool = False


#: The registry, in the order ``all`` runs them.
BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        "sat_table1",
        "experiments.sat_table1",
        "SAT engine: per-dataset AXp/CXp timings (paper 001, Table 1)",
        resumable=True,
    ),
    Benchmark(
        "circuit_tables",
        "experiments.circuit_tables",
        "circuit engine: compilation and reason tables (papers 000/002)",
        resumable=True,
    ),
    Benchmark(
        "circuit_scale",
        "experiments.circuit_scale",
        "circuit engine: the largest forests whose class formulas compile (issue 16), per core",
        resumable=True,
    ),
    Benchmark(
        "add_table1",
        "experiments.add_tables",
        "ADD and SDD columns of paper 000's Table 1",
        results_flag="--out",
        args=("table1",),
        resumable=True,
    ),
    Benchmark(
        "add_evaluation",
        "experiments.add_tables",
        "ADD paper (003): aggregation sizes and evaluation cost",
        results_flag="--out",
        args=("evaluation",),
        resumable=True,
    ),
    Benchmark(
        "add_outcomes",
        "experiments.add_tables",
        "ADD paper (003): outcome explanations vs sufficient reasons",
        results_flag="--out",
        args=("outcomes",),
        resumable=True,
    ),
    Benchmark("peers_pyxai", "experiments.peers_pyxai", "rfexplain engines against PyXAI, timing and content checks"),
    Benchmark("peers_rfxpl", "experiments.peers_rfxpl", "SAT engine against RFxpl: one AXp per instance"),
    Benchmark(
        "peers_xreason",
        "experiments.peers_xreason",
        "SAT engine against XReason's MaxSAT explainer on its AAAI'22 XGBoost models: one AXp per instance",
    ),
    Benchmark(
        "practical_forests",
        "experiments.practical_forests",
        "one AXp on scikit-learn's default forests (100 and 500 trees), ours and RFxpl's",
    ),
    Benchmark(
        "pipelines",
        "experiments.pipelines",
        "pipelines: AXps in original columns vs the bare forest on encoded ones",
        resumable=True,
    ),
    Benchmark(
        "soft_vote",
        "experiments.soft_vote",
        "soft vote vs hard vote: agreement with predict, CNF sizes, SAT times",
        resumable=True,
    ),
    Benchmark(
        "boosted",
        "experiments.boosted",
        "gradient-boosted classifiers (HGB, LightGBM, XGBoost): agreement with predict, SAT times",
        resumable=True,
    ),
    Benchmark(
        "default_vote",
        "experiments.default_vote",
        "the default vote against the hard vote on the forests people train (issue 53's grid)",
        resumable=True,
    ),
    Benchmark(
        "regression",
        "experiments.regression",
        "regression forests (within +- delta, range query) and forests trained with missing values (issue 58)",
        resumable=True,
    ),
    Benchmark(
        "sat_shortest",
        "experiments.sat_shortest",
        "SAT engine: one shortest AXp and CXp per instance",
        resumable=True,
    ),
    Benchmark(
        "actionable",
        "experiments.actionable",
        "inflated sufficient reasons against the AXp (SAT engine)",
        resumable=True,
    ),
    Benchmark("cold_start", "experiments.cold_start", "time to first answer: empty compiled-code cache vs warm"),
    Benchmark(
        "budgets",
        "experiments.budgets",
        "every query within timeout + 1 s and the memory budget, per engine (digits, Table 2's largest)",
        resumable=True,
    ),
    Benchmark(
        "batch_throughput",
        "experiments.batch_throughput",
        "batch rows per second with streamed output and resume, against writing at the end",
    ),
)


def _load(bench: Benchmark) -> Callable[[list[str]], int] | str:
    """The benchmark's ``main``, or a message saying why it cannot be loaded."""
    if importlib.util.find_spec(bench.module) is None:
        return f"{bench.module} is not in this checkout yet"
    module = importlib.import_module(bench.module)
    run = getattr(module, "main", None)
    if not callable(run):
        return f"{bench.module} defines no main(argv)"
    return run


#: The outcome of a benchmark skipped because an optional peer (PyXAI, RFxpl, XReason) is not installed.
NO_PEER = "skipped (optional peer not installed)"


def run_one(bench: Benchmark, argv: list[str]) -> str:
    """Run one benchmark: ``"ok"``, ``"skipped"``, :data:`NO_PEER`, ``"refused"`` (``--resume`` of
    a run with other options) or ``"failed"`` (messages on stderr)."""
    loaded = _load(bench)
    command = ["python", "-m", "experiments", bench.name, *argv]
    if isinstance(loaded, str):
        print(f"[experiments] skip {bench.name}: {loaded}", file=sys.stderr)
        return "skipped"
    if bench.results_flag != "--results-dir" and "--results-dir" in argv:
        at = argv.index("--results-dir")
        folder = argv[at + 1]
        argv = argv[:at] + argv[at + 2 :] + ([bench.results_flag, folder] if bench.results_flag else [])
    argv = list(bench.args) + list(argv)
    print(f"[experiments] run {bench.name} {' '.join(argv)}".rstrip(), file=sys.stderr)
    started = time.perf_counter()
    try:
        with invoked_as(command):
            status = loaded(list(argv))
    except Skip as reason:
        print(f"[experiments] skip {bench.name}: {reason}", file=sys.stderr)
        return NO_PEER if isinstance(reason, PeerMissing) else "skipped"
    except CannotResume as refusal:
        print(f"[experiments] {bench.name}: {refusal}", file=sys.stderr)
        return "refused"
    except KeyboardInterrupt:
        again = shlex.join([*command, "--resume"]) if bench.resumable and "--resume" not in command else None
        print(f"[experiments] interrupted {bench.name}" + (f"; {again} completes it" if again else ""), file=sys.stderr)
        raise
    except SystemExit as exit_:  # argparse in the benchmark: bad arguments
        if exit_.code in (0, None):
            return "ok"
        print(f"[experiments] FAILED {bench.name}: exit status {exit_.code}", file=sys.stderr)
        return "failed"
    except Exception as exc:  # one broken benchmark must not stop "all"
        logging.getLogger("experiments").exception("benchmark %s failed", bench.name)
        print(f"[experiments] FAILED {bench.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return "failed"
    elapsed = time.perf_counter() - started
    outcome = "ok" if not status else "failed"
    print(f"[experiments] {outcome} {bench.name} in {elapsed:.1f}s (status {status or 0})", file=sys.stderr)
    return outcome


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m experiments",
        description="Run one benchmark, or all of them. Arguments after the name go to the benchmark.",
    )
    parser.add_argument("name", help="a benchmark name, 'all' or 'list'")
    parser.add_argument("--quick", action="store_true", help="the smoke-test size (minutes)")
    parser.add_argument("--results-dir", help="write results here instead of experiments/results")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="complete an interrupted run: keep the units it finished (same options only) and compute the others",
    )
    args, rest = parser.parse_known_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        return _main(args, rest)
    except KeyboardInterrupt:
        return 130


def _main(args: argparse.Namespace, rest: list[str]) -> int:
    passed = (["--quick"] if args.quick else []) + rest
    if args.results_dir:
        os.environ["RFEXPLAIN_RESULTS_DIR"] = os.path.abspath(args.results_dir)
        passed += ["--results-dir", os.path.abspath(args.results_dir)]
    if args.name == "summary":  # the results page from the canonical files, not a benchmark
        from experiments import summary

        return summary.main((["--results-dir", args.results_dir] if args.results_dir else []) + rest)
    if args.name == "list":
        for bench in BENCHMARKS:
            state = _load(bench)
            note = "" if callable(state) else f"  [{state}]"
            print(f"{bench.name:16} {bench.description}{' (resumable)' if bench.resumable else ''}{note}")
        return 0
    if args.name == "all":
        if args.resume:
            whole = [bench.name for bench in BENCHMARKS if not bench.resumable]
            print(f"[experiments] not resumable, run whole: {', '.join(whole)}", file=sys.stderr)
        outcomes = {bench.name: run_one(bench, _resuming(bench, passed, args.resume)) for bench in BENCHMARKS}
        summary = ", ".join(f"{name}: {outcome}" for name, outcome in outcomes.items())
        print(f"[experiments] all: {summary}", file=sys.stderr)
        failed = [name for name, outcome in outcomes.items() if outcome == "failed"]
        skipped = [name for name, outcome in outcomes.items() if outcome == "skipped"]
        refused = [name for name, outcome in outcomes.items() if outcome == "refused"]
        if failed:
            print(f"python -m experiments: error: failed: {', '.join(failed)}", file=sys.stderr)
        if skipped:
            print(
                f"python -m experiments: error: skipped, not for a missing optional peer: {', '.join(skipped)} "
                "(the reasons are above)",
                file=sys.stderr,
            )
        if refused:
            print(
                f"python -m experiments: error: cannot resume: {', '.join(refused)} (the reasons are above)",
                file=sys.stderr,
            )
        return 1 if failed else 2 if skipped or refused else 0
    by_name = {b.name: b for b in BENCHMARKS}
    if args.name not in by_name:
        print(
            f"python -m experiments: error: name must be one of {sorted(by_name) + ['all', 'list', 'summary']}. "
            f"Got {args.name!r} instead.",
            file=sys.stderr,
        )
        return 2
    bench = by_name[args.name]
    if args.resume and not bench.resumable:
        resumable = [b.name for b in BENCHMARKS if b.resumable]
        print(
            f"python -m experiments: error: {args.name} cannot resume: it does not record its finished units; run it "
            f"without --resume (resumable: {', '.join(resumable)})",
            file=sys.stderr,
        )
        return 2
    outcome = run_one(bench, _resuming(bench, passed, args.resume))
    if outcome == "skipped":
        print(
            f"python -m experiments: error: {args.name} was skipped, nothing ran (the reason is above)",
            file=sys.stderr,
        )
    return {"ok": 0, "skipped": 2, NO_PEER: 2, "refused": 2, "failed": 1}[outcome]


def _resuming(bench: Benchmark, argv: list[str], resume: bool) -> list[str]:
    """``argv`` with ``--resume`` for a resumable benchmark when asked."""
    return argv + ["--resume"] if resume and bench.resumable else argv


if __name__ == "__main__":
    sys.exit(main())
