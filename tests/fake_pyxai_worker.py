"""A stand-in for experiments/pyxai_worker.py (no PyXAI): answers at once, or hangs on
``minimal_sufficient`` so that the driver has to kill it. Prints junk on stdout like PyXAI."""

import json
import os
import sys
import time

proto = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
print("stray PyXAI-like chatter on stdout")
proto.write(json.dumps({"ready": True}) + "\n")
for line in sys.stdin:
    request = json.loads(line)
    if request["query"] == "minimal_sufficient":
        time.sleep(600)
    proto.write(
        json.dumps(
            {
                "ok": True,
                "time": 0.001,
                "features": [0],
                "literals": [1],
                "conditions": ["f0 > 1"],
                "prediction": "1",
                "pid": os.getpid(),
            }
        )
        + "\n"
    )
