"""The box search decider: the free features' state intervals split until every box is decided.

A branch and bound over the boxes of the free features (the loop is compiled,
:mod:`rfexplain.sat.box_kernels`): a box whose reachable leaves' per-tree bounds rule the
condition out is dropped (:mod:`.bounds`), a box of at most ``box_points`` cell combinations is
searched whole with the forest's exact vote (states a reachable leaf does not tell apart, one
*cell*, send every point to the same leaves), any other is split in two and the more promising
half searched first. The answer is exact either way: a witness, or UNSAT without a core.

Several searches of one question take turns (:class:`Boxes`): two split rules (at the median
leaf end, or where the trees' best leaves leave both halves; the second joins a search that runs
long), a search on a leaf table where trees are merged in pairs (:func:`paired_table`: a pair's
rows are its compatible leaf pairs, so its bound is the best *consistent* pair), and, with two
classes, a *pair bound* (:func:`.box_kernels.pair_bound`) judging every child box again with
trees paired: the tree-merging bounds of Chen et al. (2019) [Che19] and Devos et al. (2021)
[DMD21]. Soft-vote points at a float64 near tie are set aside and decided in exact arithmetic
after the search (:meth:`.InstanceLeaves.decide_ties`). The tuning (:class:`.SatTuning`) sets
the slices, the turns and when each search joins; the portfolio (:mod:`.portfolio`) gives the
box searches their turns among the other deciders.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from rfexplain.core.vote import NEAR_TIE
from rfexplain.sat.deciders.base import Answer, Question
from rfexplain.sat.deciders.leaves import BoxCapacity, InstanceLeaves
from rfexplain.sat.tuning import DEFAULT_TUNING, SatTuning

__all__ = ["Boxes", "SmallBox", "BoxSearch", "search_whole", "few_cells", "paired_table"]

#: The pair bound's partners when it is not used (more than two classes, the paired table).
_NO_PAIRS = np.zeros(0, dtype=np.int64)
#: The arguments of :func:`.box_kernels.search` with one row per leaf: boxes, trees, margins, scores.
_ROW_ARGUMENTS = (0, 1, 2, 3, 5)


class Boxes:
    """The box searches of one question (one per split rule and leaf table), taking turns in
    slices and resumable where a node budget stopped them.

    ``rows``: the reachable leaves; ``boxes``: their boxes on the ``free`` features
    (:meth:`.InstanceLeaves.free_boxes`). ``searching``: whether the box searches run at all
    (the ``"boxes"`` decider is on); when not, :attr:`arguments` still serve the other deciders
    of the race (cliques, climbs)."""

    name = "boxes"
    #: the table rows of the searches that join next and their arguments (:meth:`set_table`),
    #: before the cut of the features clipped since (:attr:`rows`, :attr:`arguments`)
    _rows: np.ndarray
    _arguments: tuple[Any, ...]

    def __init__(
        self,
        leaves: InstanceLeaves,
        free: list[int],
        rows: np.ndarray,
        boxes: tuple[np.ndarray, np.ndarray],
        kind: str,
        cls: int,
        *,
        searching: bool = True,
        bottom: list[int] | None = None,
        top: list[int] | None = None,
    ) -> None:
        table = leaves.table
        self.leaves, self.free, self.kind, self.cls = leaves, free, kind, cls
        self.tuning = tuning = leaves.tuning
        #: ``(j, direction, state)`` of every search (:attr:`BoxSearch.toward`), set by :meth:`aim`
        self.toward = (0, 0, 0)
        #: The root box on the free features: every state by default; a box question's
        #: intervals (its leaves' boxes clipped to them, :meth:`.InstanceLeaves.reachable_in_box`).
        self.bottom = list(bottom) if bottom is not None else [0] * len(free)
        self.top = list(top) if top is not None else [table.n_states[f] - 1 for f in free]
        #: whether the box searches run (the ``"boxes"`` decider is on)
        self.searching = searching
        #: the free features (indexes) clipped since the table was last cut down (:meth:`clip`)
        self._clipped: set[int] = set()
        self.set_table(rows, boxes)
        self.runs = [self._search(self.arguments, guided=tuning.split_rules[0])] if searching else []
        #: the trees paired for the pair bound once the first search runs with it
        #: (:meth:`join_pair_bound`; two classes only), for the searches on this table
        self.partner: np.ndarray | None = None
        if searching and self.pairs_due and tuning.pair_bound_after <= 0:
            self.join_pair_bound()
        #: whether the search on the paired table has joined
        self.paired = False
        #: the slices the box searches have taken (the race counts them: :meth:`second_turn`)
        self.slices = 0
        #: ``(slice, whether the second search takes the favoured share of the slices from it on)``
        #: (:meth:`second_turn`)
        self._second_favoured = (-1, False)
        #: boxes the last :meth:`decide` examined, and whether a search it ran ran out with near
        #: ties it could not keep (it was dropped; the others may still settle the question)
        self.spent = 0
        self.dropped = False
        #: the search whose box held the last witness :meth:`decide` returned (``None``: it came
        #: from the tie buffer), which :meth:`clip` puts back on its stack
        self.found: BoxSearch | None = None

    def aim(self, j: int, upward: bool, *, around: int | None = None) -> None:
        """Let every search, and those that join later, split boxes on free feature ``j`` towards
        its upper (``upward``) or lower states first, or towards the state ``around``
        (:attr:`BoxSearch.toward`)."""
        self.toward = (j, 1 if upward else -1, 0) if around is None else (j, 2, around)
        for run in self.runs:
            run.toward[:] = self.toward

    def clip(self, j: int, low: int, high: int, *, upward: bool = True, around: int | None = None) -> None:
        """Narrow the question's box to ``low..high`` on free feature ``j`` (within the root box)
        for the next :meth:`decide`: every search keeps its progress, its boxes clipped (the box of
        the last witness searched again, :attr:`found`), and so does the table of the searches
        that join later; the boxes reaching furthest up on ``j`` (``upward``, else down), or
        nearest the state ``around``, are searched first (:meth:`BoxSearch.clip`)."""
        self.bottom[j] = max(self.bottom[j], low)
        self.top[j] = min(self.top[j], high)
        low, high = self.bottom[j], self.top[j]
        for run in self.runs:
            run.clip(j, low, high, reopen=run is self.found, upward=upward, around=around)
        self.found = None
        self._clipped.add(j)

    @property
    def rows(self) -> np.ndarray:
        """The table rows of the searches that join next (:meth:`set_table`), those that meet
        the box."""
        self._cut_table()
        return self._rows

    @property
    def arguments(self) -> tuple[Any, ...]:
        """The arguments of :func:`.box_kernels.search` for the searches that join next, on
        :attr:`rows`."""
        self._cut_table()
        return self._arguments

    def _cut_table(self) -> None:
        """Keep the table's rows that meet the box on the features clipped since the last cut,
        in their order (each clip only narrows the box, so one cut at the end keeps the rows that
        a cut after every clip would)."""
        if not self._clipped:
            return
        columns = sorted(self._clipped)
        self._clipped = set()
        lows, highs = self._arguments[0][:, columns], self._arguments[1][:, columns]
        bottom, top = [self.bottom[j] for j in columns], [self.top[j] for j in columns]
        keep = np.flatnonzero(np.all((lows <= top) & (highs >= bottom), axis=1))
        if len(keep) < len(lows):
            self._rows = self._rows[keep]
            self._arguments = tuple(
                np.ascontiguousarray(a[keep]) if i in _ROW_ARGUMENTS else a for i, a in enumerate(self._arguments)
            )

    def _search(self, arguments: tuple[Any, ...], *, guided: bool, partner: np.ndarray | None = None) -> BoxSearch:
        run = BoxSearch(
            arguments,
            self.top,
            len(arguments[0]),
            guided=guided,
            partner=partner,
            tuning=self.tuning,
            bottom=self.bottom,
            capacity=self.leaves.table.box_capacity,
        )
        run.toward[:] = self.toward
        return run

    def set_table(self, rows: np.ndarray, boxes: tuple[np.ndarray, np.ndarray]) -> None:
        """The leaf table of the searches: the table rows ``rows`` (grouped by tree) with their
        ``boxes`` on the free features, as the arguments of :func:`.box_kernels.search`."""
        table = self.leaves.table
        margins, penalty = table.margins(self.kind, self.cls)
        allowed, allowed_at = table.allowed_of(self.free)
        self._clipped = set()
        self._rows = rows
        self._arguments = (
            np.ascontiguousarray(boxes[0]),
            np.ascontiguousarray(boxes[1]),
            table.tree[rows],
            np.ascontiguousarray(margins[rows]),
            penalty,
            np.ascontiguousarray(table.score[rows]),
            allowed,
            allowed_at,
            self.cls,
            self.kind == "not",
            table.soft,
            NEAR_TIE,
            max(self.tuning.box_points, 1),
        )

    def join_pair_bound(self) -> None:
        """Restart the first search with the pair bound (:func:`.box_kernels.pair_bound`): the
        rows reordered, each tree's leaves in decreasing margin, and the trees paired for it
        (:func:`pair_partners`). A question settled in its first ``pair_bound_after`` boxes
        pays for neither; the others lose those boxes."""
        order = margin_order(self.arguments)
        self.set_table(self.rows[order], (self.arguments[0][order], self.arguments[1][order]))
        self.partner = pair_partners(self.arguments, self.kind == "not")
        self.runs[0] = self._search(self.arguments, guided=self.tuning.split_rules[0], partner=self.partner)

    @property
    def pairs_due(self) -> bool:
        """Whether the first search is still to restart with the pair bound (two classes only)."""
        return self.partner is None and self._arguments[3].shape[1] == 1  # its shape: no cut needed

    def join_paired(self) -> None:
        """Add the search on the paired table (:func:`paired_table`, guided split rule; on it the
        pair bound pairs the paired trees), when a round of pairing is taken."""
        merged = paired_table(self.arguments, self.kind == "not", self.tuning)
        if merged is not None:
            partner = None
            if merged[3].shape[1] == 1:  # the pair bound on the paired table: pairs of pairs
                merged = by_margin(merged)
                partner = pair_partners(merged, self.kind == "not")
            self.runs.append(self._search(merged, guided=self.tuning.split_rules[-1], partner=partner))
            self.paired = True

    def join_guided(self) -> None:
        """Add the search with the second split rule on the same table (when no paired table
        joined and the tuning has a second rule)."""
        if not self.paired and len(self.tuning.split_rules) > 1:
            self.runs.append(self._search(self.arguments, guided=self.tuning.split_rules[1], partner=self.partner))

    def second_turn(self) -> bool:
        """Whether the second search takes the current slice (the :attr:`slices`-th): by
        default, all but one in ``pair_turns`` when it searches the paired table, else one in
        ``race_turns`` from slice ``race_after`` on.

        Once both searches have examined the tuning's ``progress_after`` boxes, the search with
        the smaller estimated remaining work (:meth:`BoxSearch.remaining_work`, judged where each
        slice starts) takes the favoured share, all but one slice in those: the online estimate
        of a branch and bound's size from the part of the root box it has closed, in the manner
        of Knuth's (1975) estimate of a backtrack tree's size [Knu75] as solvers use it to choose
        between searches (Anderson, Hendel, Le Bodic and Viernickel (2019) [AHLV19]). Both
        estimates count boxes, so the turns do not depend on timing.

        [Knu75] Knuth, "Estimating the Efficiency of Backtrack Programs", Mathematics of
        Computation 1975. [AHLV19] Anderson, Hendel, Le Bodic and Viernickel, "Clairvoyant
        Restarts in Branch-and-Bound Search Using Online Tree-Size Estimation", AAAI 2019.
        """
        tuning = self.tuning
        if self.paired:
            other_turn = self.slices % tuning.pair_turns == 0
        else:
            other_turn = (self.slices - tuning.race_after) % tuning.race_turns == 0
        if self._second_favoured[0] != self.slices:
            self._second_favoured = (self.slices, self._favours_second())
        return not other_turn if self._second_favoured[1] else other_turn

    def _favours_second(self) -> bool:
        """Whether the second search takes the favoured share of the current slices
        (:meth:`second_turn`): the paired table's by default, else the first's."""
        first, second = self.runs[0], self.runs[-1]
        if first is second or min(first.boxes, second.boxes) < self.tuning.progress_after:
            return self.paired
        first_work = first.remaining_work(self.bottom, self.top)
        second_work = second.remaining_work(self.bottom, self.top)
        return self.paired if first_work == second_work else second_work < first_work

    def decide(self, question: Question, budget: int | None) -> Answer | None:
        """Run one of the searches (:meth:`second_turn` picks it) for at most ``budget`` boxes
        (``None``: to its end): its answer, or ``None`` while undecided (:attr:`spent`: the
        boxes it examined; :attr:`dropped`: it ran out with near ties it could not keep)."""
        from rfexplain.sat import box_kernels as kernels

        boxes = budget if budget is not None else int(np.iinfo(np.int64).max)
        runs = self.runs
        run = runs[0] if len(runs) == 1 or not self.second_turn() else runs[-1]
        pairs_due = self.pairs_due and run is runs[0]
        if pairs_due:  # stop where the pair bound joins
            boxes = min(boxes, self.tuning.pair_bound_after - run.boxes)
        status = run.step(boxes)
        self.spent, self.dropped, self.found = run.examined, False, None
        if status == kernels.FOUND:
            self.found = run
            return self.leaves.witness(self.free, run.witness)
        if status == kernels.EXHAUSTED:
            ties, overflow = run.ties[: run.state[kernels.TIES]], bool(run.state[kernels.TIE_OVERFLOW])
            answer = self.leaves.decide_ties(self.free, ties, self.rows, self.kind, self.cls, overflow)
            if answer is not None:
                return answer
            runs.remove(run)
            self.dropped = True
            return None
        if pairs_due and run.boxes >= self.tuning.pair_bound_after:
            self.join_pair_bound()
        return None


class SmallBox:
    """The box decider of a question whose box of free features has at most ``box_points``
    cell combinations: one turn searches it whole (:func:`search_whole`)."""

    name = "boxes"

    def __init__(
        self, leaves: InstanceLeaves, free: list[int], cells: list[np.ndarray], rows: np.ndarray, kind: str, cls: int
    ) -> None:
        self.leaves, self.free, self.cells, self.rows, self.kind, self.cls = leaves, free, cells, rows, kind, cls

    def decide(self, question: Question, budget: int | None = None) -> Answer:
        return search_whole(self.leaves, self.free, self.cells, self.rows, self.kind, self.cls)


def search_whole(
    leaves: InstanceLeaves, free: list[int], cells: list[np.ndarray], rows: np.ndarray, kind: str, cls: int
) -> Answer:
    """A small box searched whole: every combination of the free features' ``cells`` evaluated
    with the forest's exact vote; the first where the condition holds (in the combinations'
    lexicographic order) is the witness."""
    combinations = list(itertools.product(*cells))
    points = np.array(combinations, dtype=np.int64).reshape(len(combinations), len(free))
    holds, _ = leaves.evaluate(points, free, rows, kind, cls)
    hits = np.flatnonzero(holds)
    return leaves.witness(free, points[hits[0]]) if len(hits) else Answer(False)


class BoxSearch:
    """The state of one compiled branch and bound (:func:`.box_kernels.search`) over a query's
    leaf boxes: its box stack, row pool and tie buffer, grown when the kernel asks."""

    def __init__(
        self,
        arguments: tuple[Any, ...],
        top: list[int],
        n_rows: int,
        *,
        guided: bool,
        partner: np.ndarray | None = None,
        tuning: SatTuning = DEFAULT_TUNING,
        bottom: list[int] | None = None,
        capacity: BoxCapacity | None = None,
    ) -> None:
        """``partner``: the trees paired for the pair bound (:func:`.box_kernels.search`), or
        ``None``: no pair bound. The root box is ``bottom..top`` on the free features
        (``bottom`` default: every feature's first state). ``capacity``: the sizes to start the
        box stack and the row pool at, raised when they grow (default: the tuning's
        ``bnb_stack`` and ``bnb_pool``); the kernel's answers do not depend on them."""
        from rfexplain.sat import box_kernels

        self.kernels = box_kernels
        n_free = len(top)
        self.arguments = arguments
        self.guided = guided
        self.partner = partner if partner is not None else _NO_PAIRS
        self.pair_gate = float(tuning.pair_gate)
        self.capacity = capacity
        self.n_rows = n_rows
        stack, per_row = (
            (capacity.stack, capacity.per_row) if capacity is not None else (tuning.bnb_stack, tuning.bnb_pool)
        )
        self.stack_lo = np.zeros((stack, n_free), dtype=np.int64)
        self.stack_hi = np.zeros((stack, n_free), dtype=np.int64)
        self.stack_hi[0] = top
        if bottom is not None:
            self.stack_lo[0] = bottom
        self.stack_rows = np.zeros((stack, 2), dtype=np.int64)
        self.stack_rows[0, 1] = n_rows  # the whole box: the caller checked its bounds
        #: per box, its leaf intervals ending inside per free feature, then 1 once they are known
        self.stack_counts = np.zeros((stack, n_free + 1), dtype=np.int64)
        #: per box, what the pair bound took off its per-tree bound (+inf: not yet judged)
        self.stack_gain = np.full(stack, np.inf)
        self.pool = np.zeros(per_row * n_rows + 1, dtype=np.int64)
        self.pool[:n_rows] = np.arange(n_rows)
        self.ties = np.zeros((tuning.bnb_ties, n_free), dtype=np.int64)
        self.state = np.zeros(3, dtype=np.int64)
        self.state[box_kernels.STACK_SIZE] = 1
        self.witness = np.zeros(n_free, dtype=np.int64)
        #: ``(j, direction, state)``: the child of a split on free feature ``j`` searched first,
        #: the upper (1), the lower (-1) or the one holding ``state`` (2), set by
        #: :meth:`Boxes.aim`; direction 0: the more promising
        self.toward = np.zeros(3, dtype=np.int64)
        #: boxes the last :meth:`step` examined, and all the steps
        self.examined = 0
        self.boxes = 0

    def clip(
        self, j: int, low: int, high: int, *, reopen: bool = False, upward: bool = True, around: int | None = None
    ) -> None:
        """Narrow every box on the stack to ``low..high`` on free feature ``j``: a box outside it
        is dropped, the others keep only the leaves that meet it (the kernel's invariant: a box's
        rows are the leaves that meet it) and count their leaf ends again; the tie points outside
        are dropped. The boxes are then stacked so that the one reaching furthest up on ``j``
        (``upward``; else down), or nearest the state ``around`` on ``j``, is searched first.
        ``reopen``: the last step returned a witness, whose box (popped, searched whole, its rows
        untouched) goes back on the stack first. The compiled loop
        :func:`.stack_kernels.clip_stack` does the work."""
        from rfexplain.sat.stack_kernels import clip_stack

        state = self.state
        if reopen:
            state[self.kernels.STACK_SIZE] += 1
        toward, state_around = (2, around) if around is not None else (1 if upward else -1, 0)
        clip_stack(self.arguments[0], self.arguments[1], j, low, high, toward, state_around, *self._stack)

    @property
    def _stack(self) -> tuple[np.ndarray, ...]:
        """The search's state as the kernels take it, in their order: the box stack (lower and
        upper ends, rows, counts of leaf ends, pair-bound gains), the row pool, the tie buffer and
        the counters."""
        return (
            self.stack_lo,
            self.stack_hi,
            self.stack_rows,
            self.stack_counts,
            self.stack_gain,
            self.pool,
            self.ties,
            self.state,
        )

    def remaining_work(self, bottom: list[int], top: list[int]) -> float:
        """The search's estimated remaining work, in boxes times leaf rows (a box's cost grows
        with its table's rows): the boxes examined so far times ``(1 - p) / p``, where ``p`` is
        the share of the root box ``bottom..top`` (in state combinations) that the boxes left
        on the stack do not cover, the part already closed; ``inf`` while none is."""
        size = int(self.state[self.kernels.STACK_SIZE])
        widths = np.asarray(top, dtype=np.float64) - np.asarray(bottom, dtype=np.float64) + 1.0
        open_share = float(np.prod((self.stack_hi[:size] - self.stack_lo[:size] + 1) / widths, axis=1).sum())
        closed = 1.0 - open_share
        if closed <= 0.0:
            return math.inf
        return self.boxes * self.n_rows * open_share / closed

    def step(self, node_limit: int) -> int:
        """Run at most ``node_limit`` boxes; the kernel's status (never ``GROW``: full arrays are
        doubled and the kernel resumes with the same state)."""
        kernels = self.kernels
        self.examined = 0
        while True:
            own = (self.guided, self.partner, self.pair_gate, *self._stack)
            status, examined = kernels.search(
                *(self.arguments + own + (self.witness, node_limit - self.examined, self.toward))
            )
            self.examined += examined

            self.boxes += examined
            if status != kernels.GROW:
                return int(status)
            full = (self.stack_lo, self.stack_hi, self.stack_rows, self.stack_counts, self.stack_gain, self.pool)
            doubled = [np.concatenate((a, np.zeros_like(a))) for a in full]
            self.stack_lo, self.stack_hi, self.stack_rows, self.stack_counts, self.stack_gain, self.pool = doubled
            if self.capacity is not None:
                self.capacity.grown(len(self.stack_lo), len(self.pool) // max(self.n_rows, 1))


def margin_order(arguments: tuple[Any, ...]) -> np.ndarray:
    """The order of the branch and bound's rows (one other class) that keeps them grouped by
    tree and puts each tree's in decreasing margin, as the pair bound needs."""
    return np.lexsort((-arguments[3][:, 0], arguments[2]))


def by_margin(arguments: tuple[Any, ...]) -> tuple[Any, ...]:
    """The branch and bound's arguments with their rows in :func:`margin_order`."""
    order = margin_order(arguments)
    return tuple(np.ascontiguousarray(a[order]) if i in _ROW_ARGUMENTS else a for i, a in enumerate(arguments))


def pair_partners(arguments: tuple[Any, ...], not_kind: bool) -> np.ndarray:
    """The trees paired for the branch and bound's pair bound (:func:`.box_kernels.pair_bound`)
    on one query's table (the arguments of :func:`.box_kernels.search`), by tree id (-1: none),
    chosen on the query's whole box as the paired table's are (:func:`.pair_kernels.pair_partners`)."""
    from rfexplain.sat import pair_kernels

    low, high, trees, margins, penalty = arguments[:5]
    of_run, starts = pair_kernels.pair_partners(low, high, trees, margins, penalty, not_kind)
    partner = np.full(int(trees.max()) + 1 if len(trees) else 0, -1, dtype=np.int64)
    paired = np.flatnonzero(of_run >= 0)
    partner[trees[starts[paired]]] = trees[starts[of_run[paired]]]
    return partner


def paired_table(arguments: tuple[Any, ...], not_kind: bool, tuning: SatTuning) -> tuple[Any, ...] | None:
    """The branch and bound's arguments (:func:`.box_kernels.search`; ``not_kind``: the condition
    is "not") over the leaf table with
    trees merged in pairs (:func:`.pair_kernels.pair_partners`, :func:`.pair_kernels.merge_pairs`),
    up to the tuning's ``pair_rounds`` times (pairs of pairs, ...), each round only while the table grows
    by at most ``pair_growth``; ``None`` when not even one round is taken."""
    from rfexplain.sat import pair_kernels

    low, high, trees, margins, penalty, scores = arguments[:6]
    merged = None
    for _ in range(tuning.pair_rounds):
        partner, starts = pair_kernels.pair_partners(low, high, trees, margins, penalty, not_kind)
        if not np.any(partner >= 0):
            break
        total = pair_kernels.merged_rows(low, high, partner, starts)
        if total > tuning.pair_growth * len(low):
            break
        low, high, trees, margins, scores = pair_kernels.merge_pairs(low, high, margins, scores, partner, starts, total)
        merged = (low, high, trees, margins, penalty, scores, *arguments[6:])
    return merged


def few_cells(
    counts: np.ndarray, lows: np.ndarray, highs: np.ndarray, lo: np.ndarray, hi: np.ndarray, box_points: int
) -> bool:
    """Whether the box ``lo..hi`` has at most ``box_points`` cell combinations, given the
    leaf boxes ``lows..highs`` reaching it and ``counts``, per feature, of their intervals ending
    inside: ``1 + counts`` cells at most, and at least two on every feature with a count (the
    branch and bound's kernel makes the same test)."""
    if math.prod((1 + counts).tolist()) <= max(box_points, 1):
        return True
    if 2 ** int(np.count_nonzero(counts)) > max(box_points, 1):
        return False
    return math.prod(_cell_counts(lows, highs, lo, hi).tolist()) <= max(box_points, 1)


def _cell_counts(lows: np.ndarray, highs: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """For every column (a free feature) of the leaf boxes ``lows..highs``: how many cells they cut
    ``lo..hi`` into (at least the number :meth:`.InstanceLeaves.cells` returns), all columns in a
    few numpy passes."""
    cuts = np.concatenate((lows, highs + 1))
    cuts = np.where((cuts > lo) & (cuts <= hi), cuts, -1)
    cuts.sort(axis=0)
    distinct = (cuts[0] >= 0).astype(np.int64) + ((np.diff(cuts, axis=0) != 0) & (cuts[1:] >= 0)).sum(axis=0)
    return 1 + distinct
