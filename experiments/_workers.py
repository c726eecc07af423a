"""Child processes speaking JSON lines, killed when they overrun a per-request limit.

The side-by-side benchmarks (``peers_rfxpl``, ``practical_forests``) run each explainer, ours and
RFxpl's, in a child process started as ``PYTHON SCRIPT ARGS...``: the child writes
``{"ready": true, ...}`` once its model is loaded, then answers one JSON request a line with one
JSON line. A request that gets no answer within its limit gets the child's whole process group
killed; the next request starts a fresh child (which loads the model again). Children print their
chatter to stderr, which goes to a log file.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["JsonWorker", "WorkerFailed"]


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
