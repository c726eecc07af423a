"""Gradient-boosted classifiers (issue 57): agreement with ``predict`` and SAT-engine time per AXp
and CXp on the library defaults, on the SAT paper's benchmark datasets (80/20 split).

Models per dataset: scikit-learn's ``HistGradientBoostingClassifier()`` and LightGBM's
``LGBMClassifier()`` with their defaults, and XGBoost's ``XGBClassifier`` with 50 trees per class
and depth ``--xgb-depth`` (3; XReason's AAAI 2022 setting uses 50 trees per class, depth 3-4).
Per model:

- agreement of the forest's exact decision (``Forest.predict``) with the model's own ``predict``
  on every test row and on ``--points`` random points drawn uniformly in the box of the data
  (10^5 by default), passed to ``predict`` as float64 numbers;
- CPU seconds per AXp and per CXp (one of each per instance, a cap of ``--query-cap`` each),
  mean and max, after the engine's one-off load (``load_s``: the engine and its first formula);
- the mean AXp size.

Targets (issue 57, idle machine): 100% agreement; mean AXp <= 1 s, max <= 5 s on the default
models. XReason and PyXAI side by side are not run here.

Run: ``python -m experiments boosted [--quick] [--datasets ...] [--instances N] [--points N]``.
Writes ``boosted.{csv,md}`` (``boosted_quick.*`` with ``--quick``) in the results folder. Needs
the optional extra ``boosted`` (``pip install 'rfexplain[boosted]'``: xgboost, lightgbm).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from experiments._common import (
    DATA_HELP,
    DATASETS_HELP,
    Skip,
    cpu_budget,
    data_dir,
    dataset_names,
    markdown_table,
    write_report,
)
from experiments._resume import RESUME_HELP, checkpoint
from experiments.sat_table1 import DEPTHS, SEED

log = logging.getLogger("experiments.boosted")

QUICK_DATASETS = ("iris", "new-thyroid")
MODELS = ("hgb", "lgbm", "xgb")
COLUMNS = (
    "dataset",
    "model",
    "classes",
    "trees",
    "test_rows",
    "agree_test",
    "points",
    "agree_points",
    "load_s",
    "axp_mean",
    "axp_max",
    "cxp_mean",
    "cxp_max",
    "axp_size",
    "past_cap",
)


def _model(kind: str, xgb_depth: int) -> Any:
    if kind == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(random_state=SEED)
    if kind == "lgbm":
        import lightgbm

        return lightgbm.LGBMClassifier(random_state=SEED, verbose=-1)
    import xgboost

    return xgboost.XGBClassifier(n_estimators=50, max_depth=xgb_depth, random_state=SEED, n_jobs=1)


def _timed(query: Any, cap: float) -> tuple[float | None, Any]:
    """CPU seconds of ``query()`` under a ``cap`` CPU-second budget (``None`` past it), and its answer."""
    from rfexplain import BudgetExpired

    budget = cpu_budget(cap)
    cpu = time.process_time()
    try:
        with budget.active():
            answer = query()
    except BudgetExpired:
        return None, None
    return time.process_time() - cpu, answer


def model_row(
    name: str, kind: str, directory: Path, n_inst: int, n_points: int, query_cap: float, xgb_depth: int
) -> dict[str, Any]:
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import LabelEncoder

    from rfexplain import Forest
    from rfexplain.datasets import load
    from rfexplain.engines.base import Instance
    from rfexplain.sat.engine import SatEngine

    data = load(name, directory)
    y = LabelEncoder().fit_transform(data.y)
    X_train, X_test, y_train, _ = train_test_split(data.X, y, test_size=0.2, random_state=SEED, stratify=y)
    model = _model(kind, xgb_depth).fit(X_train, y_train)
    forest = Forest.from_sklearn(model)
    rng = np.random.default_rng(SEED)
    points = rng.uniform(data.X.min(axis=0), data.X.max(axis=0), size=(n_points, data.X.shape[1]))
    agree_test = int((forest.predict(X_test) == model.predict(X_test)).sum())
    agree_points = int((forest.predict(points) == model.predict(points)).sum())
    samples = X_test[rng.permutation(len(X_test))[:n_inst]]
    axps: list[float | None] = []
    cxps: list[float | None] = []
    sizes: list[int] = []
    cpu = time.process_time()
    with SatEngine(forest) as engine:
        engine.oracle("not", Instance.of(forest, samples[0]).prediction)
        load_s = time.process_time() - cpu
        for x in samples:
            instance = Instance.of(forest, x)
            engine.oracle("not", instance.prediction)  # each class's one-off load is not part of the times
            seconds, reason = _timed(lambda: engine.sufficient_reason(instance), query_cap)
            axps.append(seconds)
            if reason is not None:
                sizes.append(len(reason.literals))
            cxps.append(_timed(lambda: engine.necessary_reason(instance), query_cap)[0])
    done_axp = [t for t in axps if t is not None]
    done_cxp = [t for t in cxps if t is not None]
    row = {
        "dataset": name,
        "model": kind,
        "classes": forest.n_classes,
        "trees": forest.n_trees,
        "test_rows": len(X_test),
        "agree_test": f"{agree_test}/{len(X_test)}",
        "points": n_points,
        "agree_points": f"{agree_points}/{n_points}",
        "load_s": load_s,
        "axp_mean": statistics.fmean(done_axp) if done_axp else None,
        "axp_max": max(done_axp, default=None),
        "cxp_mean": statistics.fmean(done_cxp) if done_cxp else None,
        "cxp_max": max(done_cxp, default=None),
        "axp_size": statistics.fmean(sizes) if sizes else None,
        "past_cap": len(axps) - len(done_axp) + len(cxps) - len(done_cxp),
    }
    log.info("%s %s: %s", name, kind, row)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.boosted", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two small datasets, few instances and points")
    parser.add_argument("--data", help=DATA_HELP)
    parser.add_argument("--datasets", nargs="+", help=DATASETS_HELP)
    parser.add_argument("--models", nargs="+", choices=MODELS, help="which models (default all)")
    parser.add_argument("--instances", type=int, help="instances per model for AXp/CXp times (default 25)")
    parser.add_argument("--points", type=int, help="random points per model for agreement (default 100000)")
    parser.add_argument("--query-cap", type=float, help="CPU seconds per AXp or CXp (default 60)")
    parser.add_argument("--xgb-depth", type=int, default=3, help="XGBoost tree depth (default 3)")
    parser.add_argument("--results-dir", help="output folder (default experiments/results)")
    parser.add_argument("--resume", action="store_true", help=RESUME_HELP)
    args = parser.parse_args(argv)
    try:
        import lightgbm  # noqa: F401
        import xgboost  # noqa: F401
    except ImportError as exc:
        raise Skip(f"{exc.name} is not installed: pip install 'rfexplain[boosted]'") from None
    directory = data_dir(args.data)
    if not directory.is_dir():
        raise Skip(f"the data folder {directory} (--data or $RFEXPLAIN_DATA) does not exist")
    names = dataset_names(args.datasets, list(QUICK_DATASETS) if args.quick else list(DEPTHS), DEPTHS)
    models = args.models or list(MODELS)
    n_inst = args.instances or (3 if args.quick else 25)
    n_points = args.points or (10_000 if args.quick else 100_000)
    query_cap = args.query_cap or 60.0
    resume = {"quick": args.quick, "options": vars(args), "resume": args.resume, "directory": args.results_dir}
    with checkpoint("boosted", **resume) as done:  # each (dataset, model) row a unit
        rows = [
            done.unit(
                (dataset, kind),
                partial(model_row, dataset, kind, directory, n_inst, n_points, query_cap, args.xgb_depth),
            )
            for dataset in names
            for kind in models
        ]
        means = [r["axp_mean"] for r in rows if r["axp_mean"] is not None]
        maxima = [r["axp_max"] for r in rows if r["axp_max"] is not None]
        agree = all(
            r["agree_test"].split("/")[0] == r["agree_test"].split("/")[1]
            and r["agree_points"].split("/")[0] == r["agree_points"].split("/")[1]
            for r in rows
        )
        summary = (
            f"Agreement with predict on every test row and random point: {'yes' if agree else 'NO'}. "
            f"Mean AXp <= 1 s on {sum(m <= 1 for m in means)} of {len(means)} models, max AXp <= 5 s on "
            f"{sum(m <= 5 for m in maxima)} of {len(maxima)}; {n_inst} instances per model, {n_points} random "
            f"points. Times are CPU seconds of this process after the engine's one-off load (load_s); "
            f"past_cap counts queries a cap of {query_cap:g} CPU s stopped."
        )
        markdown = "# Gradient-boosted classifiers (SAT engine)\n\n" + summary + "\n\n" + markdown_table(rows, COLUMNS)
        write_report(
            "boosted", rows, markdown, quick=args.quick, options=vars(args), seed=SEED, directory=args.results_dir
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
