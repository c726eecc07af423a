#!/usr/bin/env bash
# Build rfexplain's documentation site with warnings as errors.
#   bash docs/site/build.sh [OUTPUT_DIR]      (default: docs/site/_build/html, git-ignored)
# Needs the docs extra: pip install -e '.[docs]'. The gallery's examples are executed (about a
# minute here). What the build writes into docs/site (generated/, _build/) is git-ignored.
set -euo pipefail
SITE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$SITE/_build/html}"
# the examples time the engines: on their compiled loops, as the benchmarks do (compiled on first use)
export RFEXPLAIN_JIT="${RFEXPLAIN_JIT:-wait}"
export MPLBACKEND=Agg
# a clean build: every example executed again, no API page of a name that is gone
rm -rf "$SITE/generated" "$SITE/_build/doctrees" "$SITE/sg_execution_times.rst"
python -m sphinx -W --keep-going -b html -d "$SITE/_build/doctrees" "$SITE" "$OUT"
echo "documentation site: $OUT/index.html"
