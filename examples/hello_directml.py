"""HelloDirectML, ported line by line from microsoft/DirectML's Samples/HelloDirectML to dmlsim.

The program is ``dmlsim/examples/hello_directml.py``, installed with the package so that
``dmlsim hello`` runs it from any install; this script runs it from a checkout:

    python examples/hello_directml.py [--debug]
"""
import sys

from dmlsim.examples.hello_directml import main  # noqa: F401 (main: what callers import)

if __name__ == "__main__":
    main(debug="--debug" in sys.argv)
