"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_python_api_example_runs() -> None:
    text = README.read_text()
    block = re.search(r"## Python API\n\n```python\n(.*?)```", text, re.DOTALL)
    assert block, "the README has a Python API example"
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), "README.md", "exec"), namespace)
    assert namespace["d"].prediction == "versicolor"  # type: ignore[attr-defined]


def test_see_it_example_draws_the_readme_picture(tmp_path, monkeypatch) -> None:
    import importlib.util

    import matplotlib

    matplotlib.use("Agg")
    spec = importlib.util.spec_from_file_location("make_figures", README.parent / "docs" / "make_figures.py")
    make_figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_figures)  # type: ignore[union-attr]
    code = make_figures.see_it_code()
    assert "docs/images/decision.png" in code and (README.parent / "docs/images/decision.png").is_file()
    (tmp_path / "docs" / "images").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    fig = namespace["fig"]
    assert [ax.get_ylabel() for ax in fig.axes] == ["petal length (cm)", "petal width (cm)"]  # type: ignore[attr-defined]
    assert (tmp_path / "docs/images/decision.png").stat().st_size > 5000


def test_pipeline_example_runs() -> None:
    text = README.read_text()
    block = re.search(r"### Pipelines, in your own columns\n.*?```python\n(.*?)```", text, re.DOTALL)
    assert block, "the README has a pipeline example"
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), "README.md", "exec"), namespace)
    reason = str(namespace["d"].sufficient_reason())  # type: ignore[attr-defined]
    assert "given" in reason and " in {" in reason
