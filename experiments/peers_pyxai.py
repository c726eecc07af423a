"""rfexplain against PyXAI on the same scikit-learn forests and instances.

``python -m experiments peers_pyxai [--quick]``. PyXAI lives in its own virtual environment and
is never a dependency of rfexplain (setup, once, about 45 s and 1.9 GB)::

    python3 -m venv /work/pyxai-venv && /work/pyxai-venv/bin/pip install pyxai scikit-learn==<ours>

(``--pyxai-python`` or ``$PYXAI_PYTHON`` point at another interpreter; without one the benchmark
is skipped.) PyXAI runs in a child process (:mod:`experiments.pyxai_worker`) killed when it
exceeds the per-instance limit (its ``minimal_sufficient_reason`` ignores ``time_limit``); a warm
spare worker takes over at once. Its temporary files go to a temporary folder, not the checkout.

For every dataset and forest size: train ``RandomForestClassifier(n_estimators, max_depth,
random_state=seed)`` on an 80/20 split, take the first test rows, and ask each side for one
sufficient reason, one minimal (smallest) sufficient reason and, with two classes, one minimal
contrastive reason. Ours run through ``Explainer.explain_many`` (one worker, the per-instance
``timeout``) in a child process with an overall deadline. PyXAI's explanations are converted to
feature sets (the features its condition literals mention) and checked with the SAT engine (and
the oracle when the forest is small enough): sufficient? subset-minimal? as small as our
smallest? Every disagreement is classified (see ``classify_*``) and written with the instance's
values so that it can be reproduced.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing as mp
import os
import pickle
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from experiments._common import (
    DATA_HELP,
    DATASETS_HELP,
    PeerMissing,
    cactus_plot,
    data_dir,
    dataset_names,
    markdown_table,
    median,
    results_dir,
    results_stem,
    write_csv,
    write_report,
)

log = logging.getLogger("experiments.peers_pyxai")

NAME = "peers_pyxai"
WORKER = Path(__file__).resolve().parent / "pyxai_worker.py"
DEFAULT_PYXAI = Path(__file__).resolve().parent.parent.parent / "pyxai-venv" / "bin" / "python"
BUILTIN = ["iris", "wine", "breast_cancer"]
BENCH = ["appendicitis", "banknote", "glass2", "ionosphere", "mofn-3-7-10", "new-thyroid", "threeOf9", "xd6", "ecoli"]
NO_FLIP_WHY = (
    "without its domain theory PyXAI flips the listed conditions but keeps the instance's other conditions on the "
    "same features (e.g. x <= 0.92 made false while x <= 0.43 stays true): a contradictory assignment that no real "
    "instance realises; with the theory (pyxai+theory) its answers are valid flips"
)
#: PyXAI configurations: plain (conditions independent, its default) and with its domain theory.
PYXAI_SOLVERS = {"plain": "pyxai", "theory": "pyxai+theory"}
QUICK = {"datasets": ["iris", "breast_cancer", "banknote"], "sizes": [(10, 3)], "instances": 2, "limit": 2.0}
FULL = {"datasets": BUILTIN + BENCH, "sizes": [(10, 3), (50, 5), (100, 6)], "instances": 4, "limit": 4.0}
#: Our query for each PyXAI query (binary classes: necessary reasons are the contrastive ones).
OURS = {
    "sufficient": ("sufficient_reason", {}),
    "minimal_sufficient": ("shortest_sufficient_reasons", {"limit": 1}),
    "minimal_contrastive": ("shortest_necessary_reasons", {"limit": 1}),
}


# ---------------------------------------------------------------------- PyXAI side
class PyxaiPool:
    """A PyXAI worker process (plus a warm spare) for one forest; kills a worker past the limit."""

    def __init__(self, python: Path, bundle: Path, workdir: Path, mode: str = "plain") -> None:
        self.python, self.bundle, self.workdir, self.mode = python, bundle, workdir, mode
        self.current = self._spawn()
        self.spare: subprocess.Popen[str] | None = self._spawn()
        self.kills = 0

    def _spawn(self) -> subprocess.Popen[str]:
        env = dict(os.environ, TMPDIR=str(self.workdir), PYTHONWARNINGS="ignore")
        return subprocess.Popen(
            [str(self.python), str(WORKER), str(self.bundle)] + (["theory"] if self.mode == "theory" else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(self.workdir / "pyxai.log", "a"),
            cwd=self.workdir,
            env=env,
            text=True,
            start_new_session=True,
        )

    @staticmethod
    def _readline(proc: subprocess.Popen[str], timeout: float) -> str | None:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if not ready:
            return None
        return proc.stdout.readline() or None

    def _ready(self, proc: subprocess.Popen[str]) -> None:
        if getattr(proc, "_is_ready", False):
            return
        line = self._readline(proc, 180)
        if line is None or not json.loads(line).get("ready"):
            raise RuntimeError(f"PyXAI worker did not start (see {self.workdir / 'pyxai.log'})")
        proc._is_ready = True  # type: ignore[attr-defined]

    def ask(self, query: str, x: Sequence[float], limit: float) -> dict[str, Any]:
        self._ready(self.current)
        assert self.current.stdin is not None
        started = time.perf_counter()
        self.current.stdin.write(json.dumps({"query": query, "x": list(map(float, x)), "time_limit": limit}) + "\n")
        self.current.stdin.flush()
        line = self._readline(self.current, limit * 1.2 + 1.0)
        wall = time.perf_counter() - started
        if line is None:
            self._kill(self.current)
            self.kills += 1
            self.current = self.spare if self.spare is not None else self._spawn()
            self.spare = self._spawn()
            return {"ok": False, "status": "killed", "time": wall}
        answer = json.loads(line)
        answer["status"] = "ok" if answer.get("ok") else "error"
        if answer.get("timed_out"):
            answer["status"] = "timeout"
        return answer

    @staticmethod
    def _kill(proc: subprocess.Popen[str]) -> None:
        try:
            os.killpg(proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()

    def close(self) -> None:
        for proc in (self.current, self.spare):
            if proc is not None:
                self._kill(proc)


# ---------------------------------------------------------------------- our side (child process)
def _ours_child(forest_json: str, engine: str, X: np.ndarray, queries: list[str], limit: float, out: Any) -> None:
    import rfexplain as rx

    started = time.perf_counter()
    explainer = rx.Explainer(rx.Forest.from_json(forest_json), engine=engine)
    out.put(("built", time.perf_counter() - started))
    for query in queries:
        name, args = OURS[query]
        for k, row in enumerate(X):
            record = explainer.explain_many(row[None, :], name, n_jobs=1, timeout=limit, indices=[k], **args)[0]
            out.put(("record", query, record.to_dict()))
    out.put(("done", None))


def run_ours(
    forest_json: str, engine: str, X: np.ndarray, queries: list[str], limit: float
) -> tuple[float | None, dict[tuple[str, int], dict[str, Any]]]:
    """``(build seconds, {(query, k): record})``; anything unfinished by the deadline is missing."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_ours_child, args=(forest_json, engine, X, queries, limit, queue), daemon=True)
    proc.start()
    deadline = time.monotonic() + 20 + len(queries) * len(X) * (limit + 1.0)
    build: float | None = None
    records: dict[tuple[str, int], dict[str, Any]] = {}
    while time.monotonic() < deadline:
        try:
            item = queue.get(timeout=max(0.1, min(5.0, deadline - time.monotonic())))
        except Exception:
            if not proc.is_alive():
                break
            continue
        if item[0] == "built":
            build = item[1]
        elif item[0] == "record":
            records[(item[1], item[2]["index"])] = item[2]
        else:
            break
    proc.join(timeout=5)
    if proc.is_alive():
        log.warning("engine %s passed its deadline: killed", engine)
        proc.kill()
    proc.join()
    return build, records


# ---------------------------------------------------------------------- checking feature sets
class Checker:
    """Sufficiency and flips of feature sets, by the SAT engine (and the oracle when small)."""

    def __init__(self, forest: Any) -> None:
        from rfexplain.core.errors import OracleTooLargeError
        from rfexplain.oracle import Oracle
        from rfexplain.sat.engine import SatEngine

        self.forest = forest
        self.sat = SatEngine(forest)
        try:
            self.oracle: Any = Oracle(forest, max_state_vectors=500_000)
        except OracleTooLargeError:
            self.oracle = None
        self.tested = set(forest.tested_features)
        self.all = set(range(forest.n_features))

    def counterexample(self, instance: Any, fixed: set[int]) -> tuple[int, ...] | None:
        """A state vector agreeing with the instance on ``fixed`` and decided otherwise, or None."""
        fixed = set(fixed) & self.tested  # an untested feature has no selector and no effect
        search = self.sat._search(instance)
        found = search.has_counterexample(sorted(fixed))
        result = search.last_states if found else None
        if self.oracle is not None:
            agrees = self.oracle.is_sufficient(instance, sorted(fixed)) == (result is None)
            if not agrees:
                raise AssertionError(f"SAT engine and oracle disagree on fixing {sorted(fixed)}")
        return result

    def sufficient(self, instance: Any, features: set[int]) -> bool:
        return self.counterexample(instance, features) is None

    def redundant(self, instance: Any, features: set[int]) -> list[int]:
        """Features of a sufficient set that can be dropped (empty: subset-minimal)."""
        return [f for f in sorted(features) if self.sufficient(instance, features - {f})]

    def flips(self, instance: Any, features: set[int]) -> bool:
        """Whether changing only ``features`` can change the decision."""
        return self.counterexample(instance, self.all - features) is not None

    def strict(self, c: int) -> Checker:
        """A checker on the same forest with class ``c`` moved last, so that ``c`` loses every
        tie: the decision is ``c`` only by a strict majority (any tie rule is then covered)."""
        key = ("strict", c)
        cache = self.__dict__.setdefault("_strict", {})
        if key not in cache:
            from rfexplain import Forest

            doc = self.forest.to_dict()
            order = [k for k in range(self.forest.n_classes) if k != c] + [c]
            new_index = {old: new for new, old in enumerate(order)}
            doc["classes"] = [doc["classes"][k] for k in order]
            for tree in doc["trees"]:
                tree["label"] = [new_index[v] if v >= 0 else v for v in tree["label"]]
            strict = Checker.__new__(Checker)
            strict.forest = Forest.from_dict(doc)
            from rfexplain.sat.engine import SatEngine

            strict.sat, strict.oracle = SatEngine(strict.forest), None
            strict.tested, strict.all = self.tested, self.all
            cache[key] = strict
        return cache[key]

    def strict_instance(self, instance: Any) -> Any:
        from rfexplain.engines.base import Instance

        return Instance(instance.values, instance.states, self.forest.n_classes - 1)

    # ------------------------------------------------------------------ PyXAI's own terms
    def condition_literal(self, text: str) -> int | None:
        """The SAT literal of a PyXAI condition such as ``"f3 <= 0.70000000298"`` over float32
        values (``None``: true of every value)."""
        from rfexplain.sat.encodings.pool import Var

        name, op, value = text.split()
        f, t = int(name[1:]), float(value)
        if op not in ("<=", ">"):
            raise ValueError(f"unexpected PyXAI condition {text!r}")
        t32 = np.float32(t)
        above = t32 if float(t32) > t else np.nextafter(t32, np.float32(np.inf))  # smallest float32 > t
        ts = np.asarray(self.forest.space.thresholds[f], dtype=np.float64)
        first = int(np.searchsorted(ts, float(above), side="left"))
        below = np.nextafter(above, np.float32(-np.inf))  # largest float32 <= t
        if int(np.searchsorted(ts, float(below), side="left")) == first:
            raise ValueError(f"{text!r}: {t!r} is not a threshold of this forest")
        if first == 0:  # every float32 value is > t
            return None if op == ">" else 0
        gt = self.sat.encoding.pool.var(Var.gt(f, first - 1))
        return gt if op == ">" else -gt

    def conditions_verdict(self, instance: Any, conditions: Sequence[str]) -> tuple[bool, list[str]]:
        """Over real (float32) instances: are PyXAI's conditions sufficient for the decision, and
        which of them could be dropped (PyXAI's own definition, with the order of the thresholds)?"""
        lits = [self.condition_literal(c) for c in conditions]
        oracle = self.sat.oracle("not", instance.prediction)

        def sufficient(chosen: list[int | None]) -> bool:
            if 0 in chosen:
                return True
            return oracle.run([lit for lit in chosen if lit is not None]) is False

        if not sufficient(lits):
            return False, []
        return True, [c for k, c in enumerate(conditions) if sufficient(lits[:k] + lits[k + 1 :])]

    def votes(self, states: Sequence[int]) -> list[int]:
        counts = self.forest.flat.vote_counts(np.asarray([states], dtype=np.int64), self.forest.n_classes)
        return [int(v) for v in counts[0]]


# ---------------------------------------------------------------------- one configuration
@dataclass
class Config:
    dataset: str
    trees: int
    depth: int
    instances: int
    limit: float
    seed: int = 0
    data: str | None = None  # the benchmark CSV folder (see experiments._common.data_dir)

    @property
    def label(self) -> str:
        return f"{self.dataset} {self.trees}x{self.depth}"


def _train(config: Config) -> tuple[Any, Any, np.ndarray, list[int], Any]:
    from rfexplain import datasets

    folder = None if config.dataset in datasets.BUILTIN else data_dir(config.data)
    trained = datasets.train_forest(
        config.dataset,
        trees=config.trees,
        depth=config.depth,
        seed=config.seed,
        test_size=0.2,
        data_dir=folder,
        vote="hard",  # PyXAI votes by majority: compare like with like
    )
    test = np.sort(trained.test_rows)[: config.instances]
    return trained.model, trained.forest, trained.data.X[test], [int(i) for i in test], trained.data


def run_config(
    config: Config, engines: list[str], python: Path, workdir: Path, modes: Sequence[str] = ("plain",)
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows (one per instance, query and solver) and disagreements for one forest."""
    from rfexplain.engines.base import Instance

    model, forest, X, ids, data = _train(config)
    binary = forest.n_classes == 2
    queries = ["sufficient", "minimal_sufficient"] + (["minimal_contrastive"] if binary else [])
    bundle = workdir / f"{config.dataset}-{config.trees}x{config.depth}.pkl"
    # PyXAI sees the training data only for names and types; the labels are class indices.
    y_index = np.searchsorted(np.asarray(model.classes_), data.y) if data.y.dtype.kind in "OUS" else data.y
    bundle.write_bytes(pickle.dumps({"model": model, "X": data.X, "y": y_index}))
    rows: list[dict[str, Any]] = []
    disagreements: list[dict[str, Any]] = []
    checker = Checker(forest)
    instances = [Instance.of(forest, x) for x in X]
    base = {"dataset": config.dataset, "trees": config.trees, "depth": config.depth}

    ours: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
    for engine in engines:
        build, records = run_ours(forest.to_json(), engine, X, queries, config.limit)
        ours[engine] = records
        rows.append(
            {
                **base,
                "solver": engine,
                "query": "build",
                "time": build,
                "status": "ok" if build is not None else "killed",
            }
        )
        for query in queries:
            for k in range(len(X)):
                rec = records.get((query, k))
                status = _status(rec)
                feats = sorted(rec["result"][0]["features"]) if rec and rec["result"] else None
                rows.append(
                    {
                        **base,
                        "solver": engine,
                        "query": query,
                        "instance": ids[k],
                        "time": rec["time"] if rec else None,
                        "status": status,
                        "features": feats,
                        "size": None if feats is None else len(feats),
                        "error": rec["error"] if rec else None,
                    }
                )

    for mode in modes:
        solver = PYXAI_SOLVERS[mode]
        pool = PyxaiPool(python, bundle, workdir, mode)
        try:
            for query in queries:
                for k, x in enumerate(X):
                    answer = pool.ask(query, x, config.limit)
                    feats = answer.get("features") if answer.get("ok") else None
                    rows.append(
                        {
                            **base,
                            "solver": solver,
                            "query": query,
                            "instance": ids[k],
                            "time": answer.get("time"),
                            "status": answer["status"],
                            "features": feats,
                            "size": None if feats is None else len(feats),
                            "literals": len(answer.get("literals") or []) if answer.get("ok") else None,
                            "conditions": answer.get("conditions"),
                            "error": answer.get("error"),
                        }
                    )
                    if answer.get("ok"):
                        disagreements += check_pyxai(
                            config, query, ids[k], k, x, instances[k], answer, checker, ours, mode
                        )
        finally:
            pool.close()
    for engine, records in ours.items():
        disagreements += check_ours(config, engine, queries, ids, X, instances, records, checker)
    return rows, disagreements


def _condition_rows(note: dict[str, Any], independent: bool) -> list[dict[str, Any]]:
    """Disagreements over PyXAI's own terms: its conditions, with the order of the thresholds."""
    if "conditions_sufficient" not in note:
        return []
    if not note["conditions_sufficient"]:
        return [
            {
                **note,
                "problem": "over its own conditions: not sufficient (a float32 instance satisfying them all "
                "gets another class)",
                "right": "rfexplain",
                "why": "PyXAI's reason admits a counterexample under every tie rule; PyXAI reasons over float64 values "
                "while scikit-learn casts to float32, which only matters for values between two float32 numbers",
            }
        ]
    droppable, strict = note["conditions_droppable"], note.get("conditions_droppable_strict", [])
    if not droppable:
        return []
    if not strict:
        return [
            {
                **note,
                "problem": f"over its own conditions: {droppable} can be dropped under our tie rule only",
                "right": "both (tie rule)",
                "why": "dropping them admits only vote ties, which rfexplain gives to the lowest class index (the "
                "explained class) and PyXAI does not count as a win",
            }
        ]
    if independent:
        return [
            {
                **note,
                "problem": f"over its own conditions: {strict} can be dropped once the thresholds' order is known",
                "right": "both (different definitions)",
                "why": "without its domain theory PyXAI treats the conditions as independent variables, so impossible "
                "combinations (x > 5 and x <= 3) count as counterexamples; with the order they are redundant",
            }
        ]
    return [
        {
            **note,
            "problem": f"over its own conditions (domain theory, strict majority): {strict} can be dropped",
            "right": "rfexplain",
            "why": "PyXAI's sufficient reason is not minimal even by its own definition: dropping these conditions "
            "admits no instance of another class and no tie "
            "(PyXAI documents sufficient reasons as 'typically' minimal)",
        }
    ]


def _status(rec: dict[str, Any] | None) -> str:
    """``ok`` when an answer came back (a shortest reason is final even if the enumeration was cut
    by ``limit=1``), ``timeout`` when the budget ended it first, ``killed`` past the deadline."""
    if rec is None:
        return "killed"
    if rec["error"]:
        return "error"
    if rec["result"] or rec["complete"]:
        return "ok"
    return "timeout"


def _smallest_ours(ours: dict[str, dict[tuple[str, int], dict[str, Any]]], query: str, k: int) -> int | None:
    for records in ours.values():
        rec = records.get((query, k))
        if _status(rec) == "ok" and rec is not None and rec["result"]:
            return len(rec["result"][0]["features"])
    return None


def check_pyxai(
    config: Config,
    query: str,
    row_id: int,
    k: int,
    x: np.ndarray,
    instance: Any,
    answer: dict[str, Any],
    checker: Checker,
    ours: dict[str, dict[tuple[str, int], dict[str, Any]]],
    mode: str = "plain",
) -> list[dict[str, Any]]:
    """PyXAI's answer, as a feature set, against the definitions over feature states."""
    out: list[dict[str, Any]] = []
    independent = mode == "plain"
    feats = set(answer["features"])
    note = {
        "dataset": config.dataset,
        "trees": config.trees,
        "depth": config.depth,
        "instance": row_id,
        "query": query,
        "side": PYXAI_SOLVERS[mode],
        "pyxai_features": sorted(feats),
        "pyxai_conditions": answer.get("conditions"),
        "values": [float(v) for v in np.asarray(x, dtype=np.float32)],
    }
    ours_label = str(checker.forest.classes[instance.prediction])
    if str(answer.get("prediction")) != ours_label:
        counts = checker.votes(instance.states)
        tie = counts.count(max(counts)) > 1
        why = (
            "tie in the vote: rfexplain gives ties to the lowest class index, PyXAI decided otherwise"
            if tie
            else "not a tie: float32 rounding of the instance near a threshold (sklearn casts to float32)?"
        )
        out.append(
            {
                **note,
                "problem": f"prediction: PyXAI {answer.get('prediction')} vs ours {ours_label} (votes {counts})",
                "right": "rfexplain" if tie else "investigate",
                "why": why,
            }
        )
        return out
    if answer["status"] == "timeout":
        return out  # PyXAI says it stopped early: its answer need not be minimal
    if query in ("sufficient", "minimal_sufficient") and answer.get("conditions"):
        try:
            ok, droppable = checker.conditions_verdict(instance, answer["conditions"])
        except ValueError as exc:  # a condition we cannot map: report it, keep the feature-level checks
            log.warning("instance %s: %s", row_id, exc)
            ok, droppable = True, []
        note["conditions_sufficient"] = ok
        note["conditions_droppable"] = droppable
        if droppable:  # also when a tie is not a win (strict majority)
            strict = checker.strict(instance.prediction)
            _, note["conditions_droppable_strict"] = strict.conditions_verdict(
                strict.strict_instance(instance), answer["conditions"]
            )
        else:
            note["conditions_droppable_strict"] = []
    if query in ("sufficient", "minimal_sufficient"):
        z = checker.counterexample(instance, feats)
        if z is not None:
            counts = checker.votes(z)
            tie = counts.count(max(counts)) > 1
            out.append(
                {
                    **note,
                    "problem": f"not sufficient: counterexample states {list(z)} votes {counts}",
                    "right": "rfexplain" if not tie else "both (tie rule)",
                    "why": "the counterexample is a vote tie, broken differently by the two tools"
                    if tie
                    else "PyXAI's reason admits an instance of another class: a PyXAI error on this forest",
                }
            )
            return out
        out += _condition_rows(note, independent)
        redundant = checker.redundant(instance, feats)
        if redundant:
            out.append(
                {
                    **note,
                    "problem": f"sufficient but not subset-minimal over features: {redundant} can be dropped",
                    "right": "both (different definitions)",
                    "why": (
                        "PyXAI treats the threshold conditions as independent variables (no domain theory), so "
                        "impossible combinations such as x > 5 and x <= 3 count as counterexamples and force "
                        "extra features in; "
                        if independent
                        else ""
                    )
                    + "PyXAI's reason is minimal over threshold conditions, ours over features: fixing a "
                    "feature's whole interval implies more than the conditions PyXAI keeps on it, so a feature "
                    "PyXAI needs can be redundant over feature states",
                }
            )
        if query == "minimal_sufficient":
            smallest = _smallest_ours(ours, "minimal_sufficient", k)
            if smallest is not None and len(feats) < smallest:
                out.append(
                    {
                        **note,
                        "problem": f"PyXAI's minimal reason has {len(feats)} features, our smallest {smallest}",
                        "right": "pyxai",
                        "why": "a sufficient feature set smaller than our shortest: rfexplain error",
                    }
                )
            elif smallest is not None and len(feats) > smallest:
                out.append(
                    {
                        **note,
                        "problem": f"PyXAI's minimal reason has {len(feats)} features, our smallest {smallest}",
                        "right": "both (different measures)",
                        "why": f"PyXAI minimises the number of condition literals ({len(answer['literals'])}), "
                        "not of features; a reason with fewer literals can mention more features",
                    }
                )
    else:  # minimal_contrastive
        if not feats:
            return out  # no reason returned (PyXAI's time limit ended the search): counted as unsolved
        if not checker.flips(instance, feats):
            out.append(
                {
                    **note,
                    "problem": "changing only these features cannot flip the decision",
                    "right": "rfexplain",
                    "why": NO_FLIP_WHY
                    if independent
                    else "PyXAI with its domain theory returned a set that cannot flip: PyXAI error",
                }
            )
            return out
        smallest = _smallest_ours(ours, "minimal_contrastive", k)
        minimal = [f for f in sorted(feats) if checker.flips(instance, feats - {f})]
        if minimal:
            out.append(
                {
                    **note,
                    "problem": f"flips but not subset-minimal over features: {minimal} can be kept",
                    "right": "both (different definitions)",
                    "why": "minimal over condition literals, not over features",
                }
            )
        if smallest is not None and len(feats) < smallest:
            out.append(
                {
                    **note,
                    "problem": f"PyXAI's contrastive reason has {len(feats)} features, our robustness {smallest}",
                    "right": "pyxai",
                    "why": "a valid flip smaller than our minimum: rfexplain error",
                }
            )
        elif smallest is not None and len(feats) > smallest:
            out.append(
                {
                    **note,
                    "problem": f"PyXAI's minimal contrastive reason has {len(feats)} features, our minimum {smallest}",
                    "right": "both (different measures)",
                    "why": "PyXAI minimises condition literals, not features",
                }
            )
    return out


def check_ours(
    config: Config,
    engine: str,
    queries: list[str],
    ids: list[int],
    X: np.ndarray,
    instances: list[Any],
    records: dict[tuple[str, int], dict[str, Any]],
    checker: Checker,
) -> list[dict[str, Any]]:
    """Our answers against the same checker (the SAT engine checks the circuit engine, and the
    oracle both, where the forest is small)."""
    out = []
    for query in queries:
        for k, instance in enumerate(instances):
            rec = records.get((query, k))
            if _status(rec) != "ok" or rec is None or not rec["result"]:
                continue
            feats = set(rec["result"][0]["features"])
            note = {
                "dataset": config.dataset,
                "trees": config.trees,
                "depth": config.depth,
                "instance": ids[k],
                "query": query,
                "side": engine,
                "values": [float(v) for v in np.asarray(X[k], dtype=np.float32)],
            }
            if query == "minimal_contrastive":
                if not checker.flips(instance, feats) or any(checker.flips(instance, feats - {f}) for f in feats):
                    out.append(
                        {
                            **note,
                            "problem": f"our necessary reason {sorted(feats)} is not a minimal flip",
                            "right": "investigate",
                            "why": "rfexplain engine error",
                        }
                    )
            elif checker.counterexample(instance, feats) is not None or checker.redundant(instance, feats):
                out.append(
                    {
                        **note,
                        "problem": f"our sufficient reason {sorted(feats)} is not an AXp",
                        "right": "investigate",
                        "why": "rfexplain engine error",
                    }
                )
    return out


# ---------------------------------------------------------------------- report
def summarise(rows: list[dict[str, Any]], engines: list[str], pyxai: Sequence[str]) -> list[dict[str, Any]]:
    """One row per dataset, forest and query: each solver's median time and unsolved count, and
    for each engine of ours the per-instance ratio ours / PyXAI (median and worst) against every
    PyXAI configuration, on the instances both solved."""
    order = ["sufficient", "minimal_sufficient", "minimal_contrastive"]
    keys = sorted(
        {(r["dataset"], r["trees"], r["depth"], r["query"]) for r in rows if r["query"] in order},
        key=lambda k: (k[0], k[1], order.index(k[3])),
    )
    index = {(r["dataset"], r["trees"], r["depth"], r["query"], r["solver"], r.get("instance")): r for r in rows}
    table = []
    for dataset, trees, depth, query in keys:
        instances = sorted(
            {
                r["instance"]
                for r in rows
                if (r["dataset"], r["trees"], r["depth"], r["query"]) == (dataset, trees, depth, query)
            }
        )
        row: dict[str, Any] = {"dataset": dataset, "forest": f"{trees}x{depth}", "query": query, "n": len(instances)}
        got = {
            solver: [index.get((dataset, trees, depth, query, solver, i)) for i in instances]
            for solver in engines + list(pyxai)
        }
        for solver, results in got.items():
            row[f"{solver} median"] = median(r["time"] for r in results if r and r["status"] == "ok")
            row[f"{solver} unsolved"] = sum(1 for r in results if not r or r["status"] != "ok")
        for engine in engines:
            for peer in pyxai:
                ratios = [
                    a["time"] / b["time"]
                    for a, b in zip(got[engine], got[peer])
                    if a and b and a["status"] == "ok" and b["status"] == "ok" and b["time"]
                ]
                row[f"{engine}/{peer} median"] = median(ratios)
                row[f"{engine}/{peer} worst"] = max(ratios) if ratios else None
        table.append(row)
    return table


def overview(rows: list[dict[str, Any]], engines: list[str], pyxai: Sequence[str]) -> list[dict[str, Any]]:
    """Across every dataset and forest, per query and solver: solved / asked, median time, and for
    our engines the per-instance ratio against each PyXAI configuration (median, share faster)."""
    order = ["sufficient", "minimal_sufficient", "minimal_contrastive"]
    index = {(r["dataset"], r["trees"], r["depth"], r["query"], r["solver"], r.get("instance")): r for r in rows}
    out = []
    for query in order:
        mine = [r for r in rows if r["query"] == query]
        if not mine:
            continue
        for solver in engines + list(pyxai):
            got = [r for r in mine if r["solver"] == solver]
            row: dict[str, Any] = {
                "query": query,
                "solver": solver,
                "solved": f"{sum(r['status'] == 'ok' for r in got)}/{len(got)}",
                "median_s": median(r["time"] for r in got if r["status"] == "ok"),
            }
            if solver in engines:
                for peer in pyxai:
                    ratios = []
                    for r in got:
                        other = index.get((r["dataset"], r["trees"], r["depth"], query, peer, r.get("instance")))
                        if r["status"] == "ok" and other and other["status"] == "ok" and other["time"]:
                            ratios.append(r["time"] / other["time"])
                    row[f"vs {peer}: median ratio"] = median(ratios)
                    row[f"vs {peer}: faster"] = f"{sum(x < 1 for x in ratios)}/{len(ratios)}" if ratios else ""
            out.append(row)
    return out


def render(
    summary: list[dict[str, Any]],
    disagreements: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    engines: list[str],
    pyxai: Sequence[str],
    settings: dict[str, Any],
    plots: list[Path],
) -> str:
    verdicts: dict[str, int] = {}
    for d in disagreements:
        verdicts[d["right"]] = verdicts.get(d["right"], 0) + 1
    builds = [r for r in rows if r["query"] == "build"]
    solvers = engines + list(pyxai)
    time_cols = [f"{s} median" for s in solvers]
    unsolved = [f"{s} unsolved" for s in solvers]
    for row in summary:
        row["unsolved"] = " / ".join(str(row[c]) for c in unsolved)
    ratio_cols = [f"{e}/{p} {w}" for e in engines for p in pyxai[:1] for w in ("median", "worst")]
    lines = [
        "# rfexplain vs PyXAI",
        "",
        f"Settings: {json.dumps(settings)}. Solvers: {', '.join(solvers)} (`pyxai` is PyXAI's default, whose "
        "threshold conditions are independent variables; `pyxai+theory` adds its domain theory, the order links "
        "between the conditions on one feature). Times are seconds per instance, model loading and engine "
        "construction excluded; `unsolved` (in the solvers' order) counts time-outs, kills and errors. A ratio is "
        "ours / PyXAI per instance on the instances both solved (below 1: rfexplain is faster), median and worst "
        f"(largest); the table shows them against `{pyxai[0]}`, "
        f"`{NAME}{'_quick' if settings.get('quick') else ''}_summary.csv` "
        "has them against every PyXAI configuration.",
        "",
        "Queries: `sufficient` = PyXAI `sufficient_reason()` vs our `sufficient_reason`; `minimal_sufficient` = "
        "`minimal_sufficient_reason()` vs our `shortest_sufficient_reasons(limit=1)`; `minimal_contrastive` = "
        "`minimal_contrastive_reason()` (two classes only) vs our `shortest_necessary_reasons(limit=1)`. Our "
        "enumerations run with the per-instance limit as their budget; one sufficient reason is computed directly "
        "(one MUS, not interruptible) under the engine's overall deadline. PyXAI minimises condition literals; we "
        "minimise features.",
        "",
        "## Overview (all datasets and forests)",
        "",
        markdown_table(
            overview(rows, engines, pyxai),
            ["query", "solver", "solved", "median_s"]
            + [f"vs {p}: {w}" for p in pyxai for w in ("median ratio", "faster")],
        ),
        "",
        "## Timing per dataset and forest",
        "",
        markdown_table(summary, ["dataset", "forest", "query", "n"] + time_cols + ["unsolved"] + ratio_cols),
        "",
        "Engine construction (s): "
        + ", ".join(
            f"{b['dataset']} {b['trees']}x{b['depth']} {b['solver']} "
            + (f"{b['time']:.3g}" if b["time"] is not None else str(b["status"]))
            for b in builds
        ),
        "",
        "## Disagreements",
        "",
        "Verdict counts: " + (", ".join(f"{k}: {v}" for k, v in sorted(verdicts.items())) or "none") + ".",
        "",
    ]
    if disagreements:
        groups: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
        for d in disagreements:
            kind = d["problem"].split(":")[0]
            groups.setdefault((d["side"], d["query"], kind, d["right"]), []).append(d)
        counted = [
            {
                "side": side,
                "query": query,
                "problem": kind,
                "right": right,
                "count": len(items),
                "datasets": ", ".join(sorted({i["dataset"] for i in items})),
                "example": f"{items[0]['dataset']} {items[0]['trees']}x{items[0]['depth']} row {items[0]['instance']}",
                "why": items[0]["why"],
            }
            for (side, query, kind, right), items in sorted(groups.items())
        ]
        lines += [
            markdown_table(counted, ["side", "query", "problem", "right", "count", "datasets", "example", "why"]),
            "",
        ]
        notable = [d for d in disagreements if not d["right"].startswith("both (different")]
        if notable:
            lines += [
                "Every disagreement that is not a difference of definitions or measures:",
                "",
                markdown_table(
                    notable,
                    ["dataset", "trees", "depth", "instance", "query", "side", "problem", "right", "pyxai_conditions"],
                ),
                "",
            ]
        lines += [
            f"All {len(disagreements)} rows are in `{NAME}{'_quick' if settings.get('quick') else ''}"
            "_disagreements.csv` with PyXAI's conditions and the instance's float32 values. Reproduce one: "
            "`python -m experiments peers_pyxai --datasets D --sizes TREESxDEPTH --instances N` (the instance is "
            "test row `instance` of the 80/20 split with seed 0; N must reach it)."
        ]
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    return "\n".join(lines)


def _parse_sizes(text: str) -> list[tuple[int, int]]:
    out = []
    for part in text.split(","):
        trees, _, depth = part.partition("x")
        out.append((int(trees), int(depth)))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments peers_pyxai", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three datasets, 10 trees, two instances")
    parser.add_argument("--datasets", nargs="+", help=DATASETS_HELP)
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--sizes", help="forest sizes TREESxDEPTH, comma-separated (e.g. 10x3,50x5)")
    parser.add_argument("--instances", type=int, help="test instances per forest")
    parser.add_argument("--limit", type=float, help="per-instance time limit in seconds")
    parser.add_argument("--engines", help="our engines (default: sat and circuit where available)")
    parser.add_argument(
        "--pyxai-modes", default="plain,theory", help="PyXAI configurations: plain, theory (default both)"
    )
    parser.add_argument("--pyxai-python", help=f"PyXAI's interpreter (default $PYXAI_PYTHON or {DEFAULT_PYXAI})")
    parser.add_argument("--results-dir", help="output folder")
    parser.add_argument("--tag", default="", help="suffix of this run's raw file (for runs split across processes)")
    parser.add_argument("--merge", help="comma-separated raw JSON files of earlier runs: write one report from them")
    args = parser.parse_args(argv)
    from rfexplain.engines.registry import available_engines

    python = Path(args.pyxai_python or os.environ.get("PYXAI_PYTHON") or DEFAULT_PYXAI)
    if args.merge:
        return _merge(args.merge.split(","), args.results_dir, python)
    if not python.exists():
        raise PeerMissing(
            f"no PyXAI interpreter at {python}: python3 -m venv {DEFAULT_PYXAI.parent.parent} && "
            f"{DEFAULT_PYXAI.parent}/pip install pyxai (or set $PYXAI_PYTHON)"
        )
    preset = QUICK if args.quick else FULL
    datasets_ = dataset_names(args.datasets, preset["datasets"])
    sizes = _parse_sizes(args.sizes) if args.sizes else preset["sizes"]
    n = args.instances or preset["instances"]
    limit = args.limit or preset["limit"]
    engines = args.engines.split(",") if args.engines else [e for e in ("sat", "circuit") if e in available_engines()]
    modes = [m for m in args.pyxai_modes.split(",") if m]
    if not set(modes) <= set(PYXAI_SOLVERS):
        parser.error(f"--pyxai-modes must be among {sorted(PYXAI_SOLVERS)}")
    pyxai = [PYXAI_SOLVERS[m] for m in modes]
    settings = {
        "datasets": datasets_,
        "sizes": [f"{t}x{d}" for t, d in sizes],
        "instances": n,
        "limit_s": limit,
        "split": "80/20, seed 0",
        "quick": bool(args.quick),
        "tag": args.tag,
    }
    workdir = Path(tempfile.mkdtemp(prefix="rfexplain-pyxai-"))
    rows: list[dict[str, Any]] = []
    disagreements: list[dict[str, Any]] = []
    try:
        for dataset in datasets_:
            for trees, depth in sizes:
                config = Config(dataset, trees, depth, n, limit, data=args.data)
                log.info("%s: start", config.label)
                started = time.perf_counter()
                try:
                    r, d = run_config(config, engines, python, workdir, modes)
                except Exception as exc:
                    log.exception("%s failed", config.label)
                    r, d = (
                        [
                            {
                                "dataset": dataset,
                                "trees": trees,
                                "depth": depth,
                                "solver": "-",
                                "query": "build",
                                "time": None,
                                "status": f"failed: {type(exc).__name__}: {exc}",
                            }
                        ],
                        [],
                    )
                rows += r
                disagreements += d
                log.info(
                    "%s: %d rows, %d disagreements, %.1fs", config.label, len(r), len(d), time.perf_counter() - started
                )
                _write(rows, disagreements, engines, pyxai, settings, args.results_dir, python, partial=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    _write(rows, disagreements, engines, pyxai, settings, args.results_dir, python, partial=False)
    return 0


def _normalise(
    rows: list[dict[str, Any]], disagreements: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """An empty contrastive reason from PyXAI means its time limit ended the search: unsolved."""
    for row in rows:
        if (
            str(row.get("solver", "")).startswith("pyxai")
            and row["query"] == "minimal_contrastive"
            and row["status"] == "ok"
            and not row.get("features")
        ):
            row["status"] = "timeout"
    kept = [d for d in disagreements if not (d["query"] == "minimal_contrastive" and d.get("pyxai_features") == [])]
    for d in kept:
        if d["side"] == "pyxai" and d["problem"].startswith("changing only these features cannot flip"):
            d["why"] = NO_FLIP_WHY
    return rows, kept


def _merge(files: list[str], directory: str | None, python: Path) -> int:
    """One report from the raw JSON files of runs split across processes."""
    rows: list[dict[str, Any]] = []
    disagreements: list[dict[str, Any]] = []
    settings: dict[str, Any] = {}
    engines: list[str] = []
    pyxai: list[str] = []
    for file in files:
        raw = json.loads(Path(file).read_text())
        rows += raw["rows"]
        disagreements += raw["disagreements"]
        engines = engines or raw["engines"]
        pyxai = pyxai or raw["pyxai"]
        for key, value in raw["settings"].items():
            if key == "datasets":
                settings.setdefault(key, [])
                settings[key] += [v for v in value if v not in settings[key]]
            elif key != "tag":
                settings.setdefault(key, value)
    settings["merged_from"] = [Path(f).name for f in files]
    _write(rows, disagreements, engines, pyxai, settings, directory, python, partial=False)
    return 0


def _pyxai_version(python: Path) -> str:
    try:
        out = subprocess.run(
            [str(python), "-c", "from importlib.metadata import version; print(version('pyxai'))"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


_VERSION_CACHE: dict[str, str] = {}


def _write(
    rows: list[dict[str, Any]],
    disagreements: list[dict[str, Any]],
    engines: list[str],
    pyxai: list[str],
    settings: dict[str, Any],
    directory: str | None,
    python: Path,
    *,
    partial: bool,
) -> None:
    out = results_dir(directory)
    suffix = results_stem("", quick=bool(settings.get("quick")))
    rows, disagreements = _normalise(rows, disagreements)
    raw = {"rows": rows, "disagreements": disagreements, "engines": engines, "pyxai": pyxai, "settings": settings}
    tag = settings.get("tag")
    (out / f"{NAME}{suffix}{'_' + tag if tag else ''}.raw.json").write_text(json.dumps(raw, default=str))
    if tag and partial:
        return  # a part of a split run: the merge writes the report
    summary = summarise(rows, engines, pyxai)
    plots: list[Path] = []
    if not partial:
        for query in ("sufficient", "minimal_sufficient", "minimal_contrastive"):
            times = {
                solver: [
                    r["time"] if r["status"] == "ok" else None
                    for r in rows
                    if r["query"] == query and r["solver"] == solver
                ]
                for solver in engines + pyxai
            }
            if any(times.values()):
                plot = cactus_plot(
                    {k: v for k, v in times.items() if v},
                    out / f"{NAME}{suffix}_cactus_{query}.png",
                    title=f"{query}: time per instance",
                    limit=settings["limit_s"],
                )
                if plot:
                    plots.append(plot)
    if str(python) not in _VERSION_CACHE:
        _VERSION_CACHE[str(python)] = _pyxai_version(python)
    write_report(
        NAME,
        rows,
        render(summary, disagreements, rows, engines, pyxai, settings, plots),
        quick=bool(settings.get("quick")),
        options=settings,
        seed=Config.seed,  # every forest and split of this comparison
        directory=directory,
        extra_versions={"pyxai": _VERSION_CACHE[str(python)]},
    )
    write_csv(out / f"{NAME}{suffix}_summary.csv", summary)
    write_csv(
        out / f"{NAME}{suffix}_disagreements.csv",
        disagreements,
        [
            "dataset",
            "trees",
            "depth",
            "instance",
            "query",
            "side",
            "problem",
            "right",
            "why",
            "pyxai_features",
            "pyxai_conditions",
            "conditions_sufficient",
            "conditions_droppable",
            "conditions_droppable_strict",
            "values",
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
