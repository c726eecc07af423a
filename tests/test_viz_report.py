"""The HTML report: well-formed, every row present, nothing external, and seen in a real browser."""

from __future__ import annotations

import dataclasses
import html
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import rfexplain as rx
from rfexplain.cli import main
from rfexplain.viz.report_html import GLOSSARY
from tests.viz_helpers import MODEL, NAMES, X

ROWS = X[::25]  # 6 rows


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    path = tmp_path_factory.mktemp("report") / "report.html"
    with rx.Explainer(MODEL, engine="circuit", feature_names=NAMES, vote="hard") as explainer:
        rows = explainer.report(ROWS, path, compare_engine="sat", indices=[10 * k for k in range(len(ROWS))])
    return path, rows


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        self.urls += [v for k, v in attrs if k in ("src", "href", "xlink:href") and v]


def test_report_is_well_formed_has_every_row_and_nothing_external(report) -> None:
    path, rows = report
    text = path.read_text()
    root = ET.fromstring(re.sub(r"^<!DOCTYPE html>", "", text))  # well-formed XML (and so HTML)
    (summary,) = [table for table in root.iter() if table.get("id") == "summary"]
    summary_rows = [tr for tr in summary.iter() if tr.tag.endswith("tr") and tr.get("id")]
    assert [r.get("id") for r in summary_rows] == [f"summary-{10 * k}" for k in range(len(ROWS))]
    parser = _Collect()
    parser.feed(text)
    assert not [u for u in parser.urls if not u.startswith("#")]
    assert "<script" not in text and not re.search(r"(src|href)\s*=\s*[\"']?https?:", text)
    # a picture per row, and the chart of the features in the reasons
    assert parser.tags.count("details") == len(ROWS) and parser.tags.count("svg") == len(ROWS) + 1
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))  # several inline SVGs, one document: ids stay unique
    referenced = {a or b for a, b in re.findall(r'url\(#([^)]+)\)|href="#([^"]+)"', text)}
    assert len(referenced) > len(ROWS)  # the summary's links and the figures' clip paths
    assert referenced <= set(ids)
    assert all(r.verified and r.agreement and "agrees" in r.agreement for r in rows)
    assert all(r.error is None for r in rows)


def test_report_caps_the_detailed_sections(tmp_path: Path) -> None:
    path = tmp_path / "r.html"
    rx.Explainer(MODEL, engine="sat", feature_names=NAMES).report(X[:7], path, max_sections=2, plots=False)
    text = path.read_text()
    assert text.count("<details") == 2 and text.count('<tr id="summary-') == 7 and "5 more rows" in text


def _section(text: str, index: int) -> str:
    """Row ``index``'s section of a report, its text unescaped."""
    start = text.index(f'<details id="row-{index}"')
    return html.unescape(text[start : text.index("</details>", start)])


def test_each_row_reads_like_a_document(report) -> None:
    """Each row's section: the instance's values, the decision with its vote share (counted from
    scikit-learn's own trees) and margin, the inflated sufficient reason's conditions, the
    actions that flip it and the robustness; the page: the forest in words, a summary per
    class, the chart of the features in the reasons and the glossary."""
    path, rows = report
    text = path.read_text()
    explainer = rx.Explainer(MODEL, engine="circuit", feature_names=NAMES, vote="hard")
    for x, r in zip(ROWS, rows):
        section = _section(text, r.index)
        for name, value in zip(NAMES, x):
            assert re.search(rf'<dt( class="r")?>{re.escape(name)}</dt><dd>{value:g}</dd>', section)
        votes = [MODEL.classes_[int(tree.predict(x.reshape(1, -1))[0])] for tree in MODEL.estimators_]
        counts = sorted((votes.count(c) for c in MODEL.classes_), reverse=True)
        assert votes.count(r.prediction) == counts[0]
        share, margin = counts[0] / len(votes), (counts[0] - counts[1]) / len(votes)
        assert f"vote share {share:.2f}: {counts[0]} of {len(votes)} trees (margin {margin:.2f} over" in section
        decision = explainer.explain(x)
        inflated = decision.inflated_sufficient_reason()
        assert "Why: sufficient reason (inflated)" in section and inflated.inflated
        digits = max(lit.digits(inflated.space) for lit in inflated.conditions)
        for lit in inflated.conditions:
            assert f"<li>{lit.describe(inflated.space, digits)}</li>" in section
        necessary = decision.necessary_reason()
        if necessary is not None and necessary.actions():
            assert f'<p class="action">{necessary.actions()}</p>' in section
        robustness = decision.robustness()
        assert f"robustness: {robustness} feature(s) must change to flip the decision" in section
        assert r.sufficient_features == [NAMES[f] for f in sorted(inflated.features)]
    assert "RandomForestClassifier of 20 trees of depth up to 4 over 4 features" in text
    assert '<table class="summary" id="classes">' in text and "<h2>Features in the reasons</h2>" in text
    for term, _ in GLOSSARY:
        assert f"<dt>{html.escape(term)}</dt>" in text


def test_report_probability_and_margin_are_scikit_learns(tmp_path: Path) -> None:
    """Under the soft vote the probability is ``predict_proba``'s; the canonical (cell-level)
    sufficient reason is there when asked for."""
    explainer = rx.Explainer(MODEL, engine="sat", feature_names=NAMES)
    rows = explainer.report(X[::30], tmp_path / "r.html", queries=("sufficient_reason",), plots=False, progress=False)
    for r, proba in zip(rows, MODEL.predict_proba(X[::30])):
        top, second = np.sort(proba)[::-1][:2]
        assert r.share.kind == "probability" and r.share.shares == pytest.approx(tuple(proba))
        assert r.share.top == pytest.approx(top) and r.share.margin == pytest.approx(top - second)
        assert r.prediction == MODEL.classes_[r.share.decided]
    text = (tmp_path / "r.html").read_text()
    assert text.count("Why: sufficient reason (canonical, cell by cell)") == len(rows)
    assert "<svg" not in text.split("<h2>Rows</h2>")[1]  # plots=False


@pytest.mark.slow
def test_rows_explained_in_parallel_are_the_rows_explained_in_turn(tmp_path: Path) -> None:
    """``n_jobs=2`` explains the rows in two worker processes: every row's report, and the page
    but its time column, are the ones one process writes."""
    explainer = rx.Explainer(MODEL, engine="sat", feature_names=NAMES)
    rows = X[::37]
    one = explainer.report(rows, tmp_path / "1.html", n_jobs=1, progress=False)
    two = explainer.report(rows, tmp_path / "2.html", n_jobs=2, progress=False)
    assert [dataclasses.replace(r, time=0.0) for r in one] == [dataclasses.replace(r, time=0.0) for r in two]
    assert all(r.error is None and r.svg for r in two)

    def untimed(path: Path) -> str:
        return re.sub(r"<td>\d+\.\d{3}</td>", "", path.read_text())

    assert untimed(tmp_path / "1.html") == untimed(tmp_path / "2.html")
    with pytest.raises(rx.RFExplainError, match="n_jobs"):
        explainer.report(rows, tmp_path / "3.html", n_jobs=0)


def test_report_command(tmp_path: Path) -> None:
    csv = tmp_path / "rows.csv"
    csv.write_text("\n".join(",".join(str(v) for v in row) for row in X[:3]))
    forest = tmp_path / "forest.json"
    forest.write_text(rx.Forest.from_sklearn(MODEL, feature_names=NAMES).to_json())
    out = tmp_path / "out.html"
    assert main(["report", "--model", str(forest), "--input", str(csv), "--out", str(out), "--engine", "sat"]) == 0
    assert out.read_text().count('<tr id="summary-') == 3
    out2 = tmp_path / "out2.html"
    assert (
        main(["report", "--dataset", "iris", "--trees", "5", "--depth", "3", "--rows", "0:2", "--out", str(out2)]) == 0
    )
    assert out2.read_text().count('<tr id="summary-') == 2


# ---------------------------------------------------------------------- a real browser
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]


def _chromium(url: str, *extra: str) -> tuple[str, str]:
    """Chromium's output for ``url``; a DOM dump that came back empty (seen on a machine loaded
    to 8 on 2 cores: the headless browser gave up before the page loaded) is asked again, up to
    three times, so a slow machine is not mistaken for a broken report."""
    for _ in range(3):
        with tempfile.TemporaryDirectory() as profile:
            done = subprocess.run(
                [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *extra, url],
                capture_output=True,
                text=True,
                timeout=120,
            )
        if "--dump-dom" not in extra or done.stdout.strip():
            break
    return done.stdout, done.stderr


def _console_errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "net::ERR" in line]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium browser here (apt-get install chromium)")
def test_report_in_headless_chromium(report, tmp_path: Path) -> None:
    path, rows = report
    dom, stderr = _chromium(path.as_uri(), "--dump-dom")
    assert _console_errors(stderr) == []
    for r in rows:
        assert f'id="summary-{r.index}"' in dom and f"<h2>Row {r.index}</h2>" in dom
    assert "<h2>Summary</h2>" in dom and dom.count("<svg") == len(rows) + 1
    pictures = re.findall(r'<svg[^>]*aria-label="reason over.*?</svg>', dom, re.DOTALL)
    assert len(pictures) == len(rows) and all('class="s"' in svg and 'class="i"' in svg for svg in pictures)
    # the detector sees a console error when there is one
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><script>console.error("boom")</script></body></html>')
    assert _console_errors(_chromium(bad.as_uri(), "--dump-dom")[1])
    # what a person sees: the first section's plot is drawn (the sufficient reason's blue)
    _assert_drawn(_screenshot(path, tmp_path / "report.png", 1800))


def _screenshot(page: Path, shot: Path, height: int) -> Path:
    _chromium(page.as_uri(), f"--screenshot={shot}", f"--window-size=1100,{height}", "--hide-scrollbars")
    return shot


def _assert_drawn(shot: Path) -> None:
    """What a person sees: a page, not a blank, with the reasons' blue bands drawn."""
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3).astype(int)
    assert pixels.std() > 10  # not blank
    blue = np.abs(pixels - np.array([147, 172, 208])).max(axis=1) < 20  # #4c72b0 at opacity .55 on white
    assert blue.sum() > 500


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium browser here (apt-get install chromium)")
def test_a_30_feature_report_in_chromium_within_its_size_budget(tmp_path: Path) -> None:
    """Breast cancer (30 features, 100 trees of depth 6), rows explained in two processes: every
    section renders in Chromium with the instance's 30 values, the inflated reason's conditions
    and its picture, and a detailed row costs at most 30 KB."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier

    data = load_breast_cancer()
    names = list(data.feature_names)
    model = RandomForestClassifier(n_estimators=100, max_depth=6, random_state=0)
    model.fit(data.data, data.target_names[data.target])
    rows = data.data[[1, 3]]
    path = tmp_path / "breast_cancer.html"
    reports = rx.Explainer(model, engine="sat", feature_names=names).report(rows, path, n_jobs=2, progress=False)
    assert all(r.error is None and r.verified for r in reports)
    sections = re.findall(r"<details.*?</details>", path.read_text(), re.DOTALL)
    assert len(sections) == len(rows) and max(len(s.encode()) for s in sections) <= 30_000
    dom, stderr = _chromium(path.as_uri(), "--dump-dom")
    assert _console_errors(stderr) == []
    for heading in ("Summary per class", "Features in the reasons", "Summary", "Rows", "Glossary"):
        assert f"<h2>{heading}</h2>" in dom
    for r, x in zip(reports, rows):
        start = dom.index(f'<details id="row-{r.index}"')
        section = dom[start : dom.index("</details>", start)]
        for name, value in zip(names, x):
            shown = np.format_float_positional(np.float32(value), unique=True, trim="-")
            assert re.search(rf'<dt( class="r")?>{re.escape(name)}</dt><dd>{re.escape(shown)}</dd>', section)
        assert (
            "Why: sufficient reason (inflated)" in section
            and len(r.conditions) == r.sizes["inflated_sufficient_reason"]
        )
        assert all(f"<li>{html.escape(c)}</li>" in section for c in r.conditions)
        assert section.count('aria-label="reason over') == 1
    _assert_drawn(_screenshot(path, tmp_path / "breast_cancer.png", 2600))


@pytest.mark.slow
def test_a_pipeline_report_in_its_original_columns(tmp_path: Path) -> None:
    """A pipeline's report explains rows of its original columns (matched by name), with
    categorical values by name; the second engine explains the same forest, immutable features
    held, so it agrees; ``rfexplain report pipe.joblib --input rows.csv`` does the same."""
    import joblib

    from rfexplain.pipeline_demo import loans_pipeline

    pipeline, X_test, _ = loans_pipeline(trees=3, depth=3)
    explainer = rx.Explainer(pipeline, engine="sat", immutable=["age"])
    rows = X_test.head(4)
    path = tmp_path / "r.html"
    reports = explainer.report(rows[rows.columns[::-1]], path, compare_engine="oracle")
    assert [r.prediction for r in reports] == list(pipeline.predict(rows))
    assert [r.sklearn_prediction for r in reports] == list(pipeline.predict(rows))
    assert all(r.error is None and r.verified and r.agreement and "agrees" in r.agreement for r in reports)
    text = path.read_text()
    assert text.count("<svg") == 4 + 1 and " in {" in text  # a categorical literal, by category name
    model_path, csv, out = tmp_path / "pipe.joblib", tmp_path / "rows.csv", tmp_path / "out.html"
    joblib.dump(pipeline, model_path)
    rows.head(3).to_csv(csv, index=False)
    assert main(["report", str(model_path), "--input", str(csv), "--out", str(out)]) == 0
    assert out.read_text().count('<tr id="summary-') == 3
