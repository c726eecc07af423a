"""Tables 1-4 of Ji and Darwiche (2026) [JD26] with rfexplain's circuit engine.

    python -m experiments.circuit_tables table1|table2|table3|table4 [--quick] [--data DIR]
        [--datasets a,b] [--trees N] [--instances N] [--timeout SECONDS]

- table1: Algorithm 3 (NNF class formulas of every class): #N_NNF, T_NNF (paper's Table 1 tree
  counts; ``--trees 1000`` for the paper's 1000-tree run).
- table2: Algorithm 3 per class (#N_3, T_3) and Algorithm 3B (#N_3B, T_3B) (Table 2 tree counts).
- table3: per explained instance, all SRs and NRs from the complete reason, robustness
  (Algorithm 5) and all shortest GNRs (Algorithm 7) (Table 2 tree counts). T_CR+GR is the time
  of the closed forms (complete and whole general reason); T_sGNR includes robustness and the
  general reason restricted to the features of V, which is all Algorithm 6 reads.
- table4: multi-class datasets: Algorithm 3A (extra time over 3B, size) and contrastive
  explanations from the negated 3A class formula of every target class.

Forests: scikit-learn ``RandomForestClassifier(n_estimators=#T, max_depth=4, random_state=0)`` on
an 85/15 split (``random_state=0``); up to 100 test instances are explained. Each dataset runs in
its own process with a wall-clock limit (``--timeout``); a dataset that exceeds it is reported as
such. Results: ``experiments/results/circuit_tableN.{csv,md}``, with the paper's figures in the
adjacent ``paper_*`` columns. The data folder is ``--data``, else ``$RFEXPLAIN_DATA``, else
the benchmark suite shipped with the package.
"""

from __future__ import annotations

import argparse
import gc
import logging
import math
import multiprocessing as mp
import os
import statistics
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from experiments._common import (
    DATA_HELP,
    DATASETS_HELP,
    data_dir,
    dataset_names,
    peak_rss_bytes,
    results_dir,
    write_report,
)
from experiments._resume import RESUME_HELP, Checkpoint, checkpoint

log = logging.getLogger("experiments.circuit_tables")

ROOT = Path(__file__).resolve().parent.parent
#: The seed of every forest and split of these tables.
SEED = 0

# ---------------------------------------------------------------------- the paper's figures
# name: (#T, %A, #N_NNF, T_NNF)
PAPER_T1 = {
    "ann-thyroid": (25, 95.05, 3529, 0.20),
    "appendicitis": (50, 68.75, 1792, 0.07),
    "banknote": (100, 96.60, 5887, 0.20),
    "ecoli": (100, 87.76, 83106, 7.11),
    "glass2": (25, 83.33, 965, 0.04),
    "ionosphere": (15, 84.91, 504, 0.01),
    "iris": (100, 95.45, 25125, 2.05),
    "magic": (25, 82.05, 1370, 0.06),
    "mofn-3-7-10": (100, 80.9, 4100, 0.21),
    "new-thyroid": (100, 93.75, 26188, 2.35),
    "phoneme": (100, 80.39, 6199, 0.30),
    "ring": (25, 87.48, 641, 0.02),
    "segmentation": (15, 94.51, 8734, 0.55),
    "shuttle": (50, 99.82, 59899, 5.13),
    "threeOf9": (100, 98.70, 4680, 0.25),
    "twonorm": (15, 90.63, 835, 0.01),
    "waveform-21": (15, 82.40, 2202, 0.08),
    "wine-recog": (25, 100.00, 3836, 0.24),
    "xd6": (100, 95.89, 4610, 0.20),
}
# name: (#T, %A, #N_3, T_3, #N_3B, T_3B)
PAPER_T2 = {
    "ann-thyroid": (100, 96.82, 9407.3, 0.7, 293176.0, 2227.6),
    "appendicitis": (100, 68.75, 2298.0, 0.1, 310011.0, 2056.3),
    "banknote": (100, 96.60, 3079.5, 0.1, 1782.5, 14.4),
    "ecoli": (50, 87.76, 7248.0, 0.6, 37856.8, 191.6),
    "glass2": (50, 79.17, 1190.5, 0.1, 402211.0, 1539.4),
    "ionosphere": (16, 83.02, 288.0, 0.1, 581794.5, 454.7),
    "iris": (100, 95.45, 8851.0, 0.7, 118.7, 3.9),
    "magic": (32, 82.23, 1001.0, 0.1, 437863.5, 502.0),
    "mofn-3-7-10": (100, 80.90, 2061.5, 0.1, 22.0, 0.5),
    "new-thyroid": (100, 93.75, 9423.3, 0.8, 10634.0, 167.6),
    "phoneme": (64, 80.27, 1848.5, 0.1, 46576.5, 287.9),
    "ring": (25, 87.48, 321.5, 0.1, 206400.5, 511.9),
    "segmentation": (12, 93.35, 1276.7, 0.1, 270979.1, 115.7),
    "shuttle": (50, 99.82, 9987.0, 0.7, 29636.7, 125.9),
    "threeOf9": (100, 98.70, 2354.5, 0.1, 39.0, 1.1),
    "twonorm": (10, 89.19, 299.0, 0.1, 195234.5, 73.8),
    "waveform-21": (9, 82.00, 551.3, 0.1, 341053.0, 156.1),
    "wine-recog": (25, 100.00, 1576.0, 0.1, 2560010.7, 3154.9),
    "xd6": (100, 95.89, 2317.5, 0.1, 42.5, 1.7),
}
# name: (T_SR, #C_SR, T_NR, #C_NR, r, T_sGNR, #C_sGNR)
PAPER_T3 = {
    "ann-thyroid": (0.0281, 3.50, 0.0090, 3.58, 1.25, 0.1906, 1.87),
    "appendicitis": (0.0100, 6.44, 0.0037, 8.69, 1.88, 1.9259, 19.75),
    "banknote": (0.0001, 1.09, 0.0001, 1.85, 1.00, 0.0094, 1.75),
    "ecoli": (0.0001, 2.08, 0.0001, 3.76, 1.00, 0.0268, 2.24),
    "glass2": (0.0035, 5.46, 0.0015, 7.83, 1.21, 0.4143, 5.75),
    "ionosphere": (77.2518, 761.00, 2.8630, 777.89, 1.73, 0.1581, 7.69),
    "iris": (0.0001, 1.00, 0.0001, 1.59, 1.00, 0.0014, 1.68),
    "magic": (0.0376, 5.97, 0.0105, 8.55, 1.19, 0.5213, 10.12),
    "mofn-3-7-10": (0.0001, 3.98, 0.0001, 3.58, 1.90, 0.0001, 2.55),
    "new-thyroid": (0.0001, 1.59, 0.0001, 2.72, 1.06, 0.0098, 2.50),
    "phoneme": (0.0004, 2.88, 0.0002, 3.30, 1.42, 0.1229, 7.17),
    "ring": (7.3803, 132.04, 1.1468, 236.86, 1.21, 0.0165, 3.19),
    "segmentation": (0.3216, 28.91, 0.0716, 38.91, 1.24, 0.4629, 6.94),
    "shuttle": (0.0015, 3.78, 0.0007, 5.37, 1.15, 0.0351, 3.11),
    "threeOf9": (0.0001, 2.75, 0.0001, 4.35, 1.16, 0.0001, 2.68),
    "twonorm": (3.0597, 122.36, 0.2581, 125.24, 1.66, 0.1566, 9.30),
    "waveform-21": (0.7104, 44.62, 0.1132, 48.27, 1.28, 0.0321, 4.53),
    "wine-recog": (1.2963, 40.33, 0.3260, 44.96, 1.41, 3.7344, 7.59),
    "xd6": (0.0003, 4.62, 0.0001, 4.83, 1.29, 0.0001, 3.02),
}
# name: (T_3B, T_3A-3B, #N_3B, #N_3A, T_NR, #C_NR, T_CE, #C_CE)
PAPER_T4 = {
    "ann-thyroid": (2227.6, 20.1, 293176.0, 220347.0, 0.0090, 3.58, 0.0023, 3.96),
    "ecoli": (191.6, 1.4, 37856.8, 13483.6, 0.0001, 3.76, 0.0001, 2.81),
    "new-thyroid": (167.6, 0.1, 10634.0, 4940.7, 0.0001, 2.72, 0.0001, 2.50),
    "segmentation": (115.7, 48.7, 270979.1, 184414.9, 0.0716, 38.91, 0.0598, 49.40),
    "shuttle": (125.9, 1.1, 29636.9, 12777.7, 0.0007, 5.37, 0.0002, 2.76),
    "waveform-21": (156.1, 27.2, 341053.0, 190343.7, 0.1132, 48.27, 0.0898, 96.16),
    "wine-recog": (3154.9, 125.2, 2560010.7, 1506961.7, 0.3260, 44.96, 0.2514, 38.87),
}


# ---------------------------------------------------------------------- data and forests
def build(name: str, trees: int, folder: Path) -> dict[str, Any]:
    """The paper's forest for ``name``: depth 4, 85/15 split, seed 0 (the CSV is read by
    :func:`rfexplain.datasets.read_csv`, classes sorted as scikit-learn's ``classes_``)."""
    from rfexplain.datasets import train_forest

    # vote="hard": the paper's semantics, so the reproduced tables stay comparable
    trained = train_forest(name, trees=trees, depth=4, seed=SEED, test_size=0.15, data_dir=folder, vote="hard")
    forest, model, Xte, yte = trained.forest, trained.model, trained.X_test, trained.y_test
    accuracy = float((forest.predict_index(Xte) == np.searchsorted(model.classes_, yte)).mean() * 100)
    return {
        "forest": forest,
        "X_test": Xte,
        "features": Xte.shape[1],
        "classes": forest.n_classes,
        "test": len(Xte),
        "nodes": sum(t.n_nodes for t in forest.trees),
        "accuracy": accuracy,
    }


#: what the running dataset is doing, sent to the parent every few seconds so that a dataset
#: stopped at its time limit is reported with the phase and the size it had reached
_progress: dict[str, Any] = {}


def _note(phase: str, manager: Any = None) -> None:
    _progress["phase"] = phase
    if manager is not None:
        _progress["manager"] = manager


def _snapshot() -> str:
    manager = _progress.get("manager")
    size = f", {len(manager):,} decision-graph nodes created" if manager is not None else ""
    return f"{_progress.get('phase', 'starting')}{size} after {time.process_time():.0f} CPU s"


def _formulas(forest: Any, opts: dict[str, Any]) -> Any:
    from rfexplain.circuit.compilers import ClassFormulas

    return ClassFormulas(
        forest, order=opts.get("order", "depth"), method=opts.get("method", "count"), core=opts.get("core", "compact")
    )


def _clock() -> float:
    """Process CPU time: the machine is shared, and the algorithms are single-threaded Python."""
    return time.process_time()


def _heap_set_aside() -> None:
    """Before a timed compile: collect, then move every live object (the libraries', numba's
    many, the data's) out of the collector's reach (``gc.freeze``), so that the full collection
    charged to the compile (:func:`_paying_gc_debt`) traverses only what the compile made."""
    gc.collect()
    gc.freeze()


def _paying_gc_debt() -> None:
    """One full garbage collection, inside a compilation's timing: the library pauses the
    collector while it compiles (:mod:`rfexplain.circuit.compilers.gcpause`), and the collection it then owes
    would otherwise land in whatever is timed next (an enumeration of a few microseconds)."""
    gc.collect()


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


# ---------------------------------------------------------------------- one dataset per table
def run_table1(name: str, trees: int, folder: Path, opts: dict[str, Any]) -> dict[str, Any]:
    from rfexplain.circuit.compilers import ClassFormulas

    b = build(name, trees, folder)
    elapsed = math.inf
    for _ in range(3):  # best of three: the machine is shared
        start = _clock()
        m, roots = ClassFormulas(b["forest"]).nnf()
        elapsed = min(elapsed, _clock() - start)
    p = PAPER_T1.get(name)
    return {
        "dataset": name,
        "#F": b["features"],
        "#C": b["classes"],
        "#I": b["test"],
        "#T": trees,
        "D": 4,
        "#N_RF": b["nodes"],
        "%A": b["accuracy"],
        "paper_%A": p[1] if p else None,
        "#N_NNF": m.size(list(roots.values()))[0],
        "paper_#N_NNF": p[2] if p else None,
        "T_NNF": elapsed,
        "paper_T_NNF": p[3] if p else None,
    }


def run_table2(name: str, trees: int, folder: Path, opts: dict[str, Any]) -> dict[str, Any]:
    from rfexplain.circuit.compilers import ClassFormulas

    b = build(name, trees, folder)
    forest = b["forest"]
    n3, t3, n3b, t3b = [], [], [], []
    for c in range(forest.n_classes):
        _note(f"Algorithm 3 class {c + 1}/{forest.n_classes}")
        start = _clock()
        m, roots = ClassFormulas(forest).nnf(classes=[c])
        t3.append(_clock() - start)
        n3.append(m.size(roots[c])[0])
    cf = _formulas(forest, opts)
    _heap_set_aside()
    for c in range(forest.n_classes):
        _note(f"3B class {c + 1}/{forest.n_classes}", cf.dg)
        start = _clock()
        parts = cf.dg_3b(c)
        _paying_gc_debt()
        t3b.append(_clock() - start)
        n3b.append(sum(cf.dg.size(r) for r in parts) if parts else 1)
    p = PAPER_T2.get(name)
    return {
        "dataset": name,
        "#T": trees,
        "#N_RF": b["nodes"],
        "%A": b["accuracy"],
        "paper_%A": p[1] if p else None,
        "#N_3": _mean(n3),
        "paper_#N_3": p[2] if p else None,
        "T_3": _mean(t3),
        "paper_T_3": p[3] if p else None,
        "#N_3B": _mean(n3b),
        "paper_#N_3B": p[4] if p else None,
        "T_3B": _mean(t3b),
        "paper_T_3B": p[5] if p else None,
        "T_3B_total": sum(t3b),
        "method": opts.get("method", "count"),
        "order": opts.get("order", "depth"),
        "core": opts.get("core", "compact"),
    }


def _instances(b: dict[str, Any], limit: int) -> list:
    from rfexplain.engines.base import Instance

    return [Instance.of(b["forest"], x) for x in b["X_test"][:limit]]


def run_table3(name: str, trees: int, folder: Path, opts: dict[str, Any]) -> dict[str, Any]:
    from rfexplain.circuit.compilers.nnf import NNFManager
    from rfexplain.circuit.engine import CircuitEngine
    from rfexplain.circuit.logic import (
        complete_reason,
        general_reason,
        prime_implicants,
        prime_implicates,
        robustness,
        shortest_general_necessary_reasons,
    )
    from rfexplain.circuit.logic.flips import one_set_at_a_time
    from rfexplain.core.budget import Budget, BudgetExpired

    b = build(name, trees, folder)
    forest = b["forest"]
    engine = CircuitEngine(
        forest, method=opts.get("method", "count"), order=opts.get("order", "depth"), core=opts.get("core", "compact")
    )
    _heap_set_aside()
    start = _clock()
    for c in range(forest.n_classes):
        _note(f"3B class {c + 1}/{forest.n_classes}", engine.formulas.dg)
        engine.class_formula(c)
        _paying_gc_debt()
    compile_time = _clock() - start
    rows: dict[str, list] = {k: [] for k in ("tcr", "tsr", "csr", "tnr", "cnr", "r", "tsgnr", "csgnr")}
    timeouts = {"sr": 0, "nr": 0, "sgnr": 0}
    per = opts["per_instance"]

    def timed(kind: str, run: Any) -> None:
        """Time one enumeration into ``rows['t'+kind]`` and count it, or count its timeout."""
        t0 = _clock()
        try:
            found = run()
        except BudgetExpired:
            timeouts[kind] += 1
        else:
            rows["t" + kind].append(_clock() - t0)
            rows["c" + kind].append(len(found))

    def summary(done: int) -> dict[str, Any]:
        return _table3_row(name, trees, b, compile_time, rows, timeouts, done)

    for k, inst in enumerate(_instances(b, opts["instances"])):
        _note(f"instance {k + 1}")
        dg = engine.formulas.dg
        parts = engine.class_formula(inst.prediction)
        nnf = NNFManager(forest.states_per_feature)
        t0 = _clock()
        cr = complete_reason(dg, parts, inst.states, nnf)
        general_reason(dg, parts, inst.states, nnf)  # timed for the T_CR+GR column only
        rows["tcr"].append(_clock() - t0)
        timed("sr", lambda: prime_implicants(nnf, cr, Budget(timeout=per)))
        timed("nr", lambda: prime_implicates(nnf, cr, Budget(timeout=per)))

        def shortest_flips() -> list:
            r, V = robustness(nnf, cr)
            if r == math.inf:
                return []
            rows["r"].append(r)

            # Algorithm 6 only sees the general reason's literals on each v_i's features
            def on(vi: int) -> int:
                return general_reason(dg, parts, inst.states, nnf, variables=vi)

            return one_set_at_a_time(shortest_general_necessary_reasons, nnf, on, V, Budget(timeout=per))

        timed("sgnr", shortest_flips)
        _progress["row"] = summary(k + 1)
    return summary(len(rows["tcr"]))


def _table3_row(
    name: str,
    trees: int,
    b: dict[str, Any],
    compile_time: float,
    rows: dict[str, list],
    timeouts: dict[str, int],
    done: int,
) -> dict[str, Any]:
    p = PAPER_T3.get(name)
    q = PAPER_T2.get(name)
    return {
        "dataset": name,
        "#T": trees,
        "#N_RF": b["nodes"],
        "%A": b["accuracy"],
        "paper_%A": q[1] if q else None,
        "instances": done,
        "T_compile": compile_time,
        "T_CR+GR": _mean(rows["tcr"]),
        "T_SR": _mean(rows["tsr"]),
        "paper_T_SR": p[0] if p else None,
        "#C_SR": _mean(rows["csr"]),
        "paper_#C_SR": p[1] if p else None,
        "T_NR": _mean(rows["tnr"]),
        "paper_T_NR": p[2] if p else None,
        "#C_NR": _mean(rows["cnr"]),
        "paper_#C_NR": p[3] if p else None,
        "r": _mean(rows["r"]),
        "paper_r": p[4] if p else None,
        "T_sGNR": _mean(rows["tsgnr"]),
        "paper_T_sGNR": p[5] if p else None,
        "#C_sGNR": _mean(rows["csgnr"]),
        "paper_#C_sGNR": p[6] if p else None,
        "timeouts": "" if not any(timeouts.values()) else str(timeouts),
    }


def run_table4(name: str, trees: int, folder: Path, opts: dict[str, Any]) -> dict[str, Any]:
    from rfexplain.circuit.compilers.nnf import NNFManager
    from rfexplain.circuit.logic import complete_reason, prime_implicates
    from rfexplain.core.budget import Budget, BudgetExpired

    b = build(name, trees, folder)
    forest = b["forest"]
    cf = _formulas(forest, opts)
    _heap_set_aside()
    t3b, t3a, n3b, n3a = [], [], [], []
    for c in range(forest.n_classes):
        _note(f"3B and 3A class {c + 1}/{forest.n_classes}", cf.dg)
        start = _clock()
        parts = cf.dg_3b(c)
        _paying_gc_debt()
        t3b.append(_clock() - start)
        n3b.append(sum(cf.dg.size(r) for r in parts) if parts else 1)
        start = _clock()
        root = cf.dg_3a(c)
        _paying_gc_debt()
        t3a.append(_clock() - start)
        n3a.append(cf.dg.size(root))
    tcr, tnr, cnr, tce, cce = [], [], [], [], []
    timeouts = 0
    per = opts["per_instance"]

    def summary(done: int) -> dict[str, Any]:
        p = PAPER_T4.get(name)
        return {
            "dataset": name,
            "#T": trees,
            "%A": b["accuracy"],
            "instances": done,
            "T_3B": _mean(t3b),
            "paper_T_3B": p[0] if p else None,
            "T_3A-3B": _mean(t3a),
            "paper_T_3A-3B": p[1] if p else None,
            "#N_3B": _mean(n3b),
            "paper_#N_3B": p[2] if p else None,
            "#N_3A": _mean(n3a),
            "paper_#N_3A": p[3] if p else None,
            "T_CR": _mean(tcr),
            "T_NR": _mean(tnr),
            "paper_T_NR": p[4] if p else None,
            "#C_NR": _mean(cnr),
            "paper_#C_NR": p[5] if p else None,
            "T_CE": _mean(tce),
            "paper_T_CE": p[6] if p else None,
            "#C_CE": _mean(cce),
            "paper_#C_CE": p[7] if p else None,
            "timeouts": timeouts or "",
        }

    for k, inst in enumerate(_instances(b, opts["instances"])):
        _note(f"instance {k + 1}")
        nnf = NNFManager(forest.states_per_feature)
        t0 = _clock()
        cr = complete_reason(cf.dg, cf.dg_3b(inst.prediction), inst.states, nnf)
        tcr.append(_clock() - t0)
        t0 = _clock()
        try:
            nrs = prime_implicates(nnf, cr, Budget(timeout=per))
        except BudgetExpired:
            timeouts += 1
        else:
            tnr.append(_clock() - t0)
            cnr.append(len(nrs))
        for t in range(forest.n_classes):
            if t == inst.prediction:
                continue
            nnf2 = NNFManager(forest.states_per_feature)
            why_not = complete_reason(cf.dg, [cf.dg_3a(t)], inst.states, nnf2, negated=True)
            t0 = _clock()
            try:
                ces = prime_implicates(nnf2, why_not, Budget(timeout=per))
            except BudgetExpired:
                timeouts += 1
            else:
                tce.append(_clock() - t0)
                cce.append(len(ces))
        _progress["row"] = summary(k + 1)
    return summary(len(tcr))


#: a few minutes in --quick mode (multi-class ones included for Table 4)
QUICK_DATASETS = ("iris", "banknote", "threeOf9", "glass2", "new-thyroid", "ecoli")

TABLES = {
    "table1": (run_table1, PAPER_T1),
    "table2": (run_table2, PAPER_T2),
    "table3": (run_table3, PAPER_T2),
    "table4": (run_table4, PAPER_T4),
}


def _worker(queue: Any, table: str, name: str, trees: int, folder: str, opts: dict[str, Any]) -> None:
    import threading

    def report() -> None:
        while True:
            time.sleep(2.0)
            queue.put(("progress", (_snapshot(), _progress.get("row"), time.process_time())))

    threading.Thread(target=report, daemon=True).start()
    if opts.get("core", "compact") == "compact":
        from rfexplain.circuit.compilers.dd_core import warm_up

        warm_up()  # once per process, like the imports: not part of any compile time
    try:
        row = TABLES[table][0](name, trees, Path(folder), opts)
        row["peak_rss_gb"] = _peak_rss_gb()
        queue.put(("ok", row))
    except (Exception, MemoryError) as exc:  # reported in the row, the other datasets still run
        where = _snapshot()
        _progress.clear()  # free the graphs before reporting
        queue.put(("error", f"{type(exc).__name__}: {exc} during {where} (peak RSS {_peak_rss_gb()} GB)"))


def _peak_rss_gb() -> float:
    """The largest resident memory this process (libraries, data and every graph) has had, in GB."""
    return round(peak_rss_bytes() / 2**30, 2)


def run_dataset(table: str, name: str, trees: int, folder: Path, opts: dict[str, Any]) -> dict[str, Any]:
    """One dataset in a child process, stopped once it has used ``opts['timeout']`` CPU seconds
    (or three times that in wall-clock time: the machine may be shared); a stopped dataset is
    reported with the instances done so far and the phase and graph size it had reached."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_worker, args=(queue, table, name, trees, str(folder), opts))
    started = time.perf_counter()
    proc.start()
    status, payload, progress, partial = "timeout", None, "starting", None
    while True:
        left = 3 * opts["timeout"] - (time.perf_counter() - started)
        try:
            status, payload = queue.get(timeout=max(left, 0.01))
        except Exception:
            status, payload = "timeout", None
        if status != "progress":
            break
        progress, partial, cpu = payload
        if cpu > opts["timeout"]:
            status = "timeout"
            break
        if not proc.is_alive() and queue.empty():
            status, payload = "error", "the process died (out of memory?)"
            break
    if status == "timeout":
        payload = f"stopped at the {opts['timeout']:.0f} s limit during {progress}"
    proc.kill()
    proc.join()
    if status == "ok":
        payload["wall"] = time.perf_counter() - started
        return payload
    row = dict(partial) if partial else {"dataset": name, "#T": trees}  # the instances done so far
    row.update(status=payload, wall=time.perf_counter() - started)
    return row


def _markdown(table: str, rows: list[dict[str, Any]], args: argparse.Namespace) -> str:
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)

    def cell(v: Any) -> str:
        if v is None:
            return ""
        if isinstance(v, float):
            if v == math.inf:
                return "inf"
            return f"{v:.4f}" if abs(v) < 10 else f"{v:.1f}"
        return str(v).replace("|", "\\|")

    lines = [
        f"# Circuit paper {table.replace('table', 'Table ')} with rfexplain's circuit engine",
        "",
        f"scikit-learn forests, max_depth 4, random_state 0, 85/15 split; up to {args.instances} test "
        f"instances; {'quick run' if args.quick else 'full run'}; per-dataset limit {args.timeout:.0f} CPU seconds. "
        "`paper_*` columns are the paper's figures (WEKA forests, other machine). Times are CPU seconds of the "
        "(single-threaded) process, which is robust to other processes sharing the cores (T_NNF: best of three runs); "
        "`wall` is the dataset's whole wall-clock time including training.",
        "",
        *(
            [
                f"Tree counts overridden with --trees {args.trees}: the `paper_*` columns are the paper's figures "
                "for its own tree counts and are shown for reference only.",
                "",
            ]
            if args.trees
            else []
        ),
        "| " + " | ".join(columns) + " |",
        "|" + "|".join("---" for _ in columns) + "|",
    ]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(c)) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.circuit_tables", description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="*", help="table1..table4 (default: all)")
    parser.add_argument(
        "--quick", action="store_true", help="six datasets, at most 5 trees, 5 instances, 30s per dataset"
    )
    parser.add_argument("--data", default=None, help=DATA_HELP)
    parser.add_argument("--datasets", nargs="+", help=DATASETS_HELP)
    parser.add_argument("--trees", type=int, default=None, help="override the paper's tree counts")
    parser.add_argument("--instances", type=int, default=None, help="test instances explained (default 100)")
    parser.add_argument("--timeout", type=float, default=None, help="CPU seconds per dataset (default 1800)")
    parser.add_argument("--per-instance", type=float, default=60.0, help="seconds per enumeration")
    parser.add_argument("--results-dir", default=None)
    parser.add_argument("--suffix", default="", help="appended to the output file names")
    parser.add_argument(
        "--method",
        default="count",
        choices=["count", "sortnet"],
        help="how 3B builds each vote graph: direct counting (default) or the paper's sorting network",
    )
    parser.add_argument(
        "--order", default="depth", choices=["depth", "trees", "frequency", "index"], help="variable order"
    )
    parser.add_argument(
        "--core", default="compact", choices=["compact", "python"], help="which core counts votes (method count)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="datasets run side by side (CPU times stay per process)")
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    parser.add_argument(
        "--memory-gb",
        type=float,
        default=16.0,
        help="the compilers' memory budget ($RFEXPLAIN_MAX_MEMORY, default 16 GB: Table 2's ann-thyroid row "
        "peaks at 7.08 GiB, past the library's default of a quarter of a 24 GiB machine)",
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("RFEXPLAIN_MAX_MEMORY", str(int(args.memory_gb * 2**30)))
    bad = [t for t in args.tables if t not in TABLES]
    if bad:
        parser.error(f"tables must be among {list(TABLES)}. Got {bad} instead.")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args.instances = args.instances if args.instances is not None else (5 if args.quick else 100)
    args.timeout = args.timeout if args.timeout is not None else (30.0 if args.quick else 1800.0)
    folder = data_dir(args.data)
    if not folder.is_dir():
        try:
            from experiments._common import Skip
        except ImportError:  # pragma: no cover
            Skip = RuntimeError  # type: ignore[misc,assignment]
        raise Skip(f"the data folder {folder} (--data or $RFEXPLAIN_DATA) does not exist")
    out = results_dir(args.results_dir)
    resume = {"quick": args.quick, "options": vars(args), "resume": args.resume, "directory": out}
    with checkpoint("circuit_tables", suffix=args.suffix, **resume) as done:  # each table's dataset a unit
        for table in args.tables or list(TABLES):
            _table(table, args, folder, out, done)
    return 0


def _table(table: str, args: argparse.Namespace, folder: Path, out: Path, done: Checkpoint) -> None:
    """Run one table on its datasets (side by side with ``--jobs``) and write its report."""
    run, paper = TABLES[table]
    if args.datasets:
        names = dataset_names(args.datasets, [])
    elif args.quick:
        names = [n for n in QUICK_DATASETS if n in paper]
    else:
        names = list(paper)
    opts = {
        "instances": args.instances,
        "timeout": args.timeout,
        "per_instance": args.per_instance,
        "method": args.method,
        "order": args.order,
        "core": args.core,
    }

    def one(name: str) -> dict[str, Any]:
        counts = PAPER_T1 if table == "table1" else PAPER_T2  # Tables 2-4 share their tree counts
        trees = args.trees or counts.get(name, (10,))[0]
        if args.quick:
            trees = min(trees, 5)
        print(f"[{table}] {name} ({trees} trees) ...", file=sys.stderr, flush=True)
        row = done.unit((table, name), partial(run_dataset, table, name, trees, folder, opts))
        print(f"[{table}] {name}: {row.get('status', 'ok')} in {row['wall']:.1f}s", file=sys.stderr, flush=True)
        return row

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(one, names))
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    paths = write_report(
        f"circuit_{table}",
        rows,
        _markdown(table, rows, args),
        quick=args.quick,
        options=vars(args),
        seed=SEED,
        suffix=args.suffix,
        directory=out,
        columns=columns,
    )
    print(f"[{table}] wrote {paths['md']}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
