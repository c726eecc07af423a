"""rfexplain's side of the RFxpl benchmarks: the SAT engine in a child process.

Started by ``peers_rfxpl.py``, ``practical_forests.py`` and ``peers_xreason.py`` (through
:class:`experiments._workers.JsonWorker`) as ``python experiments/rfexplain_worker.py MODEL
[CARD] [--prepare]``: it reads the model (a pickled scikit-learn forest, under the hard vote, or
an XGBoost model saved as JSON by ``Booster.save_model``, under its additive vote), converts it
and loads the prefilter's compiled loop (``load_*`` in its ready line), then answers JSON lines.
With ``--prepare`` the engine and every class's formula are built before the ready line
(``prepare_*`` in it), as a peer that encodes its model once at load does, so that no request
pays them. ``{"x": [...]}``: one AXp
(``sufficient_reason``) of the SAT engine; the first request builds the engine (the path
clauses) and the first instance of each predicted class builds that class's formula, both inside
the request's time (``first: true`` says so, with the building part in ``encode_*``).
``{"x": [...], "check": [...]}``: whether that feature set is sufficient for the instance's
decision and which of its features could be dropped (a content check of another explainer's AXp).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from typing import Any


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("card", nargs="?")
    parser.add_argument("--prepare", action="store_true")
    args = parser.parse_args()
    import numpy as np
    import sklearn.ensemble  # noqa: F401  (imported before the clock starts, as on RFxpl's side)

    from rfexplain.engines.base import Instance
    from rfexplain.sat.deciders import leaves
    from rfexplain.sat.engine import SatEngine

    cpu, wall = time.process_time(), time.perf_counter()
    forest = _load(args.model)
    # numba's one-off load of the prefilter's compiled loops belongs to loading, as RFxpl's model
    # loading does (reported as load_*, not in any instance's time); until 2026-12-06 only the
    # branch and bound's was loaded here, and the climb's and the clique search's (about 0.05 s)
    # landed in the first instance's time
    leaves.warm_up(np.dtype(np.int32))
    options = {"card": args.card} if args.card else {}
    ready = {"ready": True, "load_cpu": time.process_time() - cpu, "load_wall": time.perf_counter() - wall}
    engine: SatEngine | None = None
    if args.prepare:
        cpu, wall = time.process_time(), time.perf_counter()
        engine = SatEngine(forest, **options)
        for cls in range(forest.n_classes):
            engine.oracle("not", cls)
        ready.update(prepare_cpu=time.process_time() - cpu, prepare_wall=time.perf_counter() - wall)
    proto.write(json.dumps(ready) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        answer: dict[str, Any]
        try:
            cpu, wall = time.process_time(), time.perf_counter()
            first = engine is None
            if engine is None:
                engine = SatEngine(forest, **options)
            instance = Instance.of(forest, request["x"])
            first = first or ("not", instance.prediction) not in engine._oracles
            engine.oracle("not", instance.prediction)
            encode_cpu, encode_wall = time.process_time() - cpu, time.perf_counter() - wall
            if "check" in request:
                answer = _check(engine, instance, set(request["check"]))
            else:
                reason = engine.sufficient_reason(instance)
                answer = {"ok": True, "features": sorted(int(f) for f in reason.features)}
            answer.update(
                prediction=instance.prediction,
                first=first,
                encode_cpu=encode_cpu,
                encode_wall=encode_wall,
                cpu=time.process_time() - cpu,
                wall=time.perf_counter() - wall,
            )
        except Exception as exc:  # reported to the driver, which records it
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        proto.write(json.dumps(answer) + "\n")
    return 0


def _load(path: str) -> Any:
    """The model at ``path`` as a :class:`rfexplain.Forest` (module docstring)."""
    from rfexplain import Forest

    if path.endswith(".json"):
        import xgboost

        booster = xgboost.Booster()
        booster.load_model(path)
        return Forest.from_sklearn(booster)
    with open(path, "rb") as handle:
        # the hard majority vote: what RFxpl explains, so both sides explain the same classifier
        return Forest.from_sklearn(pickle.load(handle), vote="hard")


def _check(engine: Any, instance: Any, features: set[int]) -> dict[str, Any]:
    """Is ``features`` sufficient for the decision, and which of its features are redundant?"""
    search = engine._search(instance)
    tested = set(engine.forest.tested_features)

    def sufficient(fixed: set[int]) -> bool:
        return not search.has_counterexample(sorted(fixed & tested))

    if not sufficient(features):
        return {"ok": True, "sufficient": False, "redundant": []}
    return {"ok": True, "sufficient": True, "redundant": [f for f in sorted(features) if sufficient(features - {f})]}


if __name__ == "__main__":
    sys.exit(main())
