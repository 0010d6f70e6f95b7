"""The ``dmlsim`` command line: ``dispatch MODEL.json``, ``lower`` / ``run`` MODEL.onnx,
``generate MODEL_DIR``, ``ops``, ``info``, ``hello``."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import jsonschema

from . import __version__, info
from .examples import hello_directml
from ._core import config, registry
from ._core.hresult import E_INVALIDARG, HResultError
from ._pythonic.dxdispatch import load, run_model
from ._pythonic.dxdispatch_parse import ModelError
from ._schema.operators_generated import OPERATORS


def _ops(args) -> int:
    implemented = set(registry.names())
    level = config._parse_level(args.feature_level) if args.feature_level else None
    rows = []
    for name, s in sorted(OPERATORS.items(), key=lambda kv: kv[1]["value"]):
        if args.implemented and name not in implemented:
            continue
        if level is not None and s["introduced"] > level:
            continue
        fl = config.fl_name(s["introduced"]).replace("DML_FEATURE_LEVEL_", "")
        rows.append({"operator": name, "value": s["value"], "introduced": fl,
                     "implemented": name in implemented, "in_place": s["in_place"]})
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            mark = "yes" if r["implemented"] else "E_NOTIMPL"
            print(f"{r['operator']:<58} FL {r['introduced']:<4} {mark}")
        print(f"{sum(r['implemented'] for r in rows)} of {len(rows)} operators implemented")
    return 0


def _info(args) -> int:
    for k, v in info().items():
        print(f"{k}: {v}")
    return 0


def _dispatch(args) -> int:
    run_model(load(args.model), output_dir=args.output_path)
    return 0


class _Usage(Exception):
    """A command-line mistake, answered in one line with exit status 2 before any work."""


def _model_path(path) -> str:
    if not os.path.exists(path):
        raise _Usage(f"{path}: no such file or folder")
    return path


def _model_inputs(path) -> list:
    """The graph inputs an ONNX file feeds (initializers excluded), read without lowering."""
    import onnx  # lazily: the [onnx] extra
    try:
        graph = onnx.load(path, load_external_data=False).graph
    except Exception:  # noqa: BLE001 -- a broken file: the session names it, later
        return []
    inits = {i.name for i in graph.initializer}
    return [i.name for i in graph.input if i.name not in inits]


def _load(path, what):
    """``np.load`` of a .npy or .npz file, or a usage error naming ``what``."""
    import numpy as np
    if not os.path.isfile(path):
        raise _Usage(f"{what}: no such file {path!r}")
    try:
        return np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001 -- anything np.load refuses
        raise _Usage(f"{what}: not a .npy or .npz file ({e})") from None


def _load_array(path):
    """One .npy file, or a usage error naming it."""
    import numpy as np
    data = _load(path, path)
    if not isinstance(data, np.ndarray):
        raise _Usage(f"{path}: a .npz file; give one array as .npy")
    return data


def _read_inputs(args, model) -> dict:
    """``--input NAME=FILE.npy`` (or ``FILE.npz``: every array by its name; ``NAME=FILE.npz``
    holding one array), checked against the model's inputs before anything is lowered."""
    import numpy as np
    feeds = {}
    for item in args.input or []:
        name, sep, path = item.partition("=")
        if not sep:
            name, path = None, item
        data = _load(path, f"--input {item}")
        if isinstance(data, np.lib.npyio.NpzFile):
            arrays = {k: data[k] for k in data.files}
            if name is not None:
                if len(arrays) != 1:
                    raise _Usage(f"--input {item}: {path} holds {len(arrays)} arrays "
                                 f"({', '.join(arrays)}); give FILE.npz alone to feed each "
                                 "by its name")
                arrays = {name: next(iter(arrays.values()))}
            feeds.update(arrays)
        elif name is None:
            raise _Usage(f"--input {item}: give NAME=FILE.npy (a .npz file names its arrays)")
        else:
            feeds[name] = data
    known = _model_inputs(model) if feeds else []
    for name in feeds:
        if known and name not in known:
            raise _Usage(f"'{name}' is not an input; inputs: {', '.join(known)}")
    return feeds


def _onnx_session(args):
    from . import onnx as donnx  # lazily: onnx is an optional dependency (the [onnx] extra)
    opts = donnx.SessionOptions()
    for item in args.dim or []:
        name, _, value = item.partition("=")
        if not value.strip().isdigit():
            raise HResultError(E_INVALIDARG, f"--dim {item!r}: give NAME=SIZE, e.g. batch=1")
        opts.add_free_dimension_override_by_name(name, int(value))
    return donnx.prepare(args.model, feature_level=args.feature_level, sess_options=opts)


def _lower(args) -> int:
    session = _onnx_session(args)
    if session.last_plan is None:
        dims = [a for a in session.get_inputs() if any(not isinstance(d, int)
                                                       for d in (a.shape or [None]))]
        names = sorted({str(d) for a in dims for d in (a.shape or []) if not isinstance(d, int)})
        raise HResultError(E_INVALIDARG, "the model has dynamic dimensions "
                           f"({', '.join(names) or 'inputs without shapes'}); give each a size "
                           "with --dim NAME=SIZE (ONNX Runtime's free-dimension override)")
    print(session.describe())
    print("\nplacement (where each node runs, as ONNX Runtime partitions it):")
    print(session.placement())
    return 0


def _run(args) -> int:
    import numpy as np
    feeds = _read_inputs(args, _model_path(args.model))
    session = _onnx_session(args)
    for name, value in zip(session.output_names, session.run(None, feeds)):
        if args.output:
            np.save(f"{args.output.rstrip('/')}/{name}.npy", value)
        print(f"{name}: {value.dtype} {list(value.shape)}")
        print(np.array2string(value, threshold=50))
    return 0


def _generate(args) -> int:
    from . import genai  # lazily: onnx and tokenizers are optional dependencies
    model = genai.Model(args.model, feature_level=args.feature_level)
    tokenizer = genai.Tokenizer(model)
    params = genai.GeneratorParams(model)
    options = {k: v for k, v in (("max_length", args.max_length), ("random_seed", args.seed),
                                 ("top_k", args.top_k), ("top_p", args.top_p),
                                 ("temperature", args.temperature)) if v is not None}
    if args.do_sample:
        options["do_sample"] = True
    params.set_search_options(**options)
    generator = genai.Generator(model, params)
    if model.type == "whisper":  # log-mel frames in, text out
        if args.audio_features is None:
            raise HResultError(E_INVALIDARG, "a Whisper model folder needs --audio-features "
                                             "FILE.npy ([1, mels, 3000] log-mel frames)")
        prompt = genai.WHISPER_PROMPT if args.prompt is None else args.prompt
        generator.set_inputs({"audio_features": _load_array(args.audio_features),
                              "input_ids": tokenizer.encode(prompt)})
        print(f"(decoder prompt {prompt})")
    else:
        if args.prompt is None or args.audio_features is not None:
            raise HResultError(E_INVALIDARG, "a language model folder needs --prompt TEXT "
                                             "(and takes no --audio-features)")
        generator.append_tokens(tokenizer.encode(args.prompt))
        print(args.prompt, end="", flush=True)
    stream = tokenizer.create_stream()
    while not generator.is_done():
        generator.generate_next_token()
        print(stream.decode(generator.get_next_tokens()[0]), end="", flush=True)
    print()
    (pn, ps), (dn, ds) = generator.timings["prefill"], generator.timings["decode"]
    print(f"prefill: {pn} tokens in {ps:.2f} s ({pn / max(ps, 1e-9):.1f} tokens/s); decode: "
          f"{dn} tokens in {ds:.2f} s ({dn / max(ds, 1e-9):.1f} tokens/s)")
    return 0


def _compare(args) -> int:
    import numpy as np
    from . import onnx as donnx  # lazily, as above: the [onnx] extra
    model = _model_path(args.model)
    feeds = {} if os.path.isdir(model) else _read_inputs(args, model)
    if os.path.isdir(args.model):  # a genai model folder: the prefill of --prompt
        from . import genai
        if args.prompt is None:
            raise HResultError(E_INVALIDARG, "a genai model folder needs --prompt TEXT")
        llm = genai.Model(args.model)
        ids = genai.Tokenizer(llm).encode(args.prompt).astype(np.int64)[None]
        feeds, model = genai.step_feeds(llm, ids, 0, ids.shape[1], {}), llm.config.decoder_file
    elif not args.input:  # deterministic inputs when none are given: said so, not hidden
        session = donnx.InferenceSession(args.model)
        rng = np.random.default_rng(0)
        for a in session.get_inputs():
            shape = [d if isinstance(d, int) else 1 for d in (a.shape or [])]
            dtype = donnx.np_dtype(a.type)
            feeds[a.name] = (rng.standard_normal(shape) if dtype.kind == "f" else
                             rng.integers(0, 4, shape)).astype(dtype)
        print(f"(no --input: standard normal inputs, seed 0: "
              f"{', '.join(f'{k} {list(v.shape)}' for k, v in feeds.items())})", file=sys.stderr)
    report = donnx.compare(model, feeds, half_precision=args.half_precision,
                           half_matmul=args.half_matmul, flush_denormals=args.flush_denormals)
    print(report.to_json() if args.json else report.table(top=args.top, ulp=args.ulp))
    return 0


def _hello(args) -> int:
    """HelloDirectML (``dmlsim/examples/hello_directml.py``, installed with the package)."""
    hello_directml.main(debug=args.debug)
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="dmlsim", description="DirectML without Windows")
    p.add_argument("--version", action="version", version=f"dmlsim {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dispatch", help="run a DxDispatch JSON model (or an .onnx file)")
    d.add_argument("model")
    d.add_argument("-o", "--output-path", default=".",
                   help="folder that writeFile targets are relative to (default: .)")
    d.set_defaults(fn=_dispatch)
    for name, fn, text in (("lower", _lower, "print the DML graph an ONNX model becomes"),
                           ("run", _run, "run an ONNX model through DirectML operators")):
        c = sub.add_parser(name, help=text)
        c.add_argument("model")
        c.add_argument("--feature-level", help="emulate this DML_FEATURE_LEVEL, e.g. 5_1")
        c.add_argument("--dim", action="append", metavar="NAME=SIZE",
                       help="fix a symbolic dimension (ONNX Runtime's free-dimension override)")
        if name == "run":
            c.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                           help="an input array (repeat per input); FILE.npz feeds each of its "
                                "arrays by name")
            c.add_argument("--output", metavar="DIR", help="save each output as DIR/NAME.npy")
        c.set_defaults(fn=fn)
    c = sub.add_parser("compare", help="where an ONNX model's DML result leaves a float64 "
                                       "reference, node by node")
    c.add_argument("model", help="an .onnx file, or a genai model folder (with --prompt)")
    c.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                   help="an input array (repeat per input); FILE.npz feeds each of its arrays "
                        "by name")
    c.add_argument("--prompt", help="for a genai model folder: compare the prefill of TEXT")
    c.add_argument("--half-precision", action="store_true",
                   help="compile with DML_EXECUTION_FLAG_ALLOW_HALF_PRECISION_COMPUTATION")
    c.add_argument("--half-matmul", action="store_true",
                   help="with --half-precision's flag, FLOAT16 MatMul and Gemm accumulate in "
                        "FLOAT16, as a driver with half accumulators does")
    c.add_argument("--flush-denormals", action="store_true",
                   help="flush FLOAT/FLOAT16 subnormals to zero at every node boundary, as a "
                        "driver with flush-to-zero does")
    c.add_argument("--top", type=int, default=20, help="the N worst nodes (0: all, in order)")
    c.add_argument("--ulp", type=float, default=1.0,
                   help="mark the first node introducing more than this many ULP")
    c.add_argument("--json", action="store_true")
    c.set_defaults(fn=_compare)
    g = sub.add_parser("generate", help="generate text with an onnxruntime-genai model folder "
                                        "built for DirectML")
    g.add_argument("model", help="folder with genai_config.json, the model and tokenizer.json")
    g.add_argument("--prompt", help="the text to continue (a Whisper folder: the decoder "
                                    "prompt, by default <|startoftranscript|><|en|>"
                                    "<|transcribe|><|notimestamps|>)")
    g.add_argument("--audio-features", metavar="FILE.npy",
                   help="a Whisper folder: 30 s of log-mel frames, [1, mels, 3000]")
    g.add_argument("--max-length", type=int, help="prompt + generated tokens (default: the "
                                                  "config's search max_length)")
    g.add_argument("--seed", type=int, help="random seed for sampling")
    g.add_argument("--do-sample", action="store_true", help="sample instead of greedy search")
    g.add_argument("--top-k", type=int, help="sample among the k most likely tokens")
    g.add_argument("--top-p", type=float, help="sample among the most likely tokens whose "
                                               "probabilities add up to p")
    g.add_argument("--temperature", type=float, help="divide the logits by this first")
    g.add_argument("--feature-level", help="emulate this DML_FEATURE_LEVEL, e.g. 6_3")
    g.set_defaults(fn=_generate)
    o = sub.add_parser("ops", help="list DML_OPERATOR_TYPEs with feature level and support")
    o.add_argument("--implemented", action="store_true", help="only operators dmlsim implements")
    o.add_argument("--feature-level", help="only operators available at this level, e.g. 5_1")
    o.add_argument("--json", action="store_true")
    o.set_defaults(fn=_ops)
    i = sub.add_parser("info", help="describe the emulated device")
    i.set_defaults(fn=_info)
    h = sub.add_parser("hello", help="run the HelloDirectML port")
    h.add_argument("--debug", action="store_true",
                   help="with the D3D12 and DirectML debug layers, as the sample's --debug")
    h.set_defaults(fn=_hello)
    args = p.parse_args(argv)
    try:
        return args.fn(args)
    except _Usage as e:
        print(f"dmlsim {args.command}: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `dmlsim ops | head`: the reader left; nothing more to say
        sys.stdout = open(os.devnull, "w")
        return 0
    except Exception as e:  # a clear one-line error for the command line
        if isinstance(e, (HResultError, ModelError)):
            print(f"dmlsim {args.command}: {e}", file=sys.stderr)
            return 1
        if isinstance(e, jsonschema.ValidationError):
            path = "/".join(str(p) for p in e.absolute_path) or "(top level)"
            print(f"dmlsim {args.command}: the model is malformed at {path}: {e.message}",
                  file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
