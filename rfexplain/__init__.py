"""rfexplain: formal, guaranteed explanations of scikit-learn random forest decisions.

>>> import rfexplain as rx
>>> forest = rx.Forest.from_sklearn(model)                      # doctest: +SKIP
>>> decision = rx.Explainer(forest, engine="sat").explain(x)     # doctest: +SKIP
>>> print(decision.sufficient_reason())                          # doctest: +SKIP
"""

from rfexplain.core.budget import Budget, Enumeration
from rfexplain.engines import Engine, EngineBase, Instance, available_engines, register
from rfexplain.core.errors import (
    ForestFormatError,
    InvalidInstanceError,
    NotFittedError,
    OracleTooLargeError,
    RFExplainError,
    UnknownClassError,
    UnknownDatasetError,
    UnknownEngineError,
    UnsupportedModelError,
    UnsupportedQuery,
)
from rfexplain.explainer import Decision, Explainer, SoftVoteWarning
from rfexplain.core.forest import Forest, Tree
from rfexplain.core.reasons import Literal, Reason, Witness
from rfexplain.verify import Verification, verify
from rfexplain import viz

__version__ = "0.1.0"

__all__ = [
    "Forest",
    "Tree",
    "Explainer",
    "Decision",
    "Literal",
    "Reason",
    "Witness",
    "Budget",
    "Enumeration",
    "Engine",
    "EngineBase",
    "Instance",
    "register",
    "available_engines",
    "verify",
    "Verification",
    "viz",
    "SoftVoteWarning",
    "RFExplainError",
    "UnsupportedModelError",
    "NotFittedError",
    "InvalidInstanceError",
    "UnknownEngineError",
    "UnknownClassError",
    "UnsupportedQuery",
    "ForestFormatError",
    "UnknownDatasetError",
    "OracleTooLargeError",
]
