"""The shared core every engine builds on: the discretised forest, explanation values, budgets,
errors and the scikit-learn import. Nothing here imports an engine."""
