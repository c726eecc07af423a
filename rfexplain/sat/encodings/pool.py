"""Variables by key: a pool of propositional variables indexed by typed tuples.

Every variable of the forest encoding is allocated through :class:`VarPool` under a key such as
``Var.gt(f, j)`` (``("gt", f, j)``: feature ``f`` lies above its ``j``-th threshold) or
``Var.vote(k, c)`` (``("vote", k, c)``: tree ``k`` votes for class ``c``). The underlying
:class:`pysat.formula.IDPool` is handed to python-sat's cardinality encodings (``vpool=``) so that
their auxiliary variables never collide with ours. No code ever computes a variable by arithmetic
or parses a name back: meanings are looked up by key (:meth:`VarPool.var`) and keys by variable
(:meth:`VarPool.key`).

Example
-------
>>> pool = VarPool()
>>> a = pool.var(Var.gt(0, 1))
>>> pool.var(Var.gt(0, 1)) == a, pool.key(a)
(True, ('gt', 0, 1))
"""

from __future__ import annotations

from collections.abc import Hashable

from pysat.formula import IDPool

__all__ = ["Var", "VarPool", "Key"]

#: A variable key: a tuple whose first item names the kind of variable.
Key = tuple[Hashable, ...]


class Var:
    """Constructors of the typed keys used by the encoding (one static method per kind)."""

    @staticmethod
    def gt(feature: int, j: int) -> Key:
        """Order-encoding variable: the state of ``feature`` is above ``j`` (``x > t_j``)."""
        return ("gt", int(feature), int(j))

    @staticmethod
    def state(feature: int, s: int) -> Key:
        """Channelled state variable: ``feature`` is in state ``s`` (also the feature's selector
        literal when an instance has state ``s`` there)."""
        return ("state", int(feature), int(s))

    @staticmethod
    def vote(tree: int, cls: int) -> Key:
        """Tree ``tree`` votes for class ``cls``."""
        return ("vote", int(tree), int(cls))

    @staticmethod
    def aux(kind: str, *parts: int) -> Key:
        """Any other named auxiliary variable (challenger guards, selector-construction picks...)."""
        return (str(kind),) + tuple(int(p) for p in parts)


class VarPool:
    """Allocates variables by typed key; wraps :class:`pysat.formula.IDPool`.

    Attributes
    ----------
    idpool : IDPool
        Pass it as ``vpool=`` to ``pysat.card.CardEnc`` so auxiliary variables are reserved here.
    """

    def __init__(self) -> None:
        self.idpool = IDPool()

    def var(self, key: Key) -> int:
        """The variable of ``key``, allocated on first use."""
        return int(self.idpool.id(key))

    def has(self, key: Key) -> bool:
        """Whether ``key`` already has a variable."""
        return key in self.idpool.obj2id

    def key(self, var: int) -> Key | None:
        """The key of a variable allocated by :meth:`var` (``None`` for auxiliary variables of
        cardinality encodings, which have no key)."""
        obj = self.idpool.obj(abs(var))
        return obj if isinstance(obj, tuple) else None

    @property
    def top(self) -> int:
        """The largest variable allocated so far (by key or by a cardinality encoding)."""
        return int(self.idpool.top)

    def fresh(self, kind: str, *parts: int) -> int:
        """A new variable under the key ``(kind, *parts)``; the key must not exist yet."""
        key = Var.aux(kind, *parts)
        if self.has(key):
            raise ValueError(f"variable {key!r} already exists")
        return self.var(key)
