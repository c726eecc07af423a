"""RFxpl worker: runs inside RFxpl's own virtual environment, driven by ``peers_rfxpl.py`` and
``practical_forests.py`` through :class:`experiments._workers.JsonWorker`.

Never imported by rfexplain or by the drivers: they start it as
``<rfxpl-venv>/bin/python experiments/rfxpl_worker.py RFXPL_SRC MODEL.pkl``, where ``RFXPL_SRC``
is a snapshot of RFxpl's source (Izza and Marques-Silva, 2021) and ``MODEL.pkl`` a pickled
scikit-learn ``RandomForestClassifier`` (RFxpl explains scikit-learn forests as they are). The
first line written is ``{"ready": true, "load_cpu": s, "load_wall": s}`` once the forest is read
into RFxpl's trees. Requests: ``{"x": [...]}``; answers: ``{"ok": true, "features": [...],
"prediction": class index, "encode_cpu", "encode_wall", "explain_cpu", "explain_wall"}`` (one
AXp as RFxpl's command line computes it: a fresh SAT encoding for the instance, then
deletion-based extraction with Glucose 3) or ``{"ok": false, "error": "..."}``. RFxpl prints, so
the protocol uses a private copy of file descriptor 1 and fd 1 itself is pointed at stderr.
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
    source, model_file = sys.argv[1], sys.argv[2]
    sys.path.insert(0, source)
    try:
        import numpy as np
        from xrf import XRF, RFSklearn  # type: ignore[import-not-found]

        cpu, wall = time.process_time(), time.perf_counter()
        model = RFSklearn(from_file=model_file)
        xrf = XRF(model, model.feature_names, model.targets, 0)
        ready = {"ready": True, "load_cpu": time.process_time() - cpu, "load_wall": time.perf_counter() - wall}
    except Exception as exc:  # reported to the driver
        proto.write(json.dumps({"ready": False, "error": f"{type(exc).__name__}: {exc}"}) + "\n")
        return 1
    proto.write(json.dumps(ready) + "\n")
    for line in sys.stdin:
        request = json.loads(line)
        try:
            x = np.asarray(request["x"], dtype=np.float64)
            cpu, wall = time.process_time(), time.perf_counter()
            xrf.encode(x, "sat")
            encode_cpu, encode_wall = time.process_time() - cpu, time.perf_counter() - wall
            cpu, wall = time.process_time(), time.perf_counter()
            expl = xrf.explain(x, "abd", "sat", False)
            answer = {
                "ok": True,
                "features": sorted(int(f) for f in expl),
                "prediction": int(xrf.enc.target),
                "encode_cpu": encode_cpu,
                "encode_wall": encode_wall,
                "explain_cpu": time.process_time() - cpu,
                "explain_wall": time.perf_counter() - wall,
            }
        except Exception as exc:  # reported to the driver, which records it
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        for attr in ("enc", "x"):  # as RFxpl's command line: nothing carried to the next instance
            if attr in xrf.__dict__:
                delattr(xrf, attr)
        proto.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
