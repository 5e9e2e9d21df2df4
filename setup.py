"""Build shim: pyproject.toml holds the project's metadata; this file adds
one build step, copying the documents of ``docs/`` into the package
(``tkperf/help/``) so that an installed tkperf can show them
(``tkperf help TOPIC``), and lets older tooling call ``setup.py``."""
import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithDocs(build_py):
    """build_py, then docs/*.rst into the built package's help/ folder."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "tkperf", "help")
        os.makedirs(target, exist_ok=True)
        for path in sorted(glob.glob(os.path.join(HERE, "docs", "*.rst"))):
            shutil.copy2(path, os.path.join(target, os.path.basename(path)))


setup(cmdclass={"build_py": BuildWithDocs})
