"""What a CPU program of a CONVOLUTION asks of XLA (``OperatorDef.cpu_compiler_options`` and
``cpu_stored_inputs``)."""
from __future__ import annotations

import numpy as np

from ._conv import FORWARD


# XLA's CPU backend hands convolutions to YNNPACK by default (its library fusions are
# INDIVIDUAL_DOT, REDUCE and INDIVIDUAL_CONVOLUTION), which runs each on a single thread; XLA's
# own (Eigen) convolutions use every core and win on large ones. A CPU program with a
# convolution of at least EIGEN_MACS products keeps the other two library fusions and drops
# the convolutions': the same float32 products, summed in the library's order either way. On
# the 2-core CPU, the same model in one process with and without (median of 21 runs each):
# resnet18 b8 (convolutions of 0.9 G products) 0.76x the time; PaddleOCR det (0.4 G at most)
# 1.05x, rec 0.94x and cls 1.02x, within that measure's noise (about 5%), so the threshold
# leaves them with YNNPACK's.
EIGEN_MACS = 1 << 29
CPU_OPTIONS = {"xla_cpu_experimental_ynn_fusion_type":
               "LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT,LIBRARY_FUSION_TYPE_REDUCE"}


def cpu_options(spec) -> dict | None:
    """CPU_OPTIONS for a CONVOLUTION of at least EIGEN_MACS products (``spec`` an OpSpec):
    each output element sums C/G x prod(k) products FORWARD, each input element spreads M/G x
    prod(k) BACKWARD; None otherwise."""
    t = spec.tensor
    w = t["FilterTensor"].sizes
    each = t["InputTensor" if spec.attr["Direction"] != FORWARD else "OutputTensor"].count
    return CPU_OPTIONS if each * int(np.prod(w[1:])) >= EIGEN_MACS else None


def cpu_stored(spec) -> tuple:
    """("InputTensor",): a CPU program stores a convolution's input before the convolution
    reads it (``OperatorDef.cpu_stored_inputs``). The convolution pads, transposes or hands its
    input to a library, and XLA's CPU backend otherwise runs the producer's whole element-wise
    chain (a HardSwish with its correctly rounded division) inside that loop: in a padding loop
    element by element (PaddleOCR rec's 14 depthwise pads took 23 of its 52 ms). Stored first,
    the chain runs vectorized. In one process, alternating, same bits: depthwise inputs alone
    made rec 0.79x the time, cls 0.84x, det 0.90x; every convolution's input (once the stored
    result passed through a conditional) rec 0.77x and det 0.89-0.91x more, cls and resnet18
    unchanged."""
    return ("InputTensor",)
