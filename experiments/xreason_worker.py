"""XReason worker: runs inside XReason's own virtual environment, driven by ``peers_xreason.py``.

Never imported by rfexplain or by the driver: it is started as
``<xreason-venv>/bin/python experiments/xreason_worker.py XREASON_SRC MODE ...``, where
``XREASON_SRC`` is a snapshot of XReason's repository (Ignatiev, Izza, Stuckey and
Marques-Silva, AAAI 2022; its ``src`` folder is put on the path). Two modes:

``train CSV DEPTH OUTDIR``
    XReason's own training (what ``aaai22-train-all.py`` runs, ``xreason.py -t -n 50 -d DEPTH``):
    its ``Data`` reads the CSV (distinct lines, label last), its ``XGBooster`` trains an
    ``XGBClassifier`` of 50 trees per class and depth ``DEPTH`` on an 80/20 split (its seed, 7) and
    pickles the model in ``OUTDIR``; the booster is also saved as JSON
    (``Booster.save_model``) for the other side. Writes one JSON line: the pickle's and the JSON's
    paths, the classes, the accuracies, the first test rows (``test``).

``explain MODEL.pkl``
    XReason's MaxSAT explainer as its AAAI'22 experiment script sets it up
    (``aaai22-experiment.py``: ``-s g3 -z -X abd -R lin -u -N 1 -e mx``): the model is loaded and
    encoded once, and the explainer and its per-class MaxSAT oracles built, before the first line,
    ``{"ready": true, "load_cpu": s, "load_wall": s}``. Requests ``{"x": [...]}``; answers
    ``{"ok": true, "features": [...], "prediction": class index (XReason's), "predict": class
    index (the model's own ``predict`` on the float32 row), "cpu": s, "wall": s, "xreason_time": s
    (XReason's own measure, user time), "calls": oracle calls}`` or ``{"ok": false, "error": ...}``.

XReason prints, so the protocol uses a private copy of file descriptor 1 and fd 1 itself is
pointed at stderr.
"""

from __future__ import annotations

import json
import os
import sys
import time

#: The explainer's options in the AAAI'22 experiment script (``moptions``, ``--relax 0``).
AAAI22_MAXSAT = "--relax 0 -s g3 -z -X abd -R lin -u -N 1 -e mx -x inst"


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    source, mode, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    sys.path.insert(0, os.path.join(source, "src"))
    try:
        if mode == "train":
            proto.write(json.dumps(train(*args)) + "\n")
            return 0
        xgb, ready = load(args[0])
    except Exception as exc:  # reported to the driver
        proto.write(json.dumps({"ready": False, "ok": False, "error": f"{type(exc).__name__}: {exc}"}) + "\n")
        return 1
    proto.write(json.dumps(ready) + "\n")
    for line in sys.stdin:
        proto.write(json.dumps(explain(xgb, json.loads(line)["x"])) + "\n")
    return 0


def train(csv: str, depth: str, outdir: str) -> dict[str, object]:
    from data import Data  # type: ignore[import-not-found]
    from options import Options  # type: ignore[import-not-found]
    from xgbooster import XGBooster  # type: ignore[import-not-found]

    options = Options(["xreason.py", "-t", "-n", "50", "-d", depth, "-o", outdir, csv])
    cpu = time.process_time()
    data = Data(filename=csv, mapfile=options.mapfile, separator=options.separator, use_categorical=False)
    xgb = XGBooster(options, from_data=data)
    train_accuracy, test_accuracy, model = xgb.train()
    path = os.path.join(outdir, "model.json")
    model.get_booster().save_model(path)
    return {
        "ok": True,
        "model": xgb.modfile,
        "json": path,
        "classes": int(xgb.num_class),
        "rows": len(xgb.X),
        "train_accuracy": float(train_accuracy),
        "test_accuracy": float(test_accuracy),
        "train_cpu": time.process_time() - cpu,
        "test": [[float(v) for v in row] for row in xgb.X_test],
    }


def load(model: str) -> tuple[object, dict[str, object]]:
    from options import Options
    from xgbooster import XGBooster
    from xgbooster.explain import MXExplainer  # type: ignore[import-not-found]

    options = Options(["xreason.py", *AAAI22_MAXSAT.split(), model])
    cpu, wall = time.process_time(), time.perf_counter()
    xgb = XGBooster(options, from_model=model)
    xgb.encode(test_on=None)
    # what XGBooster.explain builds on its first call (the AAAI'22 script's timer starts after it)
    xgb.x = MXExplainer(xgb.enc, xgb.intvs, xgb.imaps, xgb.ivars, xgb.feature_names, xgb.num_class, options, xgb)
    ready = {"ready": True, "load_cpu": time.process_time() - cpu, "load_wall": time.perf_counter() - wall}
    return xgb, ready


def explain(xgb: object, values: list[float]) -> dict[str, object]:
    import numpy as np

    try:
        cpu, wall = time.process_time(), time.perf_counter()
        expls = xgb.explain(list(values))  # type: ignore[attr-defined]
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        x = xgb.x  # type: ignore[attr-defined]
        # an explanation is a list of feature categories; their literals name the features
        # (as MXExplainer.explain's verbose output maps them)
        literals = [h for c in expls[0] for h in x.hypos[x.fcats[c][0] : x.fcats[c][1] + 1]]
        answer = {
            "ok": True,
            "features": sorted({int(x.v2feat[h]) for h in literals}),
            "prediction": int(x.out_id),
            "predict": int(xgb.model.predict(np.asarray([values], dtype=np.float32))[0]),  # type: ignore[attr-defined]
            "cpu": cpu,
            "wall": wall,
            "xreason_time": float(x.time),
            "calls": int(x.calls),
        }
        x.calls = 0  # as the AAAI'22 script does after each instance
    except Exception as exc:  # reported to the driver, which records it
        answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    return answer


if __name__ == "__main__":
    sys.exit(main())
