"""Generate docs/operators.md, the operator reference, from the registry and the schema.

    python tools/gen_op_docs.py [--out docs/operators.md]

The page lists every DML_OPERATOR_TYPE: implemented or E_NOTIMPL, the feature level it was
introduced in, in-place support, the page's formula, the data types and dimension counts at
DML_FEATURE_LEVEL_6_4, and the operator's examples. tests/test_docs.py fails when it is stale.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dmlsim import HResultError, infer_outputs, operator_desc, tensor_desc  # noqa: E402
from dmlsim._schema import enums_generated  # noqa: E402
from fl_history import changes as history_changes  # noqa: E402


def _fmt(a) -> str:
    if isinstance(a, (list, tuple)) and a and not np.isscalar(a[0]):  # a tensor array
        return "[" + "; ".join(_fmt(t) for t in a) + "]"
    a = np.asarray(a)
    return f"{a.dtype} {np.array2string(a, separator=', ', threshold=20).replace(chr(10), ' ')}"


def _literal(a, prefix: str = "") -> str:
    """``a`` (an array) as Python source that rebuilds it bit for bit; rows after the first
    line up under the first when the source follows ``prefix``."""
    a = np.asarray(a)
    body = np.array2string(a, separator=", ", threshold=sys.maxsize, floatmode="unique",
                           max_line_width=sys.maxsize, prefix=prefix + "np.array(")
    body = re.sub(r"\bnan\b", "np.nan", re.sub(r"\binf\b", "np.inf", body))
    return f"np.array({body}, dtype={_dtype(a.dtype)})"


def _dtype(dtype) -> str:
    """A dtype as source: NumPy's, or ml_dtypes' for INT4/UINT4."""
    name = np.dtype(dtype).name
    return f"np.{name}" if hasattr(np, name) else f"ml_dtypes.{name}"


def _attr(field: dict, value) -> str:
    """An attribute as source: an enum member by its name where the field is an enum."""
    cls = getattr(enums_generated, str(field["type"]), None)
    if cls is not None and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:
            return "dml." + cls(int(value)).name
        except ValueError:
            pass
    if isinstance(value, (list, tuple)) and cls is not None:
        items = ", ".join(_attr(field, v) for v in value)
        return f"[{items}]" if isinstance(value, list) else f"({items}{',' * (len(value) == 1)})"
    if isinstance(value, (float, np.floating)) and not np.isfinite(value):
        kind = "float" if isinstance(value, float) else f"np.{np.asarray(value).dtype.name}"
        return f"{kind}({str(float(value))!r})"
    return repr(value)


def _fits(desc, value) -> bool:
    """Whether the inferred output ``desc`` (or list of them) holds ``value`` as the example
    writes it: the same data type and element count."""
    if isinstance(desc, list):
        return len(desc) == len(value) and all(_fits(d, v) for d, v in zip(desc, value))
    if desc is None:
        return False
    value = np.asarray(value)
    return (desc.Desc.DataType == tensor_desc(value).Desc.DataType and
            int(np.prod(desc.Desc.Sizes)) == value.size)


def example_code(schema: dict, ex) -> str:
    """Example ``ex`` of the operator ``schema`` as a runnable ``dml.run`` program that leaves
    the results in ``out``; outputs the shape rule infers are left to ``operator_desc``."""
    fields = {f["name"]: f for f in schema["fields"]}
    short = schema["name"][len("DML_OPERATOR_"):]
    code, args, kw, probe = ["import numpy as np", "import dmlsim as dml", ""], [], [], {}
    for name in schema["inputs"]:
        value = ex.inputs.get(name)
        if value is None:
            args.append("None")
            continue
        if fields[name]["schema_type"] == "tensor_desc_array":
            code.append(f"{name} = [\n" + "".join(f"    {_literal(v, '    ')},\n" for v in value)
                        + "]")
            args.append("*" + name)
            kw.append(f"{name}={name}")
            probe[name] = [np.asarray(v) for v in value]
            continue
        code.append(f"{name} = {_literal(value, name + ' = ')}")
        args.append(name)
        flags = ", flags=dml.DML_TENSOR_FLAG_OWNED_BY_DML" if name in ex.owned else ""
        strides = f", strides={list(ex.strides[name])}" if name in ex.strides else ""
        kw.append(f"{name}=dml.tensor_desc({name}{strides}{flags})" if flags or strides
                  else f"{name}={name}")
        probe[name] = np.asarray(value)
    kw += [f"{k}={_attr(fields[k], v)}" for k, v in ex.attrs.items()]
    probe.update(ex.attrs)
    desc = operator_desc(schema["name"], **probe)
    try:
        sizes = {k: v for k, v in infer_outputs(desc).items() if not isinstance(v, list)}
    except HResultError:
        sizes = {}
    inferred = desc.Desc
    for name in schema["outputs"]:
        value = ex.outputs.get(name)
        if value is None or (_fits(getattr(inferred, name), value) and name not in ex.strides):
            continue
        if fields[name]["schema_type"] == "tensor_desc_array":
            descs = ", ".join(f"dml.tensor_desc({_dtype(np.asarray(v).dtype)}, "
                              f"{list(np.shape(v))})" for v in value)
            kw.append(f"{name}=[{descs}]")
            continue
        strides = f", strides={list(ex.strides[name])}" if name in ex.strides else ""
        shape = list(np.shape(value))
        if name in sizes and int(np.prod(sizes[name].Desc.Sizes)) == np.size(value):
            shape = list(sizes[name].Desc.Sizes)
        kw.append(f"{name}=dml.tensor_desc({_dtype(np.asarray(value).dtype)}, {shape}{strides})")
    if "ml_dtypes." in "\n".join(code + kw):
        code.insert(1, "import ml_dtypes")
    call = f"desc = dml.operator_desc({short!r}, {', '.join(kw)})"
    if len(call) > 100:
        call = f"desc = dml.operator_desc(\n    {short!r},\n    " + ",\n    ".join(kw) + ")"
    code.append(call)
    code.append(f"out = dml.run(desc, {', '.join(args)})")
    return "\n".join(code)


def _cell(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    return text.replace("|", "\\|").replace("**", "`").replace("`DML_OPERATOR_", "`")


def history() -> list:
    """The feature-level history page, change by change, with what dmlsim does and the tests
    that cover it (tools/fl_history.py)."""
    lines = ["", "## Feature-level history", "",
             "Every change `docs/guide/dml-feature-level-history.md` lists (kept in "
             "`tools/spec/`), newest first. At a device's feature level the rules of that "
             "level apply (`dmlsim.set_feature_level`). Support-table changes are checked "
             "cell by cell by the tests named; `tests/test_feature_level_history.py` checks "
             "that this list is complete and that every test it names exists.", "",
             "| level | change | dmlsim | tests |", "| --- | --- | --- | --- |"]
    kinds = {"added": "added: ", "extended": "extended: "}
    for c in history_changes():
        what = kinds.get(c.kind, "") + (", ".join(f"`{o[13:]}`" for o in c.operators)
                                        if c.kind != "special" else _cell(c.text))
        if c.kind == "special" and c.operators and "DML_OPERATOR" not in c.text:
            what += " (" + ", ".join(f"`{o[13:]}`" for o in c.operators) + ")"
        if c.kind == "extended" and not c.text.startswith("**"):
            what = _cell(c.text.split(".")[0]) + ": " + ", ".join(f"`{o[13:]}`"
                                                                  for o in c.operators)
        tests = ", ".join(f"`{t.split('/')[-1]}`" for t in c.tests) or "-"
        lines.append(f"| {c.level} | {what} | {_cell(c.handling)} | {tests} |")
    return lines


def render() -> str:
    from dmlsim._core import config, registry
    from dmlsim._core.validation import support_block
    from dmlsim._schema.operators_generated import OPERATORS
    impl = registry.load_all()
    ops = sorted(OPERATORS.values(), key=lambda s: s["value"])
    lines = ["# Operator reference", "",
             "Generated by `tools/gen_op_docs.py` from dmlsim's operator registry and the spec; "
             "do not edit.", "",
             f"{len(impl)} of {len(ops)} operator types are implemented"
             + (". The others raise E_NOTIMPL at CreateOperator, naming the operator." if
                len(impl) < len(ops) else "; the cases an operator's notes call not "
                "implemented (MULTIHEAD_ATTENTION's PastSequenceLengthsTensor and START_END masks, "
                "ROI_ALIGN_GRAD's ROI gradient over several samples) raise E_NOTIMPL at "
                "CreateOperator, naming "
                "the operator and the case."), "",
             "| operator | introduced | in-place | dmlsim |", "| --- | --- | --- | --- |"]
    for s in ops:
        fl = config.fl_name(s["introduced"]).replace("DML_FEATURE_LEVEL_", "")
        mark = f"[implemented](#{s['name'].lower()})" if s["name"] in impl else "E_NOTIMPL"
        lines.append(f"| `{s['name']}` | {fl} | {'yes' if s['in_place'] else 'no'} | {mark} |")
    lines += history()
    for s in ops:
        opdef = impl.get(s["name"])
        if opdef is None:
            continue
        lines += ["", f"## {s['name']}", "", s["summary"].strip(), ""]
        if s.get("formula"):
            lines += ["```", s["formula"].strip(), "```", ""]
        module = sys.modules.get(opdef.module)
        doc = (module.__doc__ or "").strip() if module else ""
        if doc:
            lines += ["dmlsim: " + " ".join(doc.split()), ""]
        lines += [f"Desc: `{s['desc_struct']}` ({', '.join(f['name'] for f in s['fields'])}). "
                  f"Reference page: <{s['doc_url']}>", ""]
        block = support_block(s, 0x6400)
        if block:
            lines += ["| tensor | dims at 6_4 | data types at 6_4 |", "| --- | --- | --- |"]
            for t in block["tensors"]:
                lines.append(f"| {t['name']} | {t['dims_min']}..{t['dims_max']} | "
                             f"{', '.join(t['types'])} |")
            lines.append("")
        if opdef.ulp:
            lines += ["Tolerance against the float64 reference (ULP): " +
                      ", ".join(f"{k} {v}" for k, v in sorted(opdef.ulp.items())), ""]
        for i, ex in enumerate(opdef.examples):
            lines.append(f"Example {i + 1}{': ' + ex.note if ex.note else ''}")
            lines += ["", "```python", example_code(s, ex)]
            for k, v in ex.outputs.items():
                lines.append(f"# → {k}: {_fmt(v)}")
            lines += ["```", ""]
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "docs" / "operators.md"))
    Path(ap.parse_args().out).write_text(render())


if __name__ == "__main__":
    main()
