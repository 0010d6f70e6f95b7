"""The operator unit (issue 8): field-named kernels checked against the schema, shape rules,
several outputs, tensor arrays, operators without inputs, registry-applied fused
activations, the persistent/temporary hooks, and descs inferred from shape rules."""
from __future__ import annotations

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

import dmlsim as dml
from dmlsim._core import dtypes, registry
from dmlsim._core.registry import Check, Example, KernelContext, OperatorDef, Sizes
from dmlsim._core.tensor import OpSpec, TensorSpec
from dmlsim._schema.operators_generated import OPERATORS

from helpers import (Env, array_binding, assert_bits_equal, binding, example_desc, feature_level,
                     tensor)

ADD = "DML_OPERATOR_ELEMENT_WISE_ADD"
f32 = np.float32


def _ref(ATensor, BTensor, *, ctx):
    return ATensor + BTensor


# ---- parameters are the desc's fields, checked when the module is imported ---------------------

def test_a_misspelt_field_fails_naming_the_module_and_the_field():
    def add(ATensr, BTensor, *, ctx):
        return ATensr + BTensor
    with pytest.raises(TypeError, match=r"test_operator_unit: kernel 'add' of "
                                        r"DML_OPERATOR_ELEMENT_WISE_ADD: parameter 'ATensr' is "
                                        r"not an input tensor field"):
        registry.declare(OperatorDef(ADD, add, _ref, module="test_operator_unit"))


def test_kernel_parameters_must_follow_the_struct_and_name_attributes():
    def swapped(BTensor, ATensor, *, ctx):
        return ATensor
    with pytest.raises(TypeError, match=r"must be the input tensor fields in struct order"):
        registry.declare(OperatorDef(ADD, swapped, _ref))

    def attr(InputTensor, *, ScaleBais, ctx):
        return InputTensor
    with pytest.raises(TypeError, match=r"'ScaleBais' is not a field of "
                                        r"DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC"):
        registry.declare(OperatorDef("DML_OPERATOR_ELEMENT_WISE_IDENTITY", attr, attr))

    def fused(ATensor, BTensor, *, FusedActivation, ctx):
        return ATensor
    with pytest.raises(TypeError, match="FusedActivation is applied by the registry"):
        registry.declare(OperatorDef("DML_OPERATOR_ELEMENT_WISE_ADD1", fused, fused))

    def varargs(*tensors, ctx):
        return tensors[0]
    with pytest.raises(TypeError, match=r"\*args/\*\*kwargs are not allowed"):
        registry.declare(OperatorDef(ADD, varargs, _ref))


def test_several_outputs_come_back_in_schema_order():
    def pool(InputTensor, *, WindowSize, ctx):
        return InputTensor * 2, InputTensor.astype(jnp.uint32)
    op = registry.declare(OperatorDef("DML_OPERATOR_MAX_POOLING1", pool, pool))
    assert op.outputs == ("OutputTensor", "OutputIndicesTensor")
    spec = _spec("MAX_POOLING1", WindowSize=(1, 1))
    values, indices = op.run({"InputTensor": jnp.float32([1, 2])}, spec, KernelContext())
    assert values.tolist() == [2, 4] and indices.dtype == jnp.uint32

    def one(InputTensor, *, ctx):
        return InputTensor
    bad = registry.declare(OperatorDef("DML_OPERATOR_MAX_POOLING1", one, one))
    with pytest.raises(RuntimeError, match="returned 1 outputs; the schema has 2"):
        bad.run({"InputTensor": jnp.float32([1, 2])}, spec, KernelContext())


def test_tensor_arrays_are_lists_and_operators_may_have_no_inputs():
    def join(InputTensors, *, Axis, ctx):
        assert isinstance(InputTensors, list)
        return jnp.concatenate(InputTensors, axis=Axis)
    op = registry.declare(OperatorDef("DML_OPERATOR_JOIN", join, join))
    got = op.run({"InputTensors": [jnp.float32([1]), jnp.float32([2, 3])]},
                 _spec("JOIN", Axis=0), KernelContext())
    assert got[0].tolist() == [1, 2, 3]

    def fill(*, ValueDataType, Value, ctx):
        return jnp.full(ctx.outputs["OutputTensor"].sizes, 7, jnp.int32)
    out = TensorSpec(dtypes.INT32, (2,))
    filled = registry.declare(OperatorDef("DML_OPERATOR_FILL_VALUE_CONSTANT", fill, fill))
    assert filled.inputs == ()
    got = filled.run({}, _spec("FILL_VALUE_CONSTANT"), KernelContext(outputs={"OutputTensor": out}))
    assert got[0].tolist() == [7, 7]


def _spec(short, **attrs):
    name = "DML_OPERATOR_" + short
    schema = OPERATORS[name]
    return OpSpec(name, (), tuple(attrs.items()), tuple(schema["inputs"]),
                  tuple(schema["outputs"]))


# ---- shape rules -------------------------------------------------------------------------------

def test_create_operator_compares_the_shape_rule_with_the_output_desc():
    dev = Env().dml
    a = np.zeros((2, 2), f32)
    desc = dml.operator_desc("ELEMENT_WISE_ADD", ATensor=a, BTensor=a,
                             OutputTensor=np.zeros(4, f32))
    with pytest.raises(dml.HResultError) as e:
        dev.CreateOperator(desc)
    assert e.value.hresult == dml.E_INVALIDARG
    assert e.value.message == ("DML_OPERATOR_ELEMENT_WISE_ADD: OutputTensor.Sizes is [4] but "
                               "ATensor gives [2,2]")


def test_sizes_say_where_they_come_from():
    assert Sizes((1, 2), "ATensor and BTensor").source == "ATensor and BTensor"
    assert Sizes([3]) == (3,) and Sizes([3]).source == "the inputs"
    check = Check("DML_OPERATOR_GEMM", 0x6400)
    with pytest.raises(dml.HResultError, match="DML_OPERATOR_GEMM: OutputTensor.Sizes is "
                                               r"\[1,1,2,4\] but ATensor and BTensor give "
                                               r"\[1,1,2,3\]"):
        op = registry.get(ADD)
        registry.check_output_sizes(
            dataclasses.replace(op, output_sizes=lambda spec, check: {
                "OutputTensor": Sizes((1, 1, 2, 3), "ATensor and BTensor")}),
            _with_output((1, 1, 2, 4)), check)


def _with_output(sizes):
    out = TensorSpec(dtypes.FLOAT32, tuple(sizes))
    return OpSpec(ADD, (("OutputTensor", out),), (), ("ATensor", "BTensor"), ("OutputTensor",))


def test_infer_outputs_uses_the_shape_rule_and_the_output_types():
    a = np.zeros((2, 3), np.float16)
    got = dml.infer_outputs(dml.DML_OPERATOR_DESC(
        dml.DML_OPERATOR_ELEMENT_WISE_IS_NAN,
        dml.DML_ELEMENT_WISE_IS_NAN_OPERATOR_DESC(dml.tensor_desc(a))))
    out = got["OutputTensor"].Desc
    assert (out.DataType, list(out.Sizes), out.TotalTensorSizeInBytes) == \
        (dml.DML_TENSOR_DATA_TYPE_UINT8, [2, 3], 8)
    # dmlsim.operator_desc fills required outputs it can infer
    desc = dml.operator_desc("ELEMENT_WISE_ADD", ATensor=a, BTensor=a)
    assert list(desc.Desc.OutputTensor.Desc.Sizes) == [2, 3]
    assert dml.run(desc, np.ones((2, 3), np.float16), a).dtype == np.float16
    with pytest.raises(dml.HResultError, match="BTensor.Sizes"):
        dml.infer_outputs(dml.DML_OPERATOR_DESC(dml.DML_OPERATOR_ELEMENT_WISE_ADD,
                                                dml.DML_ELEMENT_WISE_ADD_OPERATOR_DESC(
                                                    dml.tensor_desc(a),
                                                    dml.tensor_desc(np.zeros(4, f32)))))


def test_rules_receive_the_feature_level():
    pow_rules = registry.get("DML_OPERATOR_ELEMENT_WISE_POW").rules
    desc = dml.operator_desc("ELEMENT_WISE_POW", InputTensor=np.zeros((1, 1, 1, 2), f32),
                             ExponentTensor=np.zeros((1, 1, 1, 2), np.float16))
    for level, ok in ((0x2100, False), (0x3000, True)):
        with feature_level(level):
            dev = Env().dml
            if ok:
                dev.CreateOperator(desc)
            else:
                with pytest.raises(dml.HResultError, match="until DML_FEATURE_LEVEL_3_0"):
                    dev.CreateOperator(desc)
    assert pow_rules


# ---- examples: OWNED_BY_DML, strides and shapes left to the rule ---------------------------

def test_examples_can_mark_owned_tensors_give_strides_and_write_outputs_flat():
    from helpers import example_desc
    ex = Example({"ATensor": f32([[1, 2, 3], [4, 5, 6]]), "BTensor": f32([[10, 20, 30]] * 2)},
                 {"OutputTensor": f32([11, 22, 33, 14, 25, 36])},
                 owned=("BTensor",), strides={"ATensor": (1, 2)})
    desc, arrays, expected = example_desc(ADD, ex.inputs, ex.outputs, ex.attrs, ex.owned,
                                          ex.strides)
    assert desc.Desc.BTensor.Desc.Flags == dml.DML_TENSOR_FLAG_OWNED_BY_DML
    assert list(desc.Desc.ATensor.Desc.Strides) == [1, 2]
    assert expected[0].shape == (2, 3)
    assert_bits_equal(dml.run(desc, *arrays), expected[0])


# ---- hooks: what the initializer keeps, temporary and persistent sizes ----------------------

def test_persistent_layout_temporary_and_persistent_hooks(monkeypatch):
    """A unit may store an OWNED_BY_DML input its own way (here BTensor column-major, as a
    driver keeps a pre-transposed filter), keep extra persistent bytes and ask for a
    temporary resource; GetBindingProperties reports them and the result is unchanged."""
    def column_major(spec, field, t):
        rows, cols = t.sizes
        return TensorSpec(t.data_type, t.sizes, (1, rows), t.flags,
                          dtypes.calc_buffer_tensor_size(t.data_type, t.sizes, (1, rows)))
    add = registry.get(ADD)
    monkeypatch.setitem(registry._REGISTRY, ADD, dataclasses.replace(
        add, persistent_layout=column_major, temporary_bytes=lambda spec: 512,
        persistent_bytes=lambda spec, stored: stored + 256))
    env = Env()
    a, b = f32([[1, 2, 3], [4, 5, 6]]), f32([[10, 20, 30], [40, 50, 60]])
    desc = dml.operator_desc("ELEMENT_WISE_ADD", ATensor=a,
                             BTensor=tensor(f32, (2, 3), flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML),
                             OutputTensor=a)
    bbuf = env.device_buffer(b)
    compiled = env.compile(desc, owned=array_binding(None, bbuf))
    props = compiled.GetBindingProperties()
    assert (props.TemporaryResourceSize, props.PersistentResourceSize) == (512, 512)
    stored = env.read(compiled._test_persistent, 0, 24).view(f32)
    np.testing.assert_array_equal(stored, b.T.reshape(-1))  # column-major in the resource
    abuf, out, temp = env.device_buffer(a), env.buffer(24), env.buffer(512)
    table, heap, _ = env.table(compiled)
    table.BindInputs([binding(abuf), dml.DML_BINDING_DESC(dml.DML_BINDING_TYPE_NONE, None)])
    table.BindOutputs([binding(out)])
    table.BindPersistentResource(binding(compiled._test_persistent))
    table.BindTemporaryResource(binding(temp))
    env.cl.SetDescriptorHeaps([heap])
    env.recorder.RecordDispatch(env.cl, compiled, table)
    env.flush()
    assert_bits_equal(env.read_as(out, f32).reshape(2, 3), a + b)


@pytest.mark.parametrize("name", sorted(registry.load_all()))
def test_required_outputs_are_inferred_or_the_desc_must_give_them(name):
    """From the first example's inputs and attributes, ``dmlsim.infer_outputs`` gives every
    required output, and CreateOperator accepts the desc completed with them; or it says that
    only the desc can give them ("give its tensor desc": SPLIT's sizes, FILL_VALUE's...)."""
    ex = registry.load_all()[name].examples[0]
    schema = OPERATORS[name]
    required = [f["name"] for f in schema["fields"] if f["kind"] == "output_tensor"
                and not f.get("optional")]
    desc, _, _ = example_desc(name, ex.inputs, ex.outputs, ex.attrs)
    for f in required:
        setattr(desc.Desc, f, None if schema_type(schema, f) == "tensor_desc" else [])
    try:
        got = dml.infer_outputs(desc)
    except dml.HResultError as e:
        assert "desc" in str(e), f"{name}: {e}"
        return
    for f in required:
        assert f in got, f"{name}: {f} not inferred"
        setattr(desc.Desc, f, got[f])
    dml.DMLCreateDevice(dml.D3D12CreateDevice(None, dml.D3D_FEATURE_LEVEL_11_0),
                        0).CreateOperator(desc)


def schema_type(schema, field_name):
    return next(f.get("schema_type") for f in schema["fields"] if f["name"] == field_name)
