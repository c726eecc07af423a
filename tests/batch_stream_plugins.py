"""A plug-in engine for the streaming batch tests (issue 59): it interrupts or kills on demand.

In an importable module (not a test file) so that worker processes can unpickle it.

:class:`StopperEngine` is the oracle engine, plus, on the instance whose feature 0 equals
``poison`` (or, when it is not given, as with the command line, the number in the signal
folder's ``poison`` file):

- ``mode="kill"``: its process kills itself with SIGKILL (the out-of-memory killer's way);
- ``mode="interrupt"``: once per *signal folder* (:func:`signal_folder` of the test process), it
  sends SIGINT to the test process (itself when it runs there, its parent when it is a worker),
  as a Ctrl-C would, after every other instance the folder's ``expect`` file counts has been
  answered and a second has passed (so that the parent has received them); it then sleeps,
  until the batch stops its worker. Without the folder, or once it has fired, it answers as the
  oracle does. With the folder, every answered instance leaves a ``done-*`` file there.
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

from rfexplain.core.forest import Forest
from rfexplain.core.reasons import Reason
from rfexplain.engines.base import Instance
from rfexplain.oracle import OracleEngine

#: Seconds the poisoned instance waits for the others before the interrupt.
WAIT = 60.0


def signal_folder(pid: int) -> Path:
    """The folder through which the test process ``pid`` arms the interrupt."""
    return Path(tempfile.gettempdir(), f"rfexplain-stopper-{pid}")


class StopperEngine(OracleEngine):
    name = "stopper"

    def __init__(self, forest: Forest, poison: float | None = None, mode: str = "interrupt") -> None:
        super().__init__(forest)
        self.poison = poison
        self.mode = mode

    def _armed(self) -> tuple[Path, int] | None:
        for pid in (os.getpid(), os.getppid()):
            folder = signal_folder(pid)
            if folder.is_dir():
                return folder, pid
        return None

    def sufficient_reason(self, instance: Instance) -> Reason:
        armed = self._armed()
        poison = self.poison
        if poison is None and armed is not None and (armed[0] / "poison").exists():
            poison = float((armed[0] / "poison").read_text())
        if poison is not None and instance.values[0] == poison:
            if self.mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if armed is not None and not (armed[0] / "fired").exists():
                folder, target = armed
                (folder / "fired").write_text(str(os.getpid()))
                expect = folder / "expect"
                wanted = int(expect.read_text()) if expect.exists() else 0
                deadline = time.monotonic() + WAIT
                while len(list(folder.glob("done-*"))) < wanted and time.monotonic() < deadline:
                    time.sleep(0.02)
                if wanted:
                    time.sleep(1.0)
                os.kill(target, signal.SIGINT)
                time.sleep(WAIT)
        reason = super().sufficient_reason(instance)
        if armed is not None:
            (armed[0] / f"done-{os.getpid()}-{time.monotonic_ns()}").write_text(str(instance.values[0]))
        return reason
