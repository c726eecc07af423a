"""Table 1 of Izza and Marques-Silva (2021) [IM21] with rfexplain's ``"sat"`` engine.

For each of the 19 benchmark datasets (shipped with the package; ``--data`` or ``$RFEXPLAIN_DATA`` override it):
a ``RandomForestClassifier`` with 100 trees, the SAT paper's depth for that dataset (datasets
README), ``criterion="entropy"``, trained on a fixed 80/20 split; the instances are those of the
paper's ``samples/<name>.samples`` file. Columns as in the paper: CNF variables and clauses of the
"not the predicted class" formula, max SAT / UNSAT call time, mean SAT / UNSAT calls per AXp,
max / min / mean time per AXp, plus the mean AXp size, the mean time per CXp, and the time to
enumerate *all* AXps and CXps of an instance (capped at 60 s per instance). A second table
compares the cardinality encodings (and, with three classes or more, the two multi-class
constructions) on size and time. Times are wall-clock seconds on this machine, measured after the
solver for the class has been loaded (the one-off build time is its own column). Times are CPU
seconds of this process (``time.process_time``; the SAT solvers are single-threaded), because the
benchmark machine may be shared; the CSV also has the wall-clock figures.

Run: ``python -m experiments.sat_table1 [--quick] [--instances N] [--enum-instances N]``.
Writes ``experiments/results/sat_table1.{csv,md,machine.json}`` and ``sat_cards.*``
(``sat_table1_quick.*`` and ``sat_cards_quick.*`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from experiments._common import (
    DATA_HELP,
    DATASETS_HELP,
    count_within,
    cpu_budget,
    data_dir,
    dataset_names,
    markdown_table,
    results_stem,
    write_report,
)
from experiments._resume import NO_CHECKPOINT, RESUME_HELP, Checkpoint, checkpoint

log = logging.getLogger("experiments.sat_table1")

#: dataset -> max depth of the SAT paper's forest (datasets README, 100 trees each).
DEPTHS: dict[str, int] = {
    "ann-thyroid": 4,
    "appendicitis": 6,
    "banknote": 5,
    "ecoli": 5,
    "glass2": 6,
    "ionosphere": 5,
    "iris": 6,
    "magic": 6,
    "mofn-3-7-10": 6,
    "new-thyroid": 5,
    "phoneme": 6,
    "ring": 6,
    "segmentation": 4,
    "shuttle": 3,
    "threeOf9": 3,
    "twonorm": 3,
    "waveform-21": 5,
    "wine-recog": 3,
    "xd6": 6,
}
QUICK_DATASETS = ("iris", "banknote", "ecoli", "wine-recog", "threeOf9", "new-thyroid")
TREES = 100
SEED = 0
ENUM_CAP = 60.0
#: The paper's cardinality encoding (its footnote 9), passed explicitly: the engine's default differs.
PAPER_CARD = "cardnetwrk"


def train(name: str, directory: Path) -> tuple[Any, Any, float, np.ndarray]:
    """The paper's forest for ``name``: model, Forest, test accuracy (hard vote), samples."""
    from rfexplain.datasets import load_samples, train_forest

    trained = train_forest(
        name,
        trees=TREES,
        depth=DEPTHS[name],
        seed=SEED,
        test_size=0.2,
        data_dir=directory,
        criterion="entropy",
        n_jobs=1,
        vote="hard",  # the paper's semantics: the reproduced table stays comparable
    )
    model, forest, X_test, y_test = trained.model, trained.forest, trained.X_test, trained.y_test
    accuracy = float(np.mean(forest.predict(X_test) == y_test))
    samples = load_samples(name, directory)
    if samples is None:
        samples = X_test[np.random.default_rng(SEED).permutation(len(X_test))]
    return model, forest, accuracy, samples


def explain_instance(engine: Any, forest: Any, x: np.ndarray) -> dict[str, Any]:
    """One AXp and one CXp of one instance, with SAT-call statistics."""
    from rfexplain.engines.base import Instance

    instance = Instance.of(forest, x)
    engine.oracle("not", instance.prediction)  # the one-off load is not part of an AXp's time
    before = engine.stats.copy()
    start, cpu = time.perf_counter(), time.process_time()
    axp = engine.sufficient_reason(instance)
    t_axp, c_axp = time.perf_counter() - start, time.process_time() - cpu
    after = engine.stats.copy()
    start, cpu = time.perf_counter(), time.process_time()
    engine.necessary_reason(instance)
    t_cxp, c_cxp = time.perf_counter() - start, time.process_time() - cpu
    return {
        "axp_time": c_axp,
        "axp_wall": t_axp,
        "axp_size": len(axp),
        "sat_calls": after.sat_calls - before.sat_calls,
        "unsat_calls": after.unsat_calls - before.unsat_calls,
        "max_sat": after.max_sat_time,
        "max_unsat": after.max_unsat_time,
        "cxp_time": c_cxp,
        "cxp_wall": t_cxp,
    }


def explain_instances(
    engine: Any, forest: Any, samples: np.ndarray, done: Checkpoint = NO_CHECKPOINT, key: Sequence[Any] = ()
) -> list[dict[str, Any]]:
    """:func:`explain_instance` of every sample, each a unit ``(*key, k)`` of ``done``."""
    return [done.unit((*key, k), partial(explain_instance, engine, forest, x)) for k, x in enumerate(samples)]


def enumerate_one(engine: Any, forest: Any, x: np.ndarray, cap: float) -> dict[str, Any]:
    """All AXps then all CXps of one instance within one ``cap``-second budget (CPU seconds)."""
    from rfexplain.engines.base import Instance

    instance = Instance.of(forest, x)
    engine.oracle("not", instance.prediction)
    budget = cpu_budget(cap)
    cpu = time.process_time()
    n_axp = count_within(engine.sufficient_reasons(instance, budget))
    n_cxp = count_within(engine.necessary_reasons(instance, budget)) if not budget.expired() else 0
    complete = not budget.expired()
    return {
        "time": time.process_time() - cpu,
        "wall": budget.elapsed(),
        "axps": n_axp,
        "cxps": n_cxp,
        "complete": complete,
    }


def enumerate_all(
    engine: Any, forest: Any, samples: np.ndarray, cap: float, done: Checkpoint = NO_CHECKPOINT, key: Sequence[Any] = ()
) -> list[dict[str, Any]]:
    """:func:`enumerate_one` of every sample, each a unit ``(*key, k)`` of ``done``."""
    return [done.unit((*key, k), partial(enumerate_one, engine, forest, x, cap)) for k, x in enumerate(samples)]


def _mean(values: Sequence[float]) -> float | None:
    return float(statistics.fmean(values)) if values else None


def dataset_row(
    name: str,
    directory: Path,
    n_inst: int | None,
    n_enum: int,
    cap: float,
    solver: str,
    card: str = PAPER_CARD,
    done: Checkpoint = NO_CHECKPOINT,
) -> dict[str, Any]:
    """Table 1's row of one dataset; each instance's AXp/CXp and enumeration is a unit of ``done``."""
    from rfexplain.sat.engine import SatEngine

    started = time.perf_counter()
    model, forest, accuracy, samples = train(name, directory)
    t_train = time.perf_counter() - started
    chosen = samples if n_inst is None else samples[:n_inst]
    stats = forest.statistics()
    with SatEngine(forest, solver=solver, card=card) as engine:
        start = time.perf_counter()
        predicted = sorted({int(c) for c in forest.predict_index(chosen)})
        sizes = []
        for c in predicted:
            oracle = engine.oracle("not", c)
            sizes.append((oracle.formula.n_vars, oracle.formula.n_clauses))
        t_build = time.perf_counter() - start
        per = explain_instances(engine, forest, chosen, done, ("explain", name))
        enum_rows = enumerate_all(engine, forest, samples[:n_enum], cap, done, ("enumerate", name)) if n_enum else []
    axp_times = [r["axp_time"] for r in per]
    enum_times = [r["time"] for r in enum_rows]
    row = {
        "dataset": name,
        "F": forest.n_features,
        "C": forest.n_classes,
        "I": len(per),
        "D": DEPTHS[name],
        "N": stats["nodes"],
        "A%": round(100 * accuracy, 1),
        "vars": round(_mean([s[0] for s in sizes]) or 0),
        "clauses": round(_mean([s[1] for s in sizes]) or 0),
        "build_s": t_build,
        "train_s": t_train,
        "max_sat_s": max((r["max_sat"] for r in per), default=None),
        "max_unsat_s": max((r["max_unsat"] for r in per), default=None),
        "sat_calls": _mean([r["sat_calls"] for r in per]),
        "unsat_calls": _mean([r["unsat_calls"] for r in per]),
        "axp_max_s": max(axp_times, default=None),
        "axp_min_s": min(axp_times, default=None),
        "axp_avg_s": _mean(axp_times),
        "axp_avg_wall_s": _mean([r["axp_wall"] for r in per]),
        "axp_size": _mean([r["axp_size"] for r in per]),
        "cxp_avg_s": _mean([r["cxp_time"] for r in per]),
        "cxp_avg_wall_s": _mean([r["cxp_wall"] for r in per]),
        "enum_instances": len(enum_rows),
        "enum_complete%": round(100 * _mean([1.0 if r["complete"] else 0.0 for r in enum_rows]), 1)
        if enum_rows
        else None,
        "enum_median_s": statistics.median(enum_times) if enum_times else None,
        "enum_max_s": max(enum_times, default=None),
        "enum_max_wall_s": max((r["wall"] for r in enum_rows), default=None),
        "enum_mean_axps": _mean([r["axps"] for r in enum_rows]),
        "enum_mean_cxps": _mean([r["cxps"] for r in enum_rows]),
    }
    row["meets_axp_targets"] = bool(
        row["axp_avg_s"] is not None and row["axp_avg_s"] <= 0.05 and row["axp_max_s"] <= 1.0
    )
    row["meets_enum_target"] = None if not enum_rows else bool(row["enum_complete%"] >= 90.0)
    log.info("%s: %s", name, {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()})
    return row


def card_rows(name: str, directory: Path, n_inst: int, solver: str) -> list[dict[str, Any]]:
    """Every cardinality encoding (and multi-class construction) on the same forest and instances."""
    from rfexplain.sat.encodings import CARD_ENCODINGS
    from rfexplain.sat.engine import SatEngine

    model, forest, _, samples = train(name, directory)
    chosen = samples[:n_inst]
    constructions = ("challengers", "selectors") if forest.n_classes > 2 else ("challengers",)
    rows = []
    for card in CARD_ENCODINGS:
        for multiclass in constructions:
            with SatEngine(forest, solver=solver, card=card, multiclass=multiclass) as engine:
                start = time.perf_counter()
                predicted = sorted({int(c) for c in forest.predict_index(chosen)})
                sizes = [
                    (engine.oracle("not", c).formula.n_vars, engine.oracle("not", c).formula.n_clauses)
                    for c in predicted
                ]
                t_build = time.perf_counter() - start
                per = explain_instances(engine, forest, chosen)
            rows.append(
                {
                    "dataset": name,
                    "C": forest.n_classes,
                    "card": card,
                    "multiclass": multiclass,
                    "vars": round(_mean([s[0] for s in sizes]) or 0),
                    "clauses": round(_mean([s[1] for s in sizes]) or 0),
                    "build_s": t_build,
                    "axp_avg_s": _mean([r["axp_time"] for r in per]),
                    "axp_max_s": max(r["axp_time"] for r in per),
                    "cxp_avg_s": _mean([r["cxp_time"] for r in per]),
                }
            )
            log.info("cards %s %s %s: %s", name, card, multiclass, rows[-1])
    return rows


TABLE1_COLUMNS = [
    "dataset",
    "F",
    "C",
    "I",
    "D",
    "N",
    "A%",
    "vars",
    "clauses",
    "max_sat_s",
    "max_unsat_s",
    "sat_calls",
    "unsat_calls",
    "axp_max_s",
    "axp_min_s",
    "axp_avg_s",
    "axp_size",
    "cxp_avg_s",
    "enum_instances",
    "enum_complete%",
    "enum_median_s",
    "enum_max_s",
    "enum_mean_axps",
    "enum_mean_cxps",
    "build_s",
]
TABLE1_HEADERS = [
    "dataset",
    "#F",
    "#C",
    "#I",
    "D",
    "#N",
    "%A",
    "#var",
    "#cl",
    "Mx S",
    "Mx U",
    "#S",
    "#U",
    "AXp Mx",
    "AXp m",
    "AXp avg",
    "|AXp|",
    "CXp avg",
    "#enum",
    "enum done %",
    "enum median",
    "enum max",
    "#AXps",
    "#CXps",
    "build",
]
CARD_COLUMNS = [
    "dataset",
    "C",
    "card",
    "multiclass",
    "vars",
    "clauses",
    "build_s",
    "axp_avg_s",
    "axp_max_s",
    "cxp_avg_s",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.sat_table1", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke-sized run (about two minutes)")
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--datasets", nargs="+", help=DATASETS_HELP)
    parser.add_argument(
        "--instances", type=int, help="instances per dataset for AXp/CXp timings (default: all samples)"
    )
    parser.add_argument("--enum-instances", type=int, default=20, help="instances per dataset for full enumeration")
    parser.add_argument("--enum-cap", type=float, default=ENUM_CAP, help="seconds per instance for full enumeration")
    parser.add_argument("--card-instances", type=int, default=25, help="instances per dataset for the encoding table")
    parser.add_argument("--card-datasets", nargs="*", help="datasets for the encoding table (default: all chosen)")
    parser.add_argument("--solver", default="g3", help="python-sat solver alias")
    parser.add_argument("--card", default=PAPER_CARD, help="cardinality encoding for Table 1 (default: the paper's)")
    parser.add_argument("--results-dir", help="output folder (default experiments/results)")
    parser.add_argument("--skip-cards", action="store_true", help="only Table 1")
    parser.add_argument("--only-cards", action="store_true", help="only the encoding table")
    parser.add_argument(
        "--merge", nargs="*", help="merge the sat_table1 CSVs (quick ones with --quick) of these folders and stop"
    )
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    args = parser.parse_args(argv)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.merge:
        return _merge(args)
    directory = data_dir(args.data)
    if not directory.is_dir():
        from experiments._common import Skip

        raise Skip(f"the data folder {directory} (--data or $RFEXPLAIN_DATA) does not exist")
    names = dataset_names(args.datasets, list(QUICK_DATASETS) if args.quick else list(DEPTHS), DEPTHS)
    n_inst = args.instances if args.instances is not None else (5 if args.quick else None)
    n_enum = 2 if args.quick else args.enum_instances
    cap = 5.0 if args.quick else args.enum_cap
    n_card = 2 if args.quick else args.card_instances
    card_names = args.card_datasets or (["iris", "banknote"] if args.quick else names)

    rows = []
    resume = {"quick": args.quick, "options": vars(args), "resume": args.resume, "directory": args.results_dir}
    with checkpoint("sat_table1", **resume) as done:
        for name in [] if args.only_cards else names:
            row = partial(dataset_row, name, directory, n_inst, n_enum, cap, args.solver, args.card, done)
            rows.append(done.unit(("table1", name), row))
            _write_table1(rows, args, n_enum, cap)
        if not args.skip_cards:
            cards: list[dict[str, Any]] = []
            for name in card_names:
                cards.extend(done.unit(("cards", name), partial(card_rows, name, directory, n_card, args.solver)))
                _write_cards(cards, args, n_card)
    return 0


def _write_table1(rows: list[dict[str, Any]], args: Any, n_enum: int, cap: float) -> None:
    ok_axp = sum(1 for r in rows if r["meets_axp_targets"])
    ok_enum = sum(1 for r in rows if r["meets_enum_target"])
    text = (
        "# SAT engine: the SAT paper's Table 1 (RFxpl columns)\n\n"
        f"100 trees, paper depths, entropy, 80/20 split (seed {SEED}); solver {args.solver}, cardinality "
        f"encoding {args.card} (multi-class: the paper's selector construction). Times are CPU seconds of the "
        "benchmark process (the machine is shared; wall-clock columns are in the CSV). #S/#U: mean SAT/UNSAT calls "
        "per AXp; Mx S/Mx U: slowest single call. "
        f"Enumeration of all AXps and all CXps on the first {n_enum} instances, capped at {cap:g} CPU "
        "seconds each.\n\n"
        + markdown_table(rows, TABLE1_COLUMNS, TABLE1_HEADERS)
        + f"\n\nTargets: mean AXp <= 0.05 s and max <= 1 s: {ok_axp}/{len(rows)} datasets; "
        f"complete enumeration for >= 90% of instances: {ok_enum}/{len(rows)} datasets.\n"
    )
    write_report("sat_table1", rows, text, **_run(args))


def _merge(args: Any) -> int:
    """Rebuild the reports from partial runs (e.g. datasets run in parallel processes)."""
    import csv

    def cast(value: str) -> Any:
        if value in ("", "None"):
            return None
        if value in ("True", "False"):
            return value == "True"
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() and "." not in value and "e" not in value else number

    rows: dict[str, dict[str, Any]] = {}
    cards: list[dict[str, Any]] = []
    for folder in args.merge:
        table = Path(folder) / f"{results_stem('sat_table1', quick=args.quick)}.csv"
        if table.is_file():
            with table.open() as handle:
                for row in csv.DictReader(handle):
                    rows[row["dataset"]] = {k: cast(v) for k, v in row.items()}
        card_file = Path(folder) / f"{results_stem('sat_cards', quick=args.quick)}.csv"
        if card_file.is_file():
            with card_file.open() as handle:
                cards.extend({k: cast(v) for k, v in row.items()} for row in csv.DictReader(handle))
    ordered = [rows[name] for name in DEPTHS if name in rows]
    n_enum = max((r.get("enum_instances") or 0 for r in ordered), default=0)
    if ordered:
        _write_table1(ordered, args, n_enum, args.enum_cap)
    if cards:
        _write_cards(cards, args, args.card_instances)
    return 0


def _write_cards(rows: list[dict[str, Any]], args: Any, n_card: int) -> None:
    text = (
        "# SAT engine: cardinality encodings and multi-class constructions\n\n"
        f"Same forests as sat_table1; first {n_card} sample instances per dataset; one AXp and one CXp each.\n\n"
        + markdown_table(rows, CARD_COLUMNS)
    )
    write_report("sat_cards", rows, text, **_run(args))


def _run(args: Any) -> dict[str, Any]:
    """What :func:`write_report` records about the run (and where it writes)."""
    return {"quick": args.quick, "options": vars(args), "seed": SEED, "directory": args.results_dir}


if __name__ == "__main__":
    sys.exit(main())
