"""The query table: every question the Decision API answers, described once.

Each :class:`Query` says what kind of answer the query gives (one reason, a number, an
enumeration of reasons, or a formula) and whether it takes a target class. Everything else is
derived from this table: the engines' ``QUERIES`` and ``ENUMERATION_QUERIES``, the dispatch of
:class:`~rfexplain.decision.Decision`, the command line's ``--query`` choices and the batch
runner's handling of each kind. A test checks the table against the ``Decision`` methods and the
``Engine`` protocol, so a query added in one place and not the others fails the suite.

>>> QUERY_TABLE["robustness"].kind is Kind.NUMBER
True
>>> QUERY_TABLE["contrastive_reasons"].enumerates, QUERY_TABLE["contrastive_reasons"].takes_target
(True, True)
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from rfexplain.core.errors import UnknownQueryError

__all__ = ["Kind", "Query", "QUERY_TABLE", "query"]


class Kind(enum.Enum):
    """What a query answers."""

    #: One reason, or ``None`` (``necessary_reason`` when nothing flips the decision).
    REASON = "reason"
    #: A number (``robustness``: an int, or ``math.inf``).
    NUMBER = "number"
    #: An :class:`~rfexplain.core.budget.Enumeration` of reasons; takes ``limit=`` and ``timeout=``.
    ENUMERATION = "enumeration"
    #: A formula over state vectors (its form depends on the engine).
    FORMULA = "formula"


@dataclass(frozen=True)
class Query:
    """One query of the Decision API.

    Attributes
    ----------
    name : str
        The method's name on :class:`~rfexplain.decision.Decision` and on the engines.
    kind : Kind
        What it answers.
    takes_target : bool
        Whether it takes a target class (the engines receive its index before the budget).
    all_of : str or None
        For a single-reason query, the enumeration of every reason of the same kind.
    changes : bool
        Whether the answer is about changing the instance (necessary and contrastive reasons,
        robustness, flips): features declared immutable stay fixed in it.
    """

    name: str
    kind: Kind
    takes_target: bool = False
    all_of: str | None = None
    changes: bool = False

    @property
    def enumerates(self) -> bool:
        """Whether the query enumerates, and therefore takes ``limit=`` and ``timeout=``."""
        return self.kind is Kind.ENUMERATION


_TABLE = (
    Query("sufficient_reason", Kind.REASON, all_of="sufficient_reasons"),
    Query("inflated_sufficient_reason", Kind.REASON),
    Query("necessary_reason", Kind.REASON, all_of="necessary_reasons", changes=True),
    Query("sufficient_reasons", Kind.ENUMERATION),
    Query("necessary_reasons", Kind.ENUMERATION, changes=True),
    Query("shortest_sufficient_reasons", Kind.ENUMERATION),
    Query("shortest_necessary_reasons", Kind.ENUMERATION, changes=True),
    Query("contrastive_reasons", Kind.ENUMERATION, takes_target=True, changes=True),
    Query("robustness", Kind.NUMBER, changes=True),
    Query("complete_reason", Kind.FORMULA),
    Query("general_reason", Kind.FORMULA),
    Query("general_sufficient_reasons", Kind.ENUMERATION),
    Query("general_necessary_reasons", Kind.ENUMERATION, changes=True),
    Query("shortest_flips", Kind.ENUMERATION, changes=True),
)

#: Every query by name, in the order of the Decision API.
QUERY_TABLE: Mapping[str, Query] = MappingProxyType({q.name: q for q in _TABLE})


def query(name: str) -> Query:
    """The query called ``name``; :class:`~rfexplain.core.errors.UnknownQueryError` if none is."""
    try:
        return QUERY_TABLE[name]
    except (KeyError, TypeError):
        raise UnknownQueryError(f"query must be one of {list(QUERY_TABLE)}. Got {name!r} instead.") from None
