"""Decode speed of a language model built for DirectML, run by ``dmlsim.genai``, next to PyTorch
eager running the same ``transformers`` model on the same device at the same precision (fp16;
greedy; a KV cache in both). Measured side by side in one run; not part of the test suite.

    python benchmarks/bench_genai.py --preset tiny          # seconds, CPU or GPU
    python benchmarks/bench_genai.py --preset 1b --out results/h200/genai.json   # H200

The model is a random-weight llama-style ``transformers`` config saved with ``save_pretrained``
and built with onnxruntime-genai's builder (``-p fp16 -e dml``), as DirectML users build theirs
(``tools/make_tiny_llm.py`` makes the committed tiny ones). Needs torch, transformers and
onnxruntime-genai (the builder). Prints tokens/s for both and the ratio.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PRESETS = {  # llama-style shapes
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, vocab_size=320),
    "1b": dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
               num_attention_heads=32, num_key_value_heads=8, vocab_size=32000),
}


def build(preset: str, folder: Path) -> Path:
    import torch
    import transformers
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from make_tiny_llm import tokenizer
    hf, out = folder / "hf", folder / "dml"
    fast = tokenizer(hf)
    cfg = transformers.LlamaConfig(max_position_embeddings=2048, bos_token_id=0, eos_token_id=1,
                                   pad_token_id=2, tie_word_embeddings=False,
                                   **{**PRESETS[preset], "vocab_size": max(
                                       PRESETS[preset]["vocab_size"], len(fast))})
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(cfg).to(torch.float16).save_pretrained(hf)
    subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(hf),
                    "-o", str(out), "-p", "fp16", "-e", "dml", "-c", str(folder / "cache")],
                   check=True, stdout=subprocess.DEVNULL)
    return folder


def torch_decode(folder: Path, prompt, new_tokens: int, device: str) -> tuple:
    import torch
    import transformers
    model = transformers.LlamaForCausalLM.from_pretrained(folder / "hf", dtype=torch.float16)
    model = model.to(device).eval()
    ids = torch.tensor([prompt], device=device)

    def run():
        with torch.no_grad():
            out = model(ids, use_cache=True)
            past, tok = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
            tokens = [int(tok)]
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(new_tokens - 1):
                out = model(tok, past_key_values=past, use_cache=True)
                past, tok = out.past_key_values, out.logits[:, -1].argmax(-1, keepdim=True)
                tokens.append(int(tok))
            return tokens, time.perf_counter() - start
    run()  # warm-up
    tokens, seconds = run()
    return tokens, (new_tokens - 1) / seconds


def dmlsim_decode(folder: Path, prompt, new_tokens: int) -> tuple:
    import dmlsim.genai as genai
    model = genai.Model(folder / "dml")

    def run():
        params = genai.GeneratorParams(model)
        params.set_search_options(max_length=len(prompt) + new_tokens)
        g = genai.Generator(model, params)
        g.append_tokens(np.array(prompt, np.int32))
        g.generate_next_token()
        g.timings["decode"] = [0, 0.0]
        while not g.is_done():
            g.generate_next_token()
        return g.get_sequence(0)[len(prompt):].tolist(), g.timings
    run()  # compiles the prompt's and the decode step's plans
    tokens, timings = run()
    n, seconds = timings["decode"]
    return tokens, n / seconds


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    p.add_argument("--tokens", type=int, default=32, help="tokens to generate")
    p.add_argument("--out", help="write the results as JSON here")
    args = p.parse_args(argv)
    import jax
    import torch
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with tempfile.TemporaryDirectory() as tmp:
        folder = build(args.preset, Path(tmp))
        prompt = [5, 9, 17, 33, 65, 100, 7, 12]
        theirs, torch_tps = torch_decode(folder, prompt, args.tokens, device)
        ours, dml_tps = dmlsim_decode(folder, prompt, args.tokens)
    row = {"preset": args.preset, "device": str(jax.devices()[0]), "torch_device": device,
           "tokens": args.tokens, "dmlsim_tokens_per_s": round(dml_tps, 1),
           "torch_eager_tokens_per_s": round(torch_tps, 1),
           "dmlsim_over_torch": round(dml_tps / torch_tps, 3),
           "same_greedy_tokens": ours == theirs,
           "first_divergence": next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                                    None)}
    print(f"| {args.preset} | {row['device']} | dmlsim {row['dmlsim_tokens_per_s']} tok/s | "
          f"PyTorch eager {row['torch_eager_tokens_per_s']} tok/s | ratio "
          f"{row['dmlsim_over_torch']} | same tokens: {row['same_greedy_tokens']} |")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()
