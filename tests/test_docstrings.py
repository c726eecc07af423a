"""The package's docstrings and comments say what the code does, not how it was tuned.

Measurements, timings of variants, dated changes and what was tried and dropped belong in
``docs/decisions.md`` (one section per topic, naming the module), where they can keep their
figures and the command that measured them; a module's docstring cites the method it implements
(authors, year) and may point there. This test reads every module of the package with :mod:`ast`
and :mod:`tokenize` (docstrings of the module, its classes and functions, and ``#`` comments) and
refuses:

- a date (``2026-12-03``): a docstring describes the code as it is, not its history;
- "this machine", "on a loaded machine" and the like: figures that hold on one computer;
- "tried and not kept", "measured and not kept": the record of a dropped variant;
- a before/after timing (``0.88 -> 0.17 s``, ``17 -> 5 us``) or an "N x faster".
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

import rfexplain

PACKAGE = Path(rfexplain.__file__).parent
REPO = PACKAGE.parent
MODULES = sorted(PACKAGE.rglob("*.py"))

#: What a docstring or comment of the package must not contain (see the module docstring).
RESEARCH_LOG = re.compile(
    r"\b20\d\d-\d\d-\d\d\b"
    r"|\b(?:this|a loaded|the development|my) machine\b"
    r"|\b(?:tried|measured) and not kept\b"
    r"|\d(?:\.\d+)?\s*(?:s|ms|us|µs)?\s*->\s*\d+(?:\.\d+)?\s*(?:s|ms|us|µs)\b"
    r"|\b\d+(?:\.\d+)?\s*(?:x|times) faster\b",
    re.IGNORECASE,
)


def texts(source: str) -> list[tuple[int, str]]:
    """The docstrings (module, classes, functions) and ``#`` comments of ``source``, each with
    the line it starts on."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                found.append((first.lineno, first.value.value))
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found.append((token.start[0], token.string))
    return found


def research_log(source: str) -> list[tuple[int, str]]:
    """Each match of :data:`RESEARCH_LOG` in the docstrings and comments of ``source``."""
    return [
        (line + text[: match.start()].count("\n"), match.group(0))
        for line, text in texts(source)
        for match in RESEARCH_LOG.finditer(text)
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_research_log_in_the_package(path: Path) -> None:
    found = research_log(path.read_text())
    assert found == [], f"{path.relative_to(REPO)}: move these to docs/decisions.md: {found}"


@pytest.mark.parametrize(
    "text",
    [
        "# Until 2026-12-06 the limit was lower",
        "#: Measured per AXp (CPU, this machine): 2-4 times faster",
        '"""- **Tried and not kept (soft vote, two classes).** On the 8 slowest steps"""',
        "# rows then columns (67 -> 18 us a query against one selection)",
        "# magic 0.88 -> 0.17 s, segmentation 1.64 -> 0.17 s",
        '"""about 6x faster per AXp"""',
    ],
)
def test_the_pattern_catches_a_research_log(text: str) -> None:
    assert research_log(text + "\nx = 1\n")


@pytest.mark.parametrize(
    "text",
    [
        "x = '2026-12-06'  # a string in code is not a docstring",
        "if not kept:  # the leaves the bounds keep\n    pass",
        "# ``y -> x``: the implication of the chain, and states 0 -> 3",
        '"""Compiled by numba [Lam15]; the budget is polled every 2048 boxes."""',
    ],
)
def test_the_pattern_spares_descriptions(text: str) -> None:
    assert research_log(text + "\n") == []


def test_the_decisions_document_exists() -> None:
    """Where the figures went."""
    decisions = (REPO / "docs" / "decisions.md").read_text()
    assert "prefilter" in decisions and "CUBE_DEPTH" in decisions
