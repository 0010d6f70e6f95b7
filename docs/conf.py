"""Sphinx configuration: MyST markdown pages and executed notebooks (myst-nb).

Build: pip install -e ".[docs]" && python tools/gen_op_docs.py && sphinx-build -b html docs docs/_build
"""
project = "dmlsim"
author = "dmlsim developers"
extensions = ["myst_nb", "sphinx.ext.autodoc"]
nb_execution_mode = "auto"
nb_execution_timeout = 300
# A notebook cell that raises fails the build (myst-nb would otherwise only warn).
nb_execution_raise_on_error = True
exclude_patterns = ["_build"]
html_theme = "alabaster"
myst_heading_anchors = 3

# The notebooks live at the top level (notebooks/); copy them in so Sphinx can execute them.
import pathlib
import shutil

_here = pathlib.Path(__file__).resolve().parent
shutil.copytree(_here.parent / "notebooks", _here / "notebooks", dirs_exist_ok=True)
