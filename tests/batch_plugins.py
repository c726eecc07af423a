"""Plug-in engines for the batch tests: they count constructions, fail, crash or stall on demand.

They live in an importable module (not a test file) so that worker processes can unpickle them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

from rfexplain.core.budget import Budget
from rfexplain.core.forest import Forest
from rfexplain.core.reasons import Reason
from rfexplain.engines.base import Instance
from rfexplain.oracle import OracleEngine


def pause(seconds: float) -> None:
    """The slow mode's wait between two polls of its budget (a test may count them)."""
    time.sleep(seconds)


class ProbeEngine(OracleEngine):
    """The oracle engine, plus: writes ``<pid>-<n>`` files into ``log_dir`` when constructed; on an
    instance whose feature 0 equals ``poison`` it raises (``mode="raise"``) or kills its process
    (``mode="exit"``) or ignores its budget for two minutes (``mode="hang"``, between the files
    ``hung-<pid>`` and ``woke-<pid>`` in ``log_dir``); ``mode="slow"`` makes every enumeration
    yield nothing, and robustness answer nothing, until the budget ends, polling it between
    :func:`pause` s of 0.01 s."""

    name = "probe"

    def __init__(self, forest: Forest, *, log_dir: str = "", poison: float | None = None, mode: str = "raise") -> None:
        super().__init__(forest)
        self.poison = poison
        self.mode = mode
        self.log_dir = log_dir
        if log_dir:
            Path(log_dir, f"{os.getpid()}-{time.monotonic_ns()}").write_text("built")

    def _check(self, instance: Instance) -> None:
        if self.poison is not None and instance.values[0] == self.poison:
            if self.mode == "exit":
                os._exit(3)
            if self.mode == "hang":
                if self.log_dir:
                    Path(self.log_dir, f"hung-{os.getpid()}").write_text("hung")
                time.sleep(120)
                if self.log_dir:
                    Path(self.log_dir, f"woke-{os.getpid()}").write_text("woke")
            raise RuntimeError(f"poisoned instance {instance.values[0]}")

    def sufficient_reason(self, instance: Instance) -> Reason:
        self._check(instance)
        return super().sufficient_reason(instance)

    def sufficient_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        self._check(instance)
        if self.mode == "slow":
            return self._stall(budget)
        return super().sufficient_reasons(instance, budget)

    def shortest_necessary_reasons(self, instance: Instance, budget: Budget) -> Iterator[Reason]:
        if self.mode == "slow":
            return self._stall(budget)
        return super().shortest_necessary_reasons(instance, budget)

    def robustness(self, instance: Instance) -> float:
        budget = Budget.current()
        while self.mode == "slow" and budget is not None:
            budget.check("probing")
            pause(0.01)
        return super().robustness(instance)

    @staticmethod
    def _stall(budget: Budget) -> Iterator[Reason]:
        while not budget.expired():
            pause(0.01)
        return
        yield  # pragma: no cover - makes this a generator
