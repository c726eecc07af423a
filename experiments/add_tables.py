"""The knowledge-compilation comparators measured here: ADD aggregation (Gossen and Steffen, 2021 [GS21]) and SDDs.

    python -m experiments.add_tables table1|evaluation|outcomes [--quick] [--data DIR] [--datasets a,b]
        [--trees 10,100,1000,10000] [--timeout SECONDS] [--depth D]

- ``table1``: Table 1 of Ji and Darwiche (2026) [JD26] with its ADD columns *measured
  here* (#N_ADD, T_ADD: our reduced majority-vote ADD and the time to aggregate it, beside the
  paper's figures from its reference [32]), the symbolic (unreduced) majority-vote ADD where it
  fits, the SDD class formulas (decision nodes, size, time), and the SDD equivalence check of the
  circuit engine's Algorithm 3 (NNF) and 3B class formulas. Forests as in
  ``experiments.circuit_tables``: scikit-learn ``RandomForestClassifier(n_estimators=#T,
  max_depth=4, random_state=0)`` on an 85/15 split (``random_state=0``).
- ``evaluation``: the Sect. 9 experiment of Gossen and Steffen (2021) [GS21]: for iris and other datasets, forests of
  10, 100, 1,000 and 10,000 trees (``max_depth`` ``--depth``, default unlimited as the paper's
  WEKA forests; all rows used for training and evaluation, as the paper averages over the whole
  dataset): sizes of the forest, the class-vector ADD, the symbolic majority-vote ADD, the reduced
  majority-vote ADD; evaluation cost per instance in steps (paper's measure) and wall time, for
  the forest, scikit-learn's ``predict`` and the compiled ADD; plots against the number of trees.
- ``outcomes``: the paper's outcome explanations (Sect. 8) of test rows, checked sufficient by the
  SAT engine and compared with sufficient reasons (subset-minimality, size of a shortest one).

Every (dataset, size) runs in its own process with a wall-clock limit; a run over its limit or its
node budget is reported as such. Results go to ``experiments/results/add_<table>[_quick].{csv,md}``
(and ``.png`` plots when matplotlib is installed). The data folder is ``--data``, else
``$RFEXPLAIN_DATA``, else the benchmark suite shipped with the package.
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing as mp
import queue
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from experiments._common import (
    DATA_HELP,
    DATASETS_HELP,
    Skip,
    data_dir,
    dataset_names,
    line_plot,
    markdown_table,
    peak_rss_bytes,
    results_stem,
    write_report,
)
from experiments._resume import RESUME_HELP, Checkpoint, checkpoint

log = logging.getLogger("experiments.add_tables")

ROOT = Path(__file__).resolve().parent.parent
#: The seed of every forest and split of these tables.
SEED = 0

# Circuit paper Table 1: name -> (#T, #N_ADD, T_ADD) (their ADD columns, taken from [32])
PAPER_ADD = {
    "ann-thyroid": (25, 210832, 46.40),
    "appendicitis": (50, 1118961, 444.73),
    "banknote": (100, 57066, 64.39),
    "ecoli": (100, 1109022, 3296.77),
    "glass2": (25, 420024, 39.84),
    "ionosphere": (15, 264003, 689.35),
    "iris": (100, 1802, 2.58),
    "magic": (25, 628529, 77.61),
    "mofn-3-7-10": (100, 15, 0.16),
    "new-thyroid": (100, 94747, 149.06),
    "phoneme": (100, 1410646, 1788.00),
    "ring": (25, 190706, 150.60),
    "segmentation": (15, 9216490, 1630.89),
    "shuttle": (50, 477618, 324.88),
    "threeOf9": (100, 3, 0.12),
    "twonorm": (15, 9286188, 2246.47),
    "waveform-21": (15, 33892041, 593.29),
    "wine-recog": (25, 9124186, 2544.07),
    "xd6": (100, 46, 0.22),
}
QUICK_TABLE1 = ("iris", "mofn-3-7-10", "threeOf9", "xd6", "banknote")
EVALUATION_DATASETS = ("iris", "banknote", "new-thyroid", "threeOf9", "mofn-3-7-10")
QUICK_EVALUATION = ("iris", "threeOf9", "new-thyroid")
OUTCOME_DATASETS = ("iris", "new-thyroid", "xd6", "mofn-3-7-10", "appendicitis", "banknote")
OUTCOME_TREES = {"iris": 100, "new-thyroid": 25, "xd6": 100, "mofn-3-7-10": 100, "appendicitis": 10, "banknote": 25}


def _train(data: Any, folder: Path, trees: int, **options: Any) -> Any:
    """The forest of one table row: ``data`` a name or a Dataset (seed 0; see
    :func:`rfexplain.datasets.train_forest`)."""
    from rfexplain import datasets

    # vote="hard": the papers' semantics, so the reproduced tables stay comparable
    return datasets.train_forest(data, trees=trees, seed=SEED, data_dir=folder, vote="hard", **options)


def _phase(row: dict[str, Any], key: str, fn: Callable[[], Any]) -> Any:
    """Run one measured phase; record ``timeout`` / ``too large`` / the error instead of failing."""
    from rfexplain.comparators.add import ADDTooLargeError
    from rfexplain.core.budget import BudgetExpired

    try:
        return fn()
    except BudgetExpired:
        row[key] = "timeout"
    except (ADDTooLargeError, MemoryError):
        row[key] = "too large"
    return None


# ---------------------------------------------------------------------- table 1
def run_table1(name: str, folder: Path, opts: dict[str, Any]) -> dict[str, Any]:
    from rfexplain.comparators.add import aggregate
    from rfexplain.comparators.sdd import SDDForest, equivalent

    trees = opts.get("trees") or PAPER_ADD[name][0]
    trained = _train(name, folder, trees, depth=4, test_size=0.15)
    X, forest, Xte, yte = trained.data.X, trained.forest, trained.X_test, trained.y_test
    paper = PAPER_ADD.get(name, (None, None, None))
    row: dict[str, Any] = {
        "dataset": name,
        "#F": X.shape[1],
        "#C": forest.n_classes,
        "#T": trees,
        "D": 4,
        "#N_RF": sum(t.n_nodes for t in forest.trees),
        "%A": float((forest.predict(Xte) == yte).mean() * 100),
        "paper_#N_ADD": paper[1],
        "paper_T_ADD": paper[2],
    }
    limit = opts["phase_limit"]

    def reduced() -> None:
        rss_before = peak_rss_bytes()
        start, cpu = time.perf_counter(), time.process_time()
        agg = aggregate(forest, timeout=limit, max_nodes=opts["max_nodes"], keep_class_vector=False, core=opts["core"])
        row["T_ADD"] = time.perf_counter() - start
        row["T_ADD_cpu"] = time.process_time() - cpu
        if isinstance(row["paper_T_ADD"], float):
            row["T_ADD<=paper"] = row["T_ADD"] <= row["paper_T_ADD"]
        stats = agg.stats()
        row["#N_ADD"] = stats["majority_nodes"]
        row["#N_ADD_vector"] = stats["class_vector_nodes"]
        row["peak_nodes"] = stats.get("peak_store_nodes")
        if row["peak_nodes"]:
            row["rss_B/node"] = round((peak_rss_bytes() - rss_before) / row["peak_nodes"])
        from rfexplain.comparators.add_explain import CompiledADD

        row["ADD=forest on test rows"] = bool((CompiledADD.of(agg).predict(Xte) == forest.predict(Xte)).all())

    def early() -> None:
        start, cpu = time.perf_counter(), time.process_time()
        agg = aggregate(forest, timeout=limit, max_nodes=opts["max_nodes"], keep_class_vector=False, decide_early=True)
        row["T_ADD_early"] = time.perf_counter() - start
        row["T_ADD_early_cpu"] = time.process_time() - cpu
        row["peak_nodes_early"] = agg.stats()["peak_store_nodes"]
        row["same_ADD_early"] = agg.stats()["majority_nodes"] == row.get("#N_ADD")

    def symbolic() -> None:
        start = time.perf_counter()
        agg = aggregate(
            forest, reduce=False, timeout=limit, max_nodes=opts["max_nodes"], keep_class_vector=False, core=opts["core"]
        )
        row["T_ADD_sym"] = time.perf_counter() - start
        row["#N_ADD_sym"] = agg.stats()["majority_nodes"]

    state: dict[str, Any] = {}

    def sdd() -> None:
        start = time.perf_counter()
        s = SDDForest(forest, timeout=limit)
        nodes = s.class_formulas()
        row["T_SDD"] = time.perf_counter() - start
        row["#N_SDD"] = s.node_count(nodes)
        row["size_SDD"] = s.size(nodes)
        counts = s.counts()
        row["counts_sum_ok"] = sum(counts) == _prod(forest.states_per_feature)
        state["sdd"] = s

    def equiv(compiler: str) -> Callable[[], None]:
        def run() -> None:
            from rfexplain.circuit.compilers.classformula import ClassFormulas

            s = state["sdd"]
            start = time.perf_counter()  # a fresh limit for the conversion:
            row[f"equiv_{compiler}"] = equivalent(
                forest, ClassFormulas(forest), compiler=compiler, sdd=s, timeout=limit
            )
            row[f"T_equiv_{compiler}"] = time.perf_counter() - start

        return run

    _phase(row, "#N_ADD", reduced)
    if opts.get("early"):
        _phase(row, "T_ADD_early", early)
    if opts.get("adds_only"):
        return row
    if not opts.get("skip_symbolic"):
        _phase(row, "#N_ADD_sym", symbolic)
    _phase(row, "#N_SDD", sdd)
    if "sdd" in state:
        _phase(row, "equiv_nnf", equiv("nnf"))
        if not opts.get("quick"):
            _phase(row, "equiv_3B", equiv("3B"))
    return row


def _prod(values: Any) -> int:
    out = 1
    for v in values:
        out *= int(v)
    return out


# ---------------------------------------------------------------------- evaluation ([GS21], Sect. 9)
def run_evaluation(name: str, folder: Path, opts: dict[str, Any]) -> dict[str, Any]:
    from rfexplain import datasets
    from rfexplain.comparators.add import aggregate
    from rfexplain.comparators.add_explain import CompiledADD, forest_steps

    trees = opts["trees"]
    data = datasets.load(name, folder)
    X = data.X
    start = time.perf_counter()
    trained = _train(data, folder, trees, depth=opts.get("depth"), n_jobs=1)
    model, forest = trained.model, trained.forest
    row: dict[str, Any] = {
        "dataset": name,
        "#T": trees,
        "#F": X.shape[1],
        "#C": forest.n_classes,
        "rows": len(X),
        "forest_nodes": sum(t.n_nodes for t in forest.trees),
        "thresholds": sum(len(t) for t in forest.thresholds),
        "T_train": time.perf_counter() - start,
    }
    S = forest.states(X)
    reps = max(1, min(20, 200_000 // max(1, trees * len(X))))
    row["steps_forest"] = float(forest_steps(forest, S).mean())
    row["us_sklearn"] = _per_instance(lambda: model.predict(X.astype(np.float32)), len(X), reps)
    row["us_forest"] = _per_instance(lambda: forest.predict(X), len(X), reps)
    limit = opts["phase_limit"]

    def reduced() -> None:
        t0 = time.perf_counter()
        agg = aggregate(forest, timeout=limit, max_nodes=opts["max_nodes"], core=opts["core"])
        row["T_ADD"] = time.perf_counter() - t0
        stats = agg.stats()
        row["class_vector_nodes"] = stats["class_vector_nodes"]
        row["reduced_nodes"] = stats["majority_nodes"]
        row["reduced_depth"] = stats["majority_depth"]
        vec = CompiledVector(agg)
        row["steps_class_vector"] = float(vec.steps(S).mean()) + forest.n_classes
        agg.class_vector = None
        compiled = CompiledADD.of(agg)
        values, steps = compiled.predict_index(X, return_steps=True)
        row["ADD=forest on every row"] = bool((values == forest.predict_index(X)).all())
        row["steps_ADD"] = float(steps.mean())
        row["us_ADD"] = _per_instance(lambda: compiled.predict(X), len(X), 20)
        one = [X[i : i + 1] for i in range(min(len(X), 50))]
        row["us_ADD_single"] = _per_instance(
            lambda: [agg.predict_states_one(forest.states(x)[0]) for x in one], len(one), 3
        )
        row["us_sklearn_single"] = _per_instance(lambda: [model.predict(x.astype(np.float32)) for x in one[:10]], 10, 1)

    def symbolic() -> None:
        t0 = time.perf_counter()
        agg = aggregate(
            forest,
            reduce=False,
            timeout=limit,
            max_nodes=min(opts["max_nodes"], 2_000_000),
            keep_class_vector=False,
            core=opts["core"],
        )
        row["T_ADD_sym"] = time.perf_counter() - t0
        row["symbolic_nodes"] = agg.stats()["majority_nodes"]
        row["symbolic_vector_nodes"] = agg.stats()["class_vector_nodes"]

    _phase(row, "reduced_nodes", reduced)
    if trees <= opts.get("symbolic_max_trees", 100):
        _phase(row, "symbolic_nodes", symbolic)
    else:
        row["symbolic_nodes"] = "skipped"
    return row


class CompiledVector:
    """Step counts through the class-vector ADD (tests only; its terminals are vectors)."""

    def __init__(self, agg: Any) -> None:
        self.agg = agg

    def steps(self, S: np.ndarray) -> np.ndarray:
        m = self.agg.manager
        root = self.agg.class_vector
        from rfexplain.comparators.add import TERMINAL

        out = np.zeros(len(S), dtype=np.int64)
        for i, z in enumerate(S):
            n, k = root, 0
            while m.level[n] != TERMINAL:
                lv = m.level[n]
                n = m.hi[n] if z[m.vfeature[lv]] <= m.vsplit[lv] else m.lo[n]
                k += 1
            out[i] = k
        return out


def _per_instance(fn: Callable[[], Any], n: int, reps: int) -> float:
    """Microseconds per instance: best of ``reps`` runs of ``fn`` over ``n`` instances."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e6


# ---------------------------------------------------------------------- outcome explanations ([GS21], Sect. 8)
def run_outcomes(name: str, folder: Path, opts: dict[str, Any]) -> dict[str, Any]:
    """Outcome explanations of the test rows, checked and compared with the SAT engine's AXps."""
    from rfexplain.comparators.add import aggregate
    from rfexplain.comparators.add_explain import outcome_explanation
    from rfexplain.core.budget import Budget
    from rfexplain.engines.base import Instance
    from rfexplain.sat.engine import SatEngine
    from rfexplain.sat.search import Search

    trees = opts["trees"]
    trained = _train(name, folder, trees, depth=4, test_size=0.15)
    X, forest, Xte = trained.data.X, trained.forest, trained.X_test
    row: dict[str, Any] = {"dataset": name, "#F": X.shape[1], "#C": forest.n_classes, "#T": trees}
    start = time.perf_counter()
    agg = aggregate(
        forest, timeout=opts["phase_limit"], max_nodes=opts["max_nodes"], keep_class_vector=False, core=opts["core"]
    )
    row["T_ADD"] = time.perf_counter() - start
    row["#N_ADD"] = agg.manager.size(agg.majority)
    engine = SatEngine(forest)
    stats: dict[str, list[float]] = {
        k: [] for k in ("path", "kept", "features", "sufficient", "axp", "shortest", "is_shortest", "t")
    }
    try:
        for x in Xte[: opts.get("instances", 100)]:
            inst = Instance.of(forest, x)
            t0 = time.perf_counter()
            expl = outcome_explanation(agg, inst.states)
            stats["t"].append(time.perf_counter() - t0)
            feats = sorted(expl.features)
            search = Search(engine.oracle("not", inst.prediction), inst.states)
            sufficient = search.has_counterexample(feats) is False
            minimal = sufficient and all(search.has_counterexample([g for g in feats if g != f]) for f in feats)
            shortest = next(iter(engine.shortest_sufficient_reasons(inst, Budget(limit=1, timeout=30))), None)
            stats["path"].append(len(expl.path))
            stats["kept"].append(len(expl.conditions))
            stats["features"].append(len(feats))
            stats["sufficient"].append(float(sufficient))
            stats["axp"].append(float(minimal))
            if shortest is not None:
                stats["shortest"].append(len(shortest.features))
                stats["is_shortest"].append(float(len(feats) == len(shortest.features) and minimal))
    finally:
        engine.close()
    row["#I"] = len(stats["t"])
    for key, label in (
        ("path", "path conditions"),
        ("kept", "kept conditions"),
        ("features", "features"),
        ("shortest", "shortest AXp size"),
    ):
        row[label] = float(np.mean(stats[key])) if stats[key] else None
    row["sufficient (SAT)"] = float(np.mean(stats["sufficient"])) if stats["sufficient"] else None
    row["AXp (subset-minimal)"] = float(np.mean(stats["axp"])) if stats["axp"] else None
    row["a shortest AXp"] = float(np.mean(stats["is_shortest"])) if stats["is_shortest"] else None
    row["ms per explanation"] = float(np.mean(stats["t"]) * 1e3) if stats["t"] else None
    return row


# ---------------------------------------------------------------------- process isolation
def _child(fn: Callable[..., dict[str, Any]], args: tuple, out: Any) -> None:
    logging.basicConfig(level=logging.WARNING)
    try:
        out.put(fn(*args))
    except Exception as exc:  # reported in the table, never hidden
        out.put({"error": f"{type(exc).__name__}: {exc}"})


def _isolated(fn: Callable[..., dict[str, Any]], args: tuple, limit: float, base: dict[str, Any]) -> dict[str, Any]:
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    proc = ctx.Process(target=_child, args=(fn, args, out))
    start = time.perf_counter()
    proc.start()
    try:
        row = out.get(timeout=limit)
    except queue.Empty:
        row = {"error": f"over the {limit:.0f} s limit"}
    proc.join(timeout=5)
    if proc.is_alive():
        proc.kill()
        proc.join()
    return {**base, **row, "wall": time.perf_counter() - start}


# ---------------------------------------------------------------------- main
TABLE1_COLUMNS = [
    "dataset",
    "#F",
    "#C",
    "#T",
    "D",
    "#N_RF",
    "%A",
    "#N_ADD",
    "paper_#N_ADD",
    "T_ADD",
    "T_ADD_cpu",
    "paper_T_ADD",
    "T_ADD<=paper",
    "peak_nodes",
    "rss_B/node",
    "T_ADD_early",
    "T_ADD_early_cpu",
    "peak_nodes_early",
    "same_ADD_early",
    "#N_ADD_sym",
    "T_ADD_sym",
    "#N_SDD",
    "size_SDD",
    "T_SDD",
    "equiv_nnf",
    "T_equiv_nnf",
    "equiv_3B",
    "T_equiv_3B",
    "error",
]
EVAL_COLUMNS = [
    "dataset",
    "#T",
    "thresholds",
    "forest_nodes",
    "class_vector_nodes",
    "symbolic_nodes",
    "reduced_nodes",
    "T_ADD",
    "steps_forest",
    "steps_class_vector",
    "steps_ADD",
    "us_sklearn",
    "us_forest",
    "us_ADD",
    "us_sklearn_single",
    "us_ADD_single",
    "ADD=forest on every row",
    "error",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.add_tables", description=__doc__.split("\n\n")[0])
    parser.add_argument("table", choices=["table1", "evaluation", "outcomes"])
    parser.add_argument("--quick", action="store_true", help="a few datasets and small forests (minutes)")
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--datasets", nargs="+", help=DATASETS_HELP)
    parser.add_argument("--trees", help="table1: one tree count for every dataset; evaluation: comma-separated sizes")
    parser.add_argument(
        "--depth", type=int, default=None, help="evaluation: max_depth of the trees (default unlimited)"
    )
    parser.add_argument("--timeout", type=float, default=None, help="seconds per dataset (and size)")
    parser.add_argument(
        "--max-nodes", type=int, default=None, help="ADD node budget (default: 8M python, 200M compact)"
    )
    parser.add_argument(
        "--core", choices=["compact", "python"], default="compact", help="the ADD core (rfexplain.comparators.add_core)"
    )
    parser.add_argument(
        "--early",
        action="store_true",
        help="table1: also aggregate with early decision (compact core; T_ADD_early, peak_nodes_early)",
    )
    parser.add_argument(
        "--adds-only",
        action="store_true",
        help="table1: only the reduced ADD columns (no symbolic ADD, SDD, equivalence)",
    )
    parser.add_argument("--out", help="results folder (default experiments/results)")
    parser.add_argument("--tag", help="suffix of the result files (e.g. a second pass with a longer --timeout)")
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    args = parser.parse_args(argv)
    if args.max_nodes is None:
        args.max_nodes = 200_000_000 if args.core == "compact" else 8_000_000
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    folder = data_dir(args.data)
    if not folder.is_dir():
        raise Skip(f"the data folder {folder} (--data or $RFEXPLAIN_DATA) does not exist")
    tag = f"_{args.tag}" if args.tag else ""
    run = {"quick": args.quick, "options": vars(args), "seed": SEED, "suffix": tag, "directory": args.out}
    suffix = results_stem("", quick=args.quick, suffix=tag)  # the plots' file names
    if args.core == "compact":
        from rfexplain.comparators.add_core import warm_up

        warm_up()  # once, before the rows fork: loading the compiled loops is not part of any T_ADD
    resume = {"quick": args.quick, "options": vars(args), "resume": args.resume, "directory": args.out}
    with checkpoint(f"add_{args.table}", suffix=tag, **resume) as done:  # each dataset (and size) a unit
        paths = _table(args, folder, run, suffix, done)
    print(f"wrote {paths['md']}")
    return 0


def _table(
    args: argparse.Namespace, folder: Path, run: dict[str, Any], suffix: str, done: Checkpoint
) -> dict[str, Path]:
    """Run ``args.table`` on its datasets, each in a child process, and write its report."""
    if args.table == "table1":
        names = dataset_names(args.datasets, list(QUICK_TABLE1 if args.quick else PAPER_ADD))
        limit = args.timeout or (120.0 if args.quick else 1800.0)
        opts = {
            "quick": args.quick,
            "trees": int(args.trees) if args.trees else None,
            "max_nodes": args.max_nodes,
            "phase_limit": limit if args.adds_only else limit / 5,
            "skip_symbolic": False,
            "adds_only": args.adds_only,
            "early": args.early,
            "core": args.core,
        }
        rows = []
        for name in names:
            row = done.unit((name,), partial(_isolated, run_table1, (name, folder, opts), limit, {"dataset": name}))
            log.info("%s", {k: row.get(k) for k in TABLE1_COLUMNS if k in row})
            rows.append(row)
        text = (
            "# Circuit paper Table 1: ADD columns measured here, SDD class formulas and equivalence\n\n"
            "scikit-learn forests, max_depth 4, random_state 0, 85/15 split (as `experiments.circuit_tables`). "
            "#N_ADD: nodes (terminals included) of our reduced majority-vote ADD, T_ADD: seconds to aggregate it; "
            "`paper_*`: the paper's figures (from its reference [32], other forests and machine). "
            "#N_ADD_sym: the symbolic (no infeasible-path reduction) majority-vote ADD. #N_SDD: decision nodes of "
            "all class formulas as SDDs (order encoding, balanced vtree), size_SDD: their elements, T_SDD: "
            "compile time. equiv_nnf / equiv_3B: the circuit engine's Algorithm 3 / 3B class formulas checked "
            f"equal to the SDD class formulas. T_ADD_cpu: CPU seconds of T_ADD; peak_nodes: the most nodes the "
            "compact ADD store held at once; rss_B/node: growth of the process's peak resident memory over the "
            "aggregation (export into the Python manager included) per peak node. `*_early`: the same with early "
            "decision (`aggregate(decide_early=True)`), same_ADD_early: it gave the same majority-vote ADD. "
            f"ADD core {args.core!r}. Per-phase "
            f"limit {opts['phase_limit']:.0f} s, ADD budget {args.max_nodes:,} nodes.\n\n"
            + markdown_table(rows, TABLE1_COLUMNS)
            + "\n"
        )
        paths = write_report("add_table1", rows, text, **run)
    elif args.table == "outcomes":
        names = dataset_names(args.datasets, list(OUTCOME_DATASETS))
        limit = args.timeout or (120.0 if args.quick else 900.0)
        rows = []
        for name in names:
            opts = {
                "trees": int(args.trees) if args.trees else OUTCOME_TREES.get(name, 25),
                "max_nodes": args.max_nodes,
                "core": args.core,
                "phase_limit": limit / 3,
                "instances": 20 if args.quick else 100,
            }
            row = done.unit((name,), partial(_isolated, run_outcomes, (name, folder, opts), limit, {"dataset": name}))
            log.info("%s", row)
            rows.append(row)
        columns = [
            "dataset",
            "#F",
            "#C",
            "#T",
            "#N_ADD",
            "#I",
            "path conditions",
            "kept conditions",
            "features",
            "sufficient (SAT)",
            "AXp (subset-minimal)",
            "shortest AXp size",
            "a shortest AXp",
            "ms per explanation",
            "error",
        ]
        text = (
            "# ADD paper (003) Sect. 8: outcome explanations against sufficient reasons\n\n"
            "Forests as in table1 (max_depth 4, 85/15 split); test rows explained. For each: conditions on the "
            "row's path in the class BDD, conditions kept after removing redundant ones, and the features they "
            "mention. The SAT engine checks that this feature set is sufficient, whether it is subset-minimal "
            "(an AXp, i.e. a sufficient reason), and compares its size with a shortest AXp. Columns are means "
            "over the rows (fractions for the yes/no checks).\n\n" + markdown_table(rows, columns) + "\n"
        )
        paths = write_report("add_outcomes", rows, text, **run)
    else:
        names = dataset_names(args.datasets, list(QUICK_EVALUATION if args.quick else EVALUATION_DATASETS))
        sizes = (
            [int(s) for s in args.trees.split(",")]
            if args.trees
            else ([10, 100] if args.quick else [10, 100, 1000, 10000])
        )
        limit = args.timeout or (120.0 if args.quick else 2400.0)
        rows = []
        for name in names:
            for trees in sizes:
                opts = {
                    "trees": trees,
                    "depth": args.depth,
                    "max_nodes": args.max_nodes,
                    "phase_limit": limit * 0.8,
                    "core": args.core,
                }
                base = {"dataset": name, "#T": trees}
                row = done.unit((name, trees), partial(_isolated, run_evaluation, (name, folder, opts), limit, base))
                log.info("%s", {k: row.get(k) for k in EVAL_COLUMNS if k in row})
                rows.append(row)
                if "error" in row or row.get("reduced_nodes") in ("timeout", "too large"):
                    break  # larger forests of this dataset will not fit either
        text = (
            "# ADD paper (003) Sect. 9: aggregated forests against the forest and scikit-learn\n\n"
            f"scikit-learn forests (max_depth {args.depth or 'unlimited'}, random_state 0) trained and evaluated on "
            "every row. Sizes in nodes (terminals included): forest (all tree nodes), class-vector ADD and reduced "
            "majority-vote ADD (infeasible-path reduction during aggregation), symbolic majority-vote ADD (no "
            "reduction; up to 100 trees). Steps per instance (the paper's measure): forest = tests on every tree's "
            "path + one per tree for the vote; class-vector ADD = its path + |C|; ADD = its path. Wall time per "
            "instance (µs, batch over all rows, best of several runs): scikit-learn `predict` (soft vote), "
            "`Forest.predict` (vectorised over trees), the compiled ADD (vectorised over rows); `_single`: one "
            "row at a time (scikit-learn `predict` on a 1-row array; the ADD walked in Python).\n\n"
            + markdown_table(rows, EVAL_COLUMNS)
            + "\n"
        )
        paths = write_report("add_evaluation", rows, text, **run)
        _plots(rows, Path(paths["md"]).parent, suffix)
    return paths


def _plots(rows: list[dict[str, Any]], out: Path, suffix: str) -> None:
    def series(key: str) -> dict[str, list[tuple[float, float]]]:
        got: dict[str, list[tuple[float, float]]] = {}
        for r in rows:
            v = r.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                got.setdefault(r["dataset"], []).append((float(r["#T"]), float(v)))
        return got

    sizes: dict[str, list[tuple[float, float]]] = {}
    for key, label in (
        ("forest_nodes", "forest"),
        ("class_vector_nodes", "class-vector ADD"),
        ("symbolic_nodes", "majority ADD (symbolic)"),
        ("reduced_nodes", "majority ADD (reduced)"),
    ):
        for ds, pts in series(key).items():
            sizes[f"{ds}: {label}"] = pts
    line_plot(
        sizes,
        out / f"add_evaluation_sizes{suffix}.png",
        title="Sizes against the number of trees",
        xlabel="trees (log)",
        ylabel="nodes",
        logy=True,
    )
    steps: dict[str, list[tuple[float, float]]] = {}
    for key, label in (
        ("steps_forest", "forest"),
        ("steps_class_vector", "class-vector ADD"),
        ("steps_ADD", "reduced ADD"),
    ):
        for ds, pts in series(key).items():
            steps[f"{ds}: {label}"] = pts
    line_plot(
        steps,
        out / f"add_evaluation_steps{suffix}.png",
        title="Evaluation steps per instance",
        xlabel="trees (log)",
        ylabel="steps",
        logy=True,
    )
    wall: dict[str, list[tuple[float, float]]] = {}
    for key, label in (
        ("us_sklearn", "scikit-learn predict"),
        ("us_forest", "Forest.predict"),
        ("us_ADD", "compiled ADD"),
    ):
        for ds, pts in series(key).items():
            wall[f"{ds}: {label}"] = pts
    line_plot(
        wall,
        out / f"add_evaluation_time{suffix}.png",
        title="Wall time per instance (batch)",
        xlabel="trees (log)",
        ylabel="µs per instance",
        logy=True,
    )
    try:  # log-scale x axes read better; line_plot draws linear x, so redraw when matplotlib exists
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        for name, data, ylabel in (
            ("sizes", sizes, "nodes"),
            ("steps", steps, "steps per instance"),
            ("time", wall, "µs per instance"),
        ):
            fig, ax = plt.subplots(figsize=(7, 4.5))
            for label, pts in sorted(data.items()):
                pts = sorted(pts)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("number of trees")
            ax.set_ylabel(ylabel)
            ax.legend(fontsize="x-small", ncol=2)
            fig.tight_layout()
            fig.savefig(out / f"add_evaluation_{name}{suffix}.png", dpi=110)
            plt.close(fig)
    except ImportError:
        pass


if __name__ == "__main__":
    sys.exit(main())
