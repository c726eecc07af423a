"""Optional dependencies of the front ends, and the error that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from rfexplain.core.errors import RFExplainError

__all__ = ["MissingExtraError", "require"]


class MissingExtraError(RFExplainError, ImportError):
    """An optional dependency is missing; the message says which ``rfexplain[extra]`` brings it."""


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``rfexplain[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(f"{purpose} needs {module.split('.')[0]}: pip install 'rfexplain[{extra}]'") from exc
