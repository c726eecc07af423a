"""How large a forest the circuit engine compiles: ``python -m experiments circuit_scale``.

For each dataset, forests of growing tree counts at depth 4 (then depths 5 and 6 at the circuit
paper's tree count), each compiled to its class formulas (Algorithm 3B of Ji and Darwiche
(2026)) in a child process capped in CPU seconds and address space. A ladder stops at the first
forest that does not compile. Every row reports CPU seconds, decision-graph nodes, the child's
peak resident memory per node and, for the compact core, the product nodes and the peak bytes of
its arrays per graph node. ``--cores`` picks the cores to compare (default both). ``--trees``
compiles the given depth-4 forests only, no ladder: tree counts, or ``2x`` for twice the
paper's (issue 16's targets: ``--trees 50`` on the datasets of at most 10 features, ``--trees
2x`` on all).

Memory per node is the child's peak resident memory above what it held before compiling (the
forest, the libraries), over the decision-graph nodes of all class formulas; the store's own
bytes per node (its arrays and unique table, :meth:`DGManager.store_bytes`) are beside it.

``--quick`` runs three small datasets at 10 and 25 trees with a 20 s limit and writes only
``circuit_scale_quick.*`` (its ladder is too short to test the 2x-paper target).
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing as mp
import os
import resource
import time
from functools import partial
from pathlib import Path
from typing import Any

from experiments._common import (
    DATA_HELP,
    DATASETS_HELP,
    Skip,
    data_dir,
    dataset_names,
    markdown_table,
    peak_rss_bytes,
    write_report,
)
from experiments._resume import RESUME_HELP, Checkpoint, checkpoint
from experiments.circuit_tables import PAPER_T2

log = logging.getLogger("experiments.circuit_scale")

FULL_LADDER = (25, 50, 100, 200, 400, 800, 1600)
QUICK_LADDER = (10, 25)
QUICK_DATASETS = ("iris", "ecoli", "glass2")
COLUMNS = (
    "dataset",
    "features",
    "classes",
    "depth",
    "trees",
    "core",
    "status",
    "cpu_s",
    "graph_nodes",
    "added_rss_mb",
    "rss_bytes_per_node",
    "store_bytes_per_node",
    "product_nodes",
    "compact_peak_mb",
    "compact_bytes_per_node",
)


def _rss_now() -> int:
    """The resident memory of this process now, in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def compile_once(name: str, trees: int, depth: int, core: str, folder: str) -> dict[str, Any]:
    """Train the forest and compile every class formula (3B); runs in the child process."""
    from rfexplain.circuit.compilers.classformula import ClassFormulas
    from rfexplain.datasets import train_forest

    forest = train_forest(name, trees=trees, depth=depth, seed=0, test_size=0.15, data_dir=folder, vote="hard").forest
    if core == "compact":
        from rfexplain.circuit.compilers.dd_core import warm_up

        warm_up()  # loading the compiled loops is a one-time cost of the process, like the imports
    formulas = ClassFormulas(forest, core=core)
    before = _rss_now()
    products = peak = 0
    start = time.process_time()
    for c in range(forest.n_classes):
        formulas.dg_3b(c)
    cpu = time.process_time() - start
    stats = getattr(formulas._counter, "history", [])
    for s in stats:
        products += s["product_nodes"]
        peak = max(peak, s["peak_bytes"])
    nodes = len(formulas.dg) - 2
    rss = peak_rss_bytes() - before
    row = {
        "features": forest.n_features,
        "classes": forest.n_classes,
        "status": "ok",
        "cpu_s": round(cpu, 2),
        "graph_nodes": nodes,
        "added_rss_mb": round(rss / 2**20),
        "rss_bytes_per_node": round(rss / max(nodes, 1)),
        "store_bytes_per_node": round(formulas.dg.store_bytes() / max(nodes, 1)),
    }
    if core == "compact":
        row.update(
            product_nodes=products,
            compact_peak_mb=round(peak / 2**20, 1),
            compact_bytes_per_node=round(peak / max(max((s["graph_nodes"] for s in stats), default=1), 1)),
        )
    return row


def _child(conn: Any, name: str, trees: int, depth: int, core: str, folder: str, limit: float, memory: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    os.environ.setdefault("RFEXPLAIN_MAX_MEMORY", str(memory))  # the compilers' budget: this limit
    resource.setrlimit(resource.RLIMIT_CPU, (int(limit) + 1, int(limit) + 2))
    try:
        conn.send(compile_once(name, trees, depth, core, folder))
    except MemoryError:
        conn.send({"status": f"out of memory (> {memory / 2**30:.0f} GB)"})
    except Exception as exc:  # reported in the row; the ladder stops there
        conn.send({"status": f"{type(exc).__name__}: {exc}"})


def run(name: str, trees: int, depth: int, core: str, folder: Path, limit: float, memory: int) -> dict[str, Any]:
    """One compile in a fresh process: stopped at ``limit`` CPU seconds (or ``5 * limit + 30``
    wall seconds on a busy machine) and ``memory`` bytes of address space."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, name, trees, depth, core, str(folder), limit, memory))
    proc.start()
    child.close()  # the child's end lives on in the child only: its death ends the wait at once
    row: dict[str, Any] = {"dataset": name, "depth": depth, "trees": trees, "core": core}
    if parent.poll(5 * limit + 30):
        try:
            row.update(parent.recv())
        except EOFError:
            row["status"] = f"stopped at the {limit:.0f} s CPU limit"
    else:
        row["status"] = f"stopped at {5 * limit + 30:.0f} s wall"
    proc.kill()
    proc.join()
    if proc.exitcode not in (0, None) and "status" not in row:
        row["status"] = f"stopped at the {limit:.0f} s CPU limit"
    return row


def _tree_counts(spec: str, name: str) -> list[int]:
    """``--trees``: comma-separated counts, ``2x`` standing for twice the paper's count."""
    counts = []
    for part in spec.split(","):
        if part == "2x":
            if name not in PAPER_T2:
                raise ValueError(f"--trees 2x: {name} has no tree count in the circuit paper")
            counts.append(2 * PAPER_T2[name][0])
        else:
            counts.append(int(part))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments circuit_scale", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--results-dir")
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--datasets", nargs="+", help=DATASETS_HELP)
    parser.add_argument("--cores", default=None, help="comma-separated: python,compact")
    parser.add_argument("--limit", type=float, default=None, help="CPU seconds per forest (default 60; quick 20)")
    parser.add_argument("--memory-gb", type=float, default=8.0)
    parser.add_argument("--trees", help="comma-separated tree counts or '2x' (twice the paper's): no ladder")
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    args = parser.parse_args(argv)

    folder = data_dir(args.data)
    if not folder.is_dir():
        raise Skip(f"the data folder {folder} (--data or $RFEXPLAIN_DATA) does not exist")
    names = dataset_names(args.datasets, list(QUICK_DATASETS if args.quick else PAPER_T2))
    cores = args.cores.split(",") if args.cores else ["python", "compact"]
    limit = args.limit or (20.0 if args.quick else 60.0)
    memory = int(args.memory_gb * 2**30)
    rows: list[dict[str, Any]] = []
    stem = "circuit_scale" + (f"_trees_{args.trees.replace(',', '_')}" if args.trees else "")
    resume = {"quick": args.quick, "options": vars(args), "resume": args.resume, "directory": args.results_dir}
    with checkpoint(stem, **resume) as done:  # each forest compiled a unit
        _forests(names, cores, args, folder, limit, memory, done, rows)
        _write(stem, names, cores, rows, args, limit)
    return 0


def _forests(
    names: list[str],
    cores: list[str],
    args: argparse.Namespace,
    folder: Path,
    limit: float,
    memory: int,
    done: Checkpoint,
    rows: list[dict[str, Any]],
) -> None:
    """Compile the forests of every dataset and core into ``rows``: the given tree counts, or the
    ladder up to the first that does not compile (and, at full size, the paper's forest at depths
    5 and 6)."""

    def compiled(name: str, trees: int, depth: int, core: str) -> dict[str, Any]:
        return done.unit((name, core, trees, depth), partial(run, name, trees, depth, core, folder, limit, memory))

    ladder = QUICK_LADDER if args.quick else FULL_LADDER
    for name in names:
        for core in cores:
            if args.trees:
                for trees in _tree_counts(args.trees, name):
                    rows.append(compiled(name, trees, 4, core))
                    log.info("%s", rows[-1])
                continue
            for trees in ladder:
                row = compiled(name, trees, 4, core)
                log.info("%s", row)
                rows.append(row)
                if row["status"] != "ok":
                    break
            if not args.quick:
                for depth in (5, 6):
                    rows.append(compiled(name, PAPER_T2[name][0], depth, core))


def _write(
    stem: str, names: list[str], cores: list[str], rows: list[dict[str, Any]], args: argparse.Namespace, limit: float
) -> None:
    """The report: the largest depth-4 forest compiled per dataset and core, and every forest tried."""
    largest = []
    for name in names:
        for core in cores:
            passed = [
                r["trees"]
                for r in rows
                if r["dataset"] == name and r["core"] == core and r["depth"] == 4 and r["status"] == "ok"
            ]
            paper = PAPER_T2.get(name, (None,))[0]
            largest.append(
                {
                    "dataset": name,
                    "core": core,
                    "largest depth-4 forest": max(passed, default=0),
                    "paper #T": paper,
                }
            )
            if not args.quick and not args.trees:
                largest[-1]["at least 2x paper"] = bool(paper and max(passed, default=0) >= 2 * paper)
    md = [
        f"# Circuit engine: largest forests compiled ({limit:.0f} CPU s, {args.memory_gb:.0f} GB per forest)",
        "",
        markdown_table(largest, list(largest[0]) if largest else ["dataset"]),
        "",
        "## Every forest tried",
        "",
        markdown_table(rows, COLUMNS),
    ]
    write_report(stem, rows, "\n".join(md), quick=args.quick, options=vars(args), seed=0, directory=args.results_dir)
