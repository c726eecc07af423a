"""
A pipeline, explained in its own columns
========================================

The shipped synthetic loans table, a ``ColumnTransformer`` (one-hot encoded categories, scaled
numbers) feeding a random forest. rfexplain reads the pipeline into a forest over the *original*
columns: a categorical column is one feature whose states are its categories, and numeric
thresholds are mapped back through the scaler. ``bounds="data"`` restricts the numbers to the
ranges seen in the data and ``immutable=["age"]`` holds age fixed in what would have to change.
"""

import rfexplain as rx
from rfexplain.pipeline_demo import loans_pipeline

pipe, X_test, y_test = loans_pipeline()  # ColumnTransformer(OneHotEncoder, StandardScaler) -> forest
explainer = rx.Explainer(pipe, engine="sat", bounds="data", data=X_test, immutable=["age"])
row = X_test.iloc[0]
d = explainer.explain(row)  # a row of original values, matched by name
assert d.prediction == pipe.predict(X_test.iloc[[0]])[0]  # the pipeline's own decision (soft vote)
print(row.to_dict())
print("decision:", d.prediction)

# %%
# Why, in the original columns:
print(d.sufficient_reason())

# %%
# What would have to change (age held fixed), each with a witness row of original values:
for r in d.necessary_reasons(limit=3):
    print(r)
    print("    witness:", explainer.original_rows(r.witnesses[0].values).to_dict("records")[0])
    assert rx.verify(r, explainer.forest).ok  # checked on the trees read over the original columns

# %%
# The picture: categorical features are strips of their categories, the allowed ones shaded.
display = d.plot()  # a DecisionDisplay, in scikit-learn's style: .figure_, .axes_
