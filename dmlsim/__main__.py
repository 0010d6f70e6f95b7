"""``python -m dmlsim``: the ``dmlsim`` command line."""
import sys

from .cli import main

sys.exit(main())
