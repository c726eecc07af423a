"""Shared helpers for the benchmarks: results folder, machine description, tables and plots.

Every benchmark writes, under ``experiments/results/`` (or ``$RFEXPLAIN_RESULTS_DIR``), a CSV of
its raw rows, a markdown report and a JSON description of the run: the exact command, the
benchmark's options and seed, the git commit, and the machine (CPU, memory, Python and library
versions). A quick run (``--quick``) writes only ``<name>_quick.*`` files (:func:`results_stem`),
so it never overwrites the full-size results. matplotlib is optional (``pip install -e '.[experiments]'``):
without it the plots are skipped with a message and everything else is written.
"""

from __future__ import annotations

import contextlib
import csv
import json
import logging
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "Skip",
    "PeerMissing",
    "RESULTS_ENV",
    "results_dir",
    "results_stem",
    "invoked_as",
    "command_line",
    "machine_description",
    "machine_markdown",
    "write_csv",
    "write_report",
    "markdown_table",
    "cactus_plot",
    "line_plot",
    "median",
]

log = logging.getLogger(__name__)


class Skip(Exception):
    """Raised by a benchmark's ``main`` when it cannot run here (the message says why and how to fix)."""


class PeerMissing(Skip):
    """A :class:`Skip` because an optional peer tool (PyXAI, RFxpl, XReason) is not installed: the one
    reason ``python -m experiments all`` may skip a benchmark and still exit 0."""


RESULTS_ENV = "RFEXPLAIN_RESULTS_DIR"
ROOT = Path(__file__).resolve().parent
LIBRARIES = (
    "rfexplain",
    "numpy",
    "scikit-learn",
    "python-sat",
    "pysdd",
    "dd",
    "joblib",
    "dask",
    "distributed",
    "matplotlib",
)


def data_dir(arg: str | os.PathLike[str] | None) -> Path:
    """The benchmark CSV folder: ``--data``, else ``$RFEXPLAIN_DATA``, else the benchmark suite
    shipped with the package (:func:`rfexplain.datasets.benchmark_dir`). A folder given may not
    exist: callers raise :class:`Skip` then. (A dataset the folder lacks: see
    :func:`rfexplain.datasets.load`.)"""
    from rfexplain.datasets import ENV_VAR, benchmark_dir

    if arg:
        return Path(arg)
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    return benchmark_dir()


#: The help of every benchmark's ``--data`` option.
DATA_HELP = "folder of benchmark CSVs overriding the built-in suite (default: $RFEXPLAIN_DATA, else the built-in one)"


#: Help of every benchmark's ``--datasets`` option (:func:`dataset_names` reads it).
DATASETS_HELP = "dataset names, comma- or space-separated"


def dataset_names(
    given: str | Sequence[str] | None, default: Sequence[str], known: Iterable[str] | None = None
) -> list[str]:
    """The datasets a benchmark runs: ``--datasets`` as given (``a,b`` or ``a b``: every benchmark
    takes both), else ``default``; a name outside ``known`` (when given) stops the run with the
    names it could take, before anything is trained."""
    if not given:
        return list(default)
    values = [given] if isinstance(given, str) else list(given)
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    if known is not None:
        choices = list(known)
        unknown = [name for name in names if name not in choices]
        if unknown:
            raise SystemExit(f"unknown dataset(s) {', '.join(unknown)}; choose from: {', '.join(choices)}")
    return names


def results_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The results folder: ``path``, else ``$RFEXPLAIN_RESULTS_DIR``, else ``experiments/results``."""
    chosen = Path(path) if path else Path(os.environ.get(RESULTS_ENV) or ROOT / "results")
    chosen.mkdir(parents=True, exist_ok=True)
    return chosen


def results_stem(name: str, *, quick: bool, suffix: str = "") -> str:
    """The file stem of a benchmark's results: ``name``, then ``_quick`` for a quick run (so a
    quick run never overwrites the full-size results), then ``suffix`` (e.g. ``"_depth4"``).

    >>> results_stem("sat_table1", quick=True), results_stem("add_table1", quick=False, suffix="_long")
    ('sat_table1_quick', 'add_table1_long')
    """
    return f"{name}{'_quick' if quick else ''}{suffix}"


#: The command that reproduces the benchmark running now, when it was started by the entry point.
_INVOKED_AS: list[list[str]] = []
#: When the benchmark running now started (:func:`invoked_as`), for the run time its report records.
_STARTED: list[float] = []
#: When this module was imported: the start of a benchmark run outside the entry point.
_PROCESS_STARTED = time.perf_counter()


@contextlib.contextmanager
def invoked_as(argv: Sequence[str]) -> Iterator[None]:
    """Within the block, :func:`command_line` is ``argv`` (the entry point runs each benchmark
    of ``all`` under the command that runs that benchmark alone)."""
    _INVOKED_AS.append(list(argv))
    _STARTED.append(time.perf_counter())
    try:
        yield
    finally:
        _INVOKED_AS.pop()
        _STARTED.pop()


def command_line() -> str:
    """The command that reproduces this run: the benchmark's own command when the entry point
    started it (``python -m experiments sat_table1 --quick``), else this process's command line."""
    if _INVOKED_AS:
        return shlex.join(_INVOKED_AS[-1])
    argv = list(getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv])
    if argv:
        argv[0] = Path(argv[0]).name
    return shlex.join(argv)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def machine_description(extra_versions: Mapping[str, str] | None = None) -> dict[str, Any]:
    """CPU, cores, memory, OS, Python and library versions, git commit and the time of the run."""
    versions: dict[str, str] = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    versions.update(extra_versions or {})
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "libraries": versions,
        "git_commit": _git_commit(),
        "command": command_line(),
    }


def machine_markdown(machine: Mapping[str, Any]) -> str:
    libs = ", ".join(f"{k} {v}" for k, v in machine.get("libraries", {}).items())
    text = (
        f"Machine: {machine['cpu']} ({machine['cores']} cores, {machine['memory_gib']} GiB), {machine['os']}, "
        f"{machine['python']}; {libs}; commit {machine['git_commit']}; run {machine['date']}."
    )
    if "command" in machine:
        text += f"\n\nReproduce: `{machine['command']}` at commit {machine['git_commit']}"
        if machine.get("seed") is not None:
            text += f" (seed {machine['seed']})"
        text += f"; options: `{json.dumps(machine.get('options', {}), sort_keys=True, default=str)}`."
    return text


def write_csv(path: Path, rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> Path:
    """Rows as CSV (columns: ``columns`` or the union of the rows' keys in first-seen order)."""
    if columns is None:
        seen: dict[str, None] = {}
        for row in rows:
            for key in row:
                seen.setdefault(key, None)
        columns = list(seen)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(row.get(k)) for k in columns})
    return path


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple, set, frozenset)):
        return json.dumps(sorted(value) if isinstance(value, (set, frozenset)) else list(value))
    return "" if value is None else value


def write_report(
    name: str,
    rows: Sequence[Mapping[str, Any]],
    markdown: str,
    *,
    quick: bool,
    options: Mapping[str, Any],
    seed: int | None,
    suffix: str = "",
    directory: str | os.PathLike[str] | None = None,
    extra_versions: Mapping[str, str] | None = None,
    columns: Sequence[str] | None = None,
) -> dict[str, Path]:
    """Write ``<stem>.csv``, ``<stem>.md`` (with the machine and reproduction lines appended) and
    ``<stem>.machine.json``, where ``stem`` is :func:`results_stem` of ``name`` (``_quick`` for a
    quick run). The JSON records the exact command, ``options`` (the benchmark's parsed
    arguments), ``seed``, the commit and the machine."""
    out = results_dir(directory)
    stem = results_stem(name, quick=quick, suffix=suffix)
    machine = machine_description(extra_versions)
    machine.update(quick=quick, seed=seed, options={k: _jsonable(v) for k, v in sorted(options.items())})
    started = _STARTED[-1] if _STARTED else _PROCESS_STARTED
    machine["elapsed_s"] = round(time.perf_counter() - started, 1)  # wall seconds of the run so far
    paths = {
        "csv": write_csv(out / f"{stem}.csv", rows, columns),
        "md": out / f"{stem}.md",
        "machine": out / f"{stem}.machine.json",
    }
    paths["md"].write_text(markdown.rstrip() + "\n\n" + machine_markdown(machine) + "\n")
    paths["machine"].write_text(json.dumps(machine, indent=2) + "\n")
    return paths


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)


def markdown_table(
    rows: Iterable[Mapping[str, Any]], columns: Sequence[str], headers: Sequence[str] | None = None
) -> str:
    """A GitHub markdown table of ``columns`` (floats with 3 significant digits)."""
    head = list(headers or columns)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for row in rows:
        cells = []
        for column in columns:
            value = row.get(column)
            if isinstance(value, float):
                cells.append("inf" if value == float("inf") else f"{value:.3g}")
            else:
                cells.append("" if value is None else str(value).replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def median(values: Iterable[float]) -> float | None:
    data = [v for v in values if v is not None]
    return statistics.median(data) if data else None


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib is not installed (pip install -e '.[experiments]'): plots skipped")
        return None
    return plt


def cactus_plot(
    times: Mapping[str, Sequence[float | None]], path: Path, *, title: str, limit: float | None = None
) -> Path | None:
    """A cactus plot: for each solver, its solved instances' times sorted increasingly (``None``
    or times at ``limit`` count as unsolved). Returns the file, or None without matplotlib."""
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, values in sorted(times.items()):
        solved = sorted(v for v in values if v is not None and (limit is None or v < limit))
        if solved:
            ax.plot(range(1, len(solved) + 1), solved, marker=".", label=f"{label} ({len(solved)}/{len(values)})")
    if limit is not None:
        ax.axhline(limit, color="grey", linestyle=":", label=f"limit {limit:g} s")
    ax.set_yscale("log")
    ax.set_xlabel("instances solved")
    ax.set_ylabel("time per instance (s)")
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def line_plot(
    series: Mapping[str, Sequence[tuple[float, float]]],
    path: Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    logy: bool = True,
) -> Path | None:
    """One line per series of (x, y) points (e.g. compiled size against the number of trees)."""
    plt = _pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, points in sorted(series.items()):
        pts = sorted(points)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def peak_rss_bytes() -> int:
    """The largest resident memory this process has had, in bytes (Linux reports kilobytes)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cpu_budget(cap: float) -> Any:
    """A :class:`rfexplain.Budget` whose clock is this process's CPU time, so that a shared,
    loaded machine does not eat the per-instance cap (the engine polls ``expired()``)."""
    from rfexplain import Budget

    class CPUBudget(Budget):
        def __init__(self, timeout: float) -> None:
            super().__init__(timeout=timeout)
            self.cpu_started = time.process_time()

        def remaining(self) -> float | None:
            return max(0.0, float(self.timeout or 0.0) - (time.process_time() - self.cpu_started))

        def expired(self) -> bool:
            if time.process_time() - self.cpu_started >= float(self.timeout or 0.0):
                self.timed_out = True
            return self.timed_out

    return CPUBudget(cap)


def count_within(reasons: Iterator[Any]) -> int:
    """How many reasons an enumeration yields before it ends or its budget expires (the
    engine then raises :class:`BudgetExpired`; the caller reads ``budget.expired()``)."""
    from rfexplain import BudgetExpired

    count = 0
    try:
        for _ in reasons:
            count += 1
    except BudgetExpired:
        pass
    return count
