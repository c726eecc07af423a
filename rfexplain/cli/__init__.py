"""The ``rfexplain`` command line.

``rfexplain demo`` explains a few iris decisions with every available engine; ``rfexplain info``
describes a saved forest or model; ``rfexplain train`` fits a forest on a dataset and saves it as
JSON; ``rfexplain explain`` answers one query about one instance; ``rfexplain batch`` answers one
query about many instances in parallel and writes JSON lines, CSV or Parquet; ``rfexplain report``
writes a self-contained HTML report.

Errors: bad input (an :class:`~rfexplain.core.errors.RFExplainError`, a file that cannot be read
or written, or an argparse usage error) prints one line on stderr and exits with status 2. Any
other exception is a bug of rfexplain: one line asking to report it, exit status 1; ``--debug``
prints the traceback too. Ctrl-C prints one line and exits with status 130 (``batch`` has
written every record finished before it; ``--resume`` completes the output); running out of
memory prints one line and exits with status 2.

The modules, in the order they build on each other:

- :mod:`~rfexplain.cli.parser`: the argument parser (:func:`build_parser`);
- :mod:`~rfexplain.cli.options`: options turned into the explainer's and the queries' arguments,
  and :class:`UsageError`;
- :mod:`~rfexplain.cli.inputs`: the ``--input`` CSV of instances;
- :mod:`~rfexplain.cli.models`: the model (saved, or trained on ``--dataset``) and its rows;
- :mod:`~rfexplain.cli.commands`: ``info``, ``train``, ``explain``, ``report`` and ``warmup``;
- :mod:`~rfexplain.cli.batch_command`: ``batch``;
- :mod:`~rfexplain.cli.dispatch`: :func:`main`, the exit statuses.
"""

from rfexplain.cli.batch_command import cmd_batch
from rfexplain.cli.commands import cmd_explain, cmd_info, cmd_report, cmd_train, cmd_warmup
from rfexplain.cli.dispatch import ISSUES, main
from rfexplain.cli.inputs import read_batch_input
from rfexplain.cli.models import load_forest_or_model, train_forest
from rfexplain.cli.options import UsageError
from rfexplain.cli.parser import QUERY_CHOICES, build_parser

__all__ = [
    "main",
    "build_parser",
    "QUERY_CHOICES",
    "ISSUES",
    "UsageError",
    "load_forest_or_model",
    "read_batch_input",
    "train_forest",
    "cmd_info",
    "cmd_train",
    "cmd_explain",
    "cmd_batch",
    "cmd_report",
    "cmd_warmup",
]
