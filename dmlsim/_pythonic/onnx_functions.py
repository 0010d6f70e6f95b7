"""ONNX operators defined by a function body: a node no rule takes is replaced by the body of its
operator's ONNX function (the schema's, for the model's opset), as ONNX Runtime inlines a
function whose node no execution provider claims. Attention cases MULTIHEAD_ATTENTION cannot
express, GroupNormalization, RMSNormalization, Mish, Swish, the window generators and the
loss functions reach DML operators this way.

``expand(model, takes)``: ``takes(node, types)`` says whether a rule lowers ``node`` itself
(``types``: value name -> ValueInfoProto). Every other default-domain node whose schema has a
function (plain or context-dependent) is replaced by its body: formal inputs and outputs
renamed to the node's, internal values prefixed with the node's name, attributes that refer
to the node's (``ref_attr_name``) given its values or the schema's defaults. Bodies may
themselves hold such nodes: the model is shape-inferred and expanded again, a few times at
most. The body's nodes run at the model's opset (a body written for an older opset is the one
the schema gives for the model's)."""
from __future__ import annotations

import onnx
from onnx import defs, helper

ROUNDS = 4


def _schema(node, opset):
    try:
        return defs.get_schema(node.op_type, opset, node.domain or "")
    except Exception:  # noqa: BLE001 -- onnx: no schema for this op at this opset
        return None


def _body(node, opset, types):
    """The FunctionProto defining ``node`` at ``opset``, or None."""
    s = _schema(node, opset)
    if s is None:
        return None, None
    plain = [v for v in s.function_opset_versions if v <= opset]
    if plain:
        f = onnx.FunctionProto()
        f.ParseFromString(s.get_function_with_opset_version(max(plain)))
        return f, s
    ctx = [v for v in s.context_dependent_function_opset_versions if v <= opset]
    if not ctx:
        return None, s
    ins = []
    for name in node.input:
        vi = types.get(name)
        ins.append((vi.type if vi is not None else onnx.TypeProto()).SerializeToString())
    try:
        raw = s.get_context_dependent_function_with_opset_version(
            max(ctx), node.SerializeToString(), ins)
    except Exception:  # noqa: BLE001 -- the schema's builder refuses these input types
        return None, s
    f = onnx.FunctionProto()
    f.ParseFromString(raw)
    return f, s


def _inline(node, f, schema, prefix):
    names = {formal: node.input[k] if k < len(node.input) else ""
             for k, formal in enumerate(f.input)}
    names.update({formal: node.output[k] for k, formal in enumerate(f.output)
                  if k < len(node.output) and node.output[k]})
    attrs = {a.name: a for a in node.attribute}
    for name, a in schema.attributes.items():
        if name not in attrs and a.default_value.type:
            attrs[name] = a.default_value

    def rename(n):
        return n if n == "" else names.get(n, prefix + n)

    return [_renamed(body, f"{prefix}{body.name or body.op_type + str(k)}", rename, attrs)
            for k, body in enumerate(f.node)]


def _renamed(body, name, rename, attrs):
    """A copy of ``body`` with its values renamed, attribute references resolved, and the same
    renaming inside its subgraphs (an If's branches read the function's values by name)."""
    new = onnx.NodeProto()
    new.CopyFrom(body)
    new.name = name
    new.input[:] = [rename(n) for n in body.input]
    new.output[:] = [rename(n) for n in body.output]
    del new.attribute[:]
    for a in body.attribute:
        if a.ref_attr_name:
            if a.ref_attr_name in attrs:
                given = onnx.AttributeProto()
                given.CopyFrom(attrs[a.ref_attr_name])
                given.name = a.name
                new.attribute.append(given)
            continue
        a2 = onnx.AttributeProto()
        a2.CopyFrom(a)
        for g in ([a2.g] if a2.HasField("g") else []) + list(a2.graphs):
            _rename_graph(g, rename, attrs)
        new.attribute.append(a2)
    return new


def _rename_graph(g, rename, attrs):
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        vi.name = rename(vi.name)
    nodes = [_renamed(n, n.name, rename, attrs) for n in g.node]
    del g.node[:]
    g.node.extend(nodes)


DMLSIM = "com.dmlsim"  # dmlsim's own nodes in a rewritten graph


def _nonzero(node, types, prefix):
    """NonZero as ORT's DML provider runs it: NONZERO_COORDINATES (a count and every element's
    coordinates, UINT32, at least 2 per row), the count read back to slice the rows, the
    columns of the input's rank kept, transposed and cast to INT64. The row slice's end is a
    value the CPU reads at run time, so what follows is planned per count."""
    vi = types.get(node.input[0])
    if vi is None or not vi.type.tensor_type.HasField("shape"):
        return None
    r = len(vi.type.tensor_type.shape.dim)
    if r == 0:
        return None
    n = max(r, 2)
    p = prefix

    def const(name, values):
        return helper.make_node("Constant", [], [p + name], name=p + name,
                                value=helper.make_tensor(p + name, onnx.TensorProto.INT64,
                                                         [len(values)], values))
    out = [helper.make_node("NonZeroCoordinates", [node.input[0]], [p + "count", p + "coords"],
                            name=p + "coordinates", domain=DMLSIM),
           helper.make_node("Cast", [p + "count"], [p + "n"], name=p + "count_int64",
                            to=onnx.TensorProto.INT64),
           const("zero", [0]), const("rows_axis", [0]),
           helper.make_node("Slice", [p + "coords", p + "zero", p + "n", p + "rows_axis"],
                            [p + "rows"], name=p + "rows")]
    rows = p + "rows"
    if n != r:
        out += [const("first", [n - r]), const("last", [n]), const("cols_axis", [1]),
                helper.make_node("Slice", [rows, p + "first", p + "last", p + "cols_axis"],
                                 [p + "cols"], name=p + "cols")]
        rows = p + "cols"
    out += [helper.make_node("Transpose", [rows], [p + "t"], name=p + "transpose", perm=[1, 0]),
            helper.make_node("Cast", [p + "t"], [node.output[0]], name=p + "int64",
                             to=onnx.TensorProto.INT64)]
    return out


def expand_once(model, takes, opset, types) -> bool:
    """Replace each default-domain node no rule takes by its function body; True if any."""
    nodes, changed = [], False
    for k, node in enumerate(model.graph.node):
        if node.domain in ("", "ai.onnx") and node.op_type == "NonZero" and \
                not takes(node, types):
            body = _nonzero(node, types, f"{node.name or 'NonZero' + str(k)}/")
            if body is not None:
                nodes.extend(body)
                changed = True
                if not any(o.domain == DMLSIM for o in model.opset_import):
                    model.opset_import.append(helper.make_opsetid(DMLSIM, 1))
                continue
        if node.domain in ("", "ai.onnx") and node.op_type != "Constant" and \
                not takes(node, types):
            f, schema = _body(node, opset, types)
            if f is not None:
                prefix = f"{node.name or node.op_type + str(k)}/"
                nodes.extend(_inline(node, f, schema, prefix))
                changed = True
                continue
        nodes.append(node)
    if changed:
        del model.graph.node[:]
        model.graph.node.extend(nodes)
    return changed


def expand(model, takes, opset, infer):
    """``model`` (a shape-inferred copy, changed in place) with function bodies inlined;
    ``infer(model)`` shape-infers the result of each round."""
    for _ in range(ROUNDS):
        types = {vi.name: vi for vi in list(model.graph.value_info) +
                 list(model.graph.input) + list(model.graph.output)}
        for init in model.graph.initializer:
            types.setdefault(init.name, helper.make_tensor_value_info(
                init.name, init.data_type, list(init.dims)))
        if not expand_once(model, takes, opset, types):
            return model
        model = infer(model)
    return model
