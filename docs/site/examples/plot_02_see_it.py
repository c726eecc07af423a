"""
Seeing a decision
=================

The README's picture: the circuit engine (which explains the trees' majority vote, ``vote="hard"``)
gives every query, so the plot shows the sufficient reason (dark band: inside it the decision
cannot change), the wider general sufficient reason (light band) and the nearest boundaries whose
crossing flips the decision (dashed lines). Each row is one feature on its own axis, with the
forest's thresholds on it as ticks and the instance as a black diamond.
"""

from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

import rfexplain as rx

data = load_iris()
y = data.target_names[data.target]
model = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0).fit(data.data, y)
explainer = rx.Explainer(model, engine="circuit", feature_names=data.feature_names, vote="hard")
d = explainer.explain(data.data[60])
display = d.plot()  # a DecisionDisplay, in scikit-learn's style: .figure_, .axes_

# %%
# The same answers as text. The shortest flips are every nearest input of another class, as the
# shortest general necessary reasons.
print("sufficient reason:", d.sufficient_reason())
for r in d.general_sufficient_reasons(limit=3):
    print("general sufficient reason:", r)
for r in d.shortest_flips(limit=3):
    print("shortest flip:", r, "->", r.actions())
