"""What the SAT engine's deciders are asked and what they answer.

Every query of the SAT engine's search (:mod:`rfexplain.sat.search`) is one :class:`Question`:
can the free features, with the features ``fixed`` at the explained instance's states, make the
forest not predict ``cls`` (``kind="not"``) or predict ``cls`` (``kind="predicts"``)? This is the
query ``<H, S>`` of Izza and Marques-Silva (2021), Section 4 [IM21], with ``S`` the selectors of
the fixed features. A decider answers with an :class:`Answer` (a counterexample, or
unsatisfiability with or without a core) or ``None`` ("don't know": another decider must
answer). Every decider is exact: it never answers wrongly, only sometimes not at all.

The deciders, by name (:data:`DECIDERS`; ``SatEngine(deciders=...)`` switches them off):

- ``"bounds"``: the reachable leaves' per-tree bounds (:mod:`.bounds`), UNSAT with a core;
- ``"boxes"``: the branch and bound over the free features' boxes (:mod:`.boxes`);
- ``"cliques"``: a heaviest clique of the reachable leaves' boxes (:mod:`.cliques`);
- ``"lattice"``: a soft-vote question asked of the box and clique searches on integer margins
  that bound it from above (:mod:`.lattice`), every witness confirmed by the exact vote;
- ``"climb"``: counterexamples by coordinate ascent on the vote margin (:mod:`.climb`);
- ``"reduced_cnf"``: a CNF of the reachable leaves alone (:mod:`.reduced_cnf`, hard vote);
- ``"full_cnf"``: the whole forest's CNF with cardinality networks in an incremental solver
  (:mod:`.full_cnf`): the reference decider, which always answers and cannot be switched off.

Every decider is a :class:`Decider`: ``decide(question, budget)`` takes one *turn* on a question,
at most ``budget`` units of its own work (boxes, units of the clique search's work, climb
restarts, solver conflicts; ``None``: until it answers or gives up), and answers or says "don't
know (yet)"; a later turn on the same question resumes where the last one stopped. The portfolio
(:mod:`.portfolio`) decides whose turn it is and how long each is, and polls the query's deadline
between turns (:class:`.scheduler.Scheduler`, the engine's one chunked-deadline loop).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TypeVar

__all__ = ["Question", "Answer", "Decider", "DECIDERS", "COMPILED_DECIDERS"]

#: Every decider's name, in the order the portfolio first asks them.
DECIDERS = ("bounds", "lattice", "boxes", "cliques", "climb", "reduced_cnf", "full_cnf")

#: The deciders that run compiled loops (:mod:`rfexplain.core.jit`): before the loops are
#: compiled, an engine with ``prefilter=None`` runs the others alone.
COMPILED_DECIDERS = frozenset({"bounds", "lattice", "boxes", "cliques", "climb", "reduced_cnf"})


@dataclass(frozen=True)
class Question:
    """Is there a counterexample with ``fixed`` at the instance's states?

    ``kind`` and ``cls``: the condition, ``("not", c)`` (the forest does not predict ``c``) or
    ``("predicts", t)``. ``core``: the caller needs a core with an UNSAT answer (an answer whose
    core would be ``fixed`` itself is then left to a decider that gives one). ``short``: a query
    of the hitting-set loops, on which the box search gets a short leash before a solver takes
    over (the tuning's ``short_bnb_nodes``).
    """

    fixed: tuple[int, ...]
    kind: str
    cls: int
    core: bool = False
    short: bool = False


@dataclass(frozen=True)
class Answer:
    """A decider's answer: ``sat`` and, when satisfiable, a ``witness`` state vector (or the full
    CNF's ``model``, decoded by the caller on demand); when unsatisfiable, a ``core``: a subset of
    the fixed features that is sufficient too (``None``: the fixed features themselves)."""

    sat: bool
    witness: tuple[int, ...] | None = None
    core: frozenset[int] | None = None
    model: list[int] | None = None
    #: The decider that answered (:data:`DECIDERS`; not part of the answer's value).
    by: str = field(default="", compare=False)

    def given_by(self, name: str) -> Answer:
        """This answer, marked as given by the decider ``name``."""
        return Answer(self.sat, self.witness, self.core, self.model, name)

    def with_core(self, core: frozenset[int]) -> Answer:
        """This (unsatisfiable) answer with the core ``core``."""
        return Answer(self.sat, self.witness, core, self.model, self.by)


#: What a decider is asked: a :class:`Question` for the engine's deciders; a solver call's
#: assumptions for :class:`.scheduler.SolverCall`.
Q = TypeVar("Q", contravariant=True)


class Decider(Protocol[Q]):
    """A member of a portfolio: :meth:`decide` takes one turn on a question.

    ``name`` names the decider (:data:`DECIDERS`), and the portfolio marks every answer with it
    (:attr:`Answer.by`)."""

    name: str

    def decide(self, question: Q, budget: int | None) -> Answer | None:
        """At most ``budget`` units of work on ``question`` (``None``: no limit): the answer, or
        ``None`` when this turn did not settle it (or the decider cannot: it then takes no more
        turns on it, or only turns that answer ``None``)."""
        ...
