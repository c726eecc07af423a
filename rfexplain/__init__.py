"""rfexplain: formal, guaranteed explanations of scikit-learn random forest decisions.

This module re-exports the public API. The semantics are in ``docs/design.md``, the package's
layout in ``docs/architecture.md`` and the papers it implements in ``docs/references.md``.

>>> import rfexplain as rx
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
>>> forest = rx.Forest.from_sklearn(model)
>>> decision = rx.Explainer(forest, engine="sat").explain(X[0])
>>> print(decision.sufficient_reason())
x3 <= 0.7
"""

from rfexplain import viz
from rfexplain.batch import BatchInterrupted
from rfexplain.core.budget import Budget, BudgetExpired, Enumeration
from rfexplain.core.errors import (
    CompilationTooLargeError,
    ForestFormatError,
    InvalidArgumentError,
    InvalidForestError,
    InvalidInstanceError,
    InvalidOptionError,
    InvalidTargetError,
    NotFittedError,
    OracleTooLargeError,
    QueryArgumentError,
    RFExplainError,
    UnknownClassError,
    UnknownDatasetError,
    UnknownEngineError,
    UnknownQueryError,
    UnsupportedModelError,
    UnsupportedQuery,
    UnsupportedQueryError,
)
from rfexplain.core.forest import Forest, Tree
from rfexplain.core.reasons import Literal, Reason, Witness
from rfexplain.decision import Decision, InputRoundingWarning, SoftVoteWarning
from rfexplain.engines import Engine, EngineBase, Instance, available_engines, register
from rfexplain.explainer import Explainer
from rfexplain.regression import RegressionExplainer
from rfexplain.verify import Verification, verify

__version__ = "0.2.0"

__all__ = [
    "RegressionExplainer",
    "BatchInterrupted",
    "Forest",
    "Tree",
    "Explainer",
    "Decision",
    "Literal",
    "Reason",
    "Witness",
    "Budget",
    "BudgetExpired",
    "CompilationTooLargeError",
    "InvalidOptionError",
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
    "InputRoundingWarning",
    "RFExplainError",
    "UnsupportedModelError",
    "NotFittedError",
    "InvalidInstanceError",
    "UnknownEngineError",
    "UnknownClassError",
    "UnsupportedQuery",
    "UnsupportedQueryError",
    "UnknownQueryError",
    "QueryArgumentError",
    "InvalidArgumentError",
    "InvalidTargetError",
    "InvalidForestError",
    "ForestFormatError",
    "UnknownDatasetError",
    "OracleTooLargeError",
]
