"""The release files agree: one version in pyproject.toml, the package, CITATION.cff and the
changelog; the licence names the project's copyright holder and the shipped datasets' licence."""

from __future__ import annotations

import re
from pathlib import Path

import rfexplain

ROOT = Path(__file__).resolve().parent.parent


def _field(text: str, pattern: str) -> str:
    found = re.search(pattern, text, re.MULTILINE)
    assert found, pattern
    return found.group(1)


def test_one_version_everywhere() -> None:
    version = _field((ROOT / "pyproject.toml").read_text(), r'^version = "([^"]+)"$')
    assert rfexplain.__version__ == version
    citation = (ROOT / "CITATION.cff").read_text()
    assert _field(citation, r"^version: (\S+)$") == version
    assert _field(citation, r"^cff-version: (\S+)$") == "1.2.0"
    assert _field(citation, r"^license: (\S+)$") == "MIT"
    assert _field((ROOT / "CHANGELOG.md").read_text(), r"^## (\S+) \(") == version  # the newest entry first
    date = _field(citation, r'^date-released: "(\d{4}-\d\d-\d\d)"$')
    assert f"## {version} ({date})" in (ROOT / "CHANGELOG.md").read_text()


def test_licence_names_the_authors_and_the_datasets_licence() -> None:
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License\n\nCopyright (c) 2026 The rfexplain authors\n")
    assert "rfexplain/data/benchmarks/" in licence and "Copyright (c) 2023 Yacine Izza" in licence
    citation = (ROOT / "CITATION.cff").read_text()
    assert '  - name: "The rfexplain authors"' in citation
    for title in (
        "On Explaining Random Forests with SAT",
        "Circuit Representations of Random Forests with Applications to XAI",
        "On the Computation of Necessary and Sufficient Explanations",
        "Algebraic aggregation of random forests",
    ):
        assert title in citation
