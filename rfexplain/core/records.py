"""The record of one query on one instance, as batch runs give it (:class:`BatchRecord`).

A plain value: the batch runner (:mod:`rfexplain.batch`) makes records, the DataFrames and
reports of :mod:`rfexplain.viz` read and rebuild them; neither needs the other. Both name a row
that is not a valid instance the same way (:func:`row_error`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from rfexplain.core.pyvalues import to_python

__all__ = ["BatchRecord", "row_error"]


@dataclass(frozen=True)
class BatchRecord:
    """The outcome of one query on one instance.

    Attributes
    ----------
    index : int
        The instance's index (its row number in ``X``, or the ``indices`` given).
    query : str
        The Decision query asked.
    engine : str
        The engine that answered.
    prediction : label or None
        The forest's decision under the vote explained (by default the model's own: the soft
        vote of a random forest's ``predict``; the majority vote with ``vote="hard"``), ``None``
        if the instance was invalid.
    prediction_index : int or None
        Its index in ``classes``.
    sklearn_prediction : label or None
        The scikit-learn model's own ``predict``, when a model was explained.
    result : list of dict, float, str or None
        Reason queries: the reasons as :meth:`Reason.to_dict` dictionaries (a single-answer query
        gives a list of zero or one). ``robustness``: an int, or ``math.inf`` when nothing flips
        the decision. ``complete_reason`` / ``general_reason``: the formula's text. ``None`` on
        error.
    time : float
        Seconds spent answering (engine construction excluded).
    complete : bool or None
        ``True`` when the answer is complete, ``False`` when a budget cut it short, ``None`` on
        error.
    stopped_by : str or None
        ``"limit"`` or ``"timeout"`` when cut short.
    error : str or None
        ``"ExceptionType: message"`` when this instance failed.
    band : tuple or None
        A regression batch's band ``(low, high)`` (``None`` for an unbounded end): the question
        was whether the prediction is inside it (``prediction`` is ``"inside"``, ``"below"`` or
        ``"above"``, ``sklearn_prediction`` the regressor's own prediction). ``None`` for a
        classifier.
    """

    index: int
    query: str
    engine: str
    prediction: Any = None
    prediction_index: int | None = None
    sklearn_prediction: Any = None
    result: Any = None
    time: float = 0.0
    complete: bool | None = None
    stopped_by: str | None = None
    error: str | None = None
    band: tuple[float | None, float | None] | None = None

    @property
    def ok(self) -> bool:
        """No error (the answer may still be incomplete)."""
        return self.error is None

    @property
    def reasons(self) -> list[dict[str, Any]]:
        """The reason dictionaries of a reason query (empty otherwise)."""
        return list(self.result) if isinstance(self.result, list) else []

    def feature_sets(self) -> list[frozenset[int]]:
        """The feature sets of the reasons, in order."""
        return [frozenset(r["features"]) for r in self.reasons]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (``math.inf`` robustness becomes ``None``, labels plain Python)."""
        out = asdict(self)
        out["prediction"] = to_python(self.prediction)
        out["sklearn_prediction"] = to_python(self.sklearn_prediction)
        if isinstance(self.result, float) and math.isinf(self.result):
            out["result"] = None
        return out


def row_error(exc: BaseException, where: str) -> str:
    """The error of a row that is not a valid instance, naming the row: ``"InvalidInstanceError:
    row 3 has NaN in feature 1 ..."`` (a message about "instance 0", the only row the check saw,
    is about ``where``).

    >>> row_error(ValueError("instance 0 has NaN in feature 1"), "row 3")
    'ValueError: row 3 has NaN in feature 1'
    >>> row_error(ValueError("expected 4 features, got 2"), "row 3")
    'ValueError: row 3: expected 4 features, got 2'
    """
    text = str(exc)
    if text.startswith("instance 0 "):
        return f"{type(exc).__name__}: {where} {text[len('instance 0 ') :]}"
    return f"{type(exc).__name__}: {where}: {text}"
