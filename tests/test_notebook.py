"""The README's examples as notebook cells, run in a real Jupyter kernel (nbclient): a decision
displays as its table with the picture inline, a plot shows inline as an image, and
``print(decision)`` gives the decision in words."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _block(heading: str) -> str:
    found = re.search(rf"{heading}\n.*?```python\n(.*?)```", README.read_text(), re.DOTALL)
    assert found, f"the README has a Python block under {heading!r}"
    return found.group(1)


@pytest.mark.slow
def test_readme_cells_in_a_notebook_show_tables_and_images(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat", reason="the notebook test needs nbformat (the test extra)")
    nbclient = pytest.importorskip("nbclient", reason="the notebook test needs nbclient (the test extra)")
    pytest.importorskip("ipykernel", reason="the notebook test needs a Jupyter kernel (ipykernel, the test extra)")
    (tmp_path / "docs" / "images").mkdir(parents=True)  # the "See it" example saves its picture there
    sources = ["%matplotlib inline", _block("## Python API"), "d", _block("## See it"), "print(d)"]
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [cell.get("outputs", []) for cell in notebook.cells]
    stderr = [out.get("text", "") for cell in outputs for out in cell if out.get("name") == "stderr"]
    assert not [text for text in stderr if "TqdmWarning" in text or "IProgress" in text]  # none on import
    # the decision as the last expression of a cell: its table, with the inflated reason and the picture
    (shown,) = [out for out in outputs[2] if out["output_type"] == "execute_result"]
    table = shown["data"]["text/html"]
    assert "<table" in table and "<svg" in table and "sufficient reason (inflated)" in table
    # the plot shows inline, as pyplot figures do in a notebook
    images = [out["data"]["image/png"] for out in outputs[3] if "image/png" in out.get("data", {})]
    assert len(images) == 1 and len(base64.b64decode(images[0])) > 5000
    assert (tmp_path / "docs" / "images" / "decision.png").stat().st_size > 5000
    (printed,) = [out["text"] for out in outputs[4] if out.get("name") == "stdout"]
    assert printed.startswith("prediction 'versicolor' with probability") and "\nbecause: " in printed
