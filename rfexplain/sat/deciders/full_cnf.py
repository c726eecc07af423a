"""The full CNF decider: the whole forest's formula in an incremental SAT solver (the reference).

The forest is encoded once into CNF (:mod:`rfexplain.sat.encodings`: order-encoded feature
domains, path clauses, one vote per tree, the majority vote with cardinality networks and the
exact tie rule; the soft vote's exact weighted comparisons with adder networks) and, per
condition, loaded into an incremental solver that stays open for the engine's life; a question
enters only through assumptions, the selectors of its fixed features (Izza and Marques-Silva
(2021), Section 4 [IM21]: hard part ``H``, soft unit clauses ``S``). It always answers: with a
model, or UNSAT with the solver's core over the selectors. The portfolio
(:mod:`.portfolio`) gives it turns of a bounded number of conflicts under a deadline.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pysat.solvers import Solver

from rfexplain.sat.deciders.base import Answer, Question
from rfexplain.sat.encodings import ForestEncoding, Formula
from rfexplain.sat.encodings.softvote import Comparison

__all__ = ["SolverStats", "SelectorOracle", "FullCnf"]

log = logging.getLogger(__name__)


@dataclass
class SolverStats:
    """Counters over the SAT calls of an engine (read by the benchmark); times are CPU seconds
    of this process (``time.process_time``), not wall-clock time."""

    sat_calls: int = 0
    unsat_calls: int = 0
    sat_time: float = 0.0
    unsat_time: float = 0.0
    max_sat_time: float = 0.0
    max_unsat_time: float = 0.0
    #: Questions answered by a decider other than the full CNF (:mod:`rfexplain.sat.deciders`), by answer.
    screened_sat: int = 0
    screened_unsat: int = 0

    def record_screened(self, outcome: bool) -> None:
        if outcome:
            self.screened_sat += 1
        else:
            self.screened_unsat += 1

    def record(self, outcome: bool, seconds: float) -> None:
        if outcome:
            self.sat_calls += 1
            self.sat_time += seconds
            self.max_sat_time = max(self.max_sat_time, seconds)
        else:
            self.unsat_calls += 1
            self.unsat_time += seconds
            self.max_unsat_time = max(self.max_unsat_time, seconds)

    def copy(self) -> SolverStats:
        return SolverStats(**self.__dict__)


class SelectorOracle:
    """An incremental SAT solver over one formula, asked about sets of fixed features.

    Built once per (forest, formula) and kept open for the engine's life: instances change only
    the assumptions. The formula and the solver are built on the first call that needs them, so a
    question another decider answers (:mod:`rfexplain.sat.deciders`) never builds them. Use as a
    context manager or call :meth:`delete`.

    ``kind`` and ``cls`` name the formula: ``("not", c)``, the forest does not predict ``c``, or
    ``("predicts", t)``.
    """

    def __init__(self, encoding: ForestEncoding, kind: str, cls: int, *, solver: str, stats: SolverStats) -> None:
        if kind not in ("not", "predicts"):
            raise ValueError(f"kind must be 'not' or 'predicts'. Got {kind!r} instead.")
        self.encoding = encoding
        self.kind = kind
        self.cls = cls
        self.solver_name = solver
        self.stats = stats
        self._solver: Solver | None = None
        #: The relaxed soft-vote comparisons whose exact clauses this solver has received.
        self.refined: set[Comparison] = set()

    @property
    def formula(self) -> Formula:
        """The CNF this oracle decides (built by the encoding on first use, cached there)."""
        return self.encoding.not_class(self.cls) if self.kind == "not" else self.encoding.predicts(self.cls)

    @property
    def solver(self) -> Solver:
        """The incremental solver, loaded with :attr:`formula` on first use."""
        if self._solver is None:
            formula = self.formula
            log.debug("loading %s: %d vars, %d clauses", formula.name, formula.n_vars, formula.n_clauses)
            self._solver = Solver(name=self.solver_name, bootstrap_with=[list(cl) for cl in formula.clauses])
        return self._solver

    @property
    def loaded(self) -> bool:
        """Whether the solver has been built (some query needed it)."""
        return self._solver is not None

    def run(self, assumptions: Sequence[int], conflicts: int | None = None) -> bool | None:
        """One round: SAT (True) or UNSAT (False) under ``assumptions``, or ``None`` when
        ``conflicts`` (``None``: no limit) ran out first (the next turn calls it again, learnt
        clauses kept).

        A formula with relaxed soft-vote comparisons is solved by counterexample-guided
        refinement (:meth:`~rfexplain.sat.encodings.ForestEncoding.refinement`): a model the exact
        soft vote refutes brings in the exact clauses it broke, and the call is repeated. UNSAT of
        the relaxed formula is final, since the exact formula implies it."""
        solver = self.solver
        outcome = self._once(solver, assumptions, conflicts)
        while outcome and self.formula.relaxed:
            extra = self.encoding.refinement(self.formula, solver.get_model(), self.refined)
            if not extra:
                break
            log.debug("%s: %d exact clauses added", self.formula.name, len(extra))
            solver.append_formula([list(cl) for cl in extra])
            outcome = self._once(solver, assumptions, conflicts)
        return outcome

    @staticmethod
    def _once(solver: Solver, assumptions: Sequence[int], conflicts: int | None) -> bool | None:
        if conflicts is None:
            return bool(solver.solve(assumptions=list(assumptions)))
        solver.conf_budget(conflicts)
        outcome = solver.solve_limited(assumptions=list(assumptions))
        return None if outcome is None else bool(outcome)

    def model(self) -> list[int]:
        model = self.solver.get_model()
        if model is None:
            raise RuntimeError("no model after a satisfiable call")
        return list(model)

    def core(self) -> list[int]:
        core = self.solver.get_core()
        return list(core) if core is not None else []

    def delete(self) -> None:
        if self._solver is not None:
            self._solver.delete()
            self._solver = None

    def __enter__(self) -> SelectorOracle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.delete()


class FullCnf:
    """The full CNF decider of one instance: its :class:`SelectorOracle` asked with the
    ``selectors`` (feature to selector literal) of the instance's states. It always answers,
    given conflicts enough; each answer's CPU time (over the turns it took) goes to the
    oracle's :class:`SolverStats`."""

    name = "full_cnf"

    def __init__(self, oracle: SelectorOracle, selectors: Mapping[int, int]) -> None:
        self.oracle = oracle
        self.selectors = selectors
        self.feature_of = {lit: f for f, lit in selectors.items()}
        #: the question of the last turn, and the CPU seconds of its turns so far
        self._asked: Question | None = None
        self._seconds = 0.0

    def decide(self, question: Question, budget: int | None) -> Answer | None:
        """Solve for at most ``budget`` conflicts (``None``: to the end), learnt clauses kept
        between turns: a model, or UNSAT with the solver's core, or ``None`` when the conflicts
        ran out first."""
        if question is not self._asked:
            self._asked, self._seconds = question, 0.0
        start = time.process_time()
        outcome = self.oracle.run(self.assumptions(question.fixed), budget)
        self._seconds += time.process_time() - start
        if outcome is None:
            return None
        self.oracle.stats.record(outcome, self._seconds)
        return self.answer(outcome)

    def assumptions(self, fixed: Sequence[int]) -> list[int]:
        """The selector literals of the ``fixed`` features."""
        return [self.selectors[f] for f in fixed]

    def answer(self, outcome: bool) -> Answer:
        """The answer of a finished call: its model when satisfiable (decoded on demand by the
        caller), else its core over the selectors."""
        if outcome:
            return Answer(True, model=self.oracle.model(), by=self.name)
        core = frozenset(self.feature_of[lit] for lit in self.oracle.core() if lit in self.feature_of)
        return Answer(False, core=core, by=self.name)
