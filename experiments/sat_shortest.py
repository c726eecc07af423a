"""Shortest explanations with the SAT engine on the SAT paper's forests (issue 15, target 3).

Izza and Marques-Silva (2021) [IM21], Table 1 settings (100 trees, the paper's depth per dataset,
``criterion="entropy"``, 80/20 split, its sample instances): for each of the first ``--instances``
sample instances, the CPU time to the first answer of ``shortest_sufficient_reasons`` (one
minimum-size AXp, by implicit hitting sets) and of ``shortest_necessary_reasons`` (one
minimum-size CXp), each within ``--cap`` CPU seconds, with the size found against the size of the
canonical (deletion) AXp. Target: one shortest AXp within 30 s for at least 90% of the instances
on every dataset.

Run: ``python -m experiments sat_shortest [--quick] [--datasets ...] [--instances N] [--cap S]``.
Writes ``sat_shortest.{csv,md,machine.json}`` (``sat_shortest_quick.*`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from experiments._common import (
    DATA_HELP,
    DATASETS_HELP,
    Skip,
    cpu_budget,
    data_dir,
    dataset_names,
    markdown_table,
    write_report,
)
from experiments._resume import NO_CHECKPOINT, RESUME_HELP, Checkpoint, checkpoint
from experiments.sat_table1 import DEPTHS, SEED, train

log = logging.getLogger("experiments.sat_shortest")

QUICK_DATASETS = ("iris", "wine-recog")
TARGET_SHARE = 90.0
COLUMNS = (
    "dataset",
    "features",
    "instances",
    "cap_s",
    "axp_size",
    "shortest_axp_pct",
    "shortest_axp_median_s",
    "shortest_axp_max_s",
    "shortest_axp_size",
    "shortest_cxp_pct",
    "shortest_cxp_median_s",
    "shortest_cxp_max_s",
    "shortest_cxp_size",
    "meets_target",
)


def first_within(reasons: Callable[[Any], Iterator[Any]], cap: float) -> tuple[Any | None, float]:
    """The first reason ``reasons(budget)`` yields within ``cap`` CPU seconds (``None`` past the
    cap), and the CPU seconds spent."""
    from rfexplain import BudgetExpired

    budget = cpu_budget(cap)
    started = time.process_time()
    try:
        found = next(iter(reasons(budget)), None)
    except BudgetExpired:
        found = None
    return found, time.process_time() - started


def instance_times(engine: Any, forest: Any, x: Any, cap: float) -> dict[str, Any]:
    """One instance: the canonical AXp's size, and ``[size, CPU seconds]`` of the first shortest
    AXp and CXp (``size`` None past the cap)."""
    from rfexplain.engines.base import Instance

    instance = Instance.of(forest, x)
    engine.oracle("not", instance.prediction)  # the one-off load is not part of the times
    out: dict[str, Any] = {"axp_size": len(engine.sufficient_reason(instance))}
    for kind, query in (("axp", engine.shortest_sufficient_reasons), ("cxp", engine.shortest_necessary_reasons)):
        found, seconds = first_within(lambda budget: query(instance, budget), cap)
        out[kind] = [None if found is None else len(found), seconds]
    return out


def dataset_row(
    name: str, directory: Path, n_inst: int, cap: float, done: Checkpoint = NO_CHECKPOINT
) -> dict[str, Any]:
    """The row of one dataset; each instance is a unit of ``done`` (kept by ``--resume``)."""
    from rfexplain.sat.engine import SatEngine

    _, forest, _, samples = train(name, directory)
    with SatEngine(forest) as engine:
        per = [
            done.unit((name, k), partial(instance_times, engine, forest, x, cap))
            for k, x in enumerate(samples[:n_inst])
        ]
    row: dict[str, Any] = {"dataset": name, "features": forest.n_features, "instances": len(per), "cap_s": cap}
    row["axp_size"] = statistics.fmean(r["axp_size"] for r in per) if per else None
    for kind in ("axp", "cxp"):
        results = [r[kind] for r in per]
        found = [(size, seconds) for size, seconds in results if size is not None]
        times = [seconds for _, seconds in found]
        row[f"shortest_{kind}_pct"] = round(100 * len(found) / len(results), 1) if results else None
        row[f"shortest_{kind}_median_s"] = statistics.median(times) if times else None
        row[f"shortest_{kind}_max_s"] = max(times) if len(found) == len(results) and times else None
        row[f"shortest_{kind}_size"] = statistics.fmean(size for size, _ in found) if found else None
    row["meets_target"] = bool(row["shortest_axp_pct"] is not None and row["shortest_axp_pct"] >= TARGET_SHARE)
    log.info("%s: %s", name, row)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments sat_shortest", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two small datasets, two instances, 5 s cap")
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--datasets", nargs="+", help=DATASETS_HELP)
    parser.add_argument("--instances", type=int, help="sample instances per dataset (default 10; quick 2)")
    parser.add_argument("--cap", type=float, help="CPU seconds per query and instance (default 30; quick 5)")
    parser.add_argument("--results-dir", help="output folder (default experiments/results)")
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    args = parser.parse_args(argv)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    directory = data_dir(args.data)
    if not directory.is_dir():
        raise Skip(f"the data folder {directory} (--data or $RFEXPLAIN_DATA) does not exist")
    names = dataset_names(args.datasets, list(QUICK_DATASETS) if args.quick else list(DEPTHS), DEPTHS)
    unknown = sorted(set(names) - set(DEPTHS))
    if unknown:
        parser.error(f"unknown datasets {unknown}; choose from {sorted(DEPTHS)}")
    n_inst = args.instances if args.instances is not None else (2 if args.quick else 10)
    cap = args.cap if args.cap is not None else (5.0 if args.quick else 30.0)
    rows: list[dict[str, Any]] = []
    with checkpoint(
        "sat_shortest", quick=args.quick, options=vars(args), resume=args.resume, directory=args.results_dir
    ) as done:
        for name in names:
            rows.append(dataset_row(name, directory, n_inst, cap, done))
            _write(rows, args, n_inst, cap)
    return 0


def _write(rows: list[dict[str, Any]], args: Any, n_inst: int, cap: float) -> None:
    """The report of the datasets done so far (written after each one)."""
    met = sum(1 for r in rows if r["meets_target"])
    text = (
        "# SAT engine: one shortest AXp and one shortest CXp per instance\n\n"
        f"The SAT paper's forests (100 trees, its depths, entropy, 80/20 split, seed {SEED}); the first "
        f"{n_inst} sample instances; each query capped at {cap:g} CPU seconds (the engine's defaults). "
        "`*_pct`: share of instances answered within the cap; `*_median_s` over those; `*_max_s` only when "
        "all were; `axp_size`: the canonical (deletion) AXp, against the shortest found.\n\n"
        + markdown_table(rows, COLUMNS)
        + f"\n\nTarget (one shortest AXp within {cap:g} s for >= {TARGET_SHARE:g}% of the instances): "
        f"{met}/{len(rows)} datasets.\n"
    )
    write_report(
        "sat_shortest",
        rows,
        text,
        quick=args.quick,
        options=vars(args),
        seed=SEED,
        directory=args.results_dir,
        columns=COLUMNS,
    )
