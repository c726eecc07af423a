"""Sphinx configuration of rfexplain's documentation site (build it with ``bash docs/site/build.sh``).

Sphinx with numpydoc (the docstrings are numpydoc), autosummary (one page per public object) and
sphinx-gallery (the executed examples of ``examples/``), as scikit-learn and SHAP do; myst-parser
reads the design notes of ``docs/*.md`` in place. Everything the build generates in the source
tree goes to ``generated/`` (git-ignored): the API stubs, the gallery's pages and the command
line's help; the site itself goes wherever ``build.sh`` sends it (``_build/html`` by default).
The build runs with warnings as errors.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpydoc.validate
from pygments.lexers.special import TextLexer
from sphinx.highlighting import lexers
from sphinx.util import logging

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))  # the checkout's package, also when it is not installed editable
os.environ.setdefault("MPLBACKEND", "Agg")

import rfexplain  # noqa: E402

project = "rfexplain"
author = "The rfexplain authors"
copyright = "The rfexplain authors, MIT licence"
release = rfexplain.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "generated/gallery/*.ipynb", "examples/README.rst"]
# `code` in docstrings and pages is Python code: a link when it names a documented object, else
# plain code (an unresolved name is no warning: nitpicky mode is off)
default_role = "py:obj"
# the API pages are written under the names of __init__.py (rx.Explainer, not rfexplain.explainer.Explainer)
add_module_names = False

# -- autodoc / autosummary / numpydoc -----------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autosummary_ignore_module_all = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "signature"
# the class pages list their members themselves (templates/autosummary/class.rst)
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# numpydoc's checks of the docstrings' structure, as build warnings (errors under -W): no unknown
# or misordered section, no parameter documented that the signature lacks, none out of its order,
# well-formed parameter lines and return types. (Missing sections and examples are not checked.)
numpydoc_validation_checks = {"GL06", "GL07", "GL09", "GL10", "PR02", "PR03", "PR06", "PR10", "RT02"}


def _source_file_def_line(self):  # noqa: ANN001, ANN202
    """numpydoc's line of an object's ``def``, or None when its source has none (numpydoc 1.11
    raises StopIteration there, e.g. on a module edited while the site builds)."""
    try:
        return _numpydoc_def_line(self)
    except StopIteration:
        return None


_numpydoc_def_line = numpydoc.validate.Validator.source_file_def_line.fget
numpydoc.validate.Validator.source_file_def_line = property(_source_file_def_line)

# -- myst (the design notes of docs/*.md) ---------------------------------------------------------
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
# architecture.md draws its import graph as a mermaid block: shown as text
lexers["mermaid"] = TextLexer()

# -- sphinx-gallery ----------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["generated/gallery"],
    "filename_pattern": r"/plot_",  # every example is executed
    "image_scrapers": ("matplotlib",),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "default_thumb_file": None,
    # an example that raises fails the build
    "only_warn_on_example_error": False,
    "abort_on_example_error": False,
    "show_memory": False,
    "min_reported_time": 1,
    "reset_modules": ("matplotlib",),
    "backreferences_dir": None,
    "doc_module": (),
}

# -- HTML ------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"rfexplain {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}

# -- what the site must cover ----------------------------------------------------------------------
logger = logging.getLogger("rfexplain.docs")


def _write_cli_help(app) -> None:  # noqa: ANN001 (the Sphinx app)
    """Write ``rfexplain --help`` and every subcommand's help to ``generated/cli/*.txt``."""
    from rfexplain.cli import build_parser

    folder = HERE / "generated" / "cli"
    folder.mkdir(parents=True, exist_ok=True)
    parser = build_parser()
    os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal width: fixed, for a stable page
    texts = {"rfexplain": parser.format_help()}
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        for name, sub in action.choices.items():
            texts[name] = sub.format_help()
    for name, text in texts.items():
        path = folder / f"{name}.txt"
        if not path.exists() or path.read_text() != text:  # unchanged files keep Sphinx's cache valid
            path.write_text(text)


def _check_api_coverage(app, env) -> None:  # noqa: ANN001
    """Warn (an error under -W) for a public name of the package that no API page documents."""
    documented: set[str] = set()
    for docname in env.found_docs:
        if docname.startswith("api"):
            text = Path(env.doc2path(docname)).read_text()
            documented.update(line.strip() for line in text.splitlines())
    for name in rfexplain.__all__:
        if name not in documented and f"rfexplain.{name}" not in documented:
            logger.warning(f"rfexplain.{name} is public (rfexplain.__all__) but docs/site/api.rst does not list it")


def setup(app) -> None:  # noqa: ANN001
    app.connect("builder-inited", _write_cli_help)
    app.connect("env-updated", _check_api_coverage)
