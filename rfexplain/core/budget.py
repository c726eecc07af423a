"""Budgets (``limit=``, ``timeout=``) and the enumeration result that reports whether it finished.

An enumeration never returns a sentinel: it is an iterator of :class:`~rfexplain.core.reasons.Reason`
that, once exhausted, says whether it is ``complete`` or was cut short (``stopped_by`` is
``"limit"`` or ``"timeout"``). Engines receive the :class:`Budget` and poll it inside long
searches with :meth:`Budget.check`, which raises :class:`BudgetExpired` once the deadline has
passed; the enumeration catches it and ends as stopped by ``"timeout"``. Every time limit a
caller sets is a :class:`Budget`: the comparators (SDD and ADD compilation) take the same object
and raise the same exception, and :func:`rfexplain.batch.explain_many`'s per-instance ``timeout``
is one in each worker (the batch runner also kills a worker still busy well past it). No
computation signals expiry by returning a sentinel such as ``None``.

Inside the engines other limits count work rather than time, and decide how a query's time is
shared, not when it gives up. The SAT engine asks its deciders in bounded turns (box searches in
slices of boxes, the clique search in units of its work, climbs in restarts, SAT solvers in
chunks of conflicts, since CaDiCaL cannot be interrupted) and polls the deadline between turns,
in one loop (:class:`rfexplain.sat.deciders.scheduler.Scheduler`), so that a question to the
deciders stops within one turn past its deadline; node budgets hand a question from the box
searches to a solver, and CPU shares divide time between the searches it races. The circuit
engine and the ADD comparator cap their diagrams in nodes (``max_nodes``).

A query that answers once (``sufficient_reason``, ``robustness``, building an engine) runs with its
budget made *active* (``with budget.active():``); long computations that are not handed a budget
poll :func:`Budget.current` instead, so every query is bounded without widening every signature.
Active budgets nest: a budget made active inside another's block also expires with the outer
one, so that a query's own budget (say a :class:`~rfexplain.decision.Decision`'s ``timeout=``)
never hides a deadline a caller set around it.
The same way, a long search reports how far it is (:meth:`Budget.step`, e.g. the features the
SAT engine's deletion loop has decided) to whoever listens (:attr:`Budget.on_step`: the progress
bar of :class:`~rfexplain.decision.Decision`).

A budget also bounds memory (``max_memory=``, bytes; by default a quarter of the machine's
physical memory, :func:`default_max_memory`): the compilers (the circuit engine's decision
graphs and vote counting, the ADD comparator) count the bytes of their own arrays, unique tables
and memos as they grow and call :meth:`Budget.require` *before* each growth, which raises
:class:`~rfexplain.core.errors.CompilationTooLargeError` (a ``MemoryError``) when the growth
would take them past the budget. Accounting the compilers' structures rather than polling the
process's resident memory makes the stop happen before the memory is taken, deterministically
(the same forest stops at the same point on every machine), and leaves out memory the compilers
do not own (the forest, the interpreter, a caller's data).
"""

from __future__ import annotations

import math
import numbers
import operator
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NoReturn, TypeVar

from rfexplain.core.display import render
from rfexplain.core.errors import CompilationTooLargeError, RFExplainError

__all__ = [
    "Budget",
    "BudgetExpired",
    "BudgetArgumentError",
    "Enumeration",
    "check_limit",
    "check_timeout",
    "check_max_memory",
    "default_max_memory",
    "poll",
    "require",
    "active_or",
    "parse_bytes",
    "MAX_MEMORY_ENV",
]

#: The environment variable that sets the default memory budget (bytes, or with a ``K``/``M``/``G``
#: suffix, powers of 1024; ``none`` for no budget), e.g. for a benchmark that knows it needs more
#: than a quarter of the machine.
MAX_MEMORY_ENV = "RFEXPLAIN_MAX_MEMORY"
#: The default memory budget where the physical memory cannot be read: 4 GiB.
FALLBACK_MAX_MEMORY = 4 << 30

T = TypeVar("T")

_ACTIVE: ContextVar[Budget | None] = ContextVar("rfexplain_active_budget", default=None)


class BudgetExpired(RFExplainError, TimeoutError):
    """A computation ran past the deadline of its :class:`Budget`.

    Raised by every long computation given a budget (searches, compilations, comparators); an
    :class:`Enumeration` catches it and ends as stopped by ``"timeout"``. It is also a builtin
    :class:`TimeoutError`, so ``except TimeoutError`` keeps working.
    """


class Budget:
    """A wall-clock and memory budget for one query; ``limit`` is enforced by :class:`Enumeration`.

    ``max_memory`` (bytes) bounds what the compilers account (:meth:`require`); ``"default"``
    is :func:`default_max_memory`, ``None`` no bound. ``clock`` reads the time in seconds
    (``time.monotonic``; tests pass a fake one)."""

    def __init__(
        self,
        *,
        limit: int | None = None,
        timeout: float | None = None,
        max_memory: int | str | None = "default",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = check_limit(limit)
        self.timeout = check_timeout(timeout)
        self.max_memory = default_max_memory() if max_memory == "default" else check_max_memory(max_memory)
        self._clock = clock
        self.started = clock()
        self.deadline = None if self.timeout is None else self.started + self.timeout
        self.timed_out = False
        #: Called with ``(done, total)`` by :meth:`step`; ``None``: nobody listens.
        self.on_step: Callable[[int, int], None] | None = None
        #: The budget that was active around this one's :meth:`active` block, if any: this one
        #: expires with it too.
        self._outer: Budget | None = None

    @staticmethod
    def current() -> Budget | None:
        """The budget made active by the innermost :meth:`active` block, if any."""
        return _ACTIVE.get()

    @contextmanager
    def active(self) -> Iterator[Budget]:
        """Make this budget the one :meth:`current` returns inside the block; inside the block of
        another active budget, it also expires when that one does."""
        outer, saved = _ACTIVE.get(), self._outer
        if outer is not None and not outer._encloses(self):
            self._outer = outer
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)
            self._outer = saved

    def _encloses(self, budget: Budget) -> bool:
        """Whether ``budget`` is this one or among the budgets active around it (a budget made
        active again inside its own block must not expire with itself)."""
        current: Budget | None = self
        while current is not None:
            if current is budget:
                return True
            current = current._outer
        return False

    @classmethod
    def unlimited(cls) -> Budget:
        return cls()

    @classmethod
    def of(cls, timeout: float | Budget | None) -> Budget:
        """A budget from a ``timeout=`` argument: seconds, ``None`` (no deadline) or a
        :class:`Budget` (returned as is, so callers can share one deadline)."""
        return timeout if isinstance(timeout, Budget) else cls(timeout=timeout)

    @property
    def timed(self) -> bool:
        """Whether this budget, or an outer active one, has a deadline (else polling it is
        useless)."""
        return self.deadline is not None or (self._outer is not None and self._outer.timed)

    def remaining(self) -> float | None:
        """Seconds left (of this budget or an outer active one, whichever ends first), or
        ``None`` without a timeout (never negative)."""
        own = None if self.deadline is None else max(0.0, self.deadline - self._clock())
        outer = None if self._outer is None else self._outer.remaining()
        return outer if own is None else own if outer is None else min(own, outer)

    def expired(self) -> bool:
        """True once the deadline (or an outer active budget's) has passed; the engine must then
        stop and return."""
        if self.deadline is not None and self._clock() >= self.deadline:
            self.timed_out = True
        elif self._outer is not None and self._outer.expired():
            self.timed_out = True
        return self.timed_out

    def check(self, doing: str = "") -> None:
        """Raise :class:`BudgetExpired` once the deadline (or an outer active budget's) has
        passed (``doing`` names the interrupted work in the message)."""
        if not self.expired():
            return
        if self._outer is not None and self._outer.timed_out:
            self._outer.check(doing)
        where = f" while {doing}" if doing else ""
        what = "an outer time budget" if self.timeout is None else f"the time budget of {self.timeout} s"
        raise BudgetExpired(f"{what} expired{where}")

    def elapsed(self) -> float:
        return self._clock() - self.started

    def require(self, nbytes: int, doing: str = "") -> None:
        """Raise :class:`~rfexplain.core.errors.CompilationTooLargeError` when a compiler would
        hold ``nbytes`` accounted bytes, past :attr:`max_memory` (called before the growth, so the
        memory is never taken)."""
        if self.max_memory is not None and nbytes > self.max_memory:
            where = f" {doing}" if doing else ""
            raise CompilationTooLargeError(
                f"compiling{where} would hold {_human(nbytes)}, past the memory budget of "
                f"{_human(self.max_memory)} (max_memory=, or ${MAX_MEMORY_ENV}); use a smaller "
                "forest, a larger max_memory or the sat engine"
            )

    def step(self, done: int, total: int) -> None:
        """Report that a search has done ``done`` of its ``total`` steps (to :attr:`on_step`)."""
        if self.on_step is not None:
            self.on_step(done, total)


def check_limit(limit: object) -> int | None:
    """``limit`` as an int (any integer type, numpy's included) or ``None``; ``ValueError`` else."""
    if limit is None:
        return None
    try:
        value = operator.index(limit)  # type: ignore[arg-type]
    except TypeError:
        value = -1
    if isinstance(limit, bool) or value < 0:
        raise BudgetArgumentError(f"limit must be a non-negative integer or None. Got {limit!r} instead.")
    return value


def check_timeout(timeout: object) -> float | None:
    """``timeout`` in seconds (a non-negative real; ``inf`` means none) or ``None``; NaN and
    anything else is refused with ``ValueError``."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real) or math.isnan(float(timeout)) or timeout < 0:
        raise BudgetArgumentError(f"timeout must be a non-negative number of seconds or None. Got {timeout!r} instead.")
    return None if math.isinf(float(timeout)) else float(timeout)


def _human(nbytes: int) -> str:
    """Bytes in KiB, MiB or GiB, whichever reads best."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes / (1 << shift):,.1f} {unit}"
    return f"{nbytes} bytes"


def check_max_memory(max_memory: object) -> int | None:
    """``max_memory`` in bytes (a positive integer; ``inf`` means none) or ``None``;
    :class:`BudgetArgumentError` else."""
    if max_memory is None:
        return None
    if isinstance(max_memory, numbers.Real) and not isinstance(max_memory, bool) and math.isinf(float(max_memory)):
        if float(max_memory) > 0:
            return None
        _bad_memory(max_memory)
    try:
        value = operator.index(max_memory)  # type: ignore[arg-type]
    except TypeError:
        value = 0
    if isinstance(max_memory, bool) or value <= 0:
        _bad_memory(max_memory)
    return value


def _bad_memory(max_memory: object) -> NoReturn:
    raise BudgetArgumentError(f"max_memory must be a positive number of bytes or None. Got {max_memory!r} instead.")


def parse_bytes(text: str) -> int | None:
    """A number of bytes written as an integer with an optional ``K``/``M``/``G``/``T`` suffix
    (powers of 1024, a trailing ``B`` or ``iB`` allowed) or ``none``: ``"6G"`` is 6 GiB."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    if t in ("NONE", "INF", ""):
        if t == "":
            raise BudgetArgumentError(f"not a number of bytes: {text!r}")
        return None
    scale = 1
    if t[-1:] in "KMGT":
        scale = 1 << (10 * ("KMGT".index(t[-1]) + 1))
        t = t[:-1]
    try:
        value = float(t)
    except ValueError:
        raise BudgetArgumentError(f"not a number of bytes: {text!r}") from None
    return check_max_memory(int(value * scale))


def default_max_memory() -> int | None:
    """The default memory budget: ``$RFEXPLAIN_MAX_MEMORY`` if set (:func:`parse_bytes`), else a
    quarter of the machine's physical memory (``os.sysconf``), else 4 GiB where it cannot be read."""
    env = os.environ.get(MAX_MEMORY_ENV)
    if env:
        return parse_bytes(env)
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return FALLBACK_MAX_MEMORY
    return total // 4 if total > 0 else FALLBACK_MAX_MEMORY


def poll(doing: str = "") -> None:
    """Check the active budget (:meth:`Budget.current`), if any: :class:`BudgetExpired` once its
    deadline has passed. For loops that are not handed a budget."""
    budget = _ACTIVE.get()
    if budget is not None:
        budget.check(doing)


def active_or(budget: Budget | None) -> Budget | None:
    """``budget``, or else the active one (:meth:`Budget.current`)."""
    return budget if budget is not None else _ACTIVE.get()


def require(budget: Budget | None, nbytes: int, doing: str = "") -> None:
    """:meth:`Budget.require` on ``budget`` (or the active one); without any, against
    :func:`default_max_memory`."""
    budget = active_or(budget)
    if budget is not None:
        budget.require(nbytes, doing)
    else:
        Budget(max_memory="default").require(nbytes, doing)


class BudgetArgumentError(RFExplainError, ValueError):
    """A ``limit=``, ``timeout=`` or ``max_memory=`` that is not one."""


class Enumeration(Iterator[T]):
    """Lazily enumerated results with an honest completion status.

    Attributes
    ----------
    complete : bool or None
        ``None`` while the enumeration runs; then ``True`` when every result was produced, and
        ``False`` when a budget cut it short.
    stopped_by : str or None
        ``"limit"`` or ``"timeout"`` when cut short. Reaching ``limit`` results counts as cut
        short even if no further result exists (finding out would cost another search).
    count : int
        Results produced so far.
    """

    def __init__(self, source: Callable[[Budget], Iterator[T]], budget: Budget) -> None:
        self.budget = budget
        self._iterator = source(budget)
        self.complete: bool | None = None
        self.stopped_by: str | None = None
        self.count = 0
        self._ahead: deque[T] = deque()

    def __iter__(self) -> Enumeration[T]:
        return self

    def __next__(self) -> T:
        if self._ahead:
            return self._ahead.popleft()
        return self._produce()

    def peek(self, n: int) -> list[T]:
        """Up to ``n`` next results without consuming them: iterating yields them again. They
        count against the budget's limit as soon as they are produced."""
        while len(self._ahead) < n:
            try:
                self._ahead.append(self._produce())
            except StopIteration:
                break
        return list(self._ahead)[:n]

    def _produce(self) -> T:
        if self.complete is not None:
            raise StopIteration
        if self.budget.limit is not None and self.count >= self.budget.limit:
            self._finish("limit")
            raise StopIteration
        if self.budget.expired():
            self._finish("timeout")
            raise StopIteration
        try:
            with self.budget.active():
                item = next(self._iterator)
        except BudgetExpired:
            self._finish("timeout")
            raise StopIteration from None
        except StopIteration:
            self._finish("timeout" if self.budget.timed_out else None)
            raise
        self.count += 1
        return item

    def _finish(self, stopped_by: str | None) -> None:
        self.stopped_by = stopped_by
        self.complete = stopped_by is None
        close = getattr(self._iterator, "close", None)
        if close is not None:
            close()

    def elapsed(self) -> float:
        return self.budget.elapsed()

    @property
    def status(self) -> str:
        """Where the enumeration stands, in the words of its text and HTML forms alike:
        ``complete: 2 results``, ``3 results, stopped by limit``, ``first 10 results; more may
        follow`` (still running; ``0 results so far`` before any was asked for)."""
        if self.complete:
            return f"complete: {self.count} results"
        if self.complete is not None:
            return f"{self.count} results, stopped by {self.stopped_by}"
        return f"first {self.count} results; more may follow" if self.count else "0 results so far"

    def __repr__(self) -> str:
        """The status without producing anything (``Enumeration(0 results so far)``); IPython
        and notebooks show the status and the first results, produced for the purpose, in the
        same words in text and in HTML (:meth:`_repr_pretty_`, :meth:`_repr_html_`)."""
        return f"Enumeration({self.status})"

    def _repr_pretty_(self, printer: object, cycle: bool) -> None:
        getattr(printer, "text")(repr(self) if cycle else str(render("enumeration_text", self)))  # noqa: B009

    def _repr_html_(self) -> str:
        return str(render("enumeration_html", self))
