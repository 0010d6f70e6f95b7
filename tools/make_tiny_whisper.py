"""Make the tiny DirectML Whisper model the tests run: a random-weight 2+2-layer, 32-wide
``transformers`` WhisperConfig saved with ``save_pretrained``, a small byte-level BPE tokenizer
with Whisper's special tokens, and onnxruntime-genai's model builder run for DirectML
(``-e dml``): encoder.onnx (log-mel frames in, hidden states and cross-attention keys and values
out), decoder.onnx (tokens and the self and cross caches in, logits out) and genai_config.json
of type "whisper", as DirectML users build theirs. Needs torch, transformers, tokenizers,
onnx_ir and onnxruntime-genai (not dmlsim's dependencies; the outputs are committed)::

    python tools/make_tiny_whisper.py --out tests/models/genai/whisper-fp16
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from make_tiny_llm import build, save_random  # tools/ is the script's folder

SPECIAL = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|transcribe|>",
           "<|notimestamps|>"]


def tokenizer(path: Path):
    """A byte-level BPE tokenizer trained on a few sentences, Whisper's special tokens first."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text = ["DirectML runs speech recognition on any DirectX 12 GPU.",
            "dmlsim transcribes audio without Windows, exactly and anywhere.",
            "The quick brown fox jumps over the lazy dog."] * 20
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(text, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                                   eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=SPECIAL[1:])
    fast.save_pretrained(path)
    return fast


def hf_model(path: Path, fast):
    import torch
    import transformers
    torch.manual_seed(0)
    ids = {t: fast.convert_tokens_to_ids(t) for t in SPECIAL}
    cfg = transformers.WhisperConfig(
        vocab_size=len(fast), num_mel_bins=80, d_model=32, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
        decoder_ffn_dim=64, max_source_positions=1500, max_target_positions=64,
        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|endoftext|>"],
        pad_token_id=ids["<|endoftext|>"], decoder_start_token_id=ids["<|startoftranscript|>"],
        begin_suppress_tokens=None, suppress_tokens=None, tie_word_embeddings=True)
    save_random(transformers.WhisperForConditionalGeneration(cfg), path)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--precision", choices=["fp16", "fp32"], default="fp16")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        hf = Path(tmp) / "hf"
        hf_model(hf, tokenizer(hf))
        build(hf, out, args.precision)


if __name__ == "__main__":
    main()
