"""The benchmarks' shared rig still drives the public API (the benchmarks themselves are not
part of the suite; this catches a public name they use going missing)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from _rig import Rig  # noqa: E402


def test_rig_compiles_binds_executes_and_reads_back():
    rig = Rig(heap_size=64)
    c = rig.compile("ELEMENT_WISE_ADD", [4])
    a, o = rig.buffer(16), rig.buffer(16)
    rig.upload(a, np.float32([1, 2, 3, 4]))
    cl = rig.command_list()
    rig.recorder.RecordDispatch(cl, c, rig.table(c, [a, a], [o]))
    cl.Close()
    rig.execute_times(cl, 2)
    assert rig.download(o).tolist() == [2, 4, 6, 8]
