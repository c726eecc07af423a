"""
SAT against circuit: a small timing benchmark
=============================================

A research-style measurement, at a size that runs in seconds: for a few small forests (hard vote,
so that both engines answer), the CPU time of one sufficient reason (AXp) and of all necessary
reasons (CXps) per test instance, with the ``sat`` engine and with the ``circuit`` engine (whose
first query also compiles the class formulas). Both engines must give the same answers; the
benchmarks of ``experiments/`` do this at the papers' sizes. Times depend on the machine; the
compiled loops are used (the site is built with ``RFEXPLAIN_JIT=wait``).
"""

import time

import matplotlib.pyplot as plt
import numpy as np

import rfexplain as rx
from rfexplain.datasets import train_forest

FORESTS = [("iris", 20, 3), ("wine", 10, 3), ("banknote", 20, 4), ("ecoli", 20, 3), ("new-thyroid", 20, 3)]
INSTANCES = 6


def cpu(call):
    """The call's result and the CPU seconds it took."""
    start = time.process_time()
    result = call()
    return result, time.process_time() - start


rows = []
for name, trees, depth in FORESTS:
    trained = train_forest(name, trees=trees, depth=depth, test_size=0.2, vote="hard")
    answers = {}
    for engine in ("sat", "circuit"):
        explainer = rx.Explainer(trained.forest, engine=engine)
        axp_times, cxp_times, got = [], [], []
        for x in trained.X_test[:INSTANCES]:
            d = explainer.explain(x)
            axp, t_axp = cpu(d.sufficient_reason)
            cxps, t_cxp = cpu(lambda d=d: {r.features for r in d.necessary_reasons()})
            axp_times.append(t_axp)
            cxp_times.append(t_cxp)
            got.append((axp.features, cxps))
        answers[engine] = got
        # the first query encodes (sat) or compiles (circuit) the forest: reported on its own
        rows.append((f"{name}\n{trees}x{depth}", engine, axp_times[0], np.median(axp_times[1:]), np.median(cxp_times)))
    assert answers["sat"] == answers["circuit"], name  # the two engines give the same reasons

print(f"{'forest':<20} {'engine':<8} {'first AXp':>10} {'AXp':>8} {'all CXps':>9}  (CPU s)")
for label, engine, first, axp, cxp in rows:
    print(f"{label.replace(chr(10), ' '):<20} {engine:<8} {first:10.4f} {axp:8.4f} {cxp:9.4f}")

# %%
# The first query (which builds the engine's formula or circuit), then the median CPU time per
# instance of one sufficient reason and of all necessary reasons, on a log scale:
labels = list(dict.fromkeys(r[0] for r in rows))
fig, axes = plt.subplots(1, 3, figsize=(11, 3.5), sharey=True)
titles = ("first query (with the build)", "one sufficient reason (median)", "all necessary reasons (median)")
for ax, column, title in zip(axes, (2, 3, 4), titles):
    for offset, engine in ((-0.2, "sat"), (0.2, "circuit")):
        values = [r[column] for r in rows if r[1] == engine]
        ax.bar(np.arange(len(labels)) + offset, values, width=0.4, label=engine)
    ax.set_xticks(np.arange(len(labels)), labels, fontsize=7)
    ax.set_yscale("log")
    ax.set_title(title)
axes[0].set_ylabel("CPU s per instance")
axes[2].legend(loc="upper right")
fig.tight_layout()
