"""``dmlsim.dmlx``: DirectMLX (DirectML's header-only graph helper), name for name.

::

    import dmlsim as dml
    from dmlsim import dmlx
    graph = dmlx.Graph(device)                       # device: an IDMLDevice
    x = dmlx.InputTensor(graph, 0, dmlx.TensorDesc(dml.DML_TENSOR_DATA_TYPE_FLOAT32, [1, 2, 3, 4]))
    y = dmlx.Sqrt(x) * 2.0 + 1.0
    op = graph.Compile(dml.DML_EXECUTION_FLAG_NONE, [y])   # an IDMLCompiledOperator
    run = graph.compile([y]); out = run(x_array)           # or the NumPy convenience

Every operator dmlsim implements has a function named as DirectMLX names it (``Add``,
``ActivationRelu``, ``Convolution``, ``TopK``, ...): DirectMLX's signature and defaults
where DirectMLX wraps the operator, otherwise inputs then attributes (DML field names).
Each call creates its IDMLOperator, so mistakes are raised there as ``dmlx.<Function>: ...``.
"""
from ._pythonic.dmlx_graph import (  # noqa: F401
    Compiled, ConstantData, Expression, Graph, InputTensor, NameScope, Reinterpret,
    TensorDesc, TensorPolicy)
from ._pythonic.dmlx_functions import (  # noqa: F401
    ConvolutionBuilder, FusedActivation, GemmBuilder, MaxPoolingBuilder, all_functions)
from ._pythonic.dmlx_ops import dmlx_name  # noqa: F401

FUNCTIONS = all_functions()
"""Every dmlx operator function by name."""
globals().update(FUNCTIONS)
