"""Shared helpers for the benchmarks: results folder, machine description, tables and plots.

Every benchmark writes, under ``experiments/results/`` (or ``$RFEXPLAIN_RESULTS_DIR``), a CSV of
its raw rows, a markdown report and a JSON description of the machine (CPU, memory, Python and
library versions, git commit). matplotlib is optional (``pip install -e '.[experiments]'``):
without it the plots are skipped with a message and everything else is written.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "Skip",
    "RESULTS_ENV",
    "results_dir",
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
    """The benchmark CSV folder: ``--data``, else ``$RFEXPLAIN_DATA``, else ``../shared/datasets``
    beside the checkout (it may not exist: callers raise :class:`Skip` then)."""
    if arg:
        return Path(arg)
    if os.environ.get("RFEXPLAIN_DATA"):
        return Path(os.environ["RFEXPLAIN_DATA"])
    return (ROOT.parent.parent / "shared" / "datasets").resolve()


def results_dir(path: str | os.PathLike[str] | None = None) -> Path:
    """The results folder: ``path``, else ``$RFEXPLAIN_RESULTS_DIR``, else ``experiments/results``."""
    chosen = Path(path) if path else Path(os.environ.get(RESULTS_ENV) or ROOT / "results")
    chosen.mkdir(parents=True, exist_ok=True)
    return chosen


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
        "command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]),
    }


def machine_markdown(machine: Mapping[str, Any]) -> str:
    libs = ", ".join(f"{k} {v}" for k, v in machine.get("libraries", {}).items())
    return (
        f"Machine: {machine['cpu']} ({machine['cores']} cores, {machine['memory_gib']} GiB), {machine['os']}, "
        f"{machine['python']}; {libs}; commit {machine['git_commit']}; run {machine['date']}."
    )


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
    directory: str | os.PathLike[str] | None = None,
    extra_versions: Mapping[str, str] | None = None,
) -> dict[str, Path]:
    """Write ``<name>.csv``, ``<name>.md`` (with the machine line appended) and ``<name>.machine.json``."""
    out = results_dir(directory)
    machine = machine_description(extra_versions)
    paths = {
        "csv": write_csv(out / f"{name}.csv", rows),
        "md": out / f"{name}.md",
        "machine": out / f"{name}.machine.json",
    }
    paths["md"].write_text(markdown.rstrip() + "\n\n" + machine_markdown(machine) + "\n")
    paths["machine"].write_text(json.dumps(machine, indent=2) + "\n")
    return paths


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
