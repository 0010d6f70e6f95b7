"""Each rule the data-movement, indexing, generation and reduction pages state, broken once:
CreateOperator answers E_INVALIDARG with exactly this message (the operator, the field, the
value given and what the page allows), and the device stays usable (not removed).

Each row is (operator, desc fields as ``dmlsim.operator_desc`` takes them, the message). A
reader can check every row against the operator's page in ``shared/spec/docs``.
"""

from __future__ import annotations

import numpy as np
import pytest

import dmlsim as dml

f32, i32, u32, i64 = np.float32, np.int32, np.uint32, np.int64


def z(*shape, dt=f32):
    return np.zeros(shape, dt)


X44 = z(1, 1, 4, 4)
ROWS = [
    # ---- layout and copies
    (
        "CAST",
        dict(InputTensor=z(2, 3), OutputTensor=z(3, 2)),
        "OutputTensor.Sizes is [3,2] but InputTensor gives [2,3]",
    ),
    (
        "SLICE",
        dict(
            InputTensor=X44,
            OutputTensor=z(1, 1, 2, 2),
            Offsets=[0, 0, 3, 0],
            Sizes=[1, 1, 2, 2],
            Strides=[1] * 4,
        ),
        "the window of dimension 2 is [3, 5), past InputTensor.Sizes[2] = 4; out-of-bounds reads "
        "are not permitted",
    ),
    (
        "SLICE",
        dict(
            InputTensor=X44,
            OutputTensor=z(1, 1, 2),
            Offsets=[0, 0, 0],
            Sizes=[1, 1, 2],
            Strides=[1, 1, 1],
        ),
        "DimensionCount is 3 but InputTensor.DimensionCount is 4; they must match",
    ),
    (
        "SLICE1",
        dict(
            InputTensor=X44,
            OutputTensor=X44,
            InputWindowOffsets=[0] * 4,
            InputWindowSizes=[1, 1, 4, 4],
            InputWindowStrides=[1, 1, 0, 1],
        ),
        "the stride of dimension 2 is 0; strides may not be 0",
    ),
    (
        "SLICE1",
        dict(
            InputTensor=X44,
            OutputTensor=z(1, 1, 3, 4),
            InputWindowOffsets=[0] * 4,
            InputWindowSizes=[1, 1, 4, 4],
            InputWindowStrides=[1, 1, 2, 1],
        ),
        "dimension 2 copies 3 elements, but the window of size 4 with stride 2 holds at most 2",
    ),
    (
        "SLICE_GRAD",
        dict(
            InputGradientTensor=z(1, 2),
            OutputGradientTensor=z(1, 1),
            InputWindowOffsets=[0, 0],
            InputWindowSizes=[1, 2],
            InputWindowStrides=[1, 1],
        ),
        "the window of dimension 1 is [0, 2), past OutputGradientTensor.Sizes[1] = 1; "
        "out-of-bounds reads are not permitted",
    ),
    (
        "JOIN",
        dict(InputTensors=[z(2, 3), z(3, 3)], OutputTensor=z(2, 6), Axis=1),
        "InputTensors[1].Sizes [3, 3] differs from InputTensors[0].Sizes [2, 3] in dimension 0, "
        "which is not the axis 1",
    ),
    (
        "JOIN",
        dict(InputTensors=[z(2, 3), z(2, 3)], OutputTensor=z(2, 6), Axis=2),
        "Axis is 2; it must be in [0, OutputTensor.DimensionCount - 1] = [0, 1]",
    ),
    (
        "SPLIT",
        dict(InputTensor=z(2, 5), OutputTensors=[z(2, 2), z(2, 2)], Axis=1),
        "the OutputTensors' sizes along Axis 1 sum to 4 but InputTensor.Sizes[1] is 5",
    ),
    (
        "PADDING",
        dict(
            InputTensor=z(2, 2),
            OutputTensor=z(2, 2),
            PaddingMode=5,
            PaddingValue=0.0,
            StartPadding=[0, 0],
            EndPadding=[0, 0],
        ),
        "PaddingMode is 5, which is not a DML_PADDING_MODE (0 CONSTANT, 1 EDGE, 2 REFLECTION, "
        "3 SYMMETRIC, 4 WRAP)",
    ),
    (
        "PADDING",
        dict(
            InputTensor=z(2, 2),
            OutputTensor=z(3, 3),
            PaddingMode=0,
            PaddingValue=0.0,
            StartPadding=[1, 0],
            EndPadding=[0, 0],
        ),
        "OutputTensor.Sizes is [3,3] but InputTensor, StartPadding and EndPadding give [3,2]",
    ),
    (
        "TILE",
        dict(InputTensor=z(2, 2), OutputTensor=z(2, 2), Repeats=[1, 0]),
        "Repeats[1] is 0; values must be larger than 0",
    ),
    (
        "SPACE_TO_DEPTH",
        dict(InputTensor=z(1, 1, 3, 4), OutputTensor=z(1, 4, 1, 2), BlockSize=2),
        "InputTensor's Height 3 and Width 4 must be multiples of BlockSize 2",
    ),
    (
        "DEPTH_TO_SPACE",
        dict(InputTensor=z(1, 6, 2, 2), OutputTensor=z(1, 1, 4, 4), BlockSize=2),
        "InputTensor's channel count 6 must be a multiple of BlockSize^2 = 4",
    ),
    (
        "DEPTH_TO_SPACE1",
        dict(InputTensor=z(1, 4, 2, 2), OutputTensor=z(1, 1, 4, 4), BlockSize=2, Order=2),
        "Order is 2, which is not a DML_DEPTH_SPACE_ORDER (0 DEPTH_COLUMN_ROW, 1 COLUMN_ROW_DEPTH)",
    ),
    (
        "VALUE_SCALE_2D",
        dict(InputTensor=z(1, 3, 2, 2), Scale=1.0, ChannelCount=3, Bias=[0, 0]),
        "ChannelCount is 3 but Bias has 2 entries",
    ),
    # ---- indexing
    (
        "GATHER",
        dict(
            InputTensor=z(3, 4),
            OutputTensor=z(3, 4),
            IndicesTensor=z(1, 2, dt=i32),
            Axis=2,
            IndexDimensions=2,
        ),
        "Axis is 2; it must be in [0, InputTensor.DimensionCount - 1] = [0, 1]",
    ),
    (
        "GATHER_ELEMENTS",
        dict(InputTensor=z(3, 4), IndicesTensor=z(2, 3, dt=i32), OutputTensor=z(2, 3), Axis=0),
        "IndicesTensor.Sizes [2, 3] must match InputTensor.Sizes [3, 4] in every dimension but "
        "Axis 0",
    ),
    (
        "GATHER_ND1",
        dict(
            InputTensor=z(2, 3),
            IndicesTensor=z(3, 1, dt=i32),
            OutputTensor=z(3),
            InputDimensionCount=2,
            IndicesDimensionCount=2,
            BatchDimensionCount=1,
        ),
        "the batch sizes differ: InputTensor [2], IndicesTensor [3]",
    ),
    (
        "SCATTER_ELEMENTS",
        dict(
            InputTensor=z(3, 4),
            IndicesTensor=z(2, 5, dt=i32),
            UpdatesTensor=z(2, 5),
            OutputTensor=z(3, 4),
            Axis=0,
        ),
        "IndicesTensor.Sizes [2, 5] exceeds InputTensor.Sizes [3, 4] in dimension 1, which is not "
        "Axis 0",
    ),
    (
        "ONE_HOT",
        dict(IndicesTensor=z(1, 3, dt=u32), ValuesTensor=z(1, 1), OutputTensor=z(1, 3, 4), Axis=1),
        "IndicesTensor.Sizes[1] (Axis) is 3; it must be 1",
    ),
    (
        "REVERSE_SUBSEQUENCES",
        dict(
            InputTensor=z(2, 3), SequenceLengthsTensor=z(2, 2, dt=u32), OutputTensor=z(2, 3), Axis=1
        ),
        "SequenceLengthsTensor.Sizes is [2, 2]; it must be InputTensor's with 1 along Axis: [2, 1]",
    ),
    # ---- generation
    (
        "FILL_VALUE_SEQUENCE",
        dict(
            OutputTensor=z(4),
            ValueDataType=dml.DML_TENSOR_DATA_TYPE_INT32,
            ValueStart=dml.DML_SCALAR_UNION(Int32=0),
            ValueDelta=dml.DML_SCALAR_UNION(Int32=1),
        ),
        "ValueDataType is DML_TENSOR_DATA_TYPE_INT32 but OutputTensor.DataType is "
        "DML_TENSOR_DATA_TYPE_FLOAT32; they must match",
    ),
    (
        "RANDOM_GENERATOR",
        dict(InputStateTensor=z(5, dt=u32), OutputTensor=z(4, dt=u32), Type=0),
        "InputStateTensor.Sizes is [5]; the PHILOX_4X32_10 state is 6 UINT32 values, Sizes "
        "[1, ..., 1, 6]",
    ),
    # ---- reductions and ordering
    (
        "REDUCE",
        dict(
            InputTensor=z(2, 3),
            OutputTensor=z(2, 1),
            Function=dml.DML_REDUCE_FUNCTION_SUM,
            Axes=[2],
        ),
        "Axes[0] is 2; values must be in [0, InputTensor.DimensionCount - 1] = [0, 1]",
    ),
    (
        "REDUCE",
        dict(
            InputTensor=z(2, 3),
            OutputTensor=z(2, 1),
            Function=dml.DML_REDUCE_FUNCTION_SUM,
            Axes=[1, 1],
        ),
        "Axes [1, 1] lists an axis twice",
    ),
    (
        "REDUCE",
        dict(
            InputTensor=z(2, 3),
            OutputTensor=z(2, 1, dt=i32),
            Function=dml.DML_REDUCE_FUNCTION_MAX,
            Axes=[1],
        ),
        "OutputTensor.DataType must match InputTensor.DataType except for ARGMAX and ARGMIN",
    ),
    (
        "REDUCE",
        dict(
            InputTensor=z(2, 3),
            OutputTensor=z(2, 3),
            Function=dml.DML_REDUCE_FUNCTION_SUM,
            Axes=[1],
        ),
        "OutputTensor.Sizes is [2,3] but InputTensor and Axes give [2,1]",
    ),
    (
        "ARGMAX",
        dict(InputTensor=z(2, 3), OutputTensor=z(1, 3, dt=u32), Axes=[0], AxisDirection=2),
        "AxisDirection is 2, which is not a DML_AXIS_DIRECTION (0 INCREASING, 1 DECREASING)",
    ),
    (
        "ARGMIN",
        dict(InputTensor=z(2, 3), OutputTensor=z(1, 3, dt=u32), Axes=[], AxisDirection=0),
        "AxisCount is 0; at least one axis in [0, 1] is required",
    ),
    (
        "TOP_K",
        dict(
            InputTensor=z(1, 4),
            OutputValueTensor=z(1, 4),
            OutputIndexTensor=z(1, 4, dt=u32),
            Axis=1,
            K=4,
        ),
        "K is 4; it must be greater than 0 and less than InputTensor.Sizes[1] = 4",
    ),
    (
        "TOP_K1",
        dict(
            InputTensor=z(1, 4),
            OutputValueTensor=z(1, 1),
            OutputIndexTensor=z(1, 1, dt=u32),
            Axis=1,
            K=0,
            AxisDirection=0,
        ),
        "K is 0; it must be greater than 0 and less than InputTensor.Sizes[1] = 4",
    ),
    (
        "TOP_K",
        dict(
            InputTensor=z(1, 4),
            OutputValueTensor=z(1, 2),
            OutputIndexTensor=z(1, 3, dt=u32),
            Axis=1,
            K=2,
        ),
        "OutputIndexTensor.Sizes is [1,3] but InputTensor, Axis and K give [1,2]",
    ),
    (
        "CUMULATIVE_SUMMATION",
        dict(InputTensor=z(2, 3), OutputTensor=z(2, 3), Axis=2, AxisDirection=0, HasExclusiveSum=0),
        "Axis is 2; it must be in [0, InputTensor.DimensionCount - 1] = [0, 1]",
    ),
    (
        "CUMULATIVE_PRODUCT",
        dict(
            InputTensor=z(2, 3),
            OutputTensor=z(2, 3, dt=i32),
            Axis=0,
            AxisDirection=0,
            HasExclusiveProduct=0,
        ),
        "OutputTensor.DataType is DML_TENSOR_DATA_TYPE_INT32 but InputTensor.DataType is "
        "DML_TENSOR_DATA_TYPE_FLOAT32; they must match",
    ),
]


@pytest.fixture(scope="module")
def device():
    d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
    return dml.DMLCreateDevice(d3d, dml.DML_CREATE_DEVICE_FLAG_NONE)


@pytest.mark.parametrize("op,fields,message", ROWS, ids=[f"{r[0]}-{i}" for i, r in enumerate(ROWS)])
def test_page_rule_broken_once(device, op, fields, message):
    desc = dml.operator_desc(op, **fields)
    with pytest.raises(dml.HResultError) as info:
        device.CreateOperator(desc)
    assert info.value.hresult == dml.E_INVALIDARG
    assert info.value.message == f"DML_OPERATOR_{op}: {message}"
    assert device.GetDeviceRemovedReason() == dml.S_OK


def test_every_data_operator_has_a_broken_rule():
    named = {r[0] for r in ROWS}
    issue9 = {
        "CAST",
        "SLICE",
        "SLICE1",
        "SLICE_GRAD",
        "JOIN",
        "SPLIT",
        "PADDING",
        "TILE",
        "SPACE_TO_DEPTH",
        "DEPTH_TO_SPACE",
        "DEPTH_TO_SPACE1",
        "VALUE_SCALE_2D",
        "GATHER",
        "GATHER_ELEMENTS",
        "GATHER_ND1",
        "SCATTER_ELEMENTS",
        "ONE_HOT",
        "REVERSE_SUBSEQUENCES",
        "FILL_VALUE_SEQUENCE",
        "RANDOM_GENERATOR",
        "REDUCE",
        "ARGMAX",
        "ARGMIN",
        "TOP_K",
        "TOP_K1",
        "CUMULATIVE_SUMMATION",
        "CUMULATIVE_PRODUCT",
    }
    assert issue9 <= named


def test_padding_wrap_is_accepted_from_feature_level_6_4():
    """The feature-level history's 6_4 entry: PADDING and PADDING1 accept DML_PADDING_MODE_WRAP;
    at 6_3 it is E_INVALIDARG naming the level (the old rule stays before 6_4)."""
    from helpers import feature_level
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for op, extra in (("PADDING", {}), ("PADDING1", {
            "PaddingValueDataType": dml.DML_TENSOR_DATA_TYPE_FLOAT32})):
        desc = dml.operator_desc(op, InputTensor=x, OutputTensor=np.zeros((2, 7), np.float32),
                                 PaddingMode=dml.DML_PADDING_MODE_WRAP, StartPadding=[0, 2],
                                 EndPadding=[0, 2], **extra)
        np.testing.assert_array_equal(dml.run(desc, x), np.pad(x, [(0, 0), (2, 2)], "wrap"))
        with feature_level("6_3"):
            d3d = dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0)
            dev = dml.DMLCreateDevice(d3d, 0)
        with pytest.raises(dml.HResultError) as e:
            dev.CreateOperator(desc)
        assert e.value.hresult == dml.E_INVALIDARG and \
            "DML_PADDING_MODE_WRAP, accepted from DML_FEATURE_LEVEL_6_4" in e.value.message
