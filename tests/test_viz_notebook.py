"""In a notebook: no warning on import, progress bars shown, decisions displayed without asking
again, the text and HTML forms of an enumeration alike, tables that read."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")

import pytest

import rfexplain as rx
from rfexplain.core.records import BatchRecord
from tests.viz_helpers import MODEL, NAMES, X

#: A Jupyter kernel as tqdm and rfexplain.progress recognise one, without ipywidgets.
FAKE_KERNEL = """
import sys, types
ipython = types.ModuleType("IPython")
class ZMQInteractiveShell:
    config = {"IPKernelApp": {}}
ipython.get_ipython = lambda: ZMQInteractiveShell()
sys.modules["IPython"] = ipython
sys.modules["ipykernel.zmqshell"] = types.ModuleType("ipykernel.zmqshell")
sys.modules["ipywidgets"] = None  # not installed
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        # every warning printed (tqdm's own fallback swallows its warning when it is an error)
        [sys.executable, "-W", "always", "-c", FAKE_KERNEL + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_import_in_a_notebook_without_ipywidgets_warns_nothing() -> None:
    """``import rfexplain`` and a progress bar, every warning shown, in a kernel without
    ipywidgets (where ``tqdm.auto`` warns ``TqdmWarning: IProgress not found``)."""
    done = _run(
        """
        import rfexplain
        from rfexplain.progress import Progress, in_notebook
        assert in_notebook()
        with Progress(3, "explaining") as bar:  # shown by default in a notebook
            assert bar.enabled
            bar.update(3)
        """
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr and "IProgress" not in done.stderr, done.stderr
    assert "3/3" in done.stderr  # the text bar, which the notebook shows


def test_outside_a_notebook_bars_stay_off_by_default() -> None:
    from rfexplain.progress import Progress, in_notebook

    assert not in_notebook()
    out = io.StringIO()
    with Progress(2, enabled=None, stream=out) as bar:
        bar.update(2)
    assert out.getvalue() == ""


def test_a_decision_displayed_twice_asks_its_queries_once() -> None:
    decision = rx.Explainer(MODEL, engine="circuit", feature_names=NAMES, vote="hard").explain(X[60])
    asked: list[str] = []
    ask = decision.ask

    def counting(name, **options):
        asked.append(name)
        return ask(name, **options)

    decision.ask = counting  # type: ignore[method-assign]
    first = decision._repr_html_()
    once = sorted(asked)
    assert once and len(once) == len(set(once))  # each query once, even across the table and the picture
    again = decision._repr_html_()
    assert again[: again.index("<svg")] == first[: first.index("<svg")]
    decision.plot()
    assert sorted(asked) == once
    import matplotlib.pyplot as plt

    plt.close("all")


def test_enumeration_text_and_html_say_the_same() -> None:
    decision = rx.Explainer(MODEL, engine="sat", feature_names=NAMES).explain(X[60])
    enumeration = decision.necessary_reasons()
    assert repr(enumeration) == "Enumeration(0 results so far)"
    html = enumeration._repr_html_()

    class Printer:
        def __init__(self) -> None:
            self.out = ""

        def text(self, text: str) -> None:
            self.out += text

    printer = Printer()
    enumeration._repr_pretty_(printer, False)  # IPython's text form, shown beside the HTML
    status = enumeration.status
    assert status.startswith("complete: ") and status in html and status in printer.out
    assert f"Enumeration({status})" == repr(enumeration)
    results = list(enumeration)
    assert len(results) == enumeration.count
    for k, reason in enumerate(results, start=1):
        assert f"  {k}. {reason}" in printer.out
    limited = decision.necessary_reasons(limit=1)
    list(limited)
    assert limited.status == "1 results, stopped by limit" and limited.status in limited._repr_html_()


def test_the_reason_table_names_each_feature_once() -> None:
    decision = rx.Explainer(MODEL, engine="sat", feature_names=NAMES).explain(X[60])
    reason = decision.sufficient_reason()
    html = reason._repr_html_()
    table = html[html.index("<table") : html.index("</table>")]
    for f in reason.features:
        assert table.count(NAMES[f]) == 1, table
    assert "&lt;" not in table and "(" in table  # intervals, not conditions repeating the name


def test_batch_record_docstring_names_the_vote_explained() -> None:
    doc = BatchRecord.__doc__ or ""
    assert "hard majority vote" not in doc and "vote" in doc


@pytest.mark.parametrize("name", ["sufficient_reason", "necessary_reasons", "robustness", "plot"])
def test_public_decision_methods_have_numpydoc_sections(name: str) -> None:
    doc = getattr(rx.Decision, name).__doc__ or ""
    assert "Parameters\n" in doc and "Returns\n" in doc, doc
