"""Compile every compiled loop of the package into the per-user cache, then mark it ready
(:mod:`rfexplain.core.jit`). Run in the background by the first query of a fresh install, or in
the foreground by ``rfexplain warmup`` (also ``python -m rfexplain.warmup``).

The loops are compiled by calling them: first through each module's own ``warm_up`` (one-node
inputs of the argument types the engines pass), then through real queries of every engine and the
verifier on small forests under both votes, so that the signatures the queries use are the ones
in the cache.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["compile_all", "main"]


def _queries() -> None:
    """Real queries on two small forests (two and three classes), both votes, every engine that
    compiles loops, and the verifier."""
    import numpy as np
    from sklearn.ensemble import RandomForestClassifier

    from rfexplain.explainer import Explainer
    from rfexplain.verify import verify

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    for n_classes in (2, 3):
        y = (X[:, 0] + X[:, 1] > 0).astype(int) + (n_classes == 3) * (X[:, 2] > 0.5).astype(int)
        model = RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0).fit(X, y)
        for vote in ("hard", "soft"):
            sat = Explainer(model, engine="sat", vote=vote)
            for row in X[:3]:
                decision = sat.explain(row)
                reason = decision.sufficient_reason()
                verify(reason, model if vote == "soft" else sat.forest)
                for cxp in decision.necessary_reasons(limit=3):
                    verify(cxp, model if vote == "soft" else sat.forest)
                decision.robustness()
        circuit = Explainer(model, engine="circuit", vote="hard")
        decision = circuit.explain(X[0])
        decision.sufficient_reason()
        decision.robustness()


def compile_all(report: Callable[[str, float], None] | None = None) -> float:
    """Compile (or load from the cache) every compiled loop and mark the cache ready; returns the
    CPU seconds spent. ``report(step, seconds)`` is called after each step."""
    os.environ["RFEXPLAIN_JIT"] = "wait"  # this process compiles whatever it calls
    import numpy as np

    from rfexplain.circuit.compilers import dd_core
    from rfexplain.core import jit
    from rfexplain.sat.deciders import leaves

    steps: list[tuple[str, Callable[[], None]]] = [
        ("SAT engine: branch and bound, climb, clique search", lambda: leaves.warm_up(np.dtype(np.int32))),
        ("circuit engine: vote counter and decision graphs", dd_core.warm_up),
        ("queries of every engine and the verifier", _queries),
    ]
    total = 0.0
    for name, step in steps:
        start = time.process_time()
        step()
        spent = time.process_time() - start
        total += spent
        if report is not None:
            report(name, spent)
    jit.mark_compiled_loops_ready()
    return total


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rfexplain.warmup [--lock FILE]``: compile everything, print each step."""
    parser = argparse.ArgumentParser(prog="python -m rfexplain.warmup", description=__doc__)
    parser.add_argument("--lock", help="a lock file to remove when done (the background compilation's)")
    args = parser.parse_args(argv)
    try:
        compile_all(lambda step, seconds: print(f"compiled: {step} ({seconds:.1f} s)", flush=True))
    finally:
        if args.lock:
            Path(args.lock).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
