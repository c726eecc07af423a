"""The curated benchmark results: every canonical file names the command that reproduces it,
every archived file has its index line, and the results page and the README's run-time table
match the files (``python -m experiments summary`` regenerates both)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from experiments import __main__ as entry
from experiments import summary

RESULTS = summary.RESULTS
ARCHIVE = RESULTS / "archive"


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file())


def test_every_canonical_file_names_the_command_that_reproduces_it() -> None:
    canonical = summary.canonical_files()
    present = _files(RESULTS)
    assert sorted(set(present) - set(canonical)) == [], (
        "move it to archive/ (with an index line) or list it in CANONICAL"
    )
    assert sorted(set(canonical) - set(present)) == [], "a canonical file is missing"
    registry = {b.name for b in entry.BENCHMARKS}
    for name, result in canonical.items():
        assert result.benchmark in registry, name
        assert (RESULTS / f"{result.stem}.md").exists(), name
        command = summary.reproduce_command(result)
        assert command is not None, f"{name}: its .md has no Reproduce: line and its .machine.json no runnable command"
        tokens = shlex.split(command)
        assert tokens[:4] == ["python", "-m", "experiments", result.benchmark], (name, command)


def test_every_benchmark_with_results_is_listed_once_per_run() -> None:
    stems = [r.stem for r in summary.CANONICAL]
    assert len(stems) == len(set(stems))
    assert {r.benchmark for r in summary.CANONICAL if r.headline} >= {
        "peers_rfxpl",
        "peers_pyxai",
        "circuit_tables",
        "soft_vote",
        "practical_forests",
        "sat_table1",
    }


def test_every_archived_file_has_an_index_line() -> None:
    index = (ARCHIVE / "README.md").read_text()
    lines = [line for line in index.splitlines() if line.startswith("- ")]
    for name in _files(ARCHIVE):
        if name == "README.md":
            continue
        assert sum(f"`{name}`" in line for line in lines) == 1, (
            f"archive/{name} needs one index line in archive/README.md"
        )
    named = set(re.findall(r"`([^`*/]+\.(?:csv|md|json|png))`", "\n".join(lines)))
    assert named <= set(_files(ARCHIVE)), "the archive index names files that are not there"


def test_the_results_page_matches_the_files(tmp_path: Path) -> None:
    out = tmp_path / "results.md"
    assert entry.main(["summary", "--out", str(out), "--readme", ""]) == 0
    assert out.read_text() == summary.PAGE.read_text(), "run `python -m experiments summary` and commit docs/results.md"


def test_the_readme_run_times_match_the_files() -> None:
    text = summary.README.read_text()
    assert summary.README_START in text and summary.README_END in text
    assert summary.update_readme(text) == text, "run `python -m experiments summary` and commit README.md"


def test_the_page_links_only_files_that_exist() -> None:
    page = summary.PAGE.read_text()
    docs = summary.PAGE.parent
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page):
        if not target.startswith(("http:", "https:")):
            assert (docs / target).resolve().exists(), target


@pytest.mark.parametrize(
    ("recorded", "expected"),
    [
        ("add_tables.py evaluation --timeout 420", "python -m experiments add_evaluation --timeout 420"),
        ("__main__.py pipelines --quick", "python -m experiments pipelines --quick"),
        (
            "python -m experiments.sat_table1 --card mtotalizer --results-dir /tmp/x",
            "python -m experiments sat_table1 --card mtotalizer",
        ),
        ("python -m experiments soft_vote --results-dir=/tmp/x", "python -m experiments soft_vote"),
        ("__main__.py peers_pyxai --merge /tmp/runs/merged.raw.json", None),
        ("merge_enum.py", None),
        ("python -m experiments no_such_table", None),
    ],
)
def test_recorded_commands_read_as_benchmark_commands(recorded: str, expected: str | None) -> None:
    assert summary.normalise_command(recorded) == expected


def test_a_run_that_wrote_two_tables_has_its_time_listed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two canonical results of one run (the same machine description's date) count its wall
    clock once in the run-time table; a run of another date counts its own."""
    import json

    runs = (
        summary.Result("regression", "first", "one run's first table"),
        summary.Result("regression", "second", "its second table"),
        summary.Result("regression", "third", "another run"),
    )
    for stem, date, elapsed in (("first", "d1", 600.0), ("second", "d1", 600.0), ("third", "d2", 90.0)):
        (tmp_path / f"{stem}.md").write_text(f"# {stem}\n")
        (tmp_path / f"{stem}.machine.json").write_text(json.dumps({"date": date, "elapsed_s": elapsed}))
    monkeypatch.setattr(summary, "CANONICAL", runs)
    table = summary.runtime_table(tmp_path)
    assert "| `regression` | `first` | 10 min (600 s) |" in table
    assert "| `regression` | `second` | in `first`'s | written by the same run |" in table
    assert "| `regression` | `third` | 90 s |" in table
