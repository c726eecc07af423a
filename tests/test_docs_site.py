"""The documentation site builds with warnings as errors, and holds its gallery and API pages.

``bash docs/site/build.sh OUT`` (Sphinx, numpydoc, sphinx-gallery, myst-parser: the ``docs``
extra) builds the site into a scratch folder; the test then checks that every example of the
gallery ran and drew its pictures, that every name of ``rfexplain.__all__`` has an API page, and
that the user guide's pages are there. Skipped where the ``docs`` extra is not installed. Marked
slow: the build executes the gallery's examples (about a minute and a half here).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rfexplain

REPO = Path(__file__).resolve().parents[1]
SITE = REPO / "docs" / "site"
EXAMPLES = sorted((SITE / "examples").glob("plot_*.py"))
DOCS_EXTRA = ("sphinx", "numpydoc", "sphinx_gallery", "myst_parser", "pydata_sphinx_theme", "matplotlib")
GUIDE = ("install", "explanations", "engines", "pipelines", "batches", "cli", "benchmarks")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = [name for name in DOCS_EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"the docs extra is not installed (pip install -e '.[docs]'): no {', '.join(missing)}")
    out = tmp_path_factory.mktemp("site") / "html"
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(
        ["bash", str(SITE / "build.sh"), str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"the site's build failed:\n{done.stdout[-6000:]}\n{done.stderr[-6000:]}"
    return out


def test_the_gallery_ran_every_example_and_drew_its_pictures(site: Path) -> None:
    assert len(EXAMPLES) >= 5
    for example in EXAMPLES:
        page = site / "generated" / "gallery" / f"{example.stem}.html"
        assert page.is_file(), f"no gallery page for {example.name}"
        images = sorted((site / "_images").glob(f"sphx_glr_{example.stem}_*.png"))
        pictures = [image for image in images if "_thumb" not in image.name]
        assert pictures, f"{example.name} drew no picture"
        assert all(image.stat().st_size > 2000 for image in pictures), f"an empty picture for {example.name}"
        assert any(image.name in page.read_text() for image in pictures)


def test_every_public_name_has_an_api_page(site: Path) -> None:
    api = site / "generated" / "api"
    for name in rfexplain.__all__:
        assert (api / f"rfexplain.{name}.html").is_file(), f"no API page for rfexplain.{name}"
    for module_name in ("datasets", "viz"):
        module = importlib.import_module(f"rfexplain.{module_name}")
        page = (api / f"rfexplain.{module_name}.html").read_text()
        for name in module.__all__:
            if callable(getattr(module, name)):  # functions and classes: a page each
                assert (api / f"rfexplain.{module_name}.{name}.html").is_file(), f"no page for {module_name}.{name}"
            else:  # constants: on the module's page
                assert f"rfexplain.{module_name}.{name}" in page, f"{module_name}.{name} is not on its module's page"
    explainer = (api / "rfexplain.Explainer.html").read_text()
    assert "explain_many" in explainer and "Parameters" in explainer


def test_the_user_guide_and_the_design_notes_are_there(site: Path) -> None:
    for page in GUIDE:
        assert (site / "guide" / f"{page}.html").is_file(), page
    explanations = (site / "guide" / "explanations.html").read_text()
    assert "subset-minimal" in explanations  # the definitions, from docs/design.md
    assert "rfexplain explain" in (site / "guide" / "cli.html").read_text()
    for note in ("design", "architecture", "decisions", "references"):
        assert (site / "design" / f"{note}.html").is_file(), note
