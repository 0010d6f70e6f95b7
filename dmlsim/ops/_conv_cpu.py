"""What a CPU program of a CONVOLUTION asks of XLA (``OperatorDef.cpu_compiler_options`` and
``cpu_stored_inputs``)."""
from __future__ import annotations

import numpy as np

from ._conv import FORWARD
from ._conv_forms import depthwise_form


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


def cpu_stored(spec) -> dict:
    """{"InputTensor": order}: a CPU program stores a convolution's input before the
    convolution reads it (``OperatorDef.cpu_stored_inputs``), channels last when XLA runs it
    (:func:`stored_order`), and its filter then in FILTER_ORDER. The convolution pads,
    transposes or hands its input to a library, and XLA's CPU backend otherwise runs the
    producer's whole element-wise chain (a HardSwish with its correctly rounded division)
    inside that loop: in a padding loop element by element (PaddleOCR rec's 14 depthwise pads
    took 23 of its 52 ms). Stored first, the chain runs vectorized. In one process,
    alternating, same bits: depthwise inputs alone made rec 0.79x the time, cls 0.84x, det
    0.90x; every convolution's input (once the stored result passed through a conditional)
    rec 0.77x and det 0.89-0.91x more, cls and resnet18 unchanged."""
    order = stored_order(spec)
    return {"InputTensor": order} if order is None else \
        {"InputTensor": order, "FilterTensor": FILTER_ORDER}


# the filter of a convolution XLA runs, as its CPU convolutions read it (OIHW -> HWIO): an
# OWNED_BY_DML filter's typed copy is made so once (typed_views.py) instead of transposed at
# every run (resnet18 b8: its 17 filters, 11.7 M weights, 47 thread-ms of a 240 ms run;
# 0.89-0.92x the time, alternating in one process, the same bits)
FILTER_ORDER = (2, 3, 1, 0)


def stored_order(spec) -> tuple | None:
    """Channels last, (0, 2, 3, 1), for a FORWARD 2-D convolution that XLA's CPU backend runs
    as a convolution (not a depthwise tap walk, not a 1x1 product over channels): its
    convolutions read NHWC, and an input stored NCHW was transposed before each of them
    (resnet18 b8: 16 transposes of up to 8 x 64 x 56 x 56 a run). Stored channels last, the
    producer's epilogue writes that layout and the convolution reads it as it is: resnet18
    0.84-0.85x the time in one process, alternating, det 0.87x, the same bits. Channels last
    before every convolution, the 1x1 and depthwise ones too, made PaddleOCR's models 1.4-2.4x
    slower (those read NCHW). None otherwise (stored as the desc has it)."""
    t = spec.tensor
    w = t["FilterTensor"].sizes
    if spec.attr["Direction"] != FORWARD or spec.attr["DimensionCount"] != 2 or len(w) != 4 or \
            all(k == 1 for k in w[2:]) or \
            depthwise_form(FORWARD, spec.attr["GroupCount"], t["InputTensor"].sizes[1], w):
        return None
    return (0, 2, 3, 1)
