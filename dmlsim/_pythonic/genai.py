"""``dmlsim.genai``: language models built for DirectML by onnxruntime-genai's model builder
(``python -m onnxruntime_genai.models.builder ... -e dml``), run through ``dmlsim.onnx``'s DML
plans, with onnxruntime-genai's API shape::

    model = genai.Model("phi-dml")                # genai_config.json, model.onnx, tokenizer.json
    tokenizer = genai.Tokenizer(model)
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=64)      # greedy; do_sample=True, top_k, top_p, ...
    generator = genai.Generator(model, params)
    generator.append_tokens(tokenizer.encode("DirectML is"))
    while not generator.is_done():
        generator.generate_next_token()
        print(tokenizer.decode(generator.get_next_tokens()), end="")

The decoder's inputs and outputs are the ones ``genai_config.json`` names. With
``past_present_share_buffer`` (the builder's default for DirectML) the KV cache is one static
buffer of ``max_length`` positions per layer, which each step's present replaces, and the
attention mask has ``max_length`` columns, ones for the positions filled so far: the layout of
onnxruntime-genai's DirectML path with graph capture (``enable_graph_capture``). Every shape is
then the same at each decode step, so all decode steps share one DML plan. Without it the
cache grows by one position a step (a plan per length, in the session's LRU cache).
Tokenization is the ``tokenizers`` library over the folder's ``tokenizer.json``.

A "whisper" folder has an encoder too: ``Generator.set_inputs({"audio_features": ...})`` runs
it once, and every decoder step reads its cross-attention keys and values by the names the
config gives (``cross_past_key_names``); the self-attention cache grows (the builder's choice
for Whisper).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from .._api import public as dml
from . import genai_search, onnx_model
from .onnx_inference import InferenceSession, SessionOptions
from .onnx_iobinding import OrtValue


WHISPER_PROMPT = "<|startoftranscript|><|en|><|transcribe|><|notimestamps|>"


def _fail(hr, message):
    raise dml.HResultError(hr, f"dmlsim.genai: {message}")


class Config:
    """``genai_config.json`` of a model folder: ``model`` (the decoder's file, inputs, outputs,
    heads, layers, eos/pad/bos ids, context length) and ``search`` (the default options)."""

    def __init__(self, path):
        if not isinstance(path, (str, os.PathLike)):
            _fail(dml.E_INVALIDARG, f"Config: path is a {type(path).__name__}; a model folder")
        self.path = Path(path)
        file = self.path / "genai_config.json"
        try:
            raw = json.loads(file.read_text())
            m = raw["model"]
            d = m["decoder"]
            self.decoder_file = self.path / d["filename"]
            self.inputs, self.outputs = dict(d["inputs"]), dict(d["outputs"])
            self.layers = int(d["num_hidden_layers"])
            self.kv_heads, self.head_size = int(d["num_key_value_heads"]), int(d["head_size"])
            eos = m["eos_token_id"]
            self.eos = [int(e) for e in (eos if isinstance(eos, list) else [eos])]
            self.pad = int(m.get("pad_token_id", self.eos[0]))
            self.context_length = int(m.get("context_length", 0)) or None
            self.type = str(m.get("type", ""))
            self.search = genai_search.check(dict(raw.get("search", {})),
                                             f"{file} 'search'")
            self.encoder_file, self.encoder_inputs, self.encoder_outputs = None, {}, {}
            if self.type == "whisper":  # an encoder for the audio, a decoder for the text
                e = m["encoder"]
                self.encoder_file = self.path / e["filename"]
                self.encoder_inputs, self.encoder_outputs = dict(e["inputs"]), dict(e["outputs"])
                missing = [k for k in ("cross_past_key_names", "cross_past_value_names")
                           if k not in self.inputs] + \
                    [k for k in ("cross_present_key_names", "cross_present_value_names")
                     if k not in self.encoder_outputs]
                if missing:  # the decoder reads the encoder's keys and values by these names
                    raise KeyError(", ".join(missing))
        except FileNotFoundError:
            _fail(dml.E_INVALIDARG, f"no genai_config.json in '{self.path}' (a folder made by "
                                    "onnxruntime-genai's model builder)")
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            _fail(dml.E_INVALIDARG, f"'{file}' is not a genai config: {type(e).__name__}: {e}")


class Model:
    """A model folder's decoder as an ``InferenceSession`` on a DML device (and, for a
    "whisper" folder, its audio encoder as ``encoder``). ``sess_options``, ``device`` and
    ``feature_level`` go to the sessions."""

    def __init__(self, path, *, sess_options=None, device=None, feature_level=None):
        self.config = path if isinstance(path, Config) else Config(path)
        opts = sess_options or SessionOptions()
        self.session = InferenceSession(self.config.decoder_file, opts, device=device,
                                        feature_level=feature_level)
        self.encoder = None if self.config.encoder_file is None else InferenceSession(
            self.config.encoder_file, opts, device=device, feature_level=feature_level)
        self.dtypes = {a.name: onnx_model.np_dtype(a.type) for a in self.session.get_inputs()}

    @property
    def type(self):
        return self.config.type


class TokenizerStream:
    """Incremental decoding: ``decode(token)`` returns the text the token completes (empty
    while a multi-byte character is incomplete)."""

    def __init__(self, tokenizer):
        self._tok, self._ids, self._emitted = tokenizer, [], ""

    def decode(self, token) -> str:
        self._ids.append(int(token))
        text = self._tok.decode(self._ids)
        if text.endswith("\ufffd"):
            return ""
        new, self._emitted = text[len(self._emitted):], text
        return new


class Tokenizer:
    """The folder's ``tokenizer.json`` through the ``tokenizers`` library."""

    def __init__(self, model: Model):
        try:
            from tokenizers import Tokenizer as _Tokenizer
        except ImportError:
            _fail(dml.E_NOTIMPL, "Tokenizer needs the 'tokenizers' package "
                                 "(pip install dmlsim[genai])")
        path = model.config.path / "tokenizer.json"
        if not path.exists():
            _fail(dml.E_INVALIDARG, f"no tokenizer.json in '{model.config.path}'")
        try:
            self._tok = _Tokenizer.from_file(str(path))
        except Exception as e:  # noqa: BLE001 -- the tokenizers library says why
            _fail(dml.E_INVALIDARG, f"'{path}' is not a tokenizer: {e}")

    def encode(self, text: str) -> np.ndarray:
        if not isinstance(text, str):
            _fail(dml.E_INVALIDARG, f"Tokenizer.encode: text is a {type(text).__name__}")
        return np.array(self._tok.encode(text).ids, np.int32)

    def decode(self, tokens) -> str:
        return self._tok.decode([int(t) for t in np.asarray(tokens).reshape(-1)],
                                skip_special_tokens=True)

    def create_stream(self) -> TokenizerStream:
        return TokenizerStream(self)


class GeneratorParams:
    """The search options: the config's ``search`` section, then ``set_search_options``."""

    def __init__(self, model: Model):
        if not isinstance(model, Model):
            _fail(dml.E_INVALIDARG, f"GeneratorParams: model is a {type(model).__name__}")
        self.model = model
        self.search = dict(model.config.search)

    def set_search_options(self, **options):
        self.search.update(genai_search.check(options, "GeneratorParams.set_search_options"))


class Generator:
    """Runs the decoder one step at a time. ``append_tokens`` feeds tokens (the prompt; it runs
    the model on them); ``generate_next_token`` runs the model on the token chosen last (if any)
    and chooses the next one from the logits; ``is_done`` after an end-of-sequence token or at
    ``max_length``."""

    def __init__(self, model: Model, params: GeneratorParams):
        if not isinstance(params, GeneratorParams):
            _fail(dml.E_INVALIDARG, f"Generator: params is a {type(params).__name__}")
        self.model, self.search = model, dict(params.search)
        c = model.config
        self.max_length = self.search.get("max_length") or c.context_length or 256
        self.shared = self.search.get("past_present_share_buffer", True)
        seed = self.search.get("random_seed", -1)
        self._rng = np.random.default_rng(None if seed < 0 else seed)
        self.sequences = np.zeros((0, 0), np.int64)
        self._kv: dict = {}
        self._pending = None     # chosen tokens the model has not seen yet
        self._logits = None
        self._done = False
        self.outputs: dict = {}
        self.timings = {"prefill": [0, 0.0], "decode": [0, 0.0]}  # tokens, seconds

    # ---- onnxruntime-genai's API ----------------------------------------------------------
    def set_inputs(self, inputs):
        """Extra model inputs by name (onnxruntime-genai's ``NamedTensors``; any mapping). For a
        Whisper model: ``audio_features`` ([batch, mels, 3000] log-mel frames, 30 s) runs the
        encoder, whose cross-attention keys and values every decoder step then reads, and
        ``input_ids`` (the decoder's prompt, e.g. <|startoftranscript|><|en|><|transcribe|>
        <|notimestamps|>) is appended as ``append_tokens`` does."""
        c = self.model.config
        if not hasattr(inputs, "keys") or not all(isinstance(k, str) for k in inputs.keys()):
            _fail(dml.E_INVALIDARG, f"Generator.set_inputs: inputs is a {type(inputs).__name__}"
                                    "; a mapping of input names to arrays (NamedTensors)")
        audio = c.encoder_inputs.get("audio_features")
        known = {audio, "input_ids"} - {None}
        unknown = sorted(set(inputs.keys()) - known)
        if unknown:
            _fail(dml.E_INVALIDARG, f"Generator.set_inputs: no input {', '.join(unknown)} for a "
                                    f"'{c.type or 'decoder-only'}' model (it takes "
                                    f"{', '.join(sorted(known))})")
        ids = None if "input_ids" not in inputs else \
            _tokens(inputs["input_ids"], "Generator.set_inputs")  # checked before any run
        if audio is not None and audio in inputs:
            self._encode(np.asarray(inputs[audio]))
        if ids is not None:
            self.append_tokens(ids)

    def append_tokens(self, tokens):
        ids = _tokens(tokens, "Generator.append_tokens")
        if self._pending is not None:
            self._step(self._pending[:, None])
            self._pending = None
        self._step(ids.astype(np.int64))

    def generate_next_token(self):
        if self._logits is None:
            _fail(dml.E_INVALIDARG, "Generator.generate_next_token: append tokens first")
        if self._done:
            _fail(dml.E_INVALIDARG, "Generator.generate_next_token: the generator is done "
                                    "(end of sequence or max_length)")
        if self._pending is not None:
            self._step(self._pending[:, None])
        token = genai_search.select(self._logits, self.sequences, self.search,
                                    self.model.config.eos, self._rng)
        self.sequences = np.concatenate([self.sequences, token[:, None]], axis=1)
        self._pending = token
        if np.isin(token, self.model.config.eos).all() or \
                self.sequences.shape[1] >= self.max_length:
            self._done = True

    def get_next_tokens(self) -> np.ndarray:
        if self._pending is None:
            _fail(dml.E_INVALIDARG, "Generator.get_next_tokens: no token generated yet")
        return self._pending.astype(np.int32)

    def get_sequence(self, index: int) -> np.ndarray:
        if not 0 <= int(index) < self.sequences.shape[0]:
            _fail(dml.E_INVALIDARG, f"Generator.get_sequence: index {index} is out of range")
        return self.sequences[int(index)].astype(np.int32)

    def get_output(self, name: str) -> np.ndarray:
        if name not in self.outputs:
            _fail(dml.E_INVALIDARG, f"Generator.get_output: no output '{name}' "
                                    f"(outputs: {', '.join(self.outputs)})")
        value = self.outputs[name]
        return value.numpy() if isinstance(value, OrtValue) else value

    def is_done(self) -> bool:
        return self._done

    # ---- one model run ------------------------------------------------------------------
    def _encode(self, features):
        """Run the encoder on ``features``: the decoder's cross keys and values."""
        c, enc = self.model.config, self.model.encoder
        if self.sequences.size:
            _fail(dml.E_INVALIDARG, "Generator.set_inputs: audio_features after tokens; set "
                                    "them first")
        arg = enc.get_inputs()[0]
        want = onnx_model.np_dtype(arg.type)
        if features.dtype.kind != "f" or features.ndim != len(arg.shape or []):
            _fail(dml.E_INVALIDARG, f"Generator.set_inputs: audio_features is {features.dtype} "
                                    f"{list(features.shape)}; the encoder takes {arg.type} "
                                    f"{arg.shape}")
        start = time.perf_counter()
        out = dict(zip(enc.output_names, enc.run(None, {arg.name: features.astype(want)})))
        self.timings["encode"] = [features.shape[0], time.perf_counter() - start]
        for layer in range(c.layers):
            for kind in ("key", "value"):
                present = c.encoder_outputs[f"cross_present_{kind}_names"] % layer
                self._kv[c.inputs[f"cross_past_{kind}_names"] % layer] = \
                    OrtValue.ortvalue_from_numpy(out[present], "dml")  # read at every step
        self.outputs = out

    def _step(self, ids):
        c, b, n = self.model.config, ids.shape[0], ids.shape[1]
        if self.sequences.size and self.sequences.shape[0] != b:
            _fail(dml.E_INVALIDARG, f"Generator: {b} rows of tokens for a batch of "
                                    f"{self.sequences.shape[0]}")
        past = self.sequences.shape[1] if self.sequences.size else 0
        if self._pending is not None:
            past -= 1   # the pending token is in the sequence already
        total = past + n
        if total > self.max_length:
            _fail(dml.E_INVALIDARG, f"Generator: {total} tokens exceed max_length "
                                    f"{self.max_length}")
        names = c.inputs
        feeds = step_feeds(self.model, ids, past, total, self._kv,
                           self.max_length if self.shared else 0)
        start = time.perf_counter()
        # The keys and values stay on the device from one step to the next (ORT's IOBinding,
        # as onnxruntime-genai keeps them): only the tokens go in and the logits come out.
        session = self.model.session
        binding = session.io_binding()
        for name, value in feeds.items():
            if isinstance(value, OrtValue):
                binding.bind_ortvalue_input(name, value)
            else:
                binding.bind_cpu_input(name, value)
        kv = {c.outputs[f"present_{kind}_names"] % layer
              for layer in range(c.layers) for kind in ("key", "value")}
        for name in session.output_names:
            binding.bind_output(name, "dml" if name in kv else "cpu")
        session.run_with_iobinding(binding)
        self.outputs = dict(zip(session.output_names, binding.get_outputs()))
        logits = self.outputs[c.outputs["logits"]].numpy()
        phase = "prefill" if past == 0 else "decode"
        self.timings[phase][0] += n
        self.timings[phase][1] += time.perf_counter() - start
        for layer in range(c.layers):
            for kind in ("key", "value"):
                present = self.outputs[c.outputs[f"present_{kind}_names"] % layer]
                self._kv[names[f"past_{kind}_names"] % layer] = present
        self._logits = logits[:, -1].astype(np.float32)
        if self._pending is None:
            self.sequences = np.concatenate(
                [self.sequences.reshape(b, -1), ids], axis=1) if self.sequences.size else ids



def _tokens(tokens, where) -> np.ndarray:
    """``tokens`` as a [batch, n] integer array, or E_INVALIDARG naming ``where``."""
    ids = np.asarray(tokens)
    if ids.dtype.kind not in "iu" or ids.ndim not in (1, 2) or ids.size == 0:
        _fail(dml.E_INVALIDARG, f"{where}: tokens must be a non-empty 1-D or 2-D integer "
                                f"array, not {ids.dtype} {list(ids.shape)}")
    return ids.reshape(1, -1) if ids.ndim == 1 else ids


def step_feeds(model: Model, ids, past: int, total: int, kv: dict, kv_length: int = 0) -> dict:
    """The decoder's feeds for ``ids`` ([batch, new tokens]) after ``past`` tokens: the
    attention mask (``kv_length`` wide for a shared KV buffer, else ``total``), position ids,
    and the past keys and values from ``kv`` (zeros of ``kv_length`` where absent, kept in
    ``kv``), in the model's input types."""
    c, b, n = model.config, ids.shape[0], ids.shape[1]
    names = c.inputs
    feeds = {names["input_ids"]: ids}
    if "attention_mask" in names:
        mask = np.zeros((b, kv_length or total), np.int64)
        mask[:, :total] = 1
        feeds[names["attention_mask"]] = mask
    if "position_ids" in names:
        feeds[names["position_ids"]] = np.broadcast_to(
            np.arange(past, total, dtype=np.int64), (b, n)).copy()
    for layer in range(c.layers):
        for kind in ("key", "value"):
            name = names[f"past_{kind}_names"] % layer
            if name not in kv:
                kv[name] = np.zeros((b, c.kv_heads, kv_length, c.head_size), model.dtypes[name])
            feeds[name] = kv[name]
            cross = names.get(f"cross_past_{kind}_names")
            if cross is not None:
                if cross % layer not in kv:
                    _fail(dml.E_INVALIDARG, "Generator: a Whisper decoder reads the encoder's "
                                            "keys and values: set_inputs({'audio_features': "
                                            "...}) first")
                feeds[cross % layer] = kv[cross % layer]
    return {name: value if isinstance(value, OrtValue) else  # the last step's, on the device
            value.astype(model.dtypes.get(name, np.dtype(np.int64)), copy=False)
            for name, value in feeds.items()}
