"""Regenerates the HTML report's screenshots in ``docs/images/``: ``python docs/report_screenshots.py``.

Three reports, each taken in headless Chromium (``apt-get install chromium``) as a person opens
it, the first row's section open: iris (a forest of 20 trees of depth 4), the shipped loans
pipeline (its original columns, categorical ones by name) and scikit-learn's breast cancer data
(30 features, 100 trees of depth 6, the rows explained in two processes).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"


def _screenshot(page: Path, shot: Path, height: int) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium here: apt-get install chromium")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={profile}",
                f"--screenshot={shot}",
                f"--window-size=1100,{height}",
                "--hide-scrollbars",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
    print(f"wrote {shot.relative_to(ROOT)}", file=sys.stderr)


def main() -> None:
    import warnings

    from sklearn.datasets import load_breast_cancer, load_iris
    from sklearn.ensemble import RandomForestClassifier

    import rfexplain as rx
    from rfexplain.pipeline_demo import loans_pipeline

    warnings.simplefilter("ignore")
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        iris = load_iris()
        model = RandomForestClassifier(n_estimators=20, max_depth=4, random_state=0)
        model.fit(iris.data, iris.target_names[iris.target])
        explainer = rx.Explainer(model, engine="sat", feature_names=list(iris.feature_names))
        explainer.report(iris.data[[70, 60, 120, 0, 133]], out / "iris.html", indices=[70, 60, 120, 0, 133])
        _screenshot(out / "iris.html", IMAGES / "report_iris.png", 2200)

        pipeline, X_test, _ = loans_pipeline()
        rx.Explainer(pipeline, engine="sat").report(X_test.head(5), out / "loans.html")
        _screenshot(out / "loans.html", IMAGES / "report_pipeline.png", 2200)

        cancer = load_breast_cancer()
        model = RandomForestClassifier(n_estimators=100, max_depth=6, random_state=0)
        model.fit(cancer.data, cancer.target_names[cancer.target])
        explainer = rx.Explainer(model, engine="sat", feature_names=list(cancer.feature_names))
        explainer.report(cancer.data[[1, 3, 7]], out / "breast_cancer.html", indices=[1, 3, 7], n_jobs=2)
        _screenshot(out / "breast_cancer.html", IMAGES / "report_breast_cancer.png", 2600)


if __name__ == "__main__":
    main()
