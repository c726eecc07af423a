"""
Why this class, and what would change it
========================================

The README's first example: a random forest on iris, one of its decisions explained with the SAT
engine. A *sufficient reason* is a subset-minimal set of the instance's conditions that alone
keeps the decision; a *necessary reason* is a subset-minimal set of features whose change can flip
it; the *robustness* is the size of the smallest necessary reason. Every reason carries
witnesses, and :func:`rfexplain.verify` checks its claims with the scikit-learn trees alone.
"""

from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx

data = load_iris()
X, y = data.data, data.target_names[data.target]
model = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(X, y)

explainer = rx.Explainer(model, engine="sat", feature_names=data.feature_names)
d = explainer.explain(X[60])  # an array, a list, a pandas row or a dict by name
print("prediction:", d.prediction, "| model.predict:", model.predict(X[60:61])[0])

# %%
# Why: one sufficient reason (the canonical one, the same for every engine).
reason = d.sufficient_reason()
print(reason)
print("verified:", rx.verify(reason, model).ok)

# %%
# What would have to change: every necessary reason, each with a witness the model classifies
# otherwise, and the actions it stands for.
reasons = d.necessary_reasons(limit=10, timeout=5)  # an Enumeration: .complete / .stopped_by
for r in reasons:
    print(r, "| verified:", rx.verify(r, model).ok)
    print("   ", r.actions())
print("complete:", reasons.complete)

# %%
# How robust: the fewest features whose change can flip the decision.
print("robustness:", d.robustness())

# %%
# The picture: one row per feature, the instance as a diamond, the sufficient reason as a dark band.
display = d.plot()  # a DecisionDisplay, in scikit-learn's style: .figure_, .axes_
