"""The results page: ``python -m experiments summary`` writes ``docs/results.md`` from the
canonical result files in ``experiments/results/``.

:data:`CANONICAL` names, per benchmark of the registry, the one set of files that holds the
project's figures (each run's CSV, markdown and machine description, and its plots or raw data);
every other run lives in ``experiments/results/archive/`` with a line in its ``README.md``. The
page takes everything from those files (the tables from their markdown, the machine line and the
command that reproduces each run), so it has no timestamp or figure of its own: the same files
give the same page byte for byte, which ``tests/test_results.py`` checks against the committed
page. It also writes the table of run times at full size into the README, between the
:data:`README_START` and :data:`README_END` markers.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CANONICAL",
    "Result",
    "canonical_files",
    "main",
    "normalise_command",
    "render_page",
    "reproduce_command",
    "runtime_table",
]

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "experiments" / "results"
PAGE = ROOT / "docs" / "results.md"
README = ROOT / "README.md"
#: The results folder as a link from ``docs/``.
LINK = "../experiments/results"
README_START = "<!-- results-runtimes: start (written by python -m experiments summary) -->"
README_END = "<!-- results-runtimes: end -->"


@dataclass(frozen=True)
class Result:
    """One canonical run: ``<stem>.csv``, ``<stem>.md`` and ``<stem>.machine.json`` (when it
    was recorded) and the ``extra`` files it wrote."""

    benchmark: str
    stem: str
    title: str
    extra: tuple[str, ...] = ()
    #: The ``## `` sections of its markdown shown on the page (None: all of them).
    sections: tuple[str, ...] | None = None
    #: Shown in full on the page (else one line among the other results).
    headline: bool = False
    #: The CSV column that holds each row's whole wall-clock seconds (None: no such column).
    wall_column: str | None = None


_CIRCUIT = "circuit_tables"
_PYXAI_PLOTS = tuple(f"peers_pyxai_cactus_{q}.png" for q in ("minimal_contrastive", "minimal_sufficient", "sufficient"))

#: The canonical runs: the headline tables in the page's order, then the others.
CANONICAL: tuple[Result, ...] = (
    Result("peers_rfxpl", "peers_rfxpl", "Ours against RFxpl: one AXp per instance", headline=True),
    Result(
        "peers_pyxai",
        "peers_pyxai",
        "Ours against PyXAI: timing and content",
        extra=("peers_pyxai.raw.json", "peers_pyxai_summary.csv", "peers_pyxai_disagreements.csv", *_PYXAI_PLOTS),
        sections=("Overview", "Plots"),
        headline=True,
    ),
    Result(_CIRCUIT, "circuit_table1", "The circuit paper's Table 1", headline=True, wall_column="wall"),
    Result(
        _CIRCUIT,
        "circuit_table2_compact",
        "The circuit paper's Table 2 (18 of 19 rows)",
        headline=True,
        wall_column="wall",
    ),
    Result(
        _CIRCUIT,
        "circuit_table2_compact_ann-thyroid",
        "The circuit paper's Table 2: its ann-thyroid row",
        headline=True,
        wall_column="wall",
    ),
    Result("soft_vote", "soft_vote", "Soft vote against hard vote", headline=True),
    Result("default_vote", "default_vote", "The default vote at hard-vote speed (issue 53's grid)", headline=True),
    Result(
        "practical_forests",
        "practical_forests",
        "The practitioners' forests: 100 trees, ours and RFxpl's",
        headline=True,
    ),
    Result(
        "practical_forests",
        "practical_forests_500",
        "The practitioners' forests: 500 trees, ours alone",
        headline=True,
    ),
    Result("sat_table1", "sat_table1", "The SAT paper's Table 1", headline=True),
    Result("sat_table1", "sat_cards", "The SAT engine's cardinality encodings"),
    Result(_CIRCUIT, "circuit_table3", "The circuit paper's Table 3", wall_column="wall"),
    Result(_CIRCUIT, "circuit_table4", "The circuit paper's Table 4", wall_column="wall"),
    Result(
        "circuit_scale",
        "circuit_scale_trees_50",
        "The largest forests that compile: 50 trees at depth 4",
    ),
    Result("circuit_scale", "circuit_scale_trees_2x", "The largest forests that compile: twice the paper's trees"),
    Result("add_table1", "add_table1", "ADD and SDD columns of the circuit paper's Table 1", wall_column="wall"),
    Result(
        "add_evaluation",
        "add_evaluation",
        "The ADD paper's aggregation sizes and evaluation cost",
        extra=("add_evaluation_sizes.png", "add_evaluation_steps.png", "add_evaluation_time.png"),
        wall_column="wall",
    ),
    Result("add_outcomes", "add_outcomes", "ADD outcome explanations against sufficient reasons", wall_column="wall"),
    Result("pipelines", "pipelines", "Pipelines in their original columns"),
    Result("regression", "regression", "Regression forests: AXps of a band and the range query"),
    Result("regression", "regression_missing", "Forests trained with missing values"),
    Result("sat_shortest", "sat_shortest", "One shortest AXp and CXp per instance"),
    Result("cold_start", "cold_start", "Time to first answer: empty compiled-code cache against warm", headline=True),
    Result(
        "budgets",
        "budgets",
        "Budgets: overshoot past timeout=t and peak memory per engine",
        extra=("budgets.summary.json",),
        headline=True,
    ),
    Result("actionable", "actionable", "Inflated sufficient reasons against the AXp (SAT paper's forests)"),
    Result("batch_throughput", "batch_throughput", "Batch throughput with streaming and resume (1,000 rows)"),
    Result("boosted", "boosted", "Gradient-boosted models: XGBoost as in XReason, HistGradientBoosting, LightGBM"),
)

#: Keys of a ``.machine.json`` that would hold a whole run's wall-clock seconds.
_WALL_KEYS = ("elapsed_s", "wall_s", "elapsed", "wall")


def run_files(result: Result, results: Path = RESULTS) -> list[str]:
    """The file names of one canonical run that exist in ``results``."""
    names = [f"{result.stem}{ext}" for ext in (".csv", ".md", ".machine.json")]
    return [n for n in names if (results / n).exists()] + list(result.extra)


def canonical_files(results: Path = RESULTS) -> dict[str, Result]:
    """Every canonical file name, with the run it belongs to."""
    return {name: result for result in CANONICAL for name in run_files(result, results)}


def _machine(result: Result, results: Path) -> dict[str, object]:
    path = results / f"{result.stem}.machine.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _markdown(result: Result, results: Path) -> str:
    return (results / f"{result.stem}.md").read_text()


_REPRODUCE = re.compile(r"^Reproduce: `([^`]*)`", re.MULTILINE)


def recorded_command(result: Result, results: Path = RESULTS) -> str | None:
    """The command the run's files name: its markdown's ``Reproduce:`` line, else the
    ``command`` of its ``.machine.json``."""
    found = _REPRODUCE.search(_markdown(result, results))
    if found:
        return found.group(1).strip()
    command = _machine(result, results).get("command")
    return str(command).strip() if command else None


def _registry() -> dict[str, tuple[str, tuple[str, ...]]]:
    from experiments.__main__ import BENCHMARKS

    return {b.name: (b.module, b.args) for b in BENCHMARKS}


def normalise_command(command: str) -> str | None:
    """``command`` as ``python -m experiments NAME ...`` for a registered benchmark NAME, without
    the results folder it was written to; None when it does not run a benchmark (a merge of
    earlier runs, another script).

    >>> normalise_command("add_tables.py table1 --timeout 150 --out /tmp/x")
    'python -m experiments add_table1 --timeout 150'
    >>> normalise_command("python -m experiments.circuit_tables table2 --results-dir /tmp/t2")
    'python -m experiments circuit_tables table2'
    >>> normalise_command("merge_enum.py") is None
    True
    """
    tokens = shlex.split(command)
    rest: list[str]
    for flag in ("--results-dir", "--out"):
        while flag in tokens:
            at = tokens.index(flag)
            del tokens[at : at + 2]
        tokens = [t for t in tokens if not t.startswith(flag + "=")]
    registry = _registry()
    if tokens[:3] == ["python", "-m", "experiments"]:
        name, rest = (tokens[3], tokens[4:]) if len(tokens) > 3 else ("", [])
    elif tokens[:1] == ["__main__.py"]:
        name, rest = (tokens[1], tokens[2:]) if len(tokens) > 1 else ("", [])
    else:
        if tokens[:2] == ["python", "-m"] and len(tokens) > 2 and tokens[2].startswith("experiments."):
            module, rest = tokens[2], tokens[3:]
        elif tokens and tokens[0].endswith(".py"):
            module, rest = "experiments." + Path(tokens[0]).stem, tokens[1:]
        else:
            return None
        name = ""
        for bench, (bench_module, args) in registry.items():
            if bench_module == module and list(args) == rest[: len(args)]:
                name, rest = bench, rest[len(args) :]
                break
    if name not in registry or "--merge" in rest:
        return None
    return shlex.join(["python", "-m", "experiments", name, *rest])


def reproduce_command(result: Result, results: Path = RESULTS) -> str | None:
    """The ``python -m experiments ...`` command that reproduces ``result`` (None: its files name none)."""
    recorded = recorded_command(result, results)
    return normalise_command(recorded) if recorded else None


def _machine_line(result: Result, results: Path) -> str:
    for line in _markdown(result, results).splitlines():
        if line.startswith("Machine: "):
            return line
    return "Machine: not recorded."


def _body(result: Result, results: Path) -> str:
    """The run's markdown without its title, machine and reproduce lines; headings demoted by
    two levels, relative links pointing into the results folder."""
    lines = _markdown(result, results).splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    kept: list[str] = []
    keep = True
    for line in lines:
        if line.startswith(("Machine: ", "Reproduce: ")):
            continue
        if line.startswith("## "):
            keep = result.sections is None or any(line[3:].startswith(s) for s in result.sections)
        if keep:
            kept.append("##" + line if line.startswith("#") else line)
    text = "\n".join(kept).strip()
    text = re.sub(r"\]\((?!https?:|/|#|\.\./)([^)\s]+)\)", rf"]({LINK}/\1)", text)
    return re.sub(r"\n{3,}", "\n\n", text)


def _anchor(title: str) -> str:
    slug = re.sub(r"[^\w\- ]", "", title.lower()).strip().replace(" ", "-")
    return slug


def _files_line(result: Result, results: Path) -> str:
    links = ", ".join(f"[`{n}`]({LINK}/{n})" for n in run_files(result, results))
    return f"Files: {links}."


def _reproduce_lines(result: Result, results: Path) -> list[str]:
    command = reproduce_command(result, results)
    recorded = recorded_command(result, results)
    lines = [f"Reproduce: `{command}`" if command else "Reproduce: not recorded."]
    if recorded and recorded != command:
        lines[0] += f" (recorded as `{recorded}`)."
    elif command:
        lines[0] += "."
    return lines


def _seconds(value: float) -> str:
    if value >= 7200:
        return f"{value / 3600:.1f} h ({value:,.0f} s)"
    if value >= 120:
        return f"{value / 60:.0f} min ({value:,.0f} s)"
    return f"{value:.0f} s"


def _wall(result: Result, results: Path) -> tuple[str, str]:
    """The run's recorded wall clock and where it comes from."""
    machine = _machine(result, results)
    for key in _WALL_KEYS:
        if isinstance(machine.get(key), (int, float)):
            return _seconds(float(machine[key])), f"`{key}` of its machine description"
    if result.wall_column:
        total, rows, missing = 0.0, 0, 0
        with (results / f"{result.stem}.csv").open(newline="") as handle:
            for row in csv.DictReader(handle):
                rows += 1
                try:
                    total += float(row.get(result.wall_column) or "")
                except ValueError:
                    missing += 1
        if rows > missing:
            note = f"sum of the CSV's `{result.wall_column}` column"
            if missing:
                note += f" ({missing} of {rows} rows have none)"
            return _seconds(total), note
    return "not recorded", ""


def runtime_table(results: Path = RESULTS) -> str:
    """Per benchmark of the registry, the wall clock of its canonical run at full size."""
    lines = [
        "| benchmark | canonical run | wall clock | from |",
        "|---|---|---|---|",
    ]
    for name in _registry():
        runs = [r for r in CANONICAL if r.benchmark == name]
        if not runs:
            lines.append(f"| `{name}` | none yet | not run at full size | |")
        seen: dict[str, str] = {}  # the date of a run already listed -> its stem
        for r in runs:
            wall, source = _wall(r, results)
            date = str(_machine(r, results).get("date") or "")
            if date and date in seen:  # files of one run: its time is listed once
                wall, source = f"in `{seen[date]}`'s", "written by the same run"
            elif date:
                seen[date] = r.stem
            quick = " (quick size)" if _machine(r, results).get("quick") or r.stem.endswith("_quick") else ""
            lines.append(f"| `{name}` | `{r.stem}`{quick} | {wall} | {source} |")
    return "\n".join(lines)


def render_page(results: Path = RESULTS) -> str:
    """The text of ``docs/results.md``."""
    headline = [r for r in CANONICAL if r.headline]
    others = [r for r in CANONICAL if not r.headline]
    out = [
        "# Results",
        "",
        "<!-- Generated by `python -m experiments summary` from experiments/results/: do not edit. -->",
        "",
        "The project's figures: one canonical run per table, each with the machine it ran on and the",
        "command that reproduces it, as its files in [`experiments/results/`](../experiments/results/)",
        "record them. Exploratory and superseded runs are in",
        "[`experiments/results/archive/`](../experiments/results/archive/README.md). This page is",
        "written by `python -m experiments summary` from those files (the test suite checks that it",
        "matches them). How to run the benchmarks, and what each measures:",
        "[`experiments/README.md`](../experiments/README.md).",
        "",
        "Times are CPU seconds of the measuring process unless a table says otherwise; the machine was",
        "a shared 2-core virtual machine, so wall-clock figures vary with its load.",
        "",
        "- [Run times at full size](#run-times-at-full-size)",
    ]
    out += [f"- [{r.title}](#{_anchor(r.title)})" for r in headline]
    out += ["- [Other canonical results](#other-canonical-results)", ""]
    for r in headline:
        out += [f"## {r.title}", "", f"`{r.benchmark}`: {_files_line(r, results)}", "", _body(r, results), ""]
        out += [_machine_line(r, results), "", *_reproduce_lines(r, results), ""]
    out += [
        "## Other canonical results",
        "",
        "| benchmark | run | machine | reproduce |",
        "|---|---|---|---|",
    ]
    for r in others:
        machine = _machine(r, results)
        where = f"commit {machine['git_commit']}, {machine.get('date', '')}" if machine else "not recorded"
        command = reproduce_command(r, results)
        out.append(
            f"| `{r.benchmark}` | [{r.title}]({LINK}/{r.stem}.md) | {where} | "
            + (f"`{command}`" if command else "not recorded")
            + " |"
        )
    out += [
        "",
        "## Run times at full size",
        "",
        "How long `python -m experiments all` takes at full size, per benchmark, as far as the",
        "canonical runs recorded it (`write_report` records no wall clock of its own; where a CSV holds",
        "each row's wall clock, the sum is given: rows of runs made side by side are added, so this is",
        "the time one after the other).",
        "",
        runtime_table(results),
        "",
    ]
    return "\n".join(out)


def readme_block(results: Path = RESULTS) -> str:
    """The run-time table as it stands in the README, markers included."""
    return f"{README_START}\n{runtime_table(results)}\n{README_END}"


def update_readme(text: str, results: Path = RESULTS) -> str:
    """``text`` (the README) with its run-time block replaced (unchanged when it has no markers)."""
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        return text
    return text[:start] + readme_block(results) + text[end + len(README_END) :]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments summary", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(PAGE), help="the page to write (default docs/results.md)")
    parser.add_argument("--readme", default=str(README), help="the README whose run-time table to update ('' : none)")
    parser.add_argument(
        "--results-dir", default=str(RESULTS), help="the canonical results (default experiments/results)"
    )
    args = parser.parse_args(argv)
    results = Path(args.results_dir)
    Path(args.out).write_text(render_page(results))
    if args.readme:
        readme = Path(args.readme)
        text = readme.read_text()
        updated = update_readme(text, results)
        if updated != text:
            readme.write_text(updated)
    print(f"[experiments] summary: wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
