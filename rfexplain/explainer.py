"""The user-facing facade: :class:`Explainer`, which binds a forest to an engine and makes
:class:`~rfexplain.decision.Decision` objects (re-exported here with :class:`SoftVoteWarning`).

Example
-------
>>> from sklearn.datasets import load_iris
>>> from sklearn.ensemble import RandomForestClassifier
>>> X, y = load_iris(return_X_y=True)
>>> model = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
>>> explainer = Explainer(model, engine="oracle")
>>> decision = explainer.explain(X[0])
>>> decision.prediction
0
>>> reason = decision.sufficient_reason()
>>> reason.kind
'sufficient'
"""

from __future__ import annotations

import warnings
from collections.abc import Generator, Mapping, Sequence
from typing import Any

import numpy as np

from rfexplain.batch import BatchRecord, explain_many, index_labels, iter_explain
from rfexplain.core.boosted_import import boosted_predict, compares_float64, string_categories
from rfexplain.core.budget import Budget, check_max_memory, default_max_memory
from rfexplain.core.domain import restrict
from rfexplain.core.errors import InvalidForestError, InvalidInstanceError
from rfexplain.core.floats import cell_decimal
from rfexplain.core.forest import VOTE_MODES, Forest
from rfexplain.core.instances import check_feature_names, in_model_order, model_input, pandas
from rfexplain.core.pyvalues import to_python
from rfexplain.decision import Decision, InputRoundingWarning, SoftVoteWarning, hold_immutable, soft_vote_differs
from rfexplain.engines.base import Instance
from rfexplain.engines.registry import engine_class
from rfexplain.pipelines import PipelineModel, is_transforming_pipeline

__all__ = ["Explainer", "Decision", "SoftVoteWarning"]


class Explainer:
    """Explains the decisions of one forest with one engine.

    Parameters
    ----------
    model_or_forest : fitted scikit-learn classifier, Pipeline or Forest
        ``RandomForestClassifier``, ``ExtraTreesClassifier``, ``DecisionTreeClassifier``, a
        :class:`~rfexplain.Forest`, or a ``Pipeline`` ending in one of them: a pipeline that
        transforms its input (``ColumnTransformer``, encoders, scalers; see
        :mod:`rfexplain.pipelines`) is explained in its *original* columns, categorical ones as
        one feature each, and instances are rows of original values (DataFrame, Series or dict).
    engine : str
        A registered engine name: ``"sat"``, ``"circuit"``, ``"oracle"`` or a plug-in's.
    feature_names : sequence of str, optional
        Distinct names used in rendered reasons (defaults to the model's ``feature_names_in_``,
        which they must not contradict). Named pandas instances are matched to these names, not
        read by position. A :class:`~rfexplain.Forest` keeps the names it was built with: names
        that differ from them are refused (:class:`~rfexplain.InvalidInstanceError` saying which
        names the forest has), never silently ignored; to rename, build the forest with them
        (``Forest.from_sklearn(model, feature_names=...)``).
    vote : {"auto", "soft", "hard"}
        The decision explained. ``"auto"`` (default) is what the model's own ``predict`` does
        (soft vote for random forests and extra trees, also at the end of a pipeline; a
        :class:`~rfexplain.Forest`'s own mode);
        ``"hard"`` explains the majority vote of the papers (a :class:`SoftVoteWarning` then
        flags instances the model's ``predict`` decides differently). The ``"circuit"`` engine
        explains the hard vote only and refuses a soft-vote forest with impure leaves.
    missing : {"learned", "all", "none"} or sequence of str, optional
        For a fitted model (a forest, or a boosted model of scikit-learn, XGBoost or LightGBM):
        the features whose missing values (NaN) instances may hold,
        routed as the model's ``predict`` routes them, "missing" being one more state of each
        (:meth:`Forest.from_sklearn <rfexplain.core.forest.Forest.from_sklearn>`; docs/design.md,
        section 1). ``"learned"`` (default): every feature the trees test when the model was trained
        with missing values, none otherwise. A sufficient reason then also holds when its
        free features are missing.
    timeout : float, optional
        Seconds allowed for building the engine (:class:`~rfexplain.core.budget.BudgetExpired`
        past them). The circuit engine compiles each class formula at its first query, within
        that query's own ``timeout=``.
    monotone : sequence of str
        Names of a pipeline's ``FunctionTransformer`` steps the user declares monotone increasing
        (the only way such a step is accepted).
    bounds : dict or "data", optional
        Value ranges of numeric features, ``{"age": (0, 120)}`` (a pair of numbers per feature
        name), or ``"data"`` for the minimum and maximum of each numeric feature in ``data``
        (at least one row, of the model's features). Instances outside are refused, witnesses stay
        inside, and reasons hold for inputs within the bounds (their text says so); see
        :mod:`rfexplain.core.domain`. Anything else is an :class:`~rfexplain.InvalidInstanceError`
        naming the feature or the expected width.
    data : array-like or DataFrame, optional
        The training data, for ``bounds="data"``.
    immutable : sequence of str
        Features that may not change: necessary and contrastive reasons, robustness and flips are
        computed with them fixed at the instance's values ("what would have to change, given
        these cannot"). Sufficient reasons are not affected.
    progress : bool, optional
        Show a bar of a long single-answer query's steps on stderr (the SAT engine's sufficient
        and necessary reasons: the features decided so far), once it has run a second; by
        default only when stderr is a terminal. ``explain_many`` has its own ``progress=``.
    max_memory : int or None, optional
        The memory budget of every query, in bytes (``None``: none): the compilers (the circuit
        engine's decision graphs and vote counting) count the bytes of their arrays, unique tables
        and memos as they grow and stop with :class:`~rfexplain.CompilationTooLargeError` (a
        ``MemoryError``) before a growth would pass it. Default: ``$RFEXPLAIN_MAX_MEMORY``, else a
        quarter of the machine's physical memory (:func:`~rfexplain.core.budget.default_max_memory`).
    **options
        Passed to the engine (e.g. ``solver=`` and ``card=`` for ``"sat"``).
    """

    def __init__(
        self,
        model_or_forest: Any,
        engine: str = "sat",
        *,
        feature_names: Any = None,
        vote: str = "auto",
        missing: Any = "learned",
        timeout: float | None = None,
        monotone: Sequence[str] = (),
        bounds: Mapping[str, tuple[float, float]] | str | None = None,
        data: Any = None,
        immutable: Sequence[str] = (),
        progress: bool | None = None,
        max_memory: int | str | None = "default",
        **options: Any,
    ) -> None:
        self.pipeline: PipelineModel | None = None
        #: The memory budget of every query, in bytes (``None``: none).
        self.max_memory = default_max_memory() if max_memory == "default" else check_max_memory(max_memory)
        #: Whether long single-answer queries draw a step bar (``None``: when stderr is a terminal).
        self.progress = progress
        if isinstance(model_or_forest, Forest):
            if vote not in VOTE_MODES:
                raise InvalidForestError(f"vote must be one of {list(VOTE_MODES)}. Got {vote!r} instead.")
            forest = model_or_forest
            given = check_feature_names(feature_names, None, forest.n_features)
            if given is not None and tuple(given) != forest.feature_names:
                raise InvalidInstanceError(
                    f"feature_names {given} differ from the names the Forest was built with: it already has "
                    f"the feature names {list(forest.feature_names)}; to rename its features, build it with "
                    "them (Forest.from_sklearn(model, feature_names=...))"
                )
            self.forest = forest if vote in ("auto", forest.vote) else forest.with_vote(vote)
            self.model = None
        elif is_transforming_pipeline(model_or_forest):
            self.pipeline = PipelineModel(model_or_forest, monotone, vote=vote)
            check_feature_names(feature_names, self.pipeline.forest.feature_names, self.pipeline.forest.n_features)
            self.forest = self.pipeline.forest
            self.model = model_or_forest
        else:
            self.forest = Forest.from_sklearn(model_or_forest, feature_names=feature_names, vote=vote, missing=missing)
            self.model = model_or_forest
        if bounds is not None:
            self.forest = restrict(self.forest, bounds=self._resolve_bounds(bounds, data))
        self.immutable = tuple(self._feature_index(name, "immutable") for name in _names(immutable, "immutable"))
        self.engine_name = engine
        self.options = dict(options)
        with Budget(timeout=timeout, max_memory=self.max_memory).active() as budget:
            self.engine = engine_class(engine)(self.forest, **options)
            budget.check(f"building the {engine} engine")

    def _feature_index(self, name: str, what: str) -> int:
        if name not in self.forest.feature_names:
            raise InvalidInstanceError(
                f"{what} names the unknown feature {name!r}; features: {list(self.forest.feature_names)}"
            )
        return self.forest.feature_names.index(name)

    def _resolve_bounds(
        self, bounds: Mapping[str, tuple[float, float]] | str, data: Any
    ) -> dict[int, tuple[float, float]]:
        numeric = [f for f in range(self.forest.n_features) if not self.forest.space.category_labels(f)]
        if isinstance(bounds, str) or not isinstance(bounds, Mapping):
            if bounds != "data" or data is None:
                raise InvalidInstanceError(
                    f'bounds must be a dict {{feature: (low, high)}} or "data" with data=X. Got {bounds!r} instead.'
                )
            X = self.pipeline.encode(data) if self.pipeline is not None else self.forest.matrix(data)
            if X.ndim != 2 or X.shape[1] != self.forest.n_features:
                width = X.shape[1] if X.ndim == 2 else 1
                raise InvalidInstanceError(
                    f'bounds="data" needs rows of the model\'s {self.forest.n_features} features; '
                    f"data has {width} columns"
                )
            if len(X) == 0:
                raise InvalidInstanceError('bounds="data" needs at least one row of data')
            return {f: (float(np.min(X[:, f])), float(np.max(X[:, f]))) for f in numeric}
        out = {}
        for name, pair in bounds.items():
            f = self._feature_index(name, "bounds")
            if f not in numeric:
                raise InvalidInstanceError(f"bounds apply to numeric features; {name!r} is categorical")
            out[f] = _bounds_pair(name, pair)
        return out

    def explain(self, x: Any) -> Decision:
        """The decision on one instance (array, list, pandas row or mapping of feature names to
        values; for a pipeline, a row of original values), ready to be queried."""
        instance = Instance.of(self.forest, self.pipeline.encode(x) if self.pipeline is not None else x)
        sklearn_prediction = None
        if self.model is not None:
            sklearn_prediction = to_python(self.sklearn_predict(np.asarray([instance.values]))[0])
            ours = self.forest.classes[instance.prediction]
            self._warn_if_rounding_decides(x, ours)
            if self.forest.vote == "hard" and soft_vote_differs(sklearn_prediction, ours):
                warnings.warn(
                    f"scikit-learn's predict (soft vote) gives {sklearn_prediction!r} on this instance but the "
                    f"hard majority vote explained here gives {ours!r}",
                    SoftVoteWarning,
                    stacklevel=2,
                )
        decision = Decision(self, instance, sklearn_prediction)
        hold_immutable(decision, self.immutable, self.options)
        return decision

    def _warn_if_rounding_decides(self, x: Any, ours: Any) -> None:
        """:class:`InputRoundingWarning` when the model compares float64 inputs and decides ``x``
        as given otherwise than its float32 rounding (``ours``, the explained decision)."""
        if self.pipeline is not None or not compares_float64(self.model):
            return
        raw = self.forest.matrix(x)[:1]
        theirs = to_python(boosted_predict(self.model, model_input(self.model, raw))[0])
        if soft_vote_differs(theirs, ours):
            warnings.warn(
                f"the model's predict gives {theirs!r} on this instance as given (float64) but {ours!r} on its "
                "float32 rounding, which is what is explained: a value lies just above a threshold and rounds "
                "onto it",
                InputRoundingWarning,
                stacklevel=3,
            )

    def sklearn_predict(self, values: np.ndarray) -> np.ndarray:
        """The scikit-learn model's own ``predict`` on rows of the forest's values (original
        rows rebuilt from them for a pipeline)."""
        if self.model is None:
            raise TypeError("this explainer has no scikit-learn model")
        if self.pipeline is not None:
            return np.asarray(self.model.predict(self.pipeline.decode(values)))
        return boosted_predict(self.model, model_input(self.model, np.asarray(values, dtype=np.float32)))

    def original_rows(self, values: Any) -> Any:
        """Rows of the forest's values (an instance's, a witness's) as a DataFrame of the
        pipeline's original columns (integer columns as integers, see
        :meth:`~rfexplain.pipelines.PipelineModel.decode`); for a plain model, a DataFrame with
        the feature names. Numbers are the shortest decimals that read back as the float32
        values the trees compare (``6.1``, not ``6.099999904632568``;
        :func:`~rfexplain.core.floats.cell_decimal`); the columns of a model's string categories
        hold the categories, as its ``predict`` reads them
        (:func:`~rfexplain.core.instances.model_input`)."""
        if self.pipeline is not None:
            return self.pipeline.decode(values)
        pd = pandas()
        rows = self.forest.check_instances(values)
        thresholds = self.forest.thresholds
        short = [[cell_decimal(v, thresholds[f]) for f, v in enumerate(row)] for row in rows.tolist()]
        frame = pd.DataFrame(short, columns=list(self.forest.feature_names), dtype=np.float64)
        strings = string_categories(self.model)
        if strings:
            named = np.asarray(model_input(self.model, rows), dtype=object)
            for f in strings:
                frame[self.forest.feature_names[f]] = named[:, f]
        return frame

    def explain_many(
        self,
        X: Any,
        query: str = "sufficient_reason",
        *,
        n_jobs: int | None = None,
        timeout: float | None = None,
        progress: bool | None = None,
        indices: Sequence[int] | None = None,
        chunk_size: int | None = None,
        backend: Any = None,
        as_frame: bool | str = False,
        row_errors: Mapping[int, str] | None = None,
        **query_args: Any,
    ) -> list[BatchRecord] | Any:
        """Answer one Decision query on many instances, in parallel (see :mod:`rfexplain.batch`).

        Parameters
        ----------
        X : 2-D array-like or DataFrame
            The instances, one per row.
        query : str
            A Decision query name (``"sufficient_reason"``, ``"necessary_reasons"``,
            ``"robustness"``, ``"contrastive_reasons"``, ...).
        n_jobs : int, optional
            joblib's ``n_jobs`` (``-1``: every core). With one job the queries run in this
            process with this explainer's engine; otherwise every worker builds the engine once
            and reuses it. The active joblib backend is used (processes by default; a Dask
            cluster inside ``joblib.parallel_config(backend="dask")``).
        timeout : float, optional
            Per-instance wall-clock budget in seconds (cooperative; see :mod:`rfexplain.batch`).
        progress : bool, optional
            Show a progress bar on stderr; by default only when stderr is a terminal.
        indices : sequence of int, optional
            Distinct ids reported in the records instead of the row numbers.
        chunk_size : int, optional
            Instances per task, a positive integer (default: about four tasks per worker, at most
            64 instances). A record leaves its worker with its chunk: on Ctrl-C the rows of a chunk
            still running are not kept, and ``chunk_size=1`` keeps every finished row, at some cost
            in throughput on quick queries. ``rfexplain batch --chunk-size N`` sets it.
        backend : str or joblib backend, optional
            Force a joblib backend instead of the active one.
        as_frame : bool or "long"
            Return a pandas DataFrame instead of the records (needs ``rfexplain[frames]``): one
            row per instance (:func:`rfexplain.viz.records_to_frame`), or with ``"long"`` one row
            per condition of every reason (:func:`rfexplain.viz.records_to_long_frame`). Its
            index is ``X``'s for a DataFrame ``X`` (so ``X.join(frame)`` lines up), and
            ``frame.attrs["rfexplain"]`` holds the run's metadata (package version, engine,
            vote, model fingerprint, options, query: :func:`rfexplain.viz.run_metadata`), which
            :func:`rfexplain.viz.write_parquet` stores in the file.
        row_errors : mapping of int to str, optional
            Rows already known to be bad (by row number in ``X``, with what is wrong, e.g. a
            file reader's "line 7 has 3 values"): they get their error records without work.
        **query_args
            The query's own arguments (``limit=``, ``target=``).

        Returns
        -------
        list of BatchRecord
            One record per instance, in the order of ``X``; a failure is recorded on its
            instance (``error``) and never loses the others. A row that is not a valid instance
            (wrong width, not a number, NaN or infinite, an unknown category, a value a
            pipeline's column cannot take) is its own error record naming its row number (and
            its index label, for a DataFrame indexed otherwise); only a problem of every row
            (unknown or missing column names) refuses the batch.

        Raises
        ------
        rfexplain.batch.BatchInterrupted
            On Ctrl-C (``KeyboardInterrupt``, which it is), once the workers are stopped: its
            ``records`` are the records finished before the interrupt, in the order of ``X``,
            and ``pending`` the indices of the others. Use :meth:`iter_explain` to receive
            records as they finish.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> X, y = load_iris(return_X_y=True)
        >>> model = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
        >>> explainer = Explainer(model, engine="sat")
        >>> records = explainer.explain_many(X[:3], "necessary_reasons", n_jobs=1, limit=5)
        >>> [len(r.result) for r in records if r.ok]
        [1, 1, 1]
        """
        rows, errors, labels = self._batch_rows(X, row_errors)
        records = explain_many(
            self,
            rows,
            query,
            n_jobs=n_jobs,
            timeout=timeout,
            progress=progress,
            indices=indices,
            chunk_size=chunk_size,
            backend=backend,
            row_errors=errors,
            labels=labels,
            **query_args,
        )
        if as_frame:
            return self._frame(records, X, query, query_args, long=as_frame == "long")
        return records

    def _frame(self, records: list[BatchRecord], X: Any, query: str, arguments: Mapping[str, Any], long: bool) -> Any:
        """``explain_many``'s records as a DataFrame: indexed as ``X`` is (a DataFrame's own
        index), with the run's metadata in ``attrs["rfexplain"]``; ``long``: one row per condition."""
        from rfexplain.viz.long_frame import records_to_long_frame
        from rfexplain.viz.run_metadata import METADATA_KEY, run_metadata

        index = X.index if hasattr(X, "iloc") and getattr(X, "ndim", 0) == 2 else None
        if long:
            frame = records_to_long_frame(records, index=index)
        else:
            from rfexplain.viz.frames import records_to_frame

            frame = records_to_frame(records, index=index)
        frame.attrs[METADATA_KEY] = run_metadata(self, query, arguments)
        return frame

    def iter_explain(
        self,
        X: Any,
        query: str = "sufficient_reason",
        *,
        n_jobs: int | None = None,
        timeout: float | None = None,
        progress: bool | None = None,
        indices: Sequence[int] | None = None,
        chunk_size: int | None = None,
        backend: Any = None,
        row_errors: Mapping[int, str] | None = None,
        **query_args: Any,
    ) -> Generator[BatchRecord, None, None]:
        """:meth:`explain_many`'s records one at a time, **as they finish**: in the order of
        ``X`` with one job, in the order the workers finish them otherwise (``record.index``
        says which row each is). The arguments and the rows are checked before the iterator is
        returned (the same refusals as :meth:`explain_many`, whose arguments it takes but
        ``as_frame``).

        A separate method rather than an ``explain_many`` flag, so that each has one return
        type: a list in the order of ``X`` (or a DataFrame) there, a lazy iterator in finishing
        order here. Write each record as it comes (``rfexplain batch`` does) and nothing
        finished is lost to a crash or a Ctrl-C; leaving the loop (``break``, an exception, a
        ``KeyboardInterrupt``) or closing the iterator stops the workers, and every record
        received so far is yours.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from sklearn.ensemble import RandomForestClassifier
        >>> X, y = load_iris(return_X_y=True)
        >>> model = RandomForestClassifier(n_estimators=5, max_depth=2, random_state=0).fit(X, y)
        >>> explainer = Explainer(model, engine="oracle")
        >>> [r.index for r in explainer.iter_explain(X[:3], "robustness", n_jobs=1)]
        [0, 1, 2]
        """
        rows, errors, labels = self._batch_rows(X, row_errors)
        return iter_explain(
            self,
            rows,
            query,
            n_jobs=n_jobs,
            timeout=timeout,
            progress=progress,
            indices=indices,
            chunk_size=chunk_size,
            backend=backend,
            row_errors=errors,
            labels=labels,
            **query_args,
        )

    def _batch_rows(
        self, X: Any, given: Mapping[int, str] | None = None
    ) -> tuple[Any, dict[int, str] | None, list[Any] | None]:
        """``(rows, row errors, index labels)`` of a batch: ``X`` itself for a plain model; for a
        pipeline, its original rows as the forest's values, encoded row by row when the frame as
        a whole fails, so that each bad row (a string in a numeric column, an unknown category)
        is its own error and the others are answered. Missing or unknown column names concern
        every row and refuse the batch."""
        given = dict(given or {})
        if self.pipeline is None:
            return X, given, None
        labels = index_labels(X)
        try:
            return self.pipeline.encode(X), given, labels
        except (InvalidInstanceError, TypeError, ValueError):
            if not hasattr(X, "iloc") or getattr(X, "ndim", 0) != 2:
                raise
        frame = in_model_order(X, self.forest.feature_names, by_position=False)  # every row's columns
        rows = np.full((len(frame), self.forest.n_features), np.nan)
        errors: dict[int, str] = {}
        for k in range(len(frame)):
            if k in given:
                continue
            try:
                rows[k] = self.pipeline.encode(frame.iloc[[k]])[0]
            except (InvalidInstanceError, TypeError, ValueError) as exc:
                errors[k] = str(exc)
        return rows, {**errors, **given}, labels

    def report(self, X: Any, path: Any, **options: Any) -> Any:
        """Write a self-contained HTML report explaining every row of ``X`` to ``path``
        (see :func:`rfexplain.viz.write_report` for ``queries=``, ``compare_engine=``,
        ``n_jobs=``, ...); returns the rows' reports."""
        from rfexplain.viz.report import write_report

        return write_report(self, X, path, **options)

    def close(self) -> None:
        """Release the engine's resources (solvers kept open for the explainer's life)."""
        self.engine.close()

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps (to hand the explainer to worker processes): everything but the
        engine, whose solvers and compiled circuits do not pickle; its class is kept instead."""
        state = dict(self.__dict__)
        state["engine"] = type(state["engine"])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickling: the same explainer, its engine built again from the forest and the options."""
        self.__dict__.update(state)
        self.engine = state["engine"](self.forest, **self.options)

    def __enter__(self) -> Explainer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Explainer({self.forest!r}, engine={self.engine_name!r}, vote={self.forest.vote!r})"


def _bounds_pair(name: str, pair: Any) -> tuple[float, float]:
    """``bounds=``'s ``(low, high)`` of the feature ``name`` as two floats (a tuple, list or 1-D
    array of two numbers); :class:`InvalidInstanceError` naming the feature otherwise."""
    items = None if isinstance(pair, (str, bytes, Mapping)) or not hasattr(pair, "__len__") else list(pair)
    if items is None or len(items) != 2:
        raise InvalidInstanceError(f"bounds of {name!r} must be a pair (low, high), got {pair!r}")
    try:
        return float(items[0]), float(items[1])
    except (TypeError, ValueError):
        raise InvalidInstanceError(f"bounds of {name!r} must be numbers, got {pair!r}") from None


def _names(names: Sequence[str], what: str) -> list[str]:
    if isinstance(names, str):
        raise InvalidInstanceError(f"{what} must be a list of feature names, not the string {names!r}")
    return [str(n) for n in names]
