"""Search options and next-token selection for ``dmlsim.genai``, as onnxruntime-genai's
``search`` section and ``GeneratorParams.set_search_options`` define them: greedy, or sampling
with temperature, top-k and top-p from a seeded generator; repetition penalty and min_length
applied to the logits first. Beam search is not implemented (E_NOTIMPL)."""
from __future__ import annotations

import numpy as np

from .._api import public as dml

# option -> (type, check, what it must be)
_OPTIONS = {
    "max_length": (int, lambda v: v > 0, "a positive integer"),
    "min_length": (int, lambda v: v >= 0, "a non-negative integer"),
    "do_sample": (bool, lambda v: True, "true or false"),
    "top_k": (int, lambda v: v >= 0, "a non-negative integer (0: no top-k)"),
    "top_p": (float, lambda v: 0.0 < v <= 1.0, "in (0, 1]"),
    "temperature": (float, lambda v: v > 0.0, "positive"),
    "repetition_penalty": (float, lambda v: v > 0.0, "positive"),
    "random_seed": (int, lambda v: True, "an integer (-1: from the system)"),
    "num_beams": (int, lambda v: v == 1, "1 (beam search is not implemented)"),
    "num_return_sequences": (int, lambda v: v == 1, "1"),
    "past_present_share_buffer": (bool, lambda v: True, "true or false"),
    "batch_size": (int, lambda v: v > 0, "a positive integer"),
    # accepted from genai_config.json, no effect on greedy / sampling search
    "diversity_penalty": (float, lambda v: True, "a number"),
    "length_penalty": (float, lambda v: True, "a number"),
    "early_stopping": (bool, lambda v: True, "true or false"),
    "no_repeat_ngram_size": (int, lambda v: v == 0, "0 (n-gram blocking is not implemented)"),
}


def check(options: dict, where: str) -> dict:
    """Validated search options: every value of its type and range, else E_INVALIDARG (E_NOTIMPL
    for beam search and n-gram blocking) naming the option and the value."""
    out = {}
    for key, value in options.items():
        if key not in _OPTIONS:
            raise dml.HResultError(dml.E_INVALIDARG, f"{where}: unknown search option "
                                                     f"{key!r} (options: {', '.join(_OPTIONS)})")
        kind, ok, what = _OPTIONS[key]
        good = isinstance(value, bool) if kind is bool else (
            isinstance(value, (int, np.integer)) and not isinstance(value, bool) if kind is int
            else isinstance(value, (int, float, np.floating, np.integer)) and
            not isinstance(value, bool))
        if not good or not ok(kind(value)):
            hr = dml.E_NOTIMPL if key in ("num_beams", "no_repeat_ngram_size") and good else \
                dml.E_INVALIDARG
            raise dml.HResultError(hr, f"{where}: {key} is {value!r}; it must be {what}")
        out[key] = kind(value)
    return out


def select(logits: np.ndarray, sequences: np.ndarray, search: dict, eos: list,
           rng: np.random.Generator) -> np.ndarray:
    """The next token of each batch row from ``logits`` [B, vocab] (float32)."""
    x = logits.astype(np.float64)
    penalty = search.get("repetition_penalty", 1.0)
    if penalty != 1.0:
        for row, seq in zip(x, sequences):
            seen = np.unique(seq)
            row[seen] = np.where(row[seen] > 0, row[seen] / penalty, row[seen] * penalty)
    if sequences.shape[1] < search.get("min_length", 0):
        x[:, eos] = -np.inf
    if not search.get("do_sample", False):
        return x.argmax(axis=-1)
    x = x / search.get("temperature", 1.0)
    k = search.get("top_k", 0)
    out = np.empty(x.shape[0], np.int64)
    for i, row in enumerate(x):
        order = np.argsort(-row, kind="stable")
        if k > 0:
            order = order[:k]
        p = np.exp(row[order] - row[order[0]])
        p /= p.sum()
        top_p = search.get("top_p", 1.0)
        if top_p < 1.0:
            keep = int(np.searchsorted(np.cumsum(p), top_p) + 1)
            order, p = order[:keep], p[:keep] / p[:keep].sum()
        out[i] = order[rng.choice(len(order), p=p)]
    return out
