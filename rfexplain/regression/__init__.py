"""Regression forests (docs/design.md, section 1, "Regression"): the prediction is the mean of
the trees' leaf values; "is it inside a band" is decided exactly as an additive vote over three
classes (:mod:`rfexplain.regression.band`), so every classification query explains it, and the
exact range of the prediction over free features is a search of its own
(:mod:`rfexplain.regression.range_search`)."""

from rfexplain.regression.band import Band
from rfexplain.regression.explainer import RegressionDecision, RegressionExplainer
from rfexplain.regression.model import RegressionForest
from rfexplain.regression.range_search import PredictionRange

__all__ = ["Band", "RegressionForest", "RegressionExplainer", "RegressionDecision", "PredictionRange"]
