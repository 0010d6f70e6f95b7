"""Make the tiny Stable-Diffusion-style models the tests run, laid out as Olive's DirectML sample
lays out its output: ``unoptimized/tiny-sd`` (each model exported to ONNX from PyTorch, FLOAT)
and ``optimized/tiny-sd`` (the same models through ONNX Runtime's transformer optimizer with
the DirectML sample's fusion options, then converted to FLOAT16), each with ``unet/model.onnx``,
``vae_decoder/model.onnx``, ``scheduler/scheduler_config.json`` and ``model_index.json``. The
weights are random (a 2-level ``diffusers`` UNet2DConditionModel with cross-attention, 8x8x4
latents, and an AutoencoderKL decoder to 16x16 RGB). Needs torch, diffusers and onnxruntime
(not dmlsim's dependencies; the outputs are committed)::

    python tools/make_tiny_diffusion.py --out tests/models/diffusion
"""
from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

# The DirectML sample's OrtTransformersOptimization options (microsoft/Olive,
# examples/directml/stable_diffusion/config_unet.json), plus the fusion added since that ORT's
# DirectML provider has no kernel for (SkipGroupNorm).
OLIVE_DML = dict(
    enable_gelu=True, enable_layer_norm=True, enable_attention=True, use_multi_head_attention=True,
    enable_skip_layer_norm=False, enable_embed_layer_norm=True, enable_bias_skip_layer_norm=False,
    enable_bias_gelu=True, enable_gelu_approximation=False, enable_qordered_matmul=False,
    enable_shape_inference=True, enable_gemm_fast_gelu=False, enable_nhwc_conv=False,
    enable_group_norm=True, enable_bias_splitgelu=False, enable_packed_qkv=True,
    enable_packed_kv=True, enable_bias_add=False, enable_skip_group_norm=False)
CONTEXT = (1, 7, 8)  # encoder_hidden_states: a 7-token prompt embedded in 8 channels


def export(out: Path):
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, UNet2DConditionModel
    torch.manual_seed(0)
    unet = UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1,
        block_out_channels=(8, 16), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=CONTEXT[2],
        attention_head_dim=4, norm_num_groups=4).eval()
    vae = AutoencoderKL(
        in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2, block_out_channels=(8, 16), latent_channels=4,
        norm_num_groups=4, layers_per_block=1).eval()

    class Decoder(torch.nn.Module):
        def __init__(self, v):
            super().__init__()
            self.v = v

        def forward(self, z):
            return self.v.decode(z).sample

    (out / "unet").mkdir(parents=True)
    (out / "vae_decoder").mkdir()
    with torch.no_grad():
        torch.onnx.export(unet, (torch.randn(1, 4, 8, 8), torch.tensor([10]),
                                 torch.randn(*CONTEXT)), out / "unet" / "model.onnx",
                          input_names=["sample", "timestep", "encoder_hidden_states"],
                          output_names=["out_sample"], opset_version=14, dynamo=False)
        torch.onnx.export(Decoder(vae), (torch.randn(1, 4, 8, 8),),
                          out / "vae_decoder" / "model.onnx", input_names=["latent_sample"],
                          output_names=["sample"], opset_version=14, dynamo=False)
    DDIMScheduler(beta_schedule="scaled_linear", beta_start=0.00085, beta_end=0.012,
                  clip_sample=False, set_alpha_to_one=False).save_config(out / "scheduler")
    (out / "model_index.json").write_text(json.dumps({
        "_class_name": "OnnxStableDiffusionPipeline", "scheduler": ["diffusers", "DDIMScheduler"],
        "unet": ["diffusers", "OnnxRuntimeModel"],
        "vae_decoder": ["diffusers", "OnnxRuntimeModel"]}, indent=2))


def constants_to_initializers(path: Path):
    """Constant nodes as initializers: the float16 converter then keeps Resize's scales FLOAT."""
    import onnx
    m = onnx.load(path)
    keep = []
    for n in m.graph.node:
        if n.op_type == "Constant" and n.attribute[0].name == "value":
            t = onnx.TensorProto()
            t.CopyFrom(n.attribute[0].t)
            t.name = n.output[0]
            m.graph.initializer.append(t)
        else:
            keep.append(n)
    del m.graph.node[:]
    m.graph.node.extend(keep)
    onnx.save(m, path)


def optimize(src: Path, dst: Path):
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions
    shutil.copytree(src, dst)
    for name, kind in (("unet", "unet"), ("vae_decoder", "vae")):
        path = dst / name / "model.onnx"
        constants_to_initializers(path)
        options = FusionOptions(kind)
        for k, v in OLIVE_DML.items():
            setattr(options, k, v)
        m = optimizer.optimize_model(str(path), model_type=kind, num_heads=0, hidden_size=0,
                                     opt_level=0, use_gpu=True, optimization_options=options)
        m.convert_float_to_float16(keep_io_types=False,
                                   op_block_list=["RandomNormalLike", "Resize"])
        m.save_model_to_file(str(path))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    out = Path(args.out)
    for kind in ("unoptimized", "optimized"):
        if (out / kind / "tiny-sd").exists():
            shutil.rmtree(out / kind / "tiny-sd")
    export(out / "unoptimized" / "tiny-sd")
    optimize(out / "unoptimized" / "tiny-sd", out / "optimized" / "tiny-sd")
    for f in sorted(out.rglob("*.onnx")):
        print(f"{f}: {f.stat().st_size // 1024} KB")


if __name__ == "__main__":
    main()
