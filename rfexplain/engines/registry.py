"""The engine registry: built-in names, programmatic registration and entry-point discovery.

Built-in engines are ``"sat"`` (:mod:`rfexplain.sat.engine`), ``"circuit"``
(:mod:`rfexplain.circuit.engine`) and ``"oracle"`` (:mod:`rfexplain.oracle.engine`). Third-party
packages add engines through the entry-point group ``rfexplain.engines``::

    [project.entry-points."rfexplain.engines"]
    myengine = "mypackage.engine:MyEngine"
"""

from __future__ import annotations

import importlib
import logging
from importlib.metadata import entry_points
from typing import Any

from rfexplain.core.errors import UnknownEngineError

__all__ = ["register", "engine_class", "known_engines", "available_engines", "engines_supporting", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "rfexplain.engines"
log = logging.getLogger(__name__)

_BUILTIN: dict[str, str] = {
    "sat": "rfexplain.sat.engine:SatEngine",
    "circuit": "rfexplain.circuit.engine:CircuitEngine",
    "oracle": "rfexplain.oracle:OracleEngine",
}
_registered: dict[str, Any] = {}


def register(name: str, engine_cls: Any) -> None:
    """Register an engine class under ``name`` (overrides a built-in or entry point of that name)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"engine name must be a non-empty string. Got {name!r} instead.")
    _registered[name] = engine_cls


def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def known_engines() -> list[str]:
    """Every engine name: built-in, registered, or announced by an entry point."""
    return sorted(set(_BUILTIN) | set(_registered) | set(_entry_points()))


def engine_class(name: str) -> Any:
    """The engine class registered under ``name``.

    Raises :class:`~rfexplain.core.errors.UnknownEngineError` listing the known engines.
    """
    if name in _registered:
        return _registered[name]
    eps = _entry_points()
    if name in eps:
        return eps[name].load()
    if name in _BUILTIN:
        module_name, _, attr = _BUILTIN[name].partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            raise UnknownEngineError(f"engine {name!r} is not available in this installation") from None
        return getattr(module, attr)
    raise UnknownEngineError(f"engine must be one of {known_engines()}. Got {name!r} instead.")


def available_engines() -> list[str]:
    """Engine names whose class can be loaded here."""
    out = []
    for name in known_engines():
        try:
            engine_class(name)
        except UnknownEngineError:
            continue
        except Exception as exc:  # a broken third-party plug-in must not hide the others
            log.warning("engine %r failed to load: %s", name, exc)
            continue
        out.append(name)
    return out


def engines_supporting(query: str) -> list[str]:
    """Names of the loadable engines that answer ``query``."""
    return [name for name in available_engines() if query in getattr(engine_class(name), "queries", ())]
