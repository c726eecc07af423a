"""The documentation can be followed from the repository alone.

- every module of the package starts with a non-empty docstring;
- no file of the package (nor the README or ``docs/``) points to documents that are not in the
  repository (``DESIGN.md``, ``STYLE.md``, ``DEPENDENCIES.md``) or cites a paper by its file name
  (``000``, ``papers/002_...``); papers are cited by authors, year and a key such as ``[JD26]``;
- every such key resolves to an entry of ``docs/references.md``;
- ``docs/architecture.md`` names every subpackage and top-level module of the package.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import rfexplain

PACKAGE = Path(rfexplain.__file__).parent
REPO = PACKAGE.parent
DOCS = REPO / "docs"
MODULES = sorted(PACKAGE.rglob("*.py"))

#: Documents of the project's workspace that the repository does not contain.
MISSING_DOCUMENTS = re.compile(r"\b(DESIGN|STYLE|DEPENDENCIES)(\.md\b|\b)")
#: A paper cited by its file name: ``000``, "paper 002", "papers 000/002", "(001, Fig. 1",
#: "of 000", "papers/000_...", "003_5963...". Plain numbers such as 2,000,000 or 0.001 do not match.
PAPER_FILE = re.compile(
    r"``00[0-3]``"
    r"|papers/00[0-3]"
    r"|\b00[0-3]_[0-9a-f.]"
    r"|\bpapers?\s+``?00[0-3]\b"
    r"|\b(of|in|see)\s+``?00[0-3]\b"
    r"|(^|[\s(\"])00[0-3]\b(?![.,]\d)"
)
#: A citation key as used in docstrings, e.g. [IM21], [JD26], [Bat68], [IMM19].
CITATION = re.compile(r"\[([A-Z][A-Za-z]{1,3}\d{2})\]")


def _cited_keys(text: str) -> set[str]:
    return set(CITATION.findall(text))


def _reference_keys() -> set[str]:
    return set(re.findall(r"^- \*\*\[([A-Za-z]+\d{2})\]\*\*", (DOCS / "references.md").read_text(), re.MULTILINE))


def _checked_files() -> list[Path]:
    return [*MODULES, REPO / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_module_has_a_docstring(path: Path) -> None:
    docstring = ast.get_docstring(ast.parse(path.read_text()))
    assert docstring and docstring.strip(), f"{path} has no module docstring"


def test_no_pointer_to_documents_outside_the_repository() -> None:
    found = []
    for path in _checked_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if MISSING_DOCUMENTS.search(line) or PAPER_FILE.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert found == []


def test_every_cited_key_is_in_the_references() -> None:
    known = _reference_keys()
    assert {"IM21", "JD26", "DJ22", "GS21"} <= known  # the four papers the package implements
    missing = {}
    for path in _checked_files():
        if path.name != "references.md":
            for key in _cited_keys(path.read_text()) - known:
                missing.setdefault(key, []).append(str(path.relative_to(REPO)))
    assert missing == {}


def test_the_architecture_names_every_part_of_the_package() -> None:
    text = (DOCS / "architecture.md").read_text()
    parts = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    parts |= {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    assert {part for part in parts if f"`{part}" not in text} == set()


@pytest.mark.parametrize(
    "line",
    [
        'The knowledge-compilation engine, ``engine="circuit"`` (papers ``000`` and ``002``).',
        "Algorithm 5 of paper ``000``: the robustness",
        "Tables 1-4 of the circuit paper (``papers/000_...``)",
        '"""002, Sect. 3: the complete reason',
        "for reason in gnrs:  # Lemma 2 of 000: every violation",
        "(the ADD paper ``003``, Sect. 8-9)",
        "see 003_5963b018af4f61b8.txt",
        "(paper 001, Table 1)",
    ],
)
def test_the_file_name_pattern_catches_old_citations(line: str) -> None:
    assert PAPER_FILE.search(line)


@pytest.mark.parametrize(
    "line",
    [
        "Options: ``max_state_vectors`` (default 2,000,000).",
        "gives 3,000-400,000 on the benchmark forests",
        '{"time": 0.001, "features": [0]}',
        "Ji and Darwiche (2026), Algorithm 3B [JD26]",
    ],
)
def test_the_file_name_pattern_spares_numbers(line: str) -> None:
    assert not PAPER_FILE.search(line)


def test_the_key_pattern_reads_citations() -> None:
    assert _cited_keys("Izza and Marques-Silva (2021) [IM21]; Batcher [Bat68], x[0], [27]") == {"IM21", "Bat68"}
    assert MISSING_DOCUMENTS.search("see DESIGN.md section 2") and MISSING_DOCUMENTS.search("`DESIGN` notes")
