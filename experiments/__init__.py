"""Benchmarks reproducing the papers' tables; run them with ``python -m experiments <name>``.

Never imported by the ``rfexplain`` package. See ``experiments/README.md``.
"""
