"""Benchmarks reproducing the papers' tables; run them with ``python -m experiments <name>``.

Never imported by the ``rfexplain`` package. See ``experiments/README.md``.
"""

import os

# The benchmarks measure the engines with their compiled loops (compiled in the process on first
# use, before the timed queries warm them up), never the uncompiled route a fresh install takes
# while its loops compile in the background; ``cold_start`` sets its own processes' mode.
os.environ.setdefault("RFEXPLAIN_JIT", "wait")
