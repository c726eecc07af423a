"""Exceptions of rfexplain.

Every exception subclasses :class:`RFExplainError` *and* the builtin exception users already
catch for that kind of problem (scikit-learn's convention), so ``except ValueError`` keeps
working for code that does not know about rfexplain.
"""

from __future__ import annotations

__all__ = [
    "RFExplainError",
    "ADDTooLargeError",
    "UnsupportedModelError",
    "NotFittedError",
    "InvalidInstanceError",
    "UnknownEngineError",
    "UnknownClassError",
    "UnsupportedQueryError",
    "UnsupportedQuery",
    "UnknownQueryError",
    "QueryArgumentError",
    "InvalidArgumentError",
    "InvalidTargetError",
    "InvalidForestError",
    "ForestFormatError",
    "UnknownDatasetError",
    "DataDirError",
    "CSVFormatError",
    "TrainingOptionError",
    "OracleTooLargeError",
    "InvalidOptionError",
    "CompilationTooLargeError",
]


class RFExplainError(Exception):
    """Root of every error raised on purpose by rfexplain."""


class UnsupportedModelError(RFExplainError, TypeError):
    """The model is not a fitted tree ensemble classifier rfexplain can explain."""


class NotFittedError(RFExplainError, ValueError):
    """The scikit-learn model has not been fitted."""


class InvalidInstanceError(RFExplainError, ValueError):
    """An instance has the wrong shape, a NaN, or a non-numeric value."""


class UnknownEngineError(RFExplainError, ValueError):
    """No engine is registered under that name."""


class UnknownClassError(RFExplainError, ValueError):
    """A class label that is not one of the model's classes."""


class UnsupportedQueryError(RFExplainError, NotImplementedError):
    """The engine cannot answer this query; the message names the engines that can."""


#: Deprecated alias of :class:`UnsupportedQueryError` (the same class), kept for one release:
#: it will be removed in the release after 0.1.
UnsupportedQuery = UnsupportedQueryError


class UnknownQueryError(RFExplainError, ValueError):
    """No query of the Decision API has that name; the message lists them."""


class QueryArgumentError(RFExplainError, TypeError):
    """A query was given an argument it does not take (e.g. ``limit=`` for a single answer)."""


class InvalidArgumentError(RFExplainError, TypeError):
    """A function was given an argument of the wrong kind (e.g. :func:`~rfexplain.verify` given
    something that is not a :class:`~rfexplain.Reason`); the message names what it expected."""


class InvalidTargetError(RFExplainError, ValueError):
    """A contrastive query's target class is the decision itself."""


class InvalidForestError(RFExplainError, ValueError):
    """A forest's arrays are inconsistent (thresholds, node arrays, class or feature indices)."""


class ForestFormatError(RFExplainError, ValueError):
    """A forest JSON document is corrupt or of a version this release cannot read."""


class UnknownDatasetError(RFExplainError, ValueError):
    """No dataset of that name exists; the message lists the available ones."""


class DataDirError(UnknownDatasetError):
    """The CSV folder given (the ``data_dir`` argument or ``RFEXPLAIN_DATA``) does not exist."""


class CSVFormatError(RFExplainError, ValueError):
    """A CSV of instances is missing, empty, ragged or has a non-numeric feature value."""


class TrainingOptionError(RFExplainError, ValueError):
    """A forest-training option is out of range (non-positive trees or depth, a bad test size)."""


class OracleTooLargeError(RFExplainError, ValueError):
    """The forest has too many state vectors for brute-force enumeration."""


class InvalidOptionError(RFExplainError, ValueError):
    """An engine's or a comparator's option has a value it does not accept (the message lists the
    accepted ones)."""


class ADDTooLargeError(RFExplainError, MemoryError):
    """An ADD grew past its manager's or store's node budget (``max_nodes``;
    :mod:`rfexplain.comparators.add`)."""


class CompilationTooLargeError(RFExplainError, MemoryError):
    """A compilation grew past its size budget (``max_nodes=``) or ran out of memory; the message
    gives the size reached."""
