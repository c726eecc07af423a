"""Hash-consed NNF circuits over discrete variables (docs/architecture.md).

An :class:`NNFManager` owns every node of a family of circuits. Nodes are integers: ``0`` is
false, ``1`` is true, and every other id is a *literal* (a feature and a set of its states, kept as
a bit mask), a conjunction or a disjunction. A node is created once per (kind, children) in the
manager's unique table, so structurally equal circuits are the same integer, and a node's
children always have smaller ids than the node: increasing id order is a topological order, which
is what the bottom-up passes (evaluation, counting, rendering) use. Nothing here recurses.

Constants are simplified on construction (``x and false = false``, ``x or true = true``, a literal
with every state is true and one with no state is false), and duplicate children are merged.

Example
-------
>>> m = NNFManager((3, 2))
>>> a = m.literal(0, 0b011)          # x0 in {0, 1}
>>> b = m.literal(1, 0b10)           # x1 in {1}
>>> f = m.disj(a, b)
>>> m.evaluate(f, (2, 1)), m.evaluate(f, (2, 0))
(True, False)
>>> m.conj(f, m.false) == m.false
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from rfexplain.core.bits import bits_of
from rfexplain.core.budget import poll

__all__ = ["NNFManager", "Circuit", "FALSE", "TRUE", "LIT", "AND", "OR"]

FALSE, TRUE, LIT, AND, OR = 0, 1, 2, 3, 4
_KIND_NAMES = {FALSE: "false", TRUE: "true", LIT: "literal", AND: "and", OR: "or"}


class NNFManager:
    """Unique table and node store for NNF circuits over discrete variables.

    Parameters
    ----------
    n_states : sequence of int
        Number of states of every variable (feature); literal masks use bit ``s`` for state ``s``.
    """

    false = 0
    true = 1

    def __init__(self, n_states: Sequence[int]) -> None:
        self.n_states = tuple(int(n) for n in n_states)
        self.full = tuple((1 << n) - 1 for n in self.n_states)
        self.kind: list[int] = [FALSE, TRUE]
        self.var: list[int] = [-1, -1]
        self.mask: list[int] = [0, 0]
        self.children: list[tuple[int, ...]] = [(), ()]
        self._unique: dict[tuple, int] = {}

    def __len__(self) -> int:
        return len(self.kind)

    # ------------------------------------------------------------------ construction
    def _make(self, key: tuple, kind: int, var: int, mask: int, children: tuple[int, ...]) -> int:
        node = self._unique.get(key)
        if node is None:
            node = len(self.kind)
            self.kind.append(kind)
            self.var.append(var)
            self.mask.append(mask)
            self.children.append(children)
            self._unique[key] = node
        return node

    def literal(self, var: int, mask: int) -> int:
        """``var in states(mask)``; a full mask is true, an empty one false."""
        mask &= self.full[var]
        if mask == 0:
            return FALSE
        if mask == self.full[var]:
            return TRUE
        return self._make((LIT, var, mask), LIT, var, mask, ())

    def state(self, var: int, state: int) -> int:
        """The simple literal ``var = state``."""
        return self.literal(var, 1 << state)

    def conj(self, *nodes: int) -> int:
        return self.conj_all(nodes)

    def disj(self, *nodes: int) -> int:
        return self.disj_all(nodes)

    def or2(self, a: int, b: int) -> int:
        """``a or b``: :meth:`disj` for exactly two nodes, without building a set (the closed
        forms make millions of these)."""
        if a == TRUE or b == TRUE:
            return TRUE
        if a == FALSE or a == b:
            return b
        if b == FALSE:
            return a
        children = (a, b) if a < b else (b, a)
        return self._make((OR, children), OR, -1, 0, children)

    def conj_all(self, nodes: Iterable[int]) -> int:
        """Conjunction with constant simplification (true children dropped, false absorbs)."""
        kept: set[int] = set()
        for n in nodes:
            if n == FALSE:
                return FALSE
            if n != TRUE:
                kept.add(n)
        if not kept:
            return TRUE
        if len(kept) == 1:
            return next(iter(kept))
        children = tuple(sorted(kept))
        return self._make((AND, children), AND, -1, 0, children)

    def disj_all(self, nodes: Iterable[int]) -> int:
        """Disjunction with constant simplification (false children dropped, true absorbs)."""
        kept: set[int] = set()
        for n in nodes:
            if n == TRUE:
                return TRUE
            if n != FALSE:
                kept.add(n)
        if not kept:
            return FALSE
        if len(kept) == 1:
            return next(iter(kept))
        children = tuple(sorted(kept))
        return self._make((OR, children), OR, -1, 0, children)

    # comparator operations for the sorting networks (Algorithms 1-2)
    def or_(self, a: int, b: int) -> int:
        return self.disj_all((a, b))

    def and_(self, a: int, b: int) -> int:
        return self.conj_all((a, b))

    # ------------------------------------------------------------------ traversal
    def reachable(self, roots: Iterable[int]) -> list[int]:
        """Every node reachable from ``roots``, in increasing (topological, children-first) order."""
        seen: set[int] = set()
        stack = [r for r in roots]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            stack.extend(c for c in self.children[n] if c not in seen)
        return sorted(seen)

    def size(self, roots: Iterable[int] | int) -> tuple[int, int]:
        """``(nodes, edges)`` of the circuit(s) rooted at ``roots`` (shared nodes counted once)."""
        if isinstance(roots, int):
            roots = [roots]
        nodes = self.reachable(roots)
        return len(nodes), sum(len(self.children[n]) for n in nodes)

    def fold(
        self,
        roots: Iterable[int],
        leaf: Callable[[int], object],
        and_: Callable[[list], object],
        or_: Callable[[list], object],
    ) -> dict[int, object]:
        """Bottom-up pass with memo: ``leaf(node)`` for constants and literals, ``and_`` / ``or_``
        on the list of the children's values. Returns the value of every reachable node."""
        value: dict[int, object] = {}
        kind, children = self.kind, self.children
        for n in self.reachable(roots):
            k = kind[n]
            if k == AND:
                value[n] = and_([value[c] for c in children[n]])
            elif k == OR:
                value[n] = or_([value[c] for c in children[n]])
            else:
                value[n] = leaf(n)
        return value

    def evaluate(self, root: int, states: Sequence[int]) -> bool:
        """Whether the state vector ``states`` satisfies the circuit."""
        var, mask = self.var, self.mask
        return self.evaluate_literals(root, lambda n: bool(mask[n] >> int(states[var[n]]) & 1))

    def evaluate_literals(self, root: int, literal: Callable[[int], bool]) -> bool:
        """Value of the circuit when each literal node ``n`` has the value ``literal(n)``."""
        value: dict[int, bool] = {}
        kind, children = self.kind, self.children
        for count, n in enumerate(self.reachable([root])):
            if count % 4096 == 0:
                poll("evaluating a circuit")
            k = kind[n]
            if k == AND:
                value[n] = all(value[c] for c in children[n])
            elif k == OR:
                value[n] = any(value[c] for c in children[n])
            elif k == LIT:
                value[n] = literal(n)
            else:
                value[n] = k == TRUE
        return value[root]

    def variables(self, root: int) -> set[int]:
        """The variables mentioned by the circuit."""
        return {self.var[n] for n in self.reachable([root]) if self.kind[n] == LIT}

    # ------------------------------------------------------------------ rendering
    def describe_literal(self, node: int, names: Sequence[str] | None = None) -> str:
        v, m = self.var[node], self.mask[node]
        name = names[v] if names is not None else f"x{v}"
        states = bits_of(m)
        if len(states) == 1:
            return f"{name}={states[0]}"
        return f"{name} in {{{','.join(map(str, states))}}}"

    def render(self, root: int, names: Sequence[str] | None = None, max_nodes: int = 200) -> str:
        """A readable formula (shared sub-circuits are repeated); a summary when too large."""
        nodes = self.reachable([root])
        if len(nodes) > max_nodes:
            n, e = len(nodes), sum(len(self.children[x]) for x in nodes)
            return f"<NNF circuit with {n} nodes and {e} edges>"
        text: dict[int, str] = {}
        for n in nodes:
            k = self.kind[n]
            if k == FALSE:
                text[n] = "false"
            elif k == TRUE:
                text[n] = "true"
            elif k == LIT:
                text[n] = self.describe_literal(n, names)
            else:
                joiner = " & " if k == AND else " | "
                parts = [text[c] if self.kind[c] in (LIT, FALSE, TRUE) else f"({text[c]})" for c in self.children[n]]
                text[n] = joiner.join(parts)
        return text[root]

    def to_dot(self, root: int, names: Sequence[str] | None = None) -> str:
        """Graphviz DOT source of the circuit rooted at ``root``."""
        lines = ["digraph nnf {", "  node [fontname=Helvetica];"]
        for n in self.reachable([root]):
            k = self.kind[n]
            if k == LIT:
                label = self.describe_literal(n, names).replace('"', '\\"')
                lines.append(f'  n{n} [shape=box, label="{label}"];')
            else:
                label = {FALSE: "false", TRUE: "true", AND: "and", OR: "or"}[k]
                lines.append(f'  n{n} [shape={"ellipse" if k in (AND, OR) else "box"}, label="{label}"];')
            for c in self.children[n]:
                lines.append(f"  n{n} -> n{c};")
        lines.append("}")
        return "\n".join(lines)


class Circuit:
    """A formula handed to users: an NNF root in its manager (a :class:`ReasonFormula`).

    ``z in circuit`` tests a state vector; ``str()`` renders small circuits; :meth:`to_dot`
    exports Graphviz; :attr:`n_nodes` / :attr:`n_edges` give the size.
    """

    def __init__(self, manager: NNFManager, root: int, names: Sequence[str] | None = None, title: str = "") -> None:
        self.manager = manager
        self.root = root
        self.names = tuple(names) if names is not None else None
        self.title = title

    def __contains__(self, states: object) -> bool:
        return self.manager.evaluate(self.root, states)  # type: ignore[arg-type]

    @property
    def n_nodes(self) -> int:
        return self.manager.size(self.root)[0]

    @property
    def n_edges(self) -> int:
        return self.manager.size(self.root)[1]

    @property
    def is_true(self) -> bool:
        return self.root == TRUE

    @property
    def is_false(self) -> bool:
        return self.root == FALSE

    def to_dot(self) -> str:
        return self.manager.to_dot(self.root, self.names)

    def __str__(self) -> str:
        return self.manager.render(self.root, self.names)

    def __repr__(self) -> str:
        n, e = self.manager.size(self.root)
        what = f"{self.title} " if self.title else ""
        return f"<{what}circuit: {n} nodes, {e} edges>"
