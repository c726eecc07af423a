"""A batch's output file, written record by record as they finish, and resumable (``rfexplain batch -o``).

:class:`StreamingOutput` writes each record to its file as it arrives (JSON lines and CSV
appended and flushed; Parquet through JSON lines beside it), then rewrites the file in row
order by a temporary file renamed over it (:func:`replace_atomically`), so that no output is
ever half of a file: a crash leaves whole records (a line torn by the crash itself is dropped
when resuming). The run that writes it is recorded beside it (``OUT.run.json``: fingerprints of
the forest, engine, options and rows; the query, its arguments, the timeout and the format), and
a resumed run explains only the rows missing from the output, after checking that it is the
same run (:func:`run_mismatch` says what differs).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from rfexplain.batch.formats import CSV_COLUMNS, csv_line, csv_row
from rfexplain.core.errors import InvalidArgumentError
from rfexplain.core.records import BatchRecord

__all__ = ["StreamingOutput", "ResumeError", "RUN_SUFFIX", "PARTIAL_SUFFIX", "replace_atomically", "run_mismatch"]


#: Suffix of the side file beside an output of :class:`StreamingOutput`: which run wrote it.
RUN_SUFFIX = ".run.json"
#: Suffix of the JSON lines a Parquet output streams into until it is written at the end.
PARTIAL_SUFFIX = ".partial.jsonl"


#: How a resume error names each field of a run record that differs.
_RUN_FIELDS = {
    "model": "the model (forest, engine class or options)",
    "engine": "the engine",
    "query": "the query",
    "arguments": "the query's arguments",
    "timeout": "the timeout",
    "format": "the format",
    "rows": "the rows",
}


class ResumeError(InvalidArgumentError):
    """An output cannot be resumed: written by another run (model, query, options or rows), or
    not by :class:`StreamingOutput` at all. The message says which and what to do."""


def run_mismatch(before: Mapping[str, Any], now: Mapping[str, Any], names: Mapping[str, str]) -> str:
    """What differs between two records of a run (each field named by ``names``, else by its key):
    ``"the query and the timeout differ"``; ``""`` when they agree.

    >>> run_mismatch({"query": "a", "timeout": 1}, {"query": "b", "timeout": 1}, {"query": "the query"})
    'the query differs'
    """
    differ = [k for k in sorted(set(before) | set(now)) if before.get(k) != now.get(k)]
    if not differ:
        return ""
    what = [names.get(k, k) for k in differ]
    listed = what[0] if len(what) == 1 else f"{', '.join(what[:-1])} and {what[-1]}"
    return f"{listed} differ{'s' if len(what) == 1 else ''}"


def replace_atomically(path: Path, write: Any) -> None:
    """``write(temporary path)``, then rename it over ``path``: ``path`` is the old file or the
    new one, never half of one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


class StreamingOutput:
    """A batch's output file, written record by record as they finish, and resumable.

    ``jsonl`` and ``csv`` outputs get each finished record appended and flushed at once (in the
    order they finish); ``parquet`` streams into JSON lines beside it (``OUT.partial.jsonl``).
    :meth:`finish` then rewrites the whole output in the order of the rows (write to a
    temporary file, then rename), so a finished output is the same file a run writing everything
    at the end gives. A crash or a Ctrl-C leaves every record finished before it, each on a whole
    line (a line torn by a crash is dropped when resuming).

    Beside the output, ``OUT.run.json`` records the run that writes it: a fingerprint of the
    forest, engine and its options, the query and its arguments, the timeout, the format and the
    rows. A Parquet output stores the run's ``metadata`` in its schema, as
    :func:`~rfexplain.viz.frames.write_parquet` does. With ``resume=True`` an output whose run
    record matches keeps its records and :attr:`done` gives their indices (the caller explains
    the others); a mismatch, or an output without a run record, is refused
    (:class:`ResumeError`). Resuming where nothing was written yet starts afresh.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        fmt: str,
        run: Mapping[str, Any],
        *,
        resume: bool = False,
        metadata: Mapping[str, Any] | None = None,
    ):
        self.path = Path(path)
        self.fmt = fmt
        #: The run's metadata a Parquet output stores (:func:`rfexplain.viz.run_metadata.run_metadata`).
        self.metadata = metadata
        self.run = dict(run)
        self.run_path = Path(f"{self.path}{RUN_SUFFIX}")
        self.data_path = Path(f"{self.path}{PARTIAL_SUFFIX}") if fmt == "parquet" else self.path
        #: Finished records by index: their text in the data file, and whether failed / cut.
        self.lines: dict[int, str] = {}
        self.failed: set[int] = set()
        self.cut: set[int] = set()
        fresh = not resume or not (self.run_path.exists() or self.path.exists() or self.data_path.exists())
        if not fresh:
            self._load()
        if fresh or not self.data_path.exists():  # emptied before the run record names this run
            with open(self.data_path, "w", newline="", encoding="utf-8") as handle:
                if fmt == "csv":
                    handle.write(csv_line(CSV_COLUMNS))
                for line in self.lines.values():
                    handle.write(line)
        self._write_run(complete=False)
        self._file: IO[str] | None = open(self.data_path, "a", newline="", encoding="utf-8")

    @property
    def done(self) -> set[int]:
        """Indices of the records already in the output."""
        return set(self.lines)

    # -------------------------------------------------------------- resuming
    def _load(self) -> None:
        if not self.run_path.exists():
            raise ResumeError(
                f"cannot resume {self.path}: it has no run record ({self.run_path.name}), so it was not written by "
                "rfexplain batch -o; run without --resume to overwrite it"
            )
        try:
            saved = json.loads(self.run_path.read_text(encoding="utf-8"))
        except ValueError:
            raise ResumeError(f"cannot resume {self.path}: its run record {self.run_path} is not JSON") from None
        before = saved.get("run", {}) if isinstance(saved, dict) else {}
        differ = run_mismatch(before, self.run, _RUN_FIELDS)
        if differ:
            raise ResumeError(
                f"cannot resume {self.path}: it was written by another run ({differ}); run without --resume to "
                "start over, or write to another -o"
            )
        if self.fmt == "parquet" and not self.data_path.exists() and self.path.exists():
            from rfexplain.core.instances import pandas
            from rfexplain.viz.frames import frame_to_records

            for record in frame_to_records(pandas().read_parquet(self.path)):
                self._keep(record.index, self._text(record), record)
            return
        if not self.data_path.exists():
            return
        with open(self.data_path, newline="", encoding="utf-8") as handle:
            text = handle.read()
        end = text.rfind("\n") + 1
        if end < len(text):  # a line torn by a crash: dropped, and cut from the file
            with open(self.data_path, "r+", newline="", encoding="utf-8") as handle:
                handle.truncate(len(text[:end].encode()))
            text = text[:end]
        if self.fmt == "csv":
            rows = list(csv.reader(io.StringIO(text)))
            if rows and tuple(rows[0]) != CSV_COLUMNS:
                raise ResumeError(f"cannot resume {self.path}: its header is not rfexplain batch's CSV columns")
            col = {name: k for k, name in enumerate(CSV_COLUMNS)}
            for row in rows[1:]:
                if len(row) != len(CSV_COLUMNS):
                    raise ResumeError(f"cannot resume {self.path}: a row has {len(row)} cells, not {len(CSV_COLUMNS)}")
                index = int(row[col["index"]])
                self.lines[index] = csv_line(row)
                if row[col["error"]]:
                    self.failed.add(index)
                elif row[col["complete"]] == "False":
                    self.cut.add(index)
            return
        for number, line in enumerate(text.splitlines(keepends=True), start=1):
            try:
                doc = json.loads(line)
            except ValueError:
                raise ResumeError(f"cannot resume {self.data_path}: line {number} is not JSON") from None
            index = int(doc["index"])
            self.lines[index] = line
            if doc.get("error"):
                self.failed.add(index)
            elif doc.get("complete") is False:
                self.cut.add(index)

    def _write_run(self, complete: bool) -> None:
        doc = {"rfexplain_batch": 1, "format": self.fmt, "complete": complete, "run": self.run}

        def write(tmp: Path) -> None:
            tmp.write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")

        replace_atomically(self.run_path, write)

    # -------------------------------------------------------------- writing
    def _text(self, record: BatchRecord) -> str:
        if self.fmt == "csv":
            return csv_line(csv_row(record))
        doc = record.to_dict()
        if self.fmt == "parquet" and isinstance(record.result, float) and math.isinf(record.result):
            doc["result_inf"] = True
        return json.dumps(doc, default=str) + "\n"

    def _keep(self, index: int, text: str, record: BatchRecord) -> None:
        self.lines[index] = text
        if record.error:
            self.failed.add(index)
        elif record.complete is False:
            self.cut.add(index)

    def write(self, record: BatchRecord) -> None:
        """Append one finished record and flush it to the operating system."""
        assert self._file is not None, "the output is closed"
        text = self._text(record)
        self._file.write(text)
        self._file.flush()
        self._keep(record.index, text, record)

    def finish(self, order: Sequence[int]) -> None:
        """Rewrite the output in the order of ``order`` (indices; the others after them), by a
        temporary file renamed over it, and mark the run complete."""
        self.close()
        rank = {i: k for k, i in enumerate(order)}
        indices = sorted(self.lines, key=lambda i: (rank.get(i, len(rank)), i))
        if self.fmt == "parquet":
            from rfexplain.viz.frames import write_parquet

            records = [self._record(json.loads(self.lines[i])) for i in indices]
            replace_atomically(self.path, lambda tmp: write_parquet(records, str(tmp), metadata=self.metadata))
            self.data_path.unlink(missing_ok=True)
        else:

            def write(tmp: Path) -> None:
                with open(tmp, "w", newline="", encoding="utf-8") as handle:
                    if self.fmt == "csv":
                        handle.write(csv_line(CSV_COLUMNS))
                    handle.writelines(self.lines[i] for i in indices)

            replace_atomically(self.path, write)
        self._write_run(complete=True)

    @staticmethod
    def _record(doc: dict[str, Any]) -> BatchRecord:
        if doc.pop("result_inf", False):
            doc["result"] = math.inf
        return BatchRecord(**doc)

    def close(self) -> None:
        """Close the file (what was written stays; the run is not marked complete)."""
        if self._file is not None:
            self._file.close()
            self._file = None
