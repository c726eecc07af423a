"""Closed-form complete and general reasons of weak test-once decision graphs.

Complete reason (Darwiche and Ji (2022), Proposition 7, Equation 1 [DJ22]): for a decision graph ``T``, instance
``v`` and class ``c`` (leaves: ``true`` where the graph says ``c``)::

    Gamma[T] = AND_j (Gamma[T_j] or l_j)    at a node with edges  X, S_j -> T_j
    l_j      = (X = v[X])   if v[X] lies on another edge S_k (k != j) of the node, else false

"Why not ``t``" (Equation 2) is the same form on the class formula of ``t`` with its leaves
swapped; its prime implicates are the contrastive reasons toward ``t``.

General reason (docs/design.md, section 2; Darwiche and Ji (2023) [DJ23]): the same form with
``l_j = (X not in S_j)`` when ``v`` satisfies it (``v[X]`` not in ``S_j``), else false.

Both distribute over conjunction, so for Algorithm 3B's conjunction of graphs they are the
conjunction of the per-graph forms. Both are one bottom-up pass over the graph with a memo, no
recursion. The complete reason is a monotone, or-decomposable NNF over the instance's states
(Proposition 8); we compute it on canonical BDDs (:mod:`.kept_bdd`), so it comes out with one node
per distinct subfunction: 15-800 nodes where Equation 1 written out gives 3,000-400,000 on the
benchmark forests, and the enumerations of reasons on it take milliseconds. The general reason is
*locally fixated* on ``v`` (every literal contains ``v``'s state).
"""

from __future__ import annotations

from collections.abc import Sequence

from rfexplain.circuit.compilers.dgraph import DGManager
from rfexplain.circuit.compilers.gcpause import without_gc
from rfexplain.circuit.compilers.nnf import NNFManager
from rfexplain.circuit.logic.kept_bdd import FALSE, TRUE, KeptBDD
from rfexplain.core.budget import poll

__all__ = ["complete_reason", "general_reason", "general_reason_on"]

#: graph nodes between two polls of the active budget (:func:`~rfexplain.core.budget.poll`)
_POLL = 1024


@without_gc
def complete_reason(
    dg: DGManager,
    roots: Sequence[int],
    v: Sequence[int],
    nnf: NNFManager,
    *,
    negated: bool = False,
) -> int:
    """Equation 1 for the conjunction of the graphs ``roots`` (Equation 2 with ``negated``: the
    graphs' true leaves count as false and vice versa, which needs a single graph).

    Equation 1 runs on reduced ordered BDDs over "the feature keeps its state"
    (:class:`~.kept_bdd.KeptBDD`, in the graphs' variable order), so the NNF returned has one
    node per distinct subfunction instead of one per graph node."""
    if negated and len(roots) != 1:
        raise ValueError("the 'why not' complete reason needs the target's class formula as one graph (Algorithm 3A)")
    bdd = KeptBDD(dg.rank)
    memo = {0: TRUE, 1: FALSE} if negated else {0: FALSE, 1: TRUE}
    var, edges, conj, or_var = dg.var, dg.edges, bdd.conj, bdd.or_var
    bits = [1 << int(s) for s in v]
    node, ordered = bdd.node, dg.ordered
    for count, n in enumerate(dg.reachable(roots)):
        if count % _POLL == 0:
            poll("computing a closed form")
        if n <= 1:
            continue
        x = var[n]
        bit = bits[x]
        es = edges[n]
        kept = None
        for s, c in es:
            if s & bit:
                kept = c
                break
        if kept is not None and not ordered:  # the instance's edge, the others or-ed with its state
            acc = memo[kept]
            for s, c in es:
                if not s & bit:
                    acc = conj(acc, or_var(memo[c], x))
            memo[n] = acc
            continue
        changed = TRUE  # every edge's literal false: the conjunction of the children
        for _, c in es:
            m = memo[c]
            if changed == TRUE:
                changed = m
            elif m != TRUE and m != changed:
                changed = conj(changed, m)
        # ordered graphs: nothing below tests x, so x comes first and the node is (x, changed,
        # kept); a state that is not feasible here makes every literal false
        memo[n] = changed if kept is None else node(x, changed, memo[kept])
    root = TRUE
    for r in roots:
        root = conj(root, memo[r])
    return bdd.to_nnf(root, nnf, v)


@without_gc
def general_reason(
    dg: DGManager,
    roots: Sequence[int],
    v: Sequence[int],
    nnf: NNFManager,
    *,
    negated: bool = False,
    variables: int | None = None,
) -> int:
    """The general reason of the conjunction of the graphs ``roots`` at instance ``v``: the
    closed form written out, one NNF node per graph node (linear in the graph).

    With ``variables`` (a bit mask of features), every literal on another feature is replaced
    by true (:func:`general_reason_on`)."""
    if variables is not None:
        return general_reason_on(dg, roots, v, nnf, variables, negated=negated)
    memo = {0: nnf.true, 1: nnf.false} if negated else {0: nnf.false, 1: nnf.true}
    var, edges, full, or2, literal = dg.var, dg.edges, dg.full, nnf.or2, nnf.literal
    for count, n in enumerate(dg.reachable(roots)):
        if count % _POLL == 0:
            poll("computing a closed form")
        if n > 1:
            x = var[n]
            bit = 1 << int(v[x])
            memo[n] = nnf.conj_all(
                [memo[c] if s & bit else or2(memo[c], literal(x, full[x] & ~s)) for s, c in edges[n]]
            )
    return nnf.conj_all(memo[r] for r in roots)


@without_gc
def general_reason_on(
    dg: DGManager,
    roots: Sequence[int],
    v: Sequence[int],
    nnf: NNFManager,
    variables: int,
    *,
    negated: bool = False,
) -> int:
    """The general reason with every literal outside the features ``variables`` (a bit mask)
    replaced by true, in canonical form.

    That is all Algorithm 6 (``sCNF``) keeps of the general reason when it only wants clauses
    over those features, and it is much smaller: at a node on another feature only the
    instance's own edge survives (the others become true), so only the part of the graph the
    instance reaches by changing ``variables`` is visited. The closed form runs on a fresh
    manager of *ordered* decision graphs, where each distinct subfunction is one node, and is
    written back as an NNF of the same shape (:func:`_as_nnf`). (On the whole general reason
    the canonical graph costs more than it saves, so the linear form is kept there.)
    """
    gr = DGManager(dg.n_states)
    gr.ordered, gr.rank = True, dg.rank
    memo = {0: gr.true, 1: gr.false} if negated else {0: gr.false, 1: gr.true}
    var, edges, full, conj, node, ordered = dg.var, dg.edges, dg.full, gr.conj, gr.node, dg.ordered
    for count, n in enumerate(dg.reachable_moving(roots, v, variables)):
        if count % _POLL == 0:
            poll("computing a closed form")
        if n <= 1:
            continue
        x = var[n]
        bit = 1 << int(v[x])
        kept = -1  # v's child, when v's state is feasible here
        for s, c in edges[n]:
            if s & bit:
                kept = memo[c]
                break
        if not variables >> x & 1:
            memo[n] = kept  # reachable_moving only reaches nodes where v's state is feasible
        elif ordered and kept >= 0:
            # nothing below tests x: a state on another edge leaves that edge's and v's child.
            # (_as_nnf re-imposes v's child anyway; the conjunction here is what makes the graph
            # the general reason's own canonical graph, so that equal subfunctions share a node)
            memo[n] = node(x, [(s, conj(memo[c], kept)) for s, c in edges[n]])
        else:
            acc = gr.true
            for s, c in edges[n]:
                if s & bit:
                    acc = conj(acc, memo[c])
                else:  # memo[c] or x not in s
                    acc = conj(acc, gr.disj(memo[c], node(x, [(full[x] & ~s, gr.true), (s, gr.false)])))
            memo[n] = acc
    root = gr.true
    for r in roots:
        root = conj(root, memo[r])
    return _as_nnf(gr, root, v, nnf)


def _as_nnf(gr: DGManager, root: int, v: Sequence[int], nnf: NNFManager) -> int:
    """An ordered graph of a function that stays true when a feature moves back to ``v``'s state
    (as general reasons do) as the NNF ``g_v and AND_s (g_s or x not in s)`` at each node, where
    ``g_s`` is the child of the edge ``s`` and ``g_v`` that of ``v``'s edge (``g_s`` implies ``g_v``)."""
    memo = {gr.false: nnf.false, gr.true: nnf.true}
    var, edges, full, or2, literal = gr.var, gr.edges, gr.full, nnf.or2, nnf.literal
    for count, n in enumerate(gr.reachable([root])):
        if count % _POLL == 0:
            poll("computing a closed form")
        if n > 1:
            x = var[n]
            bit = 1 << int(v[x])
            memo[n] = nnf.conj_all(
                [memo[c] if s & bit else or2(memo[c], literal(x, full[x] & ~s)) for s, c in edges[n]]
            )
    return memo[root]
