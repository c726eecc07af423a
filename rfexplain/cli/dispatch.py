"""The ``rfexplain`` command's entry point: :func:`main` runs a subcommand and turns what it
raises into one line on stderr and an exit status (see :mod:`rfexplain.cli`)."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Sequence
from typing import Any

from rfexplain.cli.batch_command import cmd_batch
from rfexplain.cli.commands import cmd_explain, cmd_info, cmd_report, cmd_train, cmd_warmup
from rfexplain.cli.parser import build_parser
from rfexplain.core.errors import RFExplainError
from rfexplain.core.jit import CompilingInBackgroundWarning

__all__ = ["main", "ISSUES"]


#: Where bugs are reported (printed with an internal error).
ISSUES = "the rfexplain issue tracker"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (argparse exits with 2 on a usage error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    commands = {
        "info": cmd_info,
        "train": cmd_train,
        "explain": cmd_explain,
        "batch": cmd_batch,
        "report": cmd_report,
        "warmup": cmd_warmup,
    }
    with warnings.catch_warnings():
        default_show = warnings.showwarning

        def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
            """The background compilation's notice as one ``rfexplain: note:`` line on stderr."""
            if issubclass(category, CompilingInBackgroundWarning):
                print(f"rfexplain: note: {message}", file=sys.stderr)
            else:
                default_show(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        return _run(args, commands)


def _run(args: argparse.Namespace, commands: dict[str, Any]) -> int:
    try:
        if args.command == "demo":
            if args.pipeline:
                from rfexplain.pipeline_demo import run_pipeline_demo

                return run_pipeline_demo(n_instances=args.instances)
            from rfexplain.demo import run_demo

            return run_demo(n_instances=args.instances, engines=args.engine)
        return commands[args.command](args)
    except BrokenPipeError:
        # the reader of our output stopped (``rfexplain batch ... | head``): end quietly, as
        # command-line tools do, without a second error when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (RFExplainError, OSError) as exc:
        print(f"rfexplain: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rfexplain: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        print("rfexplain: error: out of memory; try a smaller forest or the sat engine", file=sys.stderr)
        return 2
    except Exception as exc:
        if args.debug:
            traceback.print_exc(file=sys.stderr)
        message = " ".join(str(exc).split())
        print(
            f"rfexplain: internal error ({type(exc).__name__}: {message}); this is a bug, please report it to "
            f"{ISSUES}{'' if args.debug else ' with the output of --debug'}",
            file=sys.stderr,
        )
        return 1
