"""The hypothesis profiles of the two test runs, and clocks for the tests of time budgets.

``python -m pytest`` (the README's command) deselects the tests marked ``slow`` and runs the
property tests on the ``"fast"`` profile: a fraction of each test's full budget of examples
(``tests/hypothesis_budget.py``). ``python -m pytest -m slow`` runs the rest on the ``"ci"``
profile: every property test at its full budget. Either run takes another profile from
``--hypothesis-profile=NAME`` or from the environment variable ``RFEXPLAIN_HYPOTHESIS_PROFILE``
(``RFEXPLAIN_HYPOTHESIS_PROFILE=ci python -m pytest`` runs the default selection at full budgets).

Neither profile has a deadline or the ``too_slow`` health check: both measure wall-clock time,
which a loaded machine stretches, so no property test fails for being slow.
"""

from __future__ import annotations

import inspect
import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.hypothesis_budget import FULL

PROFILE_ENV = "RFEXPLAIN_HYPOTHESIS_PROFILE"

settings.register_profile("ci", max_examples=FULL, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fast", max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("fast")


def _selects_slow_tests(markexpr: str) -> bool:
    """Whether ``-m`` selects the tests marked slow (``-m slow``; not ``-m "not slow"``)."""
    return bool(re.search(r"\bslow\b", markexpr)) and not re.search(r"\bnot\s+slow\b", markexpr)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("hypothesis_profile", None):
        return  # hypothesis's own plugin loads it
    name = os.environ.get(PROFILE_ENV) or ("ci" if _selects_slow_tests(config.getoption("markexpr", "")) else "fast")
    settings.load_profile(name)


def pytest_report_header(config: pytest.Config) -> str:
    return f"rfexplain: hypothesis profile {settings.get_current_profile_name()!r}"


@pytest.fixture
def budget_clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], float]], None]:
    """A function that makes every :class:`~rfexplain.Budget` made in this process from then on
    (until the test ends) read its time from the clock it is given, in seconds."""
    from rfexplain.core import budget

    def read(clock: Callable[[], float]) -> None:
        if "clock" in inspect.signature(budget.Budget).parameters:
            made = budget.Budget.__init__

            def on_clock(self: budget.Budget, *args: Any, **kwargs: Any) -> None:
                kwargs.setdefault("clock", clock)
                made(self, *args, **kwargs)

            monkeypatch.setattr(budget.Budget, "__init__", on_clock)
        else:
            assert budget.time is time, "rfexplain.core.budget no longer reads the clock as time.monotonic"
            monkeypatch.setattr(budget, "time", SimpleNamespace(monotonic=clock))

    return read


@pytest.fixture
def cpu_clock(budget_clock: Callable[[Callable[[], float]], None]) -> Callable[[], float]:
    """Budgets (``timeout=``) count this process's CPU seconds instead of wall-clock seconds;
    returns that clock (``time.process_time``), for the test to measure the call it budgets.

    A query stops at its budget when it polls the budget often enough: past its deadline, it does
    little work before it returns. Counted in the process's CPU time, that holds on a loaded
    machine as on an idle one (the wall clock of a loaded machine also counts other processes'
    turns), so a test can bound the CPU seconds a budgeted call takes. Only budgets made in this
    process are affected (``explain_many(..., n_jobs=1)`` runs in it)."""
    budget_clock(time.process_time)
    return time.process_time


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """SIGINT raises ``KeyboardInterrupt`` in this process, as Ctrl-C in a terminal does, also
    when the suite runs as a background job (``cmd &`` without job control starts it with SIGINT
    ignored, and Python keeps an ignored SIGINT ignored); the previous handler is put back."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
