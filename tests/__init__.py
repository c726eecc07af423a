import os

# The tests ask for the compiled loops at once (compiled in the test process on first use), so that
# the route a query takes never depends on the state of the per-user cache; the background
# compilation of a fresh install has its own tests (tests/test_jit_cache.py).
os.environ.setdefault("RFEXPLAIN_JIT", "wait")
