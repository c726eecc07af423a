"""Command-line options turned into the explainer's and the queries' arguments.

:class:`UsageError` is bad command-line input (one line on stderr, exit status 2);
:func:`explainer_options` reads ``--immutable``, ``--bounds`` and ``--max-memory``;
:func:`query_arguments` reads ``--target`` and ``--limit``; :func:`parse_rows` reads ``--rows``.
"""

from __future__ import annotations

import argparse
from typing import Any

from rfexplain.core.budget import parse_bytes
from rfexplain.core.errors import RFExplainError
from rfexplain.core.queries import QUERY_TABLE, Query

__all__ = ["UsageError", "explainer_options", "query_arguments", "parse_rows", "class_label"]


class UsageError(RFExplainError):
    """Bad command-line input; reported on one line with exit status 2."""


def explainer_options(args: argparse.Namespace, rows: Any) -> dict[str, Any]:
    """The explainer's ``immutable=``, ``bounds=`` and ``data=`` from ``--immutable`` and ``--bounds``
    (``rows``: the rows ``--bounds data`` takes its ranges from, if any)."""
    options: dict[str, Any] = {}
    if getattr(args, "max_memory", None) is not None:
        try:
            options["max_memory"] = parse_bytes(args.max_memory)
        except ValueError as exc:
            raise UsageError(f"--max-memory: {exc}") from None
    if args.immutable:
        options["immutable"] = [name.strip() for name in args.immutable.split(",") if name.strip()]
    if args.bounds is None:
        return options
    if args.bounds.strip() == "data":
        if rows is None:
            raise UsageError("--bounds data takes the ranges from rows: give --dataset or --input")
        options.update(bounds="data", data=rows)
        return options
    bounds: dict[str, tuple[float, float]] = {}
    for item in args.bounds.split(","):
        name, _, span = item.rpartition("=")
        low, colon, high = span.partition(":")
        try:
            if not name.strip() or not colon:
                raise ValueError
            bounds[name.strip()] = (float(low), float(high))
        except ValueError:
            raise UsageError(f"--bounds takes name=low:high pairs or 'data', got {item!r}") from None
    options["bounds"] = bounds
    return options


def query_arguments(spec: Query, args: argparse.Namespace, forest: Any) -> dict[str, Any]:
    """The query's ``target=`` and ``limit=`` from ``--target`` and ``--limit``: a target is
    required by the queries that take one and refused by the others (:class:`UsageError`);
    ``--limit`` is passed as it is (checked by the caller)."""
    kwargs: dict[str, Any] = {}
    if spec.takes_target:
        if args.target is None:
            raise UsageError(f"{spec.name} needs --target CLASS")
        kwargs["target"] = class_label(forest, args.target)
    elif args.target is not None:
        takers = [q.name for q in QUERY_TABLE.values() if q.takes_target]
        raise UsageError(f"{spec.name} takes no target: --target is for {', '.join(takers)}")
    if args.limit is not None:
        kwargs["limit"] = args.limit
    return kwargs


def parse_rows(text: str, n: int) -> range:
    start, sep, stop = text.partition(":")
    try:
        lo = int(start) if start.strip() else 0
        hi = int(stop) if stop.strip() else n
    except ValueError:
        raise UsageError(f"--rows must be START:STOP (integers), got {text!r}") from None
    if not sep:
        hi = lo + 1
    if sep and lo >= hi:
        raise UsageError(f"--rows {text!r} selects no instance: START must be below STOP")
    if not 0 <= lo < hi <= n:
        raise UsageError(f"--rows {text!r} is outside the {n} instances available")
    return range(lo, hi)


def class_label(forest: Any, text: str) -> Any:
    for c in forest.classes:
        if str(c) == text:
            return c
    return text
