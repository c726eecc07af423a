"""Reading a fitted scikit-learn ``Pipeline``'s preprocessing as maps from original columns.

:func:`read_preprocessing` checks every step against the supported list, finds which original
columns are categorical (those an ``OneHotEncoder`` or ``OrdinalEncoder`` reads, with the
encoder's ``categories_``), and then *measures* what the preprocessing does to each column by
evaluating it (``pipeline[:-1].transform``) on rows that differ from a base row in that column
only:

- a categorical column has finitely many states (its categories, plus ``"(other)"`` when the
  encoder accepts unknown categories), and the encoded vector of each state is recorded exactly;
- a numeric column goes through monotone, column-wise steps only (scalers, declared-monotone
  functions), so a forest threshold ``t`` on one of its encoded columns is a threshold on the
  original value: :meth:`Preprocessing.boundary` finds, by bisection over the float32 numbers,
  the largest original float32 ``b`` whose encoding passes ``<= t``, and proves it by evaluating
  the pipeline at ``b`` and at the next float32 above it.

Each encoded column must depend on one original column at most (checked on the measured rows);
every supported step is column-wise, which is what makes the measured maps exact.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rfexplain.core.errors import UnsupportedModelError
from rfexplain.core.instances import pandas
from rfexplain.core.set_splits import MISSING, OTHER

__all__ = ["Column", "Preprocessing", "read_preprocessing", "OTHER", "MISSING", "SUPPORTED_STEPS"]


_ENCODERS = ("OneHotEncoder", "OrdinalEncoder")
_NUMERIC = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler")
#: Step classes accepted before the forest (``FunctionTransformer`` only when declared monotone).
SUPPORTED_STEPS = ("ColumnTransformer", "Pipeline", *_ENCODERS, *_NUMERIC, "SimpleImputer", "FunctionTransformer")
_F32_MAX = float(np.finfo(np.float32).max)


@dataclass(frozen=True)
class Column:
    """One original column: its name and, when categorical, its category values (with
    :data:`OTHER` last when the encoder admits unknown categories)."""

    name: str
    categories: tuple[Any, ...] | None
    admits_other: bool = False
    #: A ``SimpleImputer`` reads this column: for a categorical column, missing values are one
    #: more state (:data:`MISSING`, last); for a numeric one, they are the imputed ``fill`` value.
    imputed: bool = False
    missing_value: Any = None
    fill: float | None = None

    @property
    def admits_missing(self) -> bool:
        return self.imputed and self.categories is not None

    @property
    def labels(self) -> tuple[str, ...] | None:
        if self.categories is None:
            return None
        extra = ((OTHER,) if self.admits_other else ()) + ((MISSING,) if self.admits_missing else ())
        return tuple(_label(v) for v in self.categories) + extra

    @property
    def n_states(self) -> int:
        return len(self.labels or ()) or 1


def _label(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "(missing)"
    return str(value)


class Preprocessing:
    """The measured preprocessing of a pipeline (see the module docstring)."""

    def __init__(self, pipeline: Any, columns: Sequence[Column]) -> None:
        self.pipeline = pipeline
        self.transform = pipeline[:-1].transform
        self.columns = tuple(columns)
        self.base = {c.name: (c.categories[0] if c.categories is not None else 0.0) for c in self.columns}
        self.owner: dict[int, int] = {}  # encoded column -> original column
        self.codes: dict[int, np.ndarray] = {}  # categorical column -> encoded rows, one per state
        constant = self._encode([self.base])[0]
        self.constant = constant
        for c, column in enumerate(self.columns):
            rows = self._variants(c)
            encoded = self._encode(rows)
            if column.categories is not None:
                self.codes[c] = encoded
            varying = np.flatnonzero((encoded != encoded[:1]).any(axis=0))
            for j in varying.tolist():
                if j in self.owner:
                    raise UnsupportedModelError(
                        f"encoded column {j} depends on both {self.columns[self.owner[j]].name!r} and "
                        f"{column.name!r}: only column-wise preprocessing can be explained in original columns"
                    )
                self.owner[j] = c
        self.n_encoded = len(constant)

    # ------------------------------------------------------------------ evaluation
    def frame(self, rows: Sequence[dict[str, Any]]) -> Any:
        """Rows of original values as a DataFrame in the pipeline's column order."""
        pd = pandas()
        return pd.DataFrame(list(rows), columns=[c.name for c in self.columns])

    def _encode(self, rows: Sequence[dict[str, Any]]) -> np.ndarray:
        return self.encode_frame(self.frame(rows))

    def encode_frame(self, frame: Any) -> np.ndarray:
        """``pipeline[:-1].transform(frame)`` as a dense float64 array."""
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            # the "(other)" state is an unknown category on purpose; NaN results are refused later
            warnings.filterwarnings("ignore", message="Found unknown categories", category=UserWarning)
            out = self.transform(frame)
        if hasattr(out, "toarray"):
            out = out.toarray()
        return np.asarray(out, dtype=np.float64)

    def state_value(self, c: int, state: int) -> Any:
        """The original value of state ``state`` of categorical column ``c``."""
        column = self.columns[c]
        assert column.categories is not None
        if state < len(column.categories):
            return column.categories[state]
        if column.admits_missing and state == column.n_states - 1:
            return column.missing_value
        return _unseen(column.categories)

    def _variants(self, c: int) -> list[dict[str, Any]]:
        column = self.columns[c]
        if column.categories is not None:
            values = [self.state_value(c, s) for s in range(column.n_states)]
        else:
            values = [-1e30, -1e3, -1.0, 0.0, 0.5, 1.0, 1e3, 1e30]
        return [{**self.base, column.name: v} for v in values]

    # ------------------------------------------------------------------ numeric boundaries
    def boundaries(self, c: int, j: int, thresholds: Sequence[float]) -> list[float]:
        """For each threshold ``t``, the largest float32 original value ``b`` of numeric column
        ``c`` with ``float32(encoded[j]) <= t``: ``-inf`` when no value passes, ``inf`` when all do.

        Found by bisection on the float32 numbers, all thresholds at once, and proven by
        evaluation: the encoding of ``b`` passes and that of the next float32 fails.
        """
        name = self.columns[c].name
        ts = np.asarray(thresholds, dtype=np.float64)

        def passes(values: Sequence[float]) -> np.ndarray:
            enc = self._encode([{**self.base, name: float(v)} for v in values])[:, j]
            if np.isnan(enc).any():
                raise UnsupportedModelError(
                    f"the preprocessing of {name!r} gives NaN on some numbers (e.g. a logarithm of negative "
                    "values): only transforms defined on every number can be explained (np.arcsinh, not np.log1p)"
                )
            with np.errstate(over="ignore"):  # beyond float32: +-inf, as the forest's own cast gives
                return enc.astype(np.float32).astype(np.float64) <= ts[: len(values)]

        bottom = passes([-_F32_MAX] * len(ts))
        top = passes([_F32_MAX] * len(ts))
        if (top & ~bottom).any():
            raise UnsupportedModelError(f"the preprocessing of {name!r} is not monotone increasing")
        lo = np.full(len(ts), _key(-_F32_MAX), dtype=np.int64)  # passes where bottom
        hi = np.full(len(ts), _key(_F32_MAX), dtype=np.int64)  # fails where not top
        while (hi - lo > 1).any():
            mid = (lo + hi) // 2
            ok = passes([_unkey(int(m)) for m in mid])
            lo = np.where(ok, mid, lo)
            hi = np.where(ok, hi, mid)
        out: list[float] = []
        below = passes([_unkey(int(k)) for k in lo])
        above = passes([_unkey(int(k)) for k in hi])
        for k in range(len(ts)):
            if top[k]:
                out.append(math.inf)
            elif not bottom[k]:
                out.append(-math.inf)
            elif below[k] and not above[k]:
                out.append(_unkey(int(lo[k])))
            else:
                raise UnsupportedModelError(f"the preprocessing of {name!r} is not monotone increasing")
        return out


def _key(x: float) -> int:
    """The float32 ``x`` as an integer in the same order (adjacent float32 numbers differ by 1)."""
    bits = int(np.float32(x).view(np.int32))
    return bits if bits >= 0 else -(bits & 0x7FFFFFFF)


def _unkey(k: int) -> float:
    bits = k if k >= 0 else (-k) | -0x80000000
    return float(np.int32(bits).view(np.float32))


def _unseen(categories: Sequence[Any]) -> Any:
    """A value of the categories' type that is none of them."""
    if all(isinstance(v, str) for v in categories):
        value = OTHER
        while value in categories:
            value += "_"
        return value
    numbers = [float(v) for v in categories if not (isinstance(v, float) and math.isnan(v))]
    return (max(numbers) + 1.0) if numbers else 0.0


# ---------------------------------------------------------------------- structure
def _name(step: Any) -> str:
    return type(step).__name__


def _check_step(where: str, step: Any, monotone: frozenset[str]) -> None:
    if step is None or (isinstance(step, str) and step in ("passthrough", "drop")):
        return
    kind = _name(step)
    if not type(step).__module__.startswith("sklearn.") or kind not in SUPPORTED_STEPS:
        raise UnsupportedModelError(
            f"step {where!r} ({kind}) cannot be explained in the original columns: a threshold on its "
            "output is not a condition on one original column. Supported steps: "
            f"{', '.join(SUPPORTED_STEPS)} (FunctionTransformer only when declared monotone), "
            "'passthrough' and 'drop'"
        )
    identity = kind == "FunctionTransformer" and step.func is None  # how ColumnTransformer keeps "passthrough"
    if kind == "FunctionTransformer" and not identity and where.rpartition("/")[2] not in monotone:
        raise UnsupportedModelError(
            f"step {where!r} (FunctionTransformer) is explained only when declared monotone increasing "
            f"(monotone=[{where.rpartition('/')[2]!r}]): rfexplain cannot see inside the function"
        )
    if kind == "OrdinalEncoder" and getattr(step, "encoded_missing_value", np.nan) is not np.nan:
        if not (isinstance(step.encoded_missing_value, float) and math.isnan(step.encoded_missing_value)):
            raise UnsupportedModelError(f"step {where!r}: OrdinalEncoder's encoded_missing_value is not supported")
    if kind == "SimpleImputer" and step.add_indicator:
        raise UnsupportedModelError(f"step {where!r}: SimpleImputer(add_indicator=True) is not supported")
    if kind == "Pipeline":
        for name, inner in step.steps:
            _check_step(f"{where}/{name}", inner, monotone)
    if kind == "ColumnTransformer":
        for name, inner, _ in step.transformers_:
            _check_step(f"{where}/{name}", inner, monotone)


def _encoder_of(step: Any) -> Any:
    if _name(step) in _ENCODERS:
        return step
    if _name(step) == "Pipeline":
        found = [s for _, s in step.steps if _name(s) in _ENCODERS]
        return found[0] if found else None
    return None


def _admits_other(encoder: Any) -> bool:
    if _name(encoder) == "OneHotEncoder":
        return encoder.handle_unknown in ("ignore", "infrequent_if_exist", "warn")
    return encoder.handle_unknown == "use_encoded_value"


def _column_names(ct: Any, cols: Any) -> list[str]:
    names = [str(n) for n in ct.feature_names_in_]
    if isinstance(cols, str):
        return [cols]
    if isinstance(cols, slice):
        return names[cols]
    cols = list(np.asarray(cols).tolist()) if not isinstance(cols, list) else cols
    if cols and all(isinstance(v, bool) for v in cols):
        return [n for n, keep in zip(names, cols) if keep]
    return [names[v] if isinstance(v, int) else str(v) for v in cols]


def read_preprocessing(pipeline: Any, monotone: Sequence[str] = ()) -> Preprocessing:
    """Check the steps of a fitted pipeline ending in a forest and measure its preprocessing."""
    if isinstance(monotone, str):
        raise UnsupportedModelError(f"monotone must be a list of step names, not the string {monotone!r}")
    declared = frozenset(monotone)
    for name, step in pipeline.steps[:-1]:
        _check_step(name, step, declared)
    names = getattr(pipeline, "feature_names_in_", None)
    if names is None:
        raise UnsupportedModelError(
            "explaining a pipeline in its original columns needs it fitted on a pandas DataFrame "
            "(the columns are matched by name)"
        )
    found: dict[str, dict[str, Any]] = {str(n): {} for n in names}
    for _, step in pipeline.steps[:-1]:
        if _name(step) != "ColumnTransformer":
            if _encoder_of(step) is not None or _imputer_of(step) is not None:
                raise UnsupportedModelError("encoders and imputers are supported inside a ColumnTransformer only")
            continue
        for _, inner, cols in step.transformers_:
            if isinstance(inner, str):
                continue
            encoder, imputer = _encoder_of(inner), _imputer_of(inner)
            for k, col in enumerate(_column_names(step, cols)):
                if encoder is not None:
                    found[col]["categories"] = tuple(np.asarray(encoder.categories_[k]).tolist())
                    found[col]["admits_other"] = _admits_other(encoder)
                if imputer is not None:
                    found[col]["imputed"] = True
                    found[col]["missing_value"] = imputer.missing_values
                    statistic = imputer.statistics_[k]
                    numeric = isinstance(statistic, (int, float, np.number)) and encoder is None
                    found[col]["fill"] = float(statistic) if numeric else None
    columns = [Column(name, info.pop("categories", None), **info) for name, info in found.items()]
    return Preprocessing(pipeline, columns)


def _imputer_of(step: Any) -> Any:
    if _name(step) == "SimpleImputer":
        return step
    if _name(step) == "Pipeline":
        found = [s for _, s in step.steps if _name(s) == "SimpleImputer"]
        return found[0] if found else None
    return None
