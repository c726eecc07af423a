"""``rfexplain explain`` on a tree regressor: a query about the band the prediction is in
(``--within LOW HIGH``, ``--at-least``, ``--at-most``; by default the prediction ``± --delta``),
or the exact range of the prediction over some free features (``--range``); and the explainer
``rfexplain batch`` asks the band's question of many rows with."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from rfexplain.cli.options import UsageError
from rfexplain.core.queries import Kind
from rfexplain.core.queries import query as query_named

__all__ = ["explain_regression", "band_arguments", "regression_batch"]


def band_arguments(args: argparse.Namespace, regressor: bool) -> dict[str, Any]:
    """The band ``--within``, ``--at-least`` and ``--at-most`` name, as the regression explainer's
    ``within=``, ``at_least=`` and ``at_most=`` (none: the prediction ``± --delta``; the explainer
    refuses a band it cannot take); refused for a classifier."""
    given = [o for o in ("within", "at_least", "at_most", "delta") if getattr(args, o, None) is not None]
    if not regressor:
        if given:
            raise UsageError("--within, --at-least, --at-most and --delta apply to tree regressors")
        return {}
    within = None if args.within is None else (float(args.within[0]), float(args.within[1]))
    return {"within": within, "at_least": args.at_least, "at_most": args.at_most}  # checked by the explainer


def _refuse_constraints(args: argparse.Namespace) -> None:
    given = [o for o in ("immutable", "bounds", "max_memory") if getattr(args, o, None) is not None]
    if given:
        names = ", ".join("--" + o.replace("_", "-") for o in given)
        raise UsageError(f"{names}: not available for tree regressors yet (classifiers only)")


def regression_batch(args: argparse.Namespace, model: Any, band: dict[str, Any]) -> tuple[Any, Any]:
    """``(explainer, asked)`` of ``rfexplain batch`` on a tree regressor: the regression explainer
    (its ``iter_explain`` takes the ``band``) and the batch it runs (:class:`~rfexplain.regression.batch.BandBatch`,
    which fingerprints the run)."""
    from rfexplain.regression import RegressionExplainer
    from rfexplain.regression.batch import BandBatch

    _refuse_constraints(args)
    explainer = RegressionExplainer(model, args.engine, delta=args.delta)
    return explainer, BandBatch(explainer, **band)


def explain_regression(args: argparse.Namespace, model: Any, x: Any) -> int:
    """Answer ``args``'s query (or ``--range``) about the regressor ``model`` on ``x``; print it."""
    from rfexplain.regression import RegressionExplainer

    _refuse_constraints(args)
    band = band_arguments(args, True)
    explainer = RegressionExplainer(model, args.engine, delta=args.delta)
    decision = explainer.explain(x, **band)
    output: dict[str, Any] = {
        "prediction": float(decision.value),
        "sklearn_prediction": decision.sklearn_value,
        "band": [decision.band.low, decision.band.high],
        "decision": decision.prediction,
        "engine": args.engine,
    }
    if args.range_free is not None:
        free = [int(f) if f.strip().isdigit() else f.strip() for f in args.range_free.split(",") if f.strip()]
        moved = decision.prediction_range(free, timeout=args.timeout)
        output.update(query="range", free=list(moved.free), low=float(moved.low), high=float(moved.high))
        text = f"range when only {', '.join(explainer.forest.feature_names[f] for f in moved.free)} change: {moved}"
    else:
        spec = query_named(args.query or ("sufficient_reasons" if args.all else "sufficient_reason"))
        if spec.kind is Kind.NUMBER:
            result = decision.ask(spec.name, timeout=args.timeout)
            output.update(query=spec.name, robustness=None if result == math.inf else result)
            text = f"{spec.name}: {'cannot be flipped' if result == math.inf else result}"
        else:
            kwargs = {"limit": args.limit} if spec.enumerates else {}
            result = decision.ask(spec.name, timeout=args.timeout, **kwargs)
            reasons = list(result) if spec.enumerates else ([] if result is None else [result])
            output.update(query=spec.name, reasons=[r.to_dict() for r in reasons])
            text = "\n".join(f"  {r}" for r in reasons) or "  no reason"
    if args.json:
        print(json.dumps(output, default=str))
        return 0
    print(
        f"prediction: {output['prediction']!r} ({decision.prediction} the band {decision.band}; "
        f"engine {args.engine}, query {output['query']})"
    )
    print(text)
    return 0
