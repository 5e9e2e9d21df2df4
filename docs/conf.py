"""Sphinx configuration of tkperf's documentation site.

Build it (warnings are errors, as in CI)::

    sphinx-build -W -b html docs build/docs-html
"""
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

from tkperf import __version__  # noqa: E402

project = "tkperf"
author = "the tkperf developers"
copyright = "the tkperf developers, GPL-3.0-or-later"
version = release = __version__
extensions = ["sphinx.ext.autodoc"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_title = f"tkperf {__version__}"
html_show_sourcelink = False
autodoc_member_order = "bysource"
