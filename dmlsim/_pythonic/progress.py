"""Progress for the long steps of a large model, on a terminal: lowering its nodes and the
first run, which compiles its program (``tqdm``, on standard error).

Shown only where standard error is a terminal (tqdm's own test), for models of at least
``LARGE`` nodes, and never with ``DMLSIM_PROGRESS=0``; notebooks, logs and tests see nothing.
"""
from __future__ import annotations

import contextlib
import os
import sys

from tqdm import tqdm

LARGE = 200
"""Nodes from which lowering and the first run show progress."""


def _off(count: int) -> bool | None:
    """tqdm's ``disable``: True to hide, None to let tqdm show it on a terminal only."""
    if os.environ.get("DMLSIM_PROGRESS", "1") == "0" or count < LARGE:
        return True
    return None


def nodes(items: list, what: str):
    """``items`` (a model's nodes), iterated with a bar "dmlsim: <what>" when large."""
    return tqdm(items, desc=f"dmlsim: {what}", unit="node", leave=False, file=sys.stderr,
                disable=_off(len(items)), dynamic_ncols=True)


@contextlib.contextmanager
def stage(what: str, count: int):
    """One line, "dmlsim: <what> (N nodes)", while a long single step (an XLA compilation)
    runs, then its time."""
    with tqdm(total=1, desc=f"dmlsim: {what} ({count} nodes)", file=sys.stderr, leave=False,
              bar_format="{desc}: {elapsed}", disable=_off(count)) as bar:
        yield
        bar.update(1)
