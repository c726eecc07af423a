"""PyXAI worker: runs inside PyXAI's own virtual environment, driven by ``peers_pyxai.py``.

Never imported by rfexplain or by the benchmark driver: the driver starts it as
``<pyxai-venv>/bin/python experiments/pyxai_worker.py MODEL.pkl [theory]`` and talks to it in JSON lines.
PyXAI prints to stdout (also from C++), so the protocol uses a private copy of file descriptor 1
and fd 1 itself is pointed at stderr.

Requests (one JSON object a line): ``{"query": "sufficient" | "minimal_sufficient" |
"minimal_contrastive", "x": [...], "time_limit": seconds}``. Answers: ``{"ok": true, "time": s,
"prediction": PyXAI's decision as text, "features": [...], "literals": [...], "conditions": [...]}`` or
``{"ok": false, "error": "..."}``. The first line written is ``{"ready": true}`` once PyXAI is
imported and the model loaded.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import pickle

    import numpy as np
    import pandas as pd
    from pyxai import Explaining, Learning

    with open(sys.argv[1], "rb") as handle:
        bundle = pickle.load(handle)
    model, X, y = bundle["model"], bundle["X"], bundle["y"]
    names = [f"f{i}" for i in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    frame["target"] = y
    _, rf = Learning.ModelIO.import_models(model, frame, instances_type="tabular")
    rf = rf[0] if isinstance(rf, list) else rf
    theory = len(sys.argv) > 2 and sys.argv[2] == "theory"
    if theory:  # order links between the conditions on one feature (PyXAI's domain theory)
        explainer = Explaining.initialize(rf, instance=np.asarray(X[0]), features_type={"numerical": Learning.DEFAULT})
    else:
        explainer = Explaining.initialize(rf, instance=np.asarray(X[0]))
    proto.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        try:
            explainer.set_instance(np.asarray(request["x"], dtype=np.float64))
            limit = request.get("time_limit")
            query = request["query"]
            started = time.perf_counter()
            if query == "sufficient":
                reason = explainer.sufficient_reason(time_limit=limit)
            elif query == "minimal_sufficient":
                reason = explainer.minimal_sufficient_reason(time_limit=limit)
            elif query == "minimal_contrastive":
                reason = explainer.minimal_contrastive_reason(time_limit=limit)
            else:
                raise ValueError(f"unknown query {query!r}")
            elapsed = time.perf_counter() - started
            contrastive = query == "minimal_contrastive"
            if reason is None or (isinstance(reason, (tuple, list)) and len(reason) == 0 and contrastive):
                answer = {
                    "ok": True,
                    "time": elapsed,
                    "empty": True,
                    "features": [],
                    "literals": [],
                    "timed_out": bool(getattr(explainer, "elapsed_time", 0) == getattr(explainer, "TIMEOUT", object())),
                }
            else:
                if contrastive and reason and isinstance(reason[0], (tuple, list)):
                    reason = reason[0]
                details = explainer.to_features(
                    reason, eliminate_redundant_features=False, details=True, contrastive=contrastive
                )
                features = sorted(int(name[1:]) for name in details)
                conditions = [c["string"] for conds in details.values() for c in conds]
                answer = {
                    "ok": True,
                    "time": elapsed,
                    "timed_out": bool(getattr(explainer, "elapsed_time", 0) == getattr(explainer, "TIMEOUT", object())),
                    "features": features,
                    "literals": [int(lit) for lit in reason],
                    "conditions": conditions,
                }
            answer["prediction"] = str(explainer.target_prediction)
        except Exception as exc:  # reported to the driver, which records it
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        proto.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
