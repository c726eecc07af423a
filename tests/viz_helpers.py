"""A small iris forest and its explainers, shared by the visualisation tests."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

DATA = load_iris()
X = DATA.data
Y = DATA.target_names[DATA.target]
MODEL = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(X, Y)
NAMES = list(DATA.feature_names)
