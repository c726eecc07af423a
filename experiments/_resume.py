"""Resumable benchmark runs: ``python -m experiments NAME --resume`` keeps an interrupted run's work.

A resumable benchmark computes its work in **units** (one instance's timings, one dataset's row)
through :meth:`Checkpoint.unit`, which records each unit as it finishes: one JSON line appended
to ``<stem>.partial.jsonl`` in the results folder and flushed, after a first line holding the
run's options. When the run ends normally the file is removed; a Ctrl-C, a crash or a reboot
leaves it, every finished unit on a whole line (a line torn by the crash is dropped).

Run again with ``--resume`` and the units recorded by a run **with the same options** are kept
(their recorded values, not computed again) and only the others are computed. Options that
differ are refused (:class:`CannotResume`, naming them), as ``rfexplain batch --resume`` refuses
an output written by another run: the same check, :func:`rfexplain.batch.streaming.run_mismatch`.
``--resume`` where nothing was recorded starts afresh; a run without ``--resume`` discards what
an interrupted run left (with a warning).

A unit's value is what the benchmark computed, as JSON gives it back (lists for tuples, string
keys): a fresh run gets its values back the same way, so a resumed run and an uninterrupted one
build their tables from the same kinds of values. Options that only say where results go
(``--results-dir``) or whether to resume are not part of the check.

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> with checkpoint("demo", quick=True, options={"cap": 5}, resume=False, directory=folder) as done:
...     done.unit(("iris", 0), lambda: {"time": 0.5, "size": (1, 2)})
{'time': 0.5, 'size': [1, 2]}
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from experiments._common import results_dir, results_stem

__all__ = ["CannotResume", "Checkpoint", "checkpoint", "NO_CHECKPOINT", "RESUME_HELP", "PARTIAL_SUFFIX"]

log = logging.getLogger(__name__)

#: Suffix of the file of a run's finished units, beside its results.
PARTIAL_SUFFIX = ".partial.jsonl"
#: The help of every resumable benchmark's ``--resume`` option.
RESUME_HELP = (
    "keep the finished units of an interrupted run with the same options (its .partial.jsonl in the results "
    "folder) and compute only the others; refused when the options differ"
)
#: Options that do not change what a run computes (``out``: ``add_tables``' results folder).
NOT_CHECKED = frozenset({"resume", "results_dir", "out"})
#: What the first line of a units file says it is.
FORMAT = "rfexplain-experiments-units"


class CannotResume(Exception):
    """``--resume`` refused: the recorded units were computed with other options, or the file is
    not a units file. The message says which, and what to do."""


def _json(value: Any) -> Any:
    """A value JSON cannot write as one it can: numpy scalars and arrays as Python values, anything
    else (a path among the options) as its text."""
    return value.tolist() if hasattr(value, "tolist") else str(value)


def _plain(value: Any) -> Any:
    """``value`` as JSON gives it back."""
    return json.loads(json.dumps(value, default=_json))


class Checkpoint:
    """The finished units of one benchmark run, recorded as they finish (see the module docstring).

    ``path`` is the units file (``None``: nothing is recorded, every unit is computed);
    ``options`` the run's options; with ``resume`` the units of an earlier run with the same
    options are kept.
    """

    def __init__(self, path: str | os.PathLike[str] | None, options: Mapping[str, Any], *, resume: bool) -> None:
        self.path = None if path is None else Path(path)
        self.options = _plain({k: v for k, v in options.items() if k not in NOT_CHECKED})
        self.values: dict[str, Any] = {}
        #: How many units were kept from the earlier run.
        self.kept = 0
        #: Set by a Ctrl-C (:func:`checkpoint`): a unit that finishes after it is not recorded.
        self.interrupted = False
        self._file: IO[str] | None = None
        self._lock = threading.Lock()  # units may finish in several threads (circuit_tables --jobs)
        if self.path is None:
            return
        if self.path.exists():
            if resume:
                self._load()
            else:
                log.warning("%s: discarding the units of an earlier run (--resume keeps them)", self.path.name)
        elif resume:
            log.info("%s: nothing recorded to resume, starting afresh", self.path.name)
        self.kept = len(self.values)
        if self.kept:
            log.info("%s: %d finished units kept", self.path.name, self.kept)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"format": FORMAT, "options": self.options}) + "\n")
            for key, value in self.values.items():
                handle.write(json.dumps({"key": json.loads(key), "value": value}) + "\n")
        self._file = open(self.path, "a", encoding="utf-8")

    def _load(self) -> None:
        from rfexplain.batch.streaming import run_mismatch

        assert self.path is not None
        text = self.path.read_text(encoding="utf-8")
        lines = text[: text.rfind("\n") + 1].splitlines()  # a line torn by a crash is dropped
        try:
            head = json.loads(lines[0]) if lines else {}
        except ValueError:
            head = {}
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            raise CannotResume(f"cannot resume: {self.path} is not a file of finished units; remove it")
        names = {k: "--" + k.replace("_", "-") for k in set(head.get("options", {})) | set(self.options)}
        differ = run_mismatch(head.get("options", {}), self.options, names)
        if differ:
            raise CannotResume(
                f"cannot resume {self.path.name}: its units were computed with other options ({differ}); run "
                "without --resume to start over"
            )
        for number, line in enumerate(lines[1:], start=2):
            try:
                doc = json.loads(line)
                self.values[json.dumps(doc["key"])] = doc["value"]
            except (ValueError, KeyError, TypeError):
                raise CannotResume(f"cannot resume: line {number} of {self.path} is not a finished unit") from None

    def unit(self, key: Sequence[Any], compute: Callable[[], Any]) -> Any:
        """The value of the unit named ``key`` (a sequence of JSON values, such as ``(dataset,
        instance)``): the recorded one when an earlier run finished it, else ``compute()``,
        recorded at once; either way as JSON gives it back."""
        if self.path is None:
            return _plain(compute())
        name = json.dumps(_plain(list(key)))
        if name in self.values:
            return self.values[name]
        value = _plain(compute())
        if self.interrupted:  # it ran into the Ctrl-C (a child process it waited for was stopped too)
            return value
        with self._lock:
            self.values[name] = value
            if self._file is not None:
                self._file.write(json.dumps({"key": json.loads(name), "value": value}) + "\n")
                self._file.flush()
        return value

    def close(self, *, complete: bool) -> None:
        """Stop recording; a complete run removes its file, and so does one that finished no
        unit; another keeps it for ``--resume``."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if self.path is not None and (complete or not self.values):
            self.path.unlink(missing_ok=True)


#: Records nothing and computes every unit (a benchmark's functions called from elsewhere).
NO_CHECKPOINT = Checkpoint(None, {}, resume=False)


@contextlib.contextmanager
def checkpoint(
    name: str,
    *,
    quick: bool,
    options: Mapping[str, Any],
    resume: bool,
    directory: str | os.PathLike[str] | None = None,
    suffix: str = "",
) -> Iterator[Checkpoint]:
    """The :class:`Checkpoint` of a run of benchmark ``name``, whose file sits beside its results
    (``<stem>.partial.jsonl``, :func:`~experiments._common.results_stem`): removed when the block
    ends normally, kept when it raises (``KeyboardInterrupt`` included) for ``--resume``.

    Inside the block a Ctrl-C marks the checkpoint interrupted before it raises
    ``KeyboardInterrupt``, so that no unit finishing after it is recorded: the Ctrl-C also stops
    the child processes a unit may wait for, whose end would otherwise be recorded as the unit's
    result (a thread of ``circuit_tables --jobs`` still waiting for its dataset, say)."""
    stem = results_stem(name, quick=quick, suffix=suffix)
    done = Checkpoint(results_dir(directory) / f"{stem}{PARTIAL_SUFFIX}", options, resume=resume)
    previous = signal.getsignal(signal.SIGINT)
    watching = callable(previous) and threading.current_thread() is threading.main_thread()

    def interrupted(signum: int, frame: Any) -> None:
        done.interrupted = True
        if callable(previous):
            previous(signum, frame)

    if watching:
        signal.signal(signal.SIGINT, interrupted)
    try:
        yield done
    except BaseException:
        done.close(complete=False)
        raise
    finally:
        if watching:
            signal.signal(signal.SIGINT, previous)
    done.close(complete=True)
