"""The commands that answer one question each: ``info``, ``train``, ``explain``, ``report`` and
``warmup`` (``batch`` has its own module, :mod:`rfexplain.cli.batch_command`)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from rfexplain.cli.models import instance_pool, is_regressor, load_forest_or_model, rows_read_whole, train_forest
from rfexplain.cli.options import UsageError, explainer_options, parse_rows, query_arguments
from rfexplain.core.pyvalues import to_python
from rfexplain.core.queries import Kind
from rfexplain.core.queries import query as query_named

__all__ = ["cmd_info", "cmd_train", "cmd_explain", "cmd_report", "cmd_warmup"]


def cmd_info(args: argparse.Namespace) -> int:
    forest, _ = load_forest_or_model(args.model)
    stats = forest.statistics()
    stats["classes"] = list(forest.classes)
    stats["source"] = forest.source
    if args.json:
        print(json.dumps(stats, default=str))
    else:
        for key, value in stats.items():
            print(f"{key:>18}: {value}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    trained = train_forest(args)
    forest = trained.forest
    Path(args.output).write_text(forest.to_json())
    print(
        f"wrote {args.output}: {forest!r}, "
        f"agreement with sklearn predict {forest.agreement(trained.data.X, trained.model)}"
    )
    return 0


def _instance(args: argparse.Namespace, model: Any, data: Any) -> Any:
    from rfexplain.pipelines import is_transforming_pipeline

    if args.values is not None:
        items = args.values.split(",")
        if all("=" in item for item in items):
            return _named_values(items)
        if model is not None and is_transforming_pipeline(model):
            raise UsageError("a pipeline's instance is given by its original columns: --values name=value,...")
        try:
            return [float(v) for v in items]
        except ValueError:
            raise UsageError(
                f"--values must be comma-separated numbers or name=value pairs, got {args.values!r}"
            ) from None
    if data is None:
        raise UsageError("--index needs --dataset (the rows to index into)")
    if not 0 <= args.index < len(data.X):
        raise UsageError(f"--index must be in [0, {len(data.X) - 1}], got {args.index}")
    return data.X[args.index]


def _named_values(items: list[str]) -> dict[str, Any]:
    """``name=value`` items as one row matched by name; a value is read as a CSV reader would
    (an integer, else a number, else the text itself: a category)."""
    row: dict[str, Any] = {}
    for item in items:
        name, _, text = item.rpartition("=")
        name, text = name.strip(), text.strip()
        if name in row:
            raise UsageError(f"--values names {name!r} twice")
        value: Any = text
        for parse in (int, float):
            try:
                value = parse(text)
                break
            except ValueError:
                continue
        row[name] = value
    return row


def cmd_explain(args: argparse.Namespace) -> int:
    from rfexplain import datasets
    from rfexplain.explainer import Explainer

    data = None
    if args.model:
        forest, model = load_forest_or_model(args.model)
        if args.dataset:
            data = datasets.load(args.dataset, args.data)
    elif args.dataset:
        trained = train_forest(args)
        forest, model, data = trained.forest, trained.model, trained.data
    else:
        raise UsageError("give a model file or --dataset")
    if is_regressor(model):
        from rfexplain.cli.regression_command import explain_regression

        return explain_regression(args, model, _instance(args, model, data))
    if any(getattr(args, o) is not None for o in ("within", "at_least", "at_most", "delta", "range_free")):
        raise UsageError("--within, --at-least, --at-most, --delta and --range apply to tree regressors")
    spec = query_named(args.query or ("sufficient_reason" if args.all else "inflated_sufficient_reason"))
    if args.all and spec.all_of is not None:
        spec = query_named(spec.all_of)
    query = spec.name
    kwargs = query_arguments(spec, args, forest)
    if args.limit is not None and not spec.enumerates:
        raise UsageError(f"--limit applies to enumerations, not {query} (it answers one result)")
    explainer = Explainer(
        model if model is not None else forest,
        engine=args.engine,
        feature_names=list(forest.feature_names),  # a dataset's names, for a model fitted on arrays
        vote=args.vote,
        **explainer_options(args, None if data is None else data.X),
    )
    decision = explainer.explain(_instance(args, model, data))
    result = decision.ask(query, timeout=args.timeout, **kwargs)
    output: dict[str, Any] = {
        "prediction": to_python(decision.prediction),
        "sklearn_prediction": to_python(decision.sklearn_prediction),
        "engine": args.engine,
        "query": query,
    }
    if spec.kind is Kind.NUMBER:
        output["robustness"] = None if result == math.inf else result
    elif hasattr(result, "complete"):
        output["reasons"] = [r.to_dict() for r in result]
        output["complete"] = result.complete
        output["stopped_by"] = result.stopped_by
    else:
        output["reasons"] = [] if result is None else [result.to_dict()]
    explainer.close()
    if args.json:
        print(json.dumps(output, default=str))
        return 0
    print(f"prediction: {output['prediction']!r} (engine {args.engine}, query {query})")
    if spec.kind is Kind.NUMBER:
        print(f"{query}: {'cannot be flipped' if result == math.inf else result}")
    else:
        if not output["reasons"]:
            if output.get("complete") is False:  # none found yet, not none at all
                print("no reason found before the budget ran out")
            else:
                print("no reason: the decision cannot be changed that way")
        for reason in output["reasons"]:
            print(f"  {reason['text']}")
            if reason.get("actions"):  # a flip: the change that gets the other class
                print(f"    {reason['actions']}")
        if output.get("complete") is False:
            print(f"  (incomplete: stopped by {output['stopped_by']})")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from rfexplain.explainer import Explainer
    from rfexplain.viz.report import write_report

    bad: dict[int, str] = {}  # --input rows wrong on their own: failed rows of the report
    forest, model, pool, pool_ids = instance_pool(args, args.model or args.model_option, bad)
    chosen = parse_rows(args.rows, len(pool)) if args.rows else range(len(pool))
    source = model if model is not None else forest
    names = list(forest.feature_names)
    constraints = explainer_options(args, rows_read_whole(pool, bad))
    with Explainer(source, engine=args.engine, feature_names=names, vote=args.vote, **constraints) as explainer:
        rows = write_report(
            explainer,
            pool.iloc[list(chosen)] if hasattr(pool, "iloc") else pool[list(chosen)],  # a pipeline's original rows
            args.out,
            indices=[pool_ids[k] for k in chosen],
            compare_engine=args.compare_engine,
            max_sections=args.max_sections,
            n_jobs=args.jobs,
            row_errors={n: bad[c] for n, c in enumerate(chosen) if c in bad},
        )
    failed = sum(1 for r in rows if r.error)
    print(f"wrote {args.out}: {len(rows)} rows, {failed} failed", file=sys.stderr)
    return 1 if failed else 0


def cmd_warmup(args: argparse.Namespace) -> int:
    """Compile every compiled loop into the cache, one line per step."""
    from rfexplain.core.jit import cache_dir
    from rfexplain.warmup import compile_all

    print(f"compiling rfexplain's loops into {cache_dir()} (once per install)", flush=True)
    total = compile_all(lambda step, seconds: print(f"  {step}: {seconds:.1f} CPU s", flush=True))
    print(f"ready ({total:.1f} CPU s)")
    return 0
