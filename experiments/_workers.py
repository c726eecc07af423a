"""Child processes speaking JSON lines, killed when they overrun a per-request limit.

The side-by-side benchmarks (``peers_rfxpl``, ``practical_forests``, ``peers_xreason``) run each
explainer, ours and the peer's (RFxpl, XReason), in a child process started as ``PYTHON SCRIPT
ARGS...``: the child writes ``{"ready": true, ...}`` once its model is loaded, then answers one
JSON request a line with one JSON line. A request that gets no answer within its limit gets the
child's whole process group killed; the next request starts a fresh child (which loads the model
again). Children print their chatter to stderr, which goes to a log file. A peer's interpreter and
source snapshot live beside the checkout (:class:`PeerSetup` says where, :class:`Peer` is what was
found).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments._common import PeerMissing

__all__ = ["JsonWorker", "Peer", "PeerSetup", "WorkerFailed"]

#: The folder holding the checkout: peers' snapshots and venvs live there, beside it.
BESIDE = Path(__file__).resolve().parent.parent.parent


@dataclass(frozen=True)
class Peer:
    """A peer explainer set up beside the checkout: its interpreter and its source snapshot."""

    python: Path
    source: Path

    def version(self) -> str:
        """The snapshot's commit as written in its ``COMMIT`` file (see experiments/README.md), or "snapshot"."""
        stamp = self.source / "COMMIT"
        return stamp.read_text().strip() if stamp.is_file() else "snapshot"


@dataclass(frozen=True)
class PeerSetup:
    """Where a peer is looked for: ``--<option>-python``/``$<ENV>_PYTHON``, else
    ``../<folder>-venv``; ``--<option>-src``/``$<ENV>_SRC``, else ``../<folder>-src``, which must
    hold ``marker`` (a file of its source)."""

    name: str
    env: str
    folder: str
    marker: str

    def paths(self, python: str | None, source: str | None) -> tuple[Path, Path]:
        py = python or os.environ.get(f"{self.env}_PYTHON") or BESIDE / f"{self.folder}-venv" / "bin" / "python"
        src = source or os.environ.get(f"{self.env}_SRC") or BESIDE / f"{self.folder}-src"
        return Path(py), Path(src)

    def find(self, python: str | None, source: str | None) -> Peer | None:
        """The peer's interpreter and source snapshot, or None when either is missing."""
        py, src = self.paths(python, source)
        if not (py.is_file() and os.access(py, os.X_OK) and (src / self.marker).is_file()):
            return None
        return Peer(py, src)

    def require(self, python: str | None, source: str | None) -> Peer:
        """:meth:`find`'s peer, or :class:`PeerMissing` saying where it was looked for."""
        found = self.find(python, source)
        if found is None:
            py, src = self.paths(python, source)
            option = self.folder
            raise PeerMissing(
                f"{self.name} not found (interpreter {py}, source {src}): see experiments/README.md, "
                f"'{self.name} side by side', to set it up, or pass --{option}-python and --{option}-src"
            )
        return found


class WorkerFailed(RuntimeError):
    """The child did not start, or died without answering."""


class JsonWorker:
    """One child at a time; :meth:`ask` answers a request or reports it killed past its limit."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        log: Path,
        start_limit: float = 600.0,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.command = [str(c) for c in command]
        self.log, self.start_limit, self.env, self.cwd = log, start_limit, env, cwd
        self.proc: subprocess.Popen[str] | None = None
        self.ready: dict[str, Any] = {}
        self.kills = 0

    def start(self) -> dict[str, Any]:
        """Start the child if none is running; its ready line (load times and the like)."""
        if self.proc is not None and self.proc.poll() is None:
            return self.ready
        with self.log.open("a") as err:
            self.proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                env=dict(os.environ, **(self.env or {})),
                cwd=self.cwd,
                start_new_session=True,
            )
        line = self._readline(self.start_limit)
        if line is None:
            self.close()
            raise WorkerFailed(f"{self.command[1]} did not start within {self.start_limit:g} s (see {self.log})")
        self.ready = json.loads(line)
        if not self.ready.get("ready"):
            self.close()
            raise WorkerFailed(f"{self.command[1]} failed to start: {self.ready.get('error')} (see {self.log})")
        return self.ready

    def _readline(self, timeout: float) -> str | None:
        assert self.proc is not None and self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, timeout))
        if not ready:
            return None
        return self.proc.stdout.readline() or None

    def ask(self, request: dict[str, Any], limit: float) -> dict[str, Any]:
        """The child's answer, or ``{"ok": False, "status": "killed", "wall": s, "cpu_at_kill": s}``
        past ``limit`` wall seconds (the child is killed), or ``{"ok": False, "status": "died"}``."""
        self.start()
        assert self.proc is not None and self.proc.stdin is not None
        started = time.perf_counter()
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.close()
            return {"ok": False, "status": "died", "wall": 0.0}
        line = self._readline(limit)
        wall = time.perf_counter() - started
        if line is None:
            status = "killed" if self.proc.poll() is None else "died"
            self.kills += status == "killed"
            cpu = self.cpu_seconds()
            self.close()
            return {"ok": False, "status": status, "wall": wall, "cpu_at_kill": cpu}
        answer: dict[str, Any] = json.loads(line)
        answer.setdefault("status", "ok" if answer.get("ok") else "error")
        return answer

    def cpu_seconds(self) -> float | None:
        """CPU seconds the running child has used so far (Linux ``/proc``; None elsewhere)."""
        if self.proc is None:
            return None
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def close(self) -> None:
        """Kill the child (and anything it started) if it is running."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()
        self.proc = None

    def __enter__(self) -> JsonWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
