"""Make the tiny DirectML language models the tests run: a random-weight 2-layer
``transformers`` config (llama-style or qwen2-style) saved with ``save_pretrained``, a small
byte-level BPE tokenizer made with ``tokenizers``, and onnxruntime-genai's model builder run
for DirectML (``-e dml``), as DirectML users build theirs. Needs torch, transformers,
tokenizers and onnxruntime-genai (not dmlsim's dependencies; the outputs are committed)::

    python tools/make_tiny_llm.py --arch llama --precision fp16 --out tests/models/genai/llama-fp16
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VOCAB = 320


def tokenizer(path: Path):
    """A byte-level BPE tokenizer trained on a few sentences, saved as tokenizer.json."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text = ["DirectML runs machine learning on any DirectX 12 GPU.",
            "dmlsim runs DirectML programs without Windows, exactly and anywhere.",
            "The quick brown fox jumps over the lazy dog."] * 20
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["<s>", "</s>", "<pad>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(text, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   pad_token="<pad>")
    fast.save_pretrained(path)
    return fast


def hf_model(arch: str, path: Path, vocab: int):
    import torch
    import transformers
    torch.manual_seed(0)
    common = dict(vocab_size=vocab, hidden_size=64, intermediate_size=128,
                  num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                  max_position_embeddings=256, bos_token_id=0, eos_token_id=1,
                  pad_token_id=2, tie_word_embeddings=False)
    if arch == "llama":
        cfg = transformers.LlamaConfig(**common)
        model = transformers.LlamaForCausalLM(cfg)
    else:
        cfg = transformers.Qwen2Config(**common)
        model = transformers.Qwen2ForCausalLM(cfg)
    save_random(model, path)


def save_random(model, path: Path):
    """``model`` with larger weights than the default init (so logits differ visibly),
    saved with ``save_pretrained``."""
    import torch
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.2)
    model.save_pretrained(path)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", choices=["llama", "qwen2"], default="llama")
    p.add_argument("--precision", choices=["fp16", "fp32", "int4"], default="fp16")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        hf = Path(tmp) / "hf"
        fast = tokenizer(hf)
        hf_model(args.arch, hf, len(fast))
        build(hf, out, args.precision)


def build(hf: Path, out: Path, precision: str):
    """onnxruntime-genai's model builder for DirectML on the ``save_pretrained`` folder ``hf``,
    into ``out`` (replaced), without the builder's leftover scripts."""
    if out.exists():
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory() as cache:
        subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf),
                        "-o", str(out), "-p", precision, "-e", "dml", "-c", cache], check=True)
    for junk in out.glob("*.py"):
        junk.unlink()
    print(f"wrote {out}: " + ", ".join(sorted(f.name for f in out.iterdir())))


if __name__ == "__main__":
    main()
