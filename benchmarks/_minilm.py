"""all-MiniLM-L6-v2's encoder in plain PyTorch, with random weights, for the model benchmarks.

The shape is sentence-transformers' all-MiniLM-L6-v2 (a BERT: vocabulary 30,522, 512
positions, hidden 384, 6 layers of 12 heads of 32, feed-forward 1,536 with erf GELU,
LayerNorm epsilon 1e-12), written out so that the benchmarks need no ``transformers``: the
graph ``torch.onnx.export`` makes of it has the operators of Hugging Face's BERT export
(Gather, LayerNormalization, MatMul, Softmax, Erf, the additive attention mask). Inputs
``input_ids`` (int64) and ``attention_mask`` (int64), batch and sequence free; output
``last_hidden_state``.
"""
from __future__ import annotations

import io
import math

import numpy as np
import torch
from torch import nn

VOCAB, POSITIONS, HIDDEN, LAYERS, HEADS, FFN = 30522, 512, 384, 6, 12, 1536


class _Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(HIDDEN, HIDDEN) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(HIDDEN, eps=1e-12), nn.LayerNorm(HIDDEN, eps=1e-12)
        self.up, self.down = nn.Linear(HIDDEN, FFN), nn.Linear(FFN, HIDDEN)

    def forward(self, x, bias):
        b, s, _ = x.shape
        d = HIDDEN // HEADS

        def heads(t):
            return t.view(b, s, HEADS, d).transpose(1, 2)
        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + bias, dim=-1)
        x = self.ln1(x + self.o((p @ v).transpose(1, 2).reshape(b, s, HIDDEN)))
        return self.ln2(x + self.down(nn.functional.gelu(self.up(x))))


class MiniLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.word, self.pos = nn.Embedding(VOCAB, HIDDEN), nn.Embedding(POSITIONS, HIDDEN)
        self.token_type = nn.Embedding(2, HIDDEN)
        self.ln = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList(_Layer() for _ in range(LAYERS))

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        positions = torch.arange(s, device=input_ids.device)
        x = self.word(input_ids) + self.pos(positions) + self.token_type(torch.zeros_like(input_ids))
        x = self.ln(x)
        mask = attention_mask[:, None, None, :].to(x.dtype)
        bias = (1.0 - mask) * torch.finfo(x.dtype).min
        for layer in self.layers:
            x = layer(x, bias)
        return x


def model(dtype=torch.float32, seed=0):
    """The module in eval mode with seeded random weights."""
    torch.manual_seed(seed)
    return MiniLM().eval().to(dtype)


def feeds(batch, sequence, seed=0):
    """Token ids (not 0) and a mask that hides the last quarter of every other row."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, VOCAB, (batch, sequence), dtype=np.int64)
    mask = np.ones((batch, sequence), np.int64)
    mask[1::2, sequence - sequence // 4:] = 0
    return {"input_ids": ids, "attention_mask": mask}


def onnx_bytes(module, batch=1, sequence=16):
    """``torch.onnx.export`` of the module (opset 17, batch and sequence free)."""
    f = {k: torch.from_numpy(v) for k, v in feeds(batch, sequence).items()}
    buf = io.BytesIO()
    free = {0: "batch", 1: "sequence"}
    torch.onnx.export(module, (f["input_ids"], f["attention_mask"]), buf,
                      input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"], opset_version=17, dynamo=False,
                      dynamic_axes={"input_ids": free, "attention_mask": free,
                                    "last_hidden_state": free})
    return buf.getvalue()
