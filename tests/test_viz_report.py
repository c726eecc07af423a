"""The HTML report: well-formed, every row present, nothing external, and seen in a real browser."""

from __future__ import annotations

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
from tests.viz_helpers import MODEL, NAMES, X

ROWS = X[::25]  # 6 rows
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


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
    summary_rows = root.findall(".//{*}tbody/{*}tr") or root.findall(".//tbody/tr")
    assert [r.get("id") for r in summary_rows] == [f"summary-{10 * k}" for k in range(len(ROWS))]
    parser = _Collect()
    parser.feed(text)
    assert not [u for u in parser.urls if not u.startswith("#")]
    assert "<script" not in text and not re.search(r"(src|href)\s*=\s*[\"']?https?:", text)
    assert parser.tags.count("details") == len(ROWS) and parser.tags.count("svg") == len(ROWS)
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


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium browser here (apt-get install chromium)")
def test_report_in_headless_chromium(report, tmp_path: Path) -> None:
    from PIL import Image

    path, rows = report
    dom, stderr = _chromium(path.as_uri(), "--dump-dom")
    assert _console_errors(stderr) == []
    for r in rows:
        assert f'id="summary-{r.index}"' in dom and f"<h2>Row {r.index}</h2>" in dom
    assert "<h2>Summary</h2>" in dom and dom.count("<svg") == len(rows)
    assert all(len(svg) > 2000 for svg in re.findall(r"<svg.*?</svg>", dom, re.DOTALL))
    # the detector sees a console error when there is one
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><script>console.error("boom")</script></body></html>')
    assert _console_errors(_chromium(bad.as_uri(), "--dump-dom")[1])
    # what a person sees: the first section's plot is drawn (the sufficient reason's blue)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    _chromium(path.as_uri(), f"--screenshot={shot}", "--window-size=1100,1400", "--hide-scrollbars")
    print(f"screenshot: {shot}")
    pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3).astype(int)
    assert pixels.std() > 10  # not blank
    blue = np.abs(pixels - np.array([147, 172, 208])).max(axis=1) < 20  # #4c72b0 at alpha .55 on white
    assert blue.sum() > 500


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
    assert text.count("<svg") == 4 and " in {" in text  # a categorical literal, by category name
    model_path, csv, out = tmp_path / "pipe.joblib", tmp_path / "rows.csv", tmp_path / "out.html"
    joblib.dump(pipeline, model_path)
    rows.head(3).to_csv(csv, index=False)
    assert main(["report", str(model_path), "--input", str(csv), "--out", str(out)]) == 0
    assert out.read_text().count('<tr id="summary-') == 3
