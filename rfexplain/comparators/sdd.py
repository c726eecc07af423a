"""Class formulas of a forest as SDDs (Darwiche, 2011 [Dar11], through PySDD): exact model counting
and equivalence checking.

A research comparator and an independent check of the circuit compiler (docs/architecture.md):
the class formulas are built here **from the trees directly**, with a vote-counting construction
of their own, and share nothing with :mod:`rfexplain.circuit.compilers.classformula` but the forest
model.

Boolean encoding of the discrete features
-----------------------------------------
``encoding="order"`` (default): one variable ``o[f, j]`` per threshold, true iff
``state[f] <= j``, with the chain constraints ``o[f, j] -> o[f, j + 1]``. A tree test is then one
literal, and an interval of states at most two. ``encoding="indicator"``: one variable per
state, ``e[f, s]`` iff ``state[f] = s``, with exactly-one constraints. In both, the valid
assignments (those satisfying the domain constraint ``D``) are in bijection with the state
vectors, so the model count of ``formula & D`` over all variables of the manager is the number of
state vectors satisfying the formula. Every intermediate formula is kept inside ``D``: outside it
the variables are independent and the formulas of nested tests on one feature blow up. The two
encodings give SDDs of similar size and compile times; the order encoding is the default because
a tree test and an interval are one or two literals, which keeps the converted circuits small.

Vtree
-----
``vtree="balanced"`` (default): PySDD's balanced vtree over the variables listed feature by
feature (the most tested features first, each feature's variables in threshold order).
``"features"``: one balanced sub-vtree per feature and a balanced vtree over the features, which
keeps each feature's domain constraint inside one sub-vtree; ``"right"`` and ``"left"``: PySDD's
linear vtrees. ``balanced`` is the default: the fastest and among the smallest of the four on
the class formulas of scikit-learn forests (the figures are in ``docs/decisions.md``).

The class formula
-----------------
The classifier of docs/design.md, section 1, exactly: per tree and class, the SDD ``T[t, c]`` of "tree ``t``
votes ``c``" (an if-then-else over the tree's nodes); per class, ``E[c][k]`` = "exactly ``k``
trees vote ``c``" by the usual dynamic programme over the trees; and class ``c`` wins iff for
some ``k``, ``E[c][k]`` holds, every lower class has at most ``k - 1`` votes and every higher
class at most ``k`` (ties go to the lowest index). With two classes, class 0 wins iff it has at
least ``ceil(n / 2)`` votes.

Model counts overflow PySDD's 64-bit counters past 2^64 (a limitation of PySDD's ``model_count``), so
:meth:`SDDForest.count` walks the SDD with Python integers.

Example
-------
>>> from rfexplain import Forest
>>> raw = {"feature": [0, -1, -1], "threshold": [0.5, 0, 0], "left": [1, -1, -1],
...        "right": [2, -1, -1], "label": [-1, 0, 1]}
>>> forest = Forest.from_raw_trees([raw], n_features=2, classes=["a", "b"])
>>> sdd = SDDForest(forest)
>>> sdd.counts()
[1, 1]
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

from pysdd.sdd import SddManager, SddNode, Vtree  # type: ignore[import-untyped]

from rfexplain.core.bits import bits_of
from rfexplain.core.budget import Budget
from rfexplain.core.errors import InvalidOptionError, UnsupportedQueryError
from rfexplain.core.forest import Forest

__all__ = ["SDDForest", "equivalent", "ENCODINGS", "VTREES", "count_models"]

log = logging.getLogger(__name__)

ENCODINGS = ("order", "indicator")
VTREES = ("features", "balanced", "right", "left")


def _balanced_vtree_lines(items: list, lines: list[str], counter: list[int]) -> int:
    """Append the vtree file lines of a balanced tree over ``items`` (variable numbers or
    already-written node ids tagged ``("node", id)``); return the root's id. Iterative."""
    # build bottom-up: pair neighbours level by level
    level: list[int] = []
    for item in items:
        if isinstance(item, tuple):
            level.append(item[1])
        else:
            node = counter[0]
            counter[0] += 1
            lines.append(f"L {node} {item}")
            level.append(node)
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            node = counter[0]
            counter[0] += 1
            lines.append(f"I {node} {level[i]} {level[i + 1]}")
            nxt.append(node)
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


class SDDForest:
    """The class formulas of a forest compiled into one SDD manager.

    Parameters
    ----------
    forest : Forest
    encoding : ``"order"`` or ``"indicator"`` (see the module docstring)
    vtree : ``"balanced"`` (default), ``"features"``, ``"right"`` or ``"left"``
    auto_minimize : bool
        PySDD's automatic garbage collection and vtree minimisation (smaller SDDs, slower).
    timeout : float or Budget, optional
        Seconds, or a :class:`~rfexplain.core.budget.Budget`, for the compilations of this object
        that are given no budget of their own; :class:`~rfexplain.core.budget.BudgetExpired` (a
        :class:`TimeoutError`) when they take longer (checked between operations).
    """

    def __init__(
        self,
        forest: Forest,
        *,
        encoding: str = "order",
        vtree: str = "balanced",
        auto_minimize: bool = False,
        timeout: float | Budget | None = None,
    ) -> None:
        if encoding not in ENCODINGS:
            raise InvalidOptionError(f"encoding must be one of {list(ENCODINGS)}. Got {encoding!r} instead.")
        if vtree not in VTREES:
            raise InvalidOptionError(f"vtree must be one of {list(VTREES)}. Got {vtree!r} instead.")
        if not forest.aggregation.is_majority:
            raise UnsupportedQueryError(
                "the SDD comparator compiles the hard majority vote only, and this forest decides by "
                f"{forest.aggregation.described}: use forest.with_vote('hard'), or the ADD comparator"
            )
        self.forest = forest
        self.encoding = encoding
        self.vtree_kind = vtree
        self.budget = Budget.of(timeout)
        self.timings: dict[str, float] = {}
        start = time.perf_counter()
        # ---- variables, feature by feature (most tested features first)
        weight = [0] * forest.n_features
        for tree in forest.trees:
            for f in tree.feature:
                if f >= 0:
                    weight[f] += 1
        self.feature_order = sorted(
            (f for f in range(forest.n_features) if forest.thresholds[f]), key=lambda f: (-weight[f], f)
        )
        self.var: dict[tuple[int, int], int] = {}
        groups: list[list[int]] = []
        for f in self.feature_order:
            count = len(forest.thresholds[f]) if encoding == "order" else forest.n_states(f)
            group = []
            for j in range(count):
                self.var[(f, j)] = len(self.var) + 1
                group.append(self.var[(f, j)])
            groups.append(group)
        self.n_vars = max(1, len(self.var))
        self.manager = self._make_manager(groups)
        if auto_minimize:
            self.manager.auto_gc_and_minimize_on()
        self.auto_minimize = auto_minimize
        self._kept: list[SddNode] = []
        self.domain = self._keep(self._domain_constraint())
        self._tree_votes: dict[tuple[int, int], SddNode] = {}
        self._classes: dict[int, SddNode] = {}
        self.timings["setup"] = time.perf_counter() - start

    # ------------------------------------------------------------------ manager and vtree
    def _make_manager(self, groups: list[list[int]]) -> SddManager:
        flat = [v for g in groups for v in g]
        if not flat:  # no tested feature: a one-variable manager that nothing uses
            return SddManager.from_vtree(Vtree(var_count=1, var_order=[1], vtree_type="balanced"))
        if self.vtree_kind != "features":
            return SddManager.from_vtree(Vtree(var_count=len(flat), var_order=flat, vtree_type=self.vtree_kind))
        lines: list[str] = []
        counter = [0]
        roots = [("node", _balanced_vtree_lines(g, lines, counter)) for g in groups]
        _balanced_vtree_lines(roots, lines, counter)
        fd, path = tempfile.mkstemp(suffix=".vtree")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(f"vtree {counter[0]}\n" + "\n".join(lines) + "\n")
            vt = Vtree.from_file(path.encode())
        finally:
            os.unlink(path)
        return SddManager.from_vtree(vt)

    def _keep(self, node: SddNode) -> SddNode:
        if self.auto_minimize:
            node.ref()
            self._kept.append(node)
        return node

    def _domain_constraint(self) -> SddNode:
        m = self.manager
        if not self.var:  # the manager's one unused variable is fixed, keeping counts exact
            return m.literal(1)
        d = m.true()
        for f in self.feature_order:
            if self.encoding == "order":
                for j in range(len(self.forest.thresholds[f]) - 1):
                    d = d & (~m.literal(self.var[(f, j)]) | m.literal(self.var[(f, j + 1)]))
            else:
                lits = [m.literal(self.var[(f, s)]) for s in range(self.forest.n_states(f))]
                some = m.false()
                for x in lits:
                    some = some | x
                d = d & some
                for a in range(len(lits)):
                    for b in range(a + 1, len(lits)):
                        d = d & (~lits[a] | ~lits[b])
        return d

    # ------------------------------------------------------------------ literals
    def states_literal(self, f: int, states: Iterable[int]) -> SddNode:
        """``state[f] in states`` (valid under the domain constraint)."""
        m = self.manager
        n = self.forest.n_states(f)
        chosen = sorted({int(s) for s in states if 0 <= int(s) < n})
        if not chosen:
            return m.false()
        if len(chosen) == n:
            return m.true()
        if self.encoding == "indicator":
            out = m.false()
            for s in chosen:
                out = out | m.literal(self.var[(f, s)])
            return out
        out = m.false()
        start = prev = chosen[0]
        for s in chosen[1:]:
            if s == prev + 1:
                prev = s
                continue
            out = out | self.interval(f, start, prev)
            start = prev = s
        return out | self.interval(f, start, prev)

    def interval(self, f: int, lo: int, hi: int) -> SddNode:
        """``lo <= state[f] <= hi`` (inclusive)."""
        m = self.manager
        if self.encoding == "indicator":
            return self.states_literal(f, range(lo, hi + 1))
        out = m.true()
        if lo > 0:
            out = out & ~m.literal(self.var[(f, lo - 1)])
        if hi < self.forest.n_states(f) - 1:
            out = out & m.literal(self.var[(f, hi)])
        return out

    def test(self, f: int, j: int) -> SddNode:
        """The tree test ``state[f] <= j``."""
        if self.encoding == "order":
            return self.manager.literal(self.var[(f, j)])
        return self.interval(f, 0, j)

    def assignment(self, states: Sequence[int]) -> list[int]:
        """The full assignment (PySDD literals) encoding a state vector."""
        if not self.var:
            return [1]
        lits = []
        for (f, j), v in self.var.items():
            holds = states[f] <= j if self.encoding == "order" else states[f] == j
            lits.append(v if holds else -v)
        return lits

    def holds(self, node: SddNode, states: Sequence[int]) -> bool:
        """Whether the state vector ``states`` satisfies ``node``."""
        for lit in self.assignment(states):
            node = node.condition(lit)
        return bool(node.is_true())

    # ------------------------------------------------------------------ class formulas
    def tree_votes(self, t: int, c: int) -> SddNode:
        """``T[t, c]``: tree ``t`` votes for class ``c`` (if-then-else over the tree's nodes)."""
        key = (t, c)
        if key not in self._tree_votes:
            m = self.manager
            tree = self.forest.trees[t]
            value: dict[int, SddNode] = {}
            for i in range(tree.n_nodes - 1, -1, -1):  # children have larger ids
                f = tree.feature[i]
                if f < 0:
                    value[i] = m.true() if tree.label[i] == c else m.false()
                else:
                    lit = self.test(f, tree.split[i])
                    value[i] = (lit & value[tree.left[i]]) | (~lit & value[tree.right[i]])
            self._tree_votes[key] = self._keep(value[0])
        return self._tree_votes[key]

    def _exact_counts(self, c: int, budget: Budget) -> list[SddNode]:
        """``E[c][k]`` for ``k = 0..n``: exactly ``k`` trees vote for ``c`` (conjoined with the
        domain constraint from the start: outside it, the order encoding's threshold variables are
        independent and the counting formulas blow up, as symbolic ADDs do)."""
        e = [self.domain]
        for t in range(self.forest.n_trees):
            v = self.tree_votes(t, c)
            nv = ~v
            nxt = [e[0] & nv]
            for k in range(1, len(e)):
                nxt.append((e[k] & nv) | (e[k - 1] & v))
            nxt.append(e[-1] & v)
            e = [self._keep(x) for x in nxt]
            budget.check("compiling an SDD")
        return e

    def class_formula(self, c: int, budget: Budget | None = None) -> SddNode:
        """The SDD of "the forest decides class ``c``", conjoined with the domain constraint
        (compiled within ``budget``, by default the object's)."""
        budget = self.budget if budget is None else budget
        forest = self.forest
        if not 0 <= c < forest.n_classes:
            raise InvalidOptionError(f"c must be a class index in [0, {forest.n_classes}). Got {c!r} instead.")
        if c in self._classes:
            return self._classes[c]
        start = time.perf_counter()
        m = self.manager
        n, k = forest.n_trees, forest.n_classes
        if k == 1:
            out = self.domain
        elif k == 2:
            e0 = self._exact_counts(0, budget)
            wins0 = m.false()
            for votes in range((n + 1) // 2, n + 1):
                wins0 = wins0 | e0[votes]
            self._classes[0] = self._keep(wins0)
            self._classes[1] = self._keep(~wins0 & self.domain)
            self.timings["class_formulas"] = self.timings.get("class_formulas", 0.0) + time.perf_counter() - start
            return self._classes[c]
        else:
            exact = {d: self._exact_counts(d, budget) for d in range(k)}
            at_most: dict[int, list[SddNode]] = {}
            for d in range(k):
                acc = m.false()
                row = []
                for votes in range(n + 1):
                    acc = acc | exact[d][votes]
                    row.append(self._keep(acc))
                at_most[d] = row
            out = m.false()
            for votes in range(n + 1):
                term = exact[c][votes]
                for d in range(k):
                    if d == c or term.is_false():
                        continue
                    bound = votes - 1 if d < c else votes
                    term = term & (at_most[d][bound] if bound >= 0 else m.false())
                out = out | term
                budget.check("compiling an SDD")
        self._classes[c] = self._keep(out)
        self.timings["class_formulas"] = self.timings.get("class_formulas", 0.0) + time.perf_counter() - start
        return self._classes[c]

    def class_formulas(self) -> list[SddNode]:
        return [self.class_formula(c) for c in range(self.forest.n_classes)]

    # ------------------------------------------------------------------ counting
    def count(self, node: SddNode) -> int:
        """Number of state vectors satisfying ``node`` (which must imply the domain constraint),
        exactly, in Python integers."""
        return count_models(self.manager, node, self.n_vars)

    def counts(self) -> list[int]:
        """State vectors per class; they sum to the size of the feature space."""
        return [self.count(self.class_formula(c)) for c in range(self.forest.n_classes)]

    def fractions(self) -> list[Fraction]:
        """Exact fraction of the feature space (of state vectors) decided as each class."""
        total = 1
        for n in self.forest.states_per_feature:
            total *= n
        return [Fraction(x, total) for x in self.counts()]

    def size(self, nodes: Sequence[SddNode] | None = None) -> int:
        """Total size (PySDD's ``size``: sum of decision-node element counts) of the class
        formulas, shared structure counted once."""
        nodes = list(nodes) if nodes is not None else self.class_formulas()
        return _shared_size(nodes)

    def node_count(self, nodes: Sequence[SddNode] | None = None) -> int:
        """Number of distinct decision nodes of the class formulas (shared ones counted once)."""
        nodes = list(nodes) if nodes is not None else self.class_formulas()
        return len(_decision_nodes(nodes))

    # ------------------------------------------------------------------ circuits of other engines
    def from_nnf(self, manager: Any, root: int, budget: Budget | None = None) -> SddNode:
        """An NNF circuit of :class:`~rfexplain.circuit.compilers.nnf.NNFManager` (kinds false, true,
        literal ``var in mask``, and, or) as an SDD, bottom-up over its nodes, every value
        conjoined with the domain constraint."""
        from rfexplain.circuit.compilers.nnf import AND, FALSE, LIT, OR, TRUE

        budget = self.budget if budget is None else budget
        m = self.manager
        dom = self.domain
        value: dict[int, SddNode] = {}
        for n in manager.reachable([root]):
            k = manager.kind[n]
            if k == FALSE:
                value[n] = m.false()
            elif k == TRUE:
                value[n] = dom
            elif k == LIT:
                mask = manager.mask[n]
                states = bits_of(mask)
                value[n] = self.states_literal(manager.var[n], states) & dom
            elif k in (AND, OR):
                acc = dom if k == AND else m.false()
                for ch in manager.children[n]:
                    acc = (acc & value[ch]) if k == AND else (acc | value[ch])
                value[n] = acc
            else:
                raise ValueError(f"unknown NNF node kind {k}")
            budget.check("converting a circuit to an SDD")
        return value[root]

    def from_decision_graph(self, manager: Any, roots: int | Sequence[int], budget: Budget | None = None) -> SddNode:
        """A decision graph of :class:`~rfexplain.circuit.compilers.dgraph.DGManager` (or the
        conjunction of several, Algorithm 3B) as an SDD: a node is
        ``OR_j (var in S_j) & child_j`` (node 0 is false, 1 is true).

        Every value is kept inside the domain constraint: outside it the encoding's variables
        are independent, and the SDDs of nested tests on one feature blow up."""
        budget = self.budget if budget is None else budget
        m = self.manager
        roots = [roots] if isinstance(roots, int) else list(roots)
        value: dict[int, SddNode] = {0: m.false(), 1: self.domain}
        for n in manager.reachable(roots):
            if n in value:
                continue
            v = manager.var[n]
            acc = m.false()
            for mask, child in manager.edges[n]:
                acc = acc | (self.states_literal(v, bits_of(mask)) & value[child])
            value[n] = acc
            budget.check("converting a decision graph to an SDD")
        out = self.domain
        for r in roots:
            out = out & value[r]
        return out

    def convert(self, formula: Any, budget: Budget | None = None) -> SddNode:
        """An SDD for a class formula of the circuit engine: an object with ``manager`` and
        ``root`` (a :class:`~rfexplain.circuit.compilers.nnf.Circuit`), or a pair ``(manager, root)``
        with an NNF or decision-graph manager (``root`` may be a tuple of decision graphs to
        conjoin, as Algorithm 3B returns)."""
        if hasattr(formula, "manager") and hasattr(formula, "root"):
            manager, root = formula.manager, formula.root
        elif isinstance(formula, tuple) and len(formula) == 2:
            manager, root = formula
        else:
            raise TypeError(
                "formula must be a Circuit or a (manager, root) pair of an NNF or decision-graph manager; "
                f"got {type(formula).__name__}"
            )
        if hasattr(manager, "edges"):
            return self.from_decision_graph(manager, root, budget)
        if hasattr(manager, "kind") and hasattr(manager, "children"):
            if not isinstance(root, int):
                out = self.manager.true()
                for r in root:
                    out = out & self.from_nnf(manager, r, budget)
                return out
            return self.from_nnf(manager, root, budget)
        raise TypeError(f"unknown circuit manager {type(manager).__name__}")

    def difference(self, formula: Any, c: int, budget: Budget | None = None) -> tuple[int, ...] | None:
        """A state vector on which ``formula`` and "the forest decides ``c``" differ, or ``None``
        when they are equivalent (compiled within ``budget``, by default the object's)."""
        mine = self.class_formula(c, budget)
        theirs = self.convert(formula, budget) & self.domain
        diff = (mine & ~theirs) | (~mine & theirs)
        if diff.is_false():
            return None
        return self._states_of_model(diff)

    def _states_of_model(self, node: SddNode) -> tuple[int, ...]:
        """The state vector of one model of a satisfiable ``node`` that implies the domain
        constraint (variables the model leaves free are set false)."""
        model: dict[int, bool] = {}
        stack = [node]
        while stack:
            n = stack.pop()
            if n.is_true():
                continue
            if n.is_literal():
                model[abs(n.literal)] = n.literal > 0
                continue
            for p, sub in n.elements():
                if not sub.is_false():  # primes of a decision node are never false
                    stack.append(p)
                    stack.append(sub)
                    break
        states = [0] * self.forest.n_features
        for f in self.feature_order:
            if self.encoding == "order":
                n_thr = len(self.forest.thresholds[f])
                states[f] = next((j for j in range(n_thr) if model.get(self.var[(f, j)], False)), n_thr)
            else:
                states[f] = next(s for s in range(self.forest.n_states(f)) if model.get(self.var[(f, s)], False))
        return tuple(states)


# ---------------------------------------------------------------------- walking SDDs
def _decision_nodes(roots: Sequence[SddNode]) -> dict[int, SddNode]:
    seen: dict[int, SddNode] = {}
    stack = [r for r in roots if r.is_decision()]
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen[n.id] = n
        for p, s in n.elements():
            for x in (p, s):
                if x.is_decision() and x.id not in seen:
                    stack.append(x)
    return seen


def _shared_size(roots: Sequence[SddNode]) -> int:
    return sum(len(n.elements()) for n in _decision_nodes(roots).values())


def count_models(manager: SddManager, node: SddNode, n_vars: int) -> int:
    """Exact model count of ``node`` over the manager's ``n_vars`` variables (Python integers;
    PySDD's own counters overflow past 2^64). Iterative post-order walk."""
    if node.is_false():
        return 0
    if node.is_true():
        return 1 << n_vars
    var_count: dict[int, int] = {}

    def vars_of(vt: Vtree) -> int:
        pos = vt.position()
        got = var_count.get(pos)
        if got is None:
            # iterative count of leaves below vt
            total, stack = 0, [vt]
            while stack:
                x = stack.pop()
                if x.is_leaf():
                    total += 1
                else:
                    stack.append(x.left())
                    stack.append(x.right())
            var_count[pos] = got = total
        return got

    counts: dict[int, int] = {}

    def scaled(x: SddNode, within: Vtree) -> int:
        """Models of ``x`` over the variables of ``within`` (x normalised below it)."""
        if x.is_false():
            return 0
        if x.is_true():
            return 1 << vars_of(within)
        own = 1 if x.is_literal() else counts[x.id]
        return own << (vars_of(within) - vars_of(x.vtree()))

    stack: list[tuple[SddNode, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        if n.is_literal() or n.id in counts:
            continue
        if not ready:
            stack.append((n, True))
            for p, s in n.elements():
                for x in (p, s):
                    if x.is_decision() and x.id not in counts:
                        stack.append((x, False))
            continue
        vt = n.vtree()
        left, right = vt.left(), vt.right()
        counts[n.id] = sum(scaled(p, left) * scaled(s, right) for p, s in n.elements())
    own = 1 if node.is_literal() else counts[node.id]
    return own << (n_vars - vars_of(node.vtree()))


# ---------------------------------------------------------------------- equivalence
def equivalent(
    forest: Forest,
    class_formula: Any,
    cls: int | None = None,
    *,
    compiler: str = "3B",
    encoding: str = "order",
    vtree: str = "balanced",
    sdd: SDDForest | None = None,
    timeout: float | Budget | None = None,
) -> bool:
    """Whether a class formula of the circuit engine is exactly the forest's class.

    Both are compiled into SDDs over one manager and compared (their exclusive-or, under the
    domain constraint, must be false).

    Parameters
    ----------
    forest : Forest
    class_formula :
        A :class:`~rfexplain.circuit.compilers.classformula.ClassFormulas` (then every class, or ``cls``,
        is checked in the form ``compiler``: ``"nnf"`` for Algorithm 3, ``"3A"`` or ``"3B"``), a
        :class:`~rfexplain.circuit.compilers.nnf.Circuit`, or a pair ``(manager, root)`` of an NNF or a
        decision-graph manager (a tuple of decision-graph roots is their conjunction); the last
        two need ``cls``.
    cls : int, optional
        The class index the formula claims to describe.
    sdd : SDDForest, optional
        Reuse a compiled forest (and its manager) across calls.
    timeout : float or Budget, optional
        Seconds, or a :class:`~rfexplain.core.budget.Budget`, for the whole check (by default
        ``sdd``'s own budget); :class:`~rfexplain.core.budget.BudgetExpired` beyond it.

    Examples
    --------
    >>> from rfexplain import Forest
    >>> from rfexplain.circuit.compilers.nnf import NNFManager
    >>> raw = {"feature": [0, -1, -1], "threshold": [0.5, 0, 0], "left": [1, -1, -1],
    ...        "right": [2, -1, -1], "label": [-1, 0, 1]}
    >>> forest = Forest.from_raw_trees([raw], n_features=1, classes=[0, 1])
    >>> m = NNFManager(forest.states_per_feature)
    >>> equivalent(forest, (m, m.state(0, 0)), 0), equivalent(forest, (m, m.state(0, 0)), 1)
    (True, False)
    """
    if sdd is None:
        sdd = SDDForest(forest, encoding=encoding, vtree=vtree, timeout=timeout)
    budget = sdd.budget if timeout is None else Budget.of(timeout)
    if hasattr(class_formula, "dg_3b") and hasattr(class_formula, "nnf"):
        classes = range(forest.n_classes) if cls is None else [cls]
        if compiler == "nnf":
            manager, roots = class_formula.nnf(classes=list(classes))
            return all(sdd.difference((manager, roots[c]), c, budget) is None for c in classes)
        if compiler == "3A":
            return all(sdd.difference((class_formula.dg, class_formula.dg_3a(c)), c, budget) is None for c in classes)
        if compiler == "3B":
            return all(
                sdd.difference((class_formula.dg, tuple(class_formula.dg_3b(c))), c, budget) is None for c in classes
            )
        raise InvalidOptionError(f"compiler must be one of ['3A', '3B', 'nnf']. Got {compiler!r} instead.")
    if cls is None:
        raise InvalidOptionError("cls is required for a single class formula")
    return sdd.difference(class_formula, cls, budget) is None
