"""rfexplain's SAT engine against RFxpl, one AXp per instance, on the same forests and instances.

``python -m experiments peers_rfxpl [--quick]``. RFxpl (Izza and Marques-Silva, 2021; the SAT
paper's own explainer, public on GitHub as ``izzayacine/RFxpl``) is a benchmark peer only, never
a dependency: a snapshot of its source and its own virtual environment live beside the checkout::

    ../rfxpl-src    its source (the ``xrf`` package and ``data.py``)
    ../rfxpl-venv   python-sat, scikit-learn (our version), numpy, anytree, namedlist, six, pindakaas,
                    and a sitecustomize.py aliasing collections.Mapping/MutableMapping/Sequence to
                    collections.abc (namedlist needs them; Python >= 3.10 removed them)

(``--rfxpl-python``/``$RFXPL_PYTHON`` and ``--rfxpl-src``/``$RFXPL_SRC`` point elsewhere; without
them the benchmark is skipped.) RFxpl explains scikit-learn forests as they are, so both sides
read the same pickled ``RandomForestClassifier``: the SAT paper's settings (100 trees, its depth
for each dataset, entropy, 80/20 split with seed 0, as ``sat_table1``) and the paper's sample
instances. Each side runs in a child process (:mod:`experiments.rfxpl_worker`,
:mod:`experiments.rfexplain_worker`) killed past the per-instance limit.

Timed as RFxpl's command line works: for RFxpl, a fresh encoding of the forest for the instance
plus the AXp; for us, one engine per forest, so the first instance of each predicted class pays
the one-time encoding (reported apart: ``first``) and the others only the AXp (``rest``). Times are
CPU seconds of the child (the machine may be shared; wall seconds are in the CSV). Content: both
sides' decisions must agree, and every RFxpl AXp is checked with our engine (sufficient and
subset-minimal).
"""

from __future__ import annotations

import argparse
import logging
import pickle
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from experiments._common import (
    DATA_HELP,
    DATASETS_HELP,
    Skip,
    data_dir,
    dataset_names,
    markdown_table,
    write_report,
)
from experiments._workers import JsonWorker, Peer, PeerSetup, WorkerFailed

log = logging.getLogger("experiments.peers_rfxpl")

NAME = "peers_rfxpl"
HERE = Path(__file__).resolve().parent
RFXPL_WORKER = HERE / "rfxpl_worker.py"
OURS_WORKER = HERE / "rfexplain_worker.py"
QUICK: dict[str, Any] = {"datasets": ["iris", "banknote", "ecoli"], "instances": 5, "limit": 60.0}
FULL: dict[str, Any] = {"datasets": None, "instances": 15, "limit": 120.0}  # None: every Table 1 dataset
#: Wall seconds per side and dataset; then its other instances are skipped (never reached at paper settings).
BUDGET = 1800.0


# ---------------------------------------------------------------------- locating RFxpl
SETUP = PeerSetup("RFxpl", env="RFXPL", folder="rfxpl", marker="xrf/__init__.py")
Rfxpl = Peer


def find_rfxpl(python: str | None, source: str | None) -> Rfxpl | None:
    """RFxpl's interpreter and source folder, or None when either is missing."""
    return SETUP.find(python, source)


def rfxpl_version(rfxpl: Rfxpl) -> str:
    """The snapshot's commit as written in its ``COMMIT`` file (see experiments/README.md), or "snapshot"."""
    return rfxpl.version()


def require_rfxpl(python: str | None, source: str | None) -> Rfxpl:
    return SETUP.require(python, source)


# ---------------------------------------------------------------------- one forest, both sides
def _cell(answer: dict[str, Any], key: str) -> Any:
    return answer.get(key) if answer.get("ok") else None


def side_by_side(
    model: Any,
    X: np.ndarray,
    ids: Sequence[int],
    base: dict[str, Any],
    *,
    rfxpl: Rfxpl | None,
    limit: float,
    workdir: Path,
    card: str | None = None,
    give_up_after: int = 3,
    budget: float | None = None,
) -> list[dict[str, Any]]:
    """One row per instance and side (``rfexplain``, ``rfxpl``) for one pickled forest.

    A side that is killed at ``limit`` (or dies) on ``give_up_after`` instances in a row, cannot
    load the forest at all, or has spent ``budget`` wall seconds on this forest, stops there (its
    remaining instances are reported ``skipped``; the checks of RFxpl's AXps have a ``budget`` of
    their own), so that a full run stays bounded.
    """
    bundle = workdir / "model.pkl"
    bundle.write_bytes(pickle.dumps(model))
    X = np.asarray(X, dtype=np.float32)
    rows: list[dict[str, Any]] = []
    ours = JsonWorker(
        [sys.executable, str(OURS_WORKER), str(bundle)] + ([card] if card else []), log=workdir / "rfexplain.log"
    )
    with ours:
        ours_rows = run_side(ours, "rfexplain", X, ids, base, limit, give_up_after, budget)
        rows += ours_rows
        if rfxpl is not None:
            peer = JsonWorker(
                [str(rfxpl.python), str(RFXPL_WORKER), str(rfxpl.source), str(bundle)],
                log=workdir / "rfxpl.log",
                cwd=workdir,
            )
            with peer:
                peer_rows = run_side(peer, "rfxpl", X, ids, base, limit, give_up_after, budget)
            rows += peer_rows
            check_peer_axps(ours, peer_rows, ours_rows, X, limit, budget)
    return rows


def check_peer_axps(
    ours: JsonWorker,
    peer_rows: Sequence[dict[str, Any]],
    ours_rows: Sequence[dict[str, Any]],
    X: np.ndarray,
    limit: float,
    budget: float | None,
) -> None:
    """Fill each solved peer row's ``same_decision`` (against ours) and ``checked_sufficient`` /
    ``checked_minimal`` (its AXp checked by our worker ``ours``), within ``budget`` wall seconds."""
    started = time.monotonic()
    for row, ours_row, x in zip(peer_rows, ours_rows, X):
        if row["status"] != "ok":
            continue
        if ours_row["prediction"] is not None:
            row["same_decision"] = row["prediction"] == ours_row["prediction"]
        if budget is not None and time.monotonic() - started > budget:
            continue  # unchecked: left empty
        try:
            verdict = ours.ask({"x": [float(v) for v in x], "check": row["features"]}, limit)
        except WorkerFailed as exc:
            verdict = {"ok": False, "error": str(exc)}
        row["checked_sufficient"] = _cell(verdict, "sufficient")
        row["checked_minimal"] = None if not verdict.get("ok") else not verdict["redundant"]


def run_side(
    worker: JsonWorker,
    solver: str,
    X: np.ndarray,
    ids: Sequence[int],
    base: dict[str, Any],
    limit: float,
    give_up_after: int,
    budget: float | None,
    extra: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """One row per instance of ``X`` as ``worker`` answers it (``side_by_side``'s stopping rules);
    the answer's ``extra`` keys are copied into the row."""
    rows: list[dict[str, Any]] = []
    lost_in_row = 0  # instances killed at the limit or lost with a dead child, in a row
    load: dict[str, Any] = {}
    started = time.monotonic()
    for x, index in zip(X, ids):
        row: dict[str, Any] = {**base, "solver": solver, "instance": index}
        if lost_in_row >= give_up_after or (budget is not None and time.monotonic() - started > budget):
            rows.append({**row, "status": "skipped"})
            continue
        try:
            load = load or worker.start()
            answer = worker.ask({"x": [float(v) for v in x]}, limit)
        except WorkerFailed as exc:
            log.warning("%s %s: %s", solver, base, exc)
            answer = {"ok": False, "status": "failed", "error": str(exc)}
            lost_in_row = give_up_after  # it cannot load this forest: no retry per instance
        else:
            lost_in_row = lost_in_row + 1 if answer["status"] in ("killed", "died") else 0
        if answer.get("ok") and "cpu" not in answer:  # RFxpl's: its encoding and its AXp apart
            answer["cpu"] = answer["encode_cpu"] + answer["explain_cpu"]
            answer["wall"] = answer["encode_wall"] + answer["explain_wall"]
            answer["first"] = None
        features = _cell(answer, "features")
        rows.append(
            {
                **row,
                "status": answer["status"],
                "cpu": _cell(answer, "cpu"),
                "wall": answer.get("wall"),
                "encode_cpu": _cell(answer, "encode_cpu"),
                "first": _cell(answer, "first"),
                "size": None if features is None else len(features),
                "features": features,
                "prediction": _cell(answer, "prediction"),
                "cpu_at_kill": answer.get("cpu_at_kill"),
                "load_cpu": load.get("load_cpu"),
                "load_wall": load.get("load_wall"),
                "error": answer.get("error"),
                **{key: _cell(answer, key) for key in extra},
            }
        )
        log.info("%s %s #%s: %s cpu %s", solver, base.get("dataset"), index, answer["status"], _fmt(rows[-1]["cpu"]))
    return rows


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


# ---------------------------------------------------------------------- summaries
def _mean(values: Sequence[float]) -> float | None:
    return float(statistics.fmean(values)) if values else None


def summarise(rows: Sequence[dict[str, Any]], keys: Sequence[str], peer: str = "rfxpl") -> list[dict[str, Any]]:
    """One row per forest (``keys``): ours first / rest / all, the peer's (its rows' ``solver``,
    ``peer``, which prefixes its columns), ratios, checks."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(k) for k in keys), []).append(row)
    out = []
    for key, group in groups.items():
        ours = [r for r in group if r["solver"] == "rfexplain"]
        peers = [r for r in group if r["solver"] == peer]
        done = [r for r in ours if r["status"] == "ok"]
        peer_done = [r for r in peers if r["status"] == "ok"]
        summary: dict[str, Any] = dict(zip(keys, key))
        summary.update(
            instances=len(ours),
            ours_solved=len(done),
            ours_first_cpu=_mean([r["cpu"] for r in done if r["first"]]),
            ours_rest_cpu=_mean([r["cpu"] for r in done if not r["first"]]),
            ours_mean_cpu=_mean([r["cpu"] for r in done]),
            ours_max_cpu=max((r["cpu"] for r in done), default=None),
            ours_mean_wall=_mean([r["wall"] for r in done]),
            ours_max_wall=max((r["wall"] for r in done), default=None),
            ours_size=_mean([r["size"] for r in done]),
            ours_load_cpu=next((r["load_cpu"] for r in ours if r.get("load_cpu") is not None), None),
        )
        if peers:
            encode = [r["encode_cpu"] for r in peer_done if r.get("encode_cpu") is not None]
            summary.update(
                {
                    f"{peer}_solved": len(peer_done),
                    f"{peer}_mean_cpu": _mean([r["cpu"] for r in peer_done]),
                    f"{peer}_max_cpu": max((r["cpu"] for r in peer_done), default=None),
                    f"{peer}_encode_cpu": _mean(encode),
                    f"{peer}_mean_wall": _mean([r["wall"] for r in peer_done]),
                    f"{peer}_max_wall": max((r["wall"] for r in peer_done), default=None),
                    f"{peer}_size": _mean([r["size"] for r in peer_done]),
                    f"{peer}_load_cpu": next((r["load_cpu"] for r in peers if r.get("load_cpu") is not None), None),
                    "decisions_differ": sum(1 for r in peer_done if r.get("same_decision") is False),
                    f"{peer}_axps_wrong": sum(1 for r in peer_done if _wrong(r)),
                }
            )
            solved = {r["instance"]: r for r in done}
            both = [(solved[p["instance"]], p) for p in peer_done if p["instance"] in solved]
            summary["ratio_all"] = _ratio([(o["cpu"], p["cpu"]) for o, p in both])
            summary["ratio_rest"] = _ratio([(o["cpu"], p["cpu"]) for o, p in both if not o["first"]])
        out.append(summary)
    return out


def _wrong(row: dict[str, Any]) -> bool:
    """Whether our engine found the peer's AXp in ``row`` not sufficient or not subset-minimal."""
    return row.get("checked_sufficient") is False or row.get("checked_minimal") is False


def _ratio(pairs: Sequence[tuple[float, float]]) -> float | None:
    """Ours / RFxpl on the mean times over the instances both solved."""
    if not pairs:
        return None
    peer = sum(p for _, p in pairs)
    return sum(o for o, _ in pairs) / peer if peer > 0 else None


SUMMARY_COLUMNS = [
    "instances",
    "ours_first_cpu",
    "ours_rest_cpu",
    "ours_max_cpu",
    "rfxpl_mean_cpu",
    "rfxpl_max_cpu",
    "rfxpl_encode_cpu",
    "ratio_rest",
    "ratio_all",
    "ours_size",
    "rfxpl_size",
    "ours_solved",
    "rfxpl_solved",
    "decisions_differ",
    "rfxpl_axps_wrong",
]
SUMMARY_HEADERS = [
    "#I",
    "ours first",
    "ours rest",
    "ours max",
    "RFxpl mean",
    "RFxpl max",
    "RFxpl encode",
    "ours/RFxpl rest",
    "ours/RFxpl all",
    "ours |AXp|",
    "RFxpl |AXp|",
    "ours solved",
    "RFxpl solved",
    "decisions differ",
    "RFxpl AXps wrong",
]


def targets(summary: Sequence[dict[str, Any]]) -> str:
    """The issue's side-by-side targets, met or missed, over the datasets measured."""
    lines = []
    for column, what in (("ratio_rest", "after the first instance of each class"), ("ratio_all", "every instance")):
        measured = [s for s in summary if s.get(column) is not None]
        met = [s for s in measured if s[column] <= 0.25]
        missed = ", ".join(f"{s['dataset']} {s[column]:.2f}" for s in measured if s[column] > 0.25)
        lines.append(
            f"- ours / RFxpl <= 0.25, {what}: {len(met)}/{len(measured)}" + (f" (missed: {missed})" if missed else "")
        )
    fast = [s for s in summary if s.get("rfxpl_mean_cpu") is not None and s["rfxpl_mean_cpu"] <= 0.2]
    met = [s for s in fast if s["ours_mean_cpu"] is not None and s["ours_mean_cpu"] <= 0.02]
    lines.append(f"- mean AXp <= 0.02 s where RFxpl's is <= 0.2 s (every instance): {len(met)}/{len(fast)}")
    return "\n".join(lines)


# ---------------------------------------------------------------------- the benchmark
def add_rfxpl_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rfxpl-python", help="RFxpl's interpreter (default $RFXPL_PYTHON or ../rfxpl-venv)")
    parser.add_argument("--rfxpl-src", help="RFxpl's source snapshot (default $RFXPL_SRC or ../rfxpl-src)")


def run_forests(
    forests: Sequence[tuple[dict[str, Any], Callable[[], tuple[Any, np.ndarray, Sequence[int]]]]],
    *,
    rfxpl: Rfxpl | None,
    limit: float,
    card: str | None,
    write: Callable[[list[dict[str, Any]]], None],
    budget: float | None = None,
) -> list[dict[str, Any]]:
    """Every forest side by side (``forests``: its key columns and a function training it and
    choosing its instances); ``write`` gets the rows so far after each forest."""
    rows: list[dict[str, Any]] = []
    for base, make in forests:
        model, X, ids = make()
        with tempfile.TemporaryDirectory(prefix="rfxpl-bench-") as tmp:
            rows += side_by_side(
                model, X, ids, base, rfxpl=rfxpl, limit=limit, workdir=Path(tmp), card=card, budget=budget
            )
        write(rows)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    from experiments.sat_table1 import DEPTHS, train

    parser = argparse.ArgumentParser(prog="python -m experiments peers_rfxpl", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three small datasets, five instances")
    parser.add_argument("--datasets", nargs="+", help=DATASETS_HELP)
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--instances", type=int, help="sample instances per dataset (default 15)")
    parser.add_argument("--limit", type=float, help="per-instance wall-clock limit in seconds (default 120)")
    parser.add_argument("--card", help="our cardinality encoding (default: the engine's)")
    parser.add_argument("--results-dir", help="output folder")
    add_rfxpl_options(parser)
    args = parser.parse_args(argv)
    rfxpl = require_rfxpl(args.rfxpl_python, args.rfxpl_src)
    directory = data_dir(args.data)
    if not directory.is_dir():
        raise Skip(f"the data folder {directory} (--data or $RFEXPLAIN_DATA) does not exist")
    preset = QUICK if args.quick else FULL
    names = dataset_names(args.datasets, list(preset["datasets"] or DEPTHS))
    unknown = sorted(set(names) - set(DEPTHS))
    if unknown:
        parser.error(f"not Table 1 datasets: {unknown}")
    n_inst = int(args.instances or preset["instances"])
    limit = float(args.limit or preset["limit"])
    name = NAME

    def make(dataset: str) -> Callable[[], tuple[Any, np.ndarray, Sequence[int]]]:
        def trained() -> tuple[Any, np.ndarray, Sequence[int]]:
            model, _, _, samples = train(dataset, directory)
            return model, samples[:n_inst], list(range(min(n_inst, len(samples))))

        return trained

    forests = [({"dataset": d, "trees": 100, "depth": DEPTHS[d]}, make(d)) for d in names]

    def write(rows: list[dict[str, Any]]) -> None:
        summary = summarise(rows, ["dataset", "trees", "depth"])
        text = (
            "# rfexplain (SAT engine) against RFxpl: one AXp per instance\n\n"
            f"The SAT paper's forests (100 trees, its depths, entropy, 80/20 split, seed 0) and its first {n_inst} "
            f"sample instances per dataset; limit {limit:g} s per instance and side. CPU seconds of each side's "
            "process. RFxpl: encoding for the instance + AXp, as its command line does. Ours: `first` = the first "
            "instance of each predicted class (one-time encoding included), `rest` = the others. Ratios: mean over "
            "the instances both solved. `RFxpl AXps wrong`: RFxpl AXps our engine finds not sufficient or not "
            "subset-minimal.\n\n"
            + markdown_table(summary, ["dataset", "depth"] + SUMMARY_COLUMNS, ["dataset", "D"] + SUMMARY_HEADERS)
            + "\n\nTargets (issue: ours / RFxpl <= 0.25 on every dataset; mean AXp <= 0.02 s wherever RFxpl's is "
            "<= 0.2 s):\n\n" + targets(summary) + "\n"
        )
        write_report(
            name,
            rows,
            text,
            quick=args.quick,
            options=vars(args),
            seed=0,
            directory=args.results_dir,
            extra_versions={"rfxpl": rfxpl_version(rfxpl)},
        )

    run_forests(forests, rfxpl=rfxpl, limit=limit, card=args.card, write=write, budget=BUDGET)
    return 0


if __name__ == "__main__":
    sys.exit(main())
