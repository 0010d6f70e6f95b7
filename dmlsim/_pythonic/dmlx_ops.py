"""dmlx's operator functions: one per DirectML operator dmlsim implements, generated from the
schema (DirectMLX's naming: ELEMENT_WISE_ADD -> Add, ACTIVATION_RELU -> ActivationRelu,
TOP_K -> TopK; inputs positional in the struct's order, attributes by their DML field names),
with DirectMLX's own signatures and defaults for the ones it wraps (``dmlx_functions``).

Every function validates at the call: the IDMLOperator is created there and any E_INVALIDARG
comes back as ``dmlx.<Function>: <what CreateOperator said>``; element-wise functions also
say when their inputs' sizes differ (dmlx, like DirectMLX, does not broadcast: use
Reinterpret with zero strides).
"""
from __future__ import annotations

from typing import Any

from .._api import public as dml
from .._schema.operators_generated import OPERATORS
from .dmlx_graph import Expression, Node, TensorDesc, _fail
from .run import operator_desc

ALIASES = {"LOGICAL_EQUALS": "Equals", "LOGICAL_GREATER_THAN": "GreaterThan",
           "LOGICAL_GREATER_THAN_OR_EQUAL": "GreaterThanOrEqual",
           "LOGICAL_LESS_THAN": "LessThan", "LOGICAL_LESS_THAN_OR_EQUAL": "LessThanOrEqual",
           "LOGICAL_NOT": "Not", "IS_NAN": "IsNaN", "ATAN_YX": "ATanYX", "GATHER_ND": "GatherND",
           "GATHER_ND1": "GatherND1", "SCATTER_ND": "ScatterND", "UPSAMPLE_2D": "Upsample2D",
           "VALUE_SCALE_2D": "ValueScale2D", "NONZERO_COORDINATES": "NonZeroCoordinates",
           "MULTIHEAD_ATTENTION": "MultiHeadAttention",
           "MULTIHEAD_ATTENTION1": "MultiHeadAttention1", "ROI_ALIGN": "RoiAlign",
           "ROI_ALIGN1": "RoiAlign1", "ROI_POOLING": "RoiPooling", "LP_POOLING": "LpPooling",
           "LP_POOLING1": "LpPooling1", "LP_NORMALIZATION": "LpNormalization",
           "ARGMIN": "ArgMin", "ARGMAX": "ArgMax"}


def dmlx_name(op_name: str) -> str:
    short = op_name.replace("DML_OPERATOR_", "")
    if short in ALIASES:
        return ALIASES[short]
    if short.startswith("ELEMENT_WISE_"):
        short = short[len("ELEMENT_WISE_"):]
        if short in ALIASES:
            return ALIASES[short]
    return "".join(w[:1] + w[1:].lower() for w in short.split("_"))


def make_node(function, op_name, tensors: dict, attrs: dict, outputs: dict | None = None,
              graph=None, want=(), out_types: dict | None = None):
    """Create ``op_name`` with input Expressions ``tensors`` (field -> Expression, list or
    None), attributes ``attrs`` (count fields filled from the arrays they count) and explicit
    output TensorDescs ``outputs``; the required outputs and the optional ones in ``want`` are
    inferred (data types overridden by ``out_types``) and laid out by the graph's policy.
    Returns a list of Expressions (lists for tensor arrays, None for absent optional outputs)
    in the schema's output order."""
    name = op_name if op_name.startswith("DML_OPERATOR_") else "DML_OPERATOR_" + op_name
    schema = OPERATORS[name]
    kinds = {f["name"]: f for f in schema["fields"]}
    for f, v in tensors.items():
        for e in (v if isinstance(v, (list, tuple)) else [v]):
            if e is None:
                continue
            if not isinstance(e, Expression):
                _fail(function, f"{f} is {type(e).__name__}; a dmlx Expression is required")
            if graph is not None and e.graph is not graph:
                _fail(function, f"{f} belongs to another graph")
            graph = e.graph
    if graph is None:
        _fail(function, "no input Expression: the graph is unknown")
    _same_sizes(function, name, tensors)
    fields = {f: ([e.GetOutputDesc().AsDml() for e in v] if isinstance(v, (list, tuple))
                  else (None if v is None else v.GetOutputDesc().AsDml()))
              for f, v in tensors.items()}
    given = set(outputs or {})
    fields.update({f: d.AsDml() if isinstance(d, TensorDesc) else
                   [x.AsDml() for x in d] for f, d in (outputs or {}).items()})
    attrs = {k: v for k, v in attrs.items() if v is not None}
    for k, v in list(attrs.items()):
        count = kinds.get(k, {}).get("count_field")
        if count and count not in attrs and isinstance(v, (list, tuple)):
            attrs[count] = len(v)
        if kinds.get(k, {}).get("schema_type") == "operator_desc" and hasattr(v, "AsDml"):
            attrs[k] = v.AsDml()
    fields.update(attrs)
    try:
        desc = operator_desc(name, **fields)
        todo = [f for f in schema["outputs"] if f not in given and
                (not kinds[f].get("optional") or f in want)]
        inferred = dml.infer_outputs(desc) if todo else {}
        for f in todo:
            if f in inferred:
                setattr(desc.Desc, f, _laid_out(inferred[f], graph.policy,
                                                (out_types or {}).get(f)))
        op = graph.device.CreateOperator(desc)
    except dml.HResultError as e:
        _fail(function, e.message or str(e), e.hresult)
    except (TypeError, ValueError) as e:
        _fail(function, str(e))
    ins = []
    for f in schema["inputs"]:
        v = tensors.get(f)
        ins.extend(v if isinstance(v, (list, tuple)) else [v])
    node = Node("operator", graph._name(function), op=op, inputs=ins, op_type=name)
    results = []
    for f in schema["outputs"]:
        v = getattr(desc.Desc, f)
        if isinstance(v, (list, tuple)):
            exprs = []
            for t in v:
                node.outputs.append(TensorDesc.of(t))
                exprs.append(Expression(graph, node, len(node.outputs) - 1))
            results.append(exprs)
        else:
            node.outputs.append(None if v is None else TensorDesc.of(v))
            results.append(None if v is None else Expression(graph, node, len(node.outputs) - 1))
    graph.add(node)
    return results


def _same_sizes(function, name, tensors):
    """dmlx does not broadcast element-wise inputs (DirectMLX neither checks nor broadcasts)."""
    if not name.startswith("DML_OPERATOR_ELEMENT_WISE_"):
        return
    given = [(f, e) for f, e in tensors.items() if isinstance(e, Expression)]
    for f, e in given[1:]:
        a, b = given[0][1].GetOutputDesc().sizes, e.GetOutputDesc().sizes
        if list(a) != list(b):
            _fail(function, f"{given[0][0]} sizes {list(a)} and {f} sizes {list(b)} differ; "
                            "use Reinterpret with zero strides to broadcast")


def _laid_out(t, policy, data_type=None):
    if isinstance(t, list):
        return [_laid_out(x, policy, data_type) for x in t]
    b = t.Desc
    return TensorDesc.make(b.DataType if data_type is None else data_type,
                           [int(s) for s in b.Sizes], policy).AsDml()


def _field(key):
    return key[:1].upper() + key[1:]  # DirectMLX's camelCase parameters: alpha -> Alpha


def generic(op_name, params=None, defaults=None, fname=None):
    """The function for ``op_name``: its input Expressions positional in the schema's order,
    then its attributes positional in ``params``' order (default: the schema's, count fields
    left out: they come from the arrays) or by name (DML field names, or DirectMLX's
    camelCase), ``outputDataType`` for the first output's type. Outputs the shape rule infers
    are created, optional ones too unless passed as None; one output is returned as an
    Expression, several as a tuple."""
    schema = OPERATORS[op_name]
    ins, outs = schema["inputs"], schema["outputs"]
    counts = {f["count_field"] for f in schema["fields"] if f.get("count_field")}
    attrs = [f["name"] for f in schema["fields"] if f["kind"] == "attribute"]
    params = list(params if params is not None else [a for a in attrs if a not in counts])
    defaults = dict(defaults or {})
    fname = fname or dmlx_name(op_name)

    def function(*args: Any, **kw: Any):
        if len(args) > len(ins) + len(params):
            _fail(fname, f"takes at most {len(ins) + len(params)} arguments "
                         f"({', '.join(ins + params)}), got {len(args)}")
        tensors = dict(zip(ins, args[:len(ins)]))
        values = dict(defaults)
        values.update(zip(params, args[len(ins):]))
        outputs, absent, out_types = {}, set(), {}
        for key, v in kw.items():
            k = _field(key)
            if k == "OutputDataType":
                out_types[outs[0]] = v
            elif k in ins:
                tensors[k] = v
            elif k in outs:
                (absent.add(k) if v is None else outputs.__setitem__(k, v))
            elif k in attrs:
                values[k] = v
            else:
                _fail(fname, f"no input or attribute {key!r}; {op_name}'s are "
                             f"{', '.join(ins + attrs)}")
        want = [f for f in outs if f not in absent]
        result = make_node(fname, op_name, tensors, values, outputs, want=want,
                           out_types=out_types)
        result = [r for f, r in zip(outs, result) if f not in absent] if absent else result
        return result[0] if len(result) == 1 else tuple(result)

    function.__name__ = function.__qualname__ = fname
    returns = "an Expression" if len(outs) == 1 else "a tuple of " + ", ".join(outs)
    function.__doc__ = (f"{op_name}: inputs {', '.join(ins) or 'none'}; attributes "
                        f"{', '.join(params) or 'none'} (DML field names); returns {returns}.")
    return function


def generated(implemented) -> dict:
    return {dmlx_name(n): generic(n) for n in sorted(implemented)}
